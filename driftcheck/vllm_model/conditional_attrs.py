"""Instance attributes a class's `__init__` sets only under an `if`: `if not multiprocess_mode: self.model_executor =
...` (vLLM's V1 `LLMEngine`). An object built the other way has no such attribute, so a read of it may raise
AttributeError (28b M1). Only `if` makes an attribute conditional here: a `try`, a loop or a `match` is read as
setting what its body sets (lenient: fewer warnings, never a false one of this kind).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import walk
from driftcheck.vllm_model.function_summary import MODULE_REGISTRARS, attr_targets

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def set_only_when(init: ast.FunctionDef | ast.AsyncFunctionDef,
                  methods: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> dict[str, tuple[int, str]]:
    """attribute -> (line of the `if`, the condition under which `init` sets it: "not multiprocess_mode"), for the
    attributes `init` sets on its first parameter on some paths and not on others, and that no other method in
    `methods` sets (one that does may have run before the read: driftcheck cannot order them)."""
    return {name: (line, test) for name, (line, test, _flags) in conditions(init, methods).items()}


def conditions(init: ast.FunctionDef | ast.AsyncFunctionDef,
               methods: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> dict[str, tuple[int, str, list[str]]]:
    """`set_only_when`'s answer with, for each attribute, the flags that record its condition on the object: `self.X`
    tested by the `if` itself, or assigned the very test (`self.supports_mm_inputs = encoder_cache is not None` before
    `if encoder_cache is not None: self.encoder_runner = ...`, 29f A2). A read under a test of such a flag is made
    where the attribute is there."""
    params = init.args.posonlyargs + init.args.args
    if not params:
        return {}
    first = params[0].arg
    where: dict[str, tuple[int, str]] = {}
    in_closures: set[str] = set()
    _stores(init.body, first, where, in_closures, None)
    if not where:
        return {}
    fall, exits = _paths(init.body, frozenset(), first)
    # what the paths that reach the end set; an early `return`'s path is not weighed (lenient: its `if` is not the
    # one a store sits under, so the message could not name the condition); where every path returns, those paths;
    # where every path raises, no object is built to read
    sure = fall if fall is not None else frozenset.intersection(*exits) if exits else frozenset(where)
    maybe = {name: at for name, at in where.items() if name not in sure and name not in in_closures and at[1]}
    if maybe:
        for fn in methods:
            if fn is init:
                continue
            fn_params = fn.args.posonlyargs + fn.args.args
            if fn_params:
                for name in _names_stored(fn, fn_params[0].arg) & maybe.keys():
                    del maybe[name]
    if not maybe:
        return {}
    recorded: dict[str, list[str]] = {}  # a test's text -> the attributes assigned exactly that value
    for stmt in walk(init):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            for name in _self_attrs(stmt, first):
                recorded.setdefault(ast.unparse(stmt.value), []).append(name)
    out = {}
    for name, (line, test) in maybe.items():
        flags = list(recorded.get(test, []))
        if test.startswith(f"{first}.") and test[len(first) + 1:].isidentifier():
            flags.append(test[len(first) + 1:])
        out[name] = (line, test, flags)
    return out


def _self_attrs(stmt: ast.stmt, first: str) -> list[str]:
    """The attributes of `first` one statement assigns (`self.x = ...`, `self.x: T = ...`, `self.a, self.b = ...`,
    `setattr(self, "x", ...)`)."""
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets = [stmt.target]
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = _named_store(stmt.value, first)
        return [name] if name else []
    else:
        return []
    return [t.attr for target in targets for t in attr_targets(target)
            if isinstance(t.value, ast.Name) and t.value.id == first]


def _stores(body: list[ast.stmt], first: str, where: dict, in_closures: set, condition: tuple[int, str] | None) -> None:
    """Fill `where` (attribute -> the innermost `if` around its first store, or (line, "") where none) and
    `in_closures` (attributes a function nested in `init` sets: when it runs is not known)."""
    for stmt in body:
        if isinstance(stmt, _NESTED):
            in_closures.update(_names_stored(stmt, first))
            continue
        for name in _self_attrs(stmt, first):
            where.setdefault(name, condition or (stmt.lineno, ""))
        if isinstance(stmt, ast.If):
            test = ast.unparse(stmt.test)
            _stores(stmt.body, first, where, in_closures, (stmt.lineno, test))
            _stores(stmt.orelse, first, where, in_closures, (stmt.lineno, f"not ({test})"))
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(stmt, field, None)
            for part in inner or ():
                if isinstance(part, (ast.ExceptHandler, ast.match_case)):
                    _stores(part.body, first, where, in_closures, condition)
                elif isinstance(part, ast.stmt):
                    _stores([part], first, where, in_closures, condition)
        for node in walk(stmt) if isinstance(stmt, (ast.Expr, ast.Assign, ast.Return)) else ():
            if isinstance(node, ast.Lambda):
                in_closures.update(_names_stored(node, first))


def _named_store(call: ast.Call, first: str) -> str | None:
    """The attribute a call sets on `first` by a literal name: `setattr(self, "x", v)`, and torch's
    `self.register_parameter("bias", None)` (and buffers, submodules), which a read of `self.bias` then finds."""
    func, args = call.func, call.args
    if isinstance(func, ast.Name) and func.id == "setattr" and len(args) >= 2 \
            and isinstance(args[0], ast.Name) and args[0].id == first:
        named = args[1]
    elif isinstance(func, ast.Attribute) and func.attr in MODULE_REGISTRARS and isinstance(func.value, ast.Name) \
            and func.value.id == first and args:
        named = args[0]
    else:
        return None
    return named.value if isinstance(named, ast.Constant) and isinstance(named.value, str) else None



def _names_stored(fn: ast.AST, first: str) -> set[str]:
    out: set[str] = set()
    for node in walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id == first:
            out.add(node.attr)
        elif isinstance(node, ast.Call):
            name = _named_store(node, first)
            if name:
                out.add(name)
    return out


def _paths(body: list[ast.stmt], have: frozenset, first: str) -> tuple[frozenset | None, list[frozenset]]:
    """(what is set when `body` falls through, or None if it never does; what is set at each `return` in it)."""
    exits: list[frozenset] = []
    cur: frozenset | None = have
    for stmt in body:
        if cur is None:
            break
        names = _self_attrs(stmt, first)
        if names:
            cur = cur | frozenset(names)
        elif isinstance(stmt, ast.Return):
            exits.append(cur)
            cur = None
        elif isinstance(stmt, ast.Raise):
            cur = None
        elif isinstance(stmt, ast.If):
            a, ea = _paths(stmt.body, cur, first)
            b, eb = _paths(stmt.orelse, cur, first)
            exits += ea + eb
            cur = b if a is None else a if b is None else a & b
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Try)) \
                or type(stmt).__name__ == "TryStar":
            # lenient: the body is taken to run to its end (an exception a handler swallows aside)
            parts = stmt.body + getattr(stmt, "orelse", []) + getattr(stmt, "finalbody", [])
            after, more = _paths(parts, cur, first)
            exits += more
            cur = after if after is not None else cur if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)) else None
        elif isinstance(stmt, ast.Match):
            done = [_paths(case.body, cur, first) for case in stmt.cases]
            for _after, more in done:
                exits += more
            cur = cur.union(*(after for after, _ in done if after is not None))  # lenient: some case ran
    return cur, exits
