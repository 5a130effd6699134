"""Which names a module's uses of `globals()` can create at import time.

A module that hands its `globals()` to other code (protobuf's `_builder.Build...(DESCRIPTOR, _globals)`, an
`exec`, `globals().update({name: ... for name in data})`) may gain any name: a name the sources do not bind there is
unknown, never missing. Most uses are narrower, and say which names they can write:

- reads: `globals()[k]`, `k in globals()`, `globals().get(k)`, iterating it;
- the lazy-import idiom `x = LazyLoader("x", globals(), "pkg")`: a call given `globals()` whose first argument is
  an identifier literal writes that one name (vLLM's `LazyLoader` sets `parent_globals[local_name]` on first use);
- `globals()["allocator"] = a`: the literal key;
- `globals()[name] = v` under `if name in globals():` (or `elif`): it only rebinds a name the module has;
- `globals()[name] = value` in the module's `__getattr__(name)` (or a module function it calls with `name`): it
  caches what `__getattr__` serves;
- `g = globals()` read, iterated, and `g.update(d)` where `d` only gets keys iterated from `g` (vLLM 0.5-0.6's
  `_custom_ops`, which wraps its own functions in place).

`created_names(tree, *globals_calls(tree, source))` is None when some use may create any name, else the names the
uses can write (with the line of the use).
"""

from __future__ import annotations

import ast
import re

from driftcheck.astnodes import children, walk

_CODE_RUNNERS = frozenset({"exec", "eval"})
_READ_METHODS = frozenset({"items", "keys", "values", "get", "copy", "__contains__", "__getitem__"})
_WRITE_METHODS = frozenset({"update", "setdefault", "__setitem__"})


_GLOBALS_CALL = re.compile(r"\bglobals\s*\(\s*\)")


class _Parents:
    """A node's parent: those of the nodes on the way down to each `globals()` call are noted by the descent that
    finds the calls; any other (an alias's uses, rare) makes the whole map once. A map of a whole 2,000-line module
    (vLLM's config/model.py, for its two `LazyLoader(..., globals(), ...)` lines) cost more than summarising it."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.known: dict[ast.AST, ast.AST] = {}
        self.whole = False

    def get(self, node: ast.AST) -> ast.AST | None:
        if node not in self.known and not self.whole:
            for parent in walk(self.tree):
                for child in ast.iter_child_nodes(parent):
                    self.known[child] = parent
            self.whole = True
        return self.known.get(node)


def globals_calls(tree: ast.Module, source: str) -> tuple[list[ast.Call], _Parents]:
    """The module's `globals()` calls (found from the lines that spell one), with their parents."""
    lines = {source.count("\n", 0, m.start()) + 1 for m in _GLOBALS_CALL.finditer(source)}
    parents = _Parents(tree)
    calls: list[ast.Call] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in children(node):
            start = getattr(child, "lineno", None)
            if start is not None and not any(start <= line <= (child.end_lineno or start) for line in lines):
                continue
            parents.known[child] = node
            if start in lines and _is_globals_call(child):
                calls.append(child)
            stack.append(child)
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return calls, parents


def hands_out_globals(calls: list[ast.Call], parents: _Parents) -> bool:
    """`globals()` passed to a call or written through: the module's names are made at import time."""
    for call in calls:
        parent = parents.get(call)
        if isinstance(parent, ast.Call) and call in parent.args:
            return True
        if isinstance(parent, ast.keyword) and isinstance(parents.get(parent), ast.Call):
            return True
        if isinstance(parent, ast.Attribute) and parent.attr in ("update", "setdefault", "__setitem__"):
            holder = parents.get(parent)
            if isinstance(holder, ast.Call) and holder.func is parent:
                return True
        if isinstance(parent, ast.Subscript) and parent.value is call:
            holder = parents.get(parent)
            if isinstance(holder, ast.Assign) and parent in holder.targets \
                    or isinstance(holder, ast.AugAssign) and holder.target is parent:
                return True
        if isinstance(parent, ast.Assign) and parent.value is call:
            return True  # `_globals = globals()`, then handed to a builder
    return False


def created_names(tree: ast.Module, calls: list[ast.Call], parents: _Parents) -> dict[str, int] | None:
    """name -> line of the use that can write it; None when a use may write any name."""
    created: dict[str, int] = {}
    for node in calls:
        names = _use_creates(node, parents, tree)
        if names is None:
            return None
        for name in names:
            created.setdefault(name, node.lineno)
    return created


def _is_globals_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals" \
        and not node.args and not node.keywords


def _use_creates(call: ast.Call, parents: _Parents, tree: ast.Module) -> list[str] | None:
    """The names one `globals()` expression can create (None: any)."""
    parent = parents.get(call)
    if isinstance(parent, ast.Call) and call in parent.args:
        return _handed_to_call(parent, parents)
    if isinstance(parent, ast.Call) and any(k.value is call for k in parent.keywords):
        return None
    if isinstance(parent, ast.Attribute) and parent.value is call:
        return None if parent.attr in _WRITE_METHODS else []
    if isinstance(parent, ast.Subscript) and parent.value is call:
        # a read, or `del globals()[k]`, creates nothing
        return _subscript_store(parent, parents, tree) if isinstance(parent.ctx, ast.Store) else []
    if isinstance(parent, ast.Assign) and parent.value is call:
        if len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            return _alias_creates(parent.targets[0].id, parents, tree)
        return None
    return []  # `k in globals()`, iterating it, `{*globals()}`: reads


def _handed_to_call(call: ast.Call, parents: _Parents) -> list[str] | None:
    """The lazy-import idiom `x = LazyLoader("x", globals(), "pkg")` (an assignment of the call, whose first argument
    is a literal) writes that literal: a name, or a dotted key (`"llguidance.hf"`) no attribute lookup reaches."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in _CODE_RUNNERS:
        return None
    holder = parents.get(call)
    if not (isinstance(holder, ast.Assign) and holder.value is call
            and all(isinstance(t, ast.Name) for t in holder.targets)):
        return None
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return [first.value] if first.value.isidentifier() else []
    return None


def _subscript_store(sub: ast.Subscript, parents: _Parents, tree: ast.Module) -> list[str] | None:
    key = sub.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return [key.value]
    if not isinstance(key, ast.Name):
        return None
    node: ast.AST | None = sub
    while node is not None:
        node = parents.get(node)
        if isinstance(node, ast.If) and _tests_membership(node.test, key.id):
            return []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = node.args.posonlyargs + node.args.args
            if params and params[0].arg == key.id and _serves_getattr(node, tree):
                return []  # caches a value the module's __getattr__ serves
            return None
    return None


def _serves_getattr(fn: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module) -> bool:
    """`fn` is the module's `__getattr__(name)`, or a module function it calls with its own `name` first."""
    if fn not in tree.body:
        return False
    if fn.name == "__getattr__":
        return True
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) and top.name == "__getattr__":
            params = top.args.posonlyargs + top.args.args
            if not params:
                return False
            return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fn.name
                       and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == params[0].arg
                       for n in walk(top))
    return False


def _tests_membership(test: ast.expr, key: str) -> bool:
    """`key in globals()` (also one operand of an `and`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_membership(v, key) for v in test.values)
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == key
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) and _is_globals_call(test.comparators[0]))


def _alias_creates(alias: str, parents: _Parents, tree: ast.Module) -> list[str] | None:
    """`g = globals()`: only reads of `g`, and `g.update(d)` with `d`'s keys iterated from `g`, create nothing."""
    loops = _loop_keys(alias, tree)
    for node in walk(tree):
        if not (isinstance(node, ast.Name) and node.id == alias) or not isinstance(node.ctx, ast.Load):
            continue
        use = _alias_use(node, parents)
        if use == "read":
            continue
        if isinstance(use, ast.Call) and len(use.args) == 1 and not use.keywords \
                and isinstance(use.args[0], ast.Name) and _filled_from(use.args[0].id, loops, tree):
            continue
        return None
    return []


def _alias_use(name: ast.Name, parents: _Parents):
    """How an alias of `globals()` is used: "read", its `alias.update(...)` call, or None (handed out, written)."""
    parent = parents.get(name)
    if isinstance(parent, ast.Attribute):
        holder = parents.get(parent)
        if isinstance(holder, ast.Call) and holder.func is parent and parent.attr not in _READ_METHODS:
            return holder if parent.attr == "update" else None
        return "read"
    if isinstance(parent, ast.Subscript) and parent.value is name:
        return "read" if isinstance(parent.ctx, ast.Load) else None
    if isinstance(parent, ast.Compare) and name in parent.comparators:
        return "read"
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is name:
        return "read"
    return None


def _loop_keys(alias: str, tree: ast.Module) -> set[str]:
    """Names bound as keys by loops over `alias` (`for k in g`, `for k, v in g.items()`, `for k in g.keys()`)."""
    keys: set[str] = set()
    for node in walk(tree):
        if not isinstance(node, (ast.For, ast.comprehension)):
            continue
        it = node.iter
        over_keys = isinstance(it, ast.Name) and it.id == alias
        over_items = isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) \
            and isinstance(it.func.value, ast.Name) and it.func.value.id == alias and it.func.attr in ("keys", "items")
        if not (over_keys or over_items):
            continue
        target = node.target
        if over_items and it.func.attr == "items" and isinstance(target, ast.Tuple) and target.elts:
            target = target.elts[0]
        if isinstance(target, ast.Name):
            keys.add(target.id)
    return keys


def _filled_from(name: str, loop_keys: set[str], tree: ast.Module) -> bool:
    """`d = {}` and `d[k] = ...` with `k` a key iterated from the alias: `d` holds only names the module has."""
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    if not (isinstance(node.value, ast.Dict) and not node.value.keys):
                        return False
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id == name:
                    if not (isinstance(target.slice, ast.Name) and target.slice.id in loop_keys):
                        return False
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name \
                and node.func.attr not in _READ_METHODS:
            return False
    return True
