"""Modules a client puts into `sys.modules` in place of vLLM's before it imports them (a test's fake vLLM).

A test double often installs a fake `vllm.model_executor.layers.linear` (a `ModuleType` carrying a stub
`LinearBase`) with `monkeypatch.setitem(sys.modules, name, module)`, then imports from it in the same test:
`from vllm.model_executor.layers.linear import LinearBase` binds the stub, and `LinearBase()` runs whatever the
release's constructor requires. An import of a module that a statement before it, in the same body, has replaced
in `sys.modules` is the client's own (like a module it ships inside vLLM's package): what the names hold is not
vLLM's. A statement replaces a module by itself or through a function of the same file it calls (a helper such as
`_install_fake_vllm(monkeypatch)`, a few calls deep); a function's body starts with the modules a pytest fixture of
the file installs when the function names the fixture as a parameter, or when the fixture is `autouse=True`, and with
those the file's top level installs (a test function runs after its module is imported; not one the top level calls
itself). A test file also starts with what the `conftest.py` files of its folder and those above install at their top
level, and its functions with their fixtures (named, or autouse): pytest imports them first.

Only exact keys count: Python looks a dotted module up in `sys.modules` by its whole name, so a stub of `vllm`
alone does not stand in for `vllm.config`. The keys are string constants, or the keys of a dict or the items of a
list / tuple literal that a loop over it hands to the store (`for name, module in modules.items():` with `modules`
a dict literal bound once in the same function). Removing an entry (`sys.modules.pop`, `del sys.modules[k]`,
`monkeypatch.delitem`) installs nothing. An import before the replacement, or in a module-level import of the
file whose stand-in is installed only inside a function, binds vLLM's own object and is checked as usual.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name, walk

_STORES = frozenset({"setitem", "__setitem__", "setdefault"})  # `monkeypatch.setitem(sys.modules, k, v)`, ...
_MAX_DEPTH = 3  # helper calls followed from a statement


def _is_sys_modules(node: ast.AST | None) -> bool:
    return node is not None and (dotted_name(node) == "sys.modules"
                                 or isinstance(node, ast.Constant) and node.value == "sys.modules")


def _literal_bindings(scope: ast.AST) -> dict[str, ast.expr]:
    """Names a scope binds exactly once, by a plain assignment (`modules = {...}`): their values."""
    seen: dict[str, list[ast.expr]] = {}
    for node in walk(scope):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    seen.setdefault(t.id, []).append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            seen.setdefault(node.target.id, []).extend([node.value] if node.value is not None else [])
            seen[node.target.id].append(node.target)  # an augmented store: more than one value
    return {name: values[0] for name, values in seen.items() if len(values) == 1}


def _strings(node: ast.expr | None, bound: dict[str, ast.expr], depth: int = 0) -> set[str]:
    """The string constants a literal holds: itself, a dict literal's keys, a list / tuple / set literal's items, or
    those of the literal a name is bound to once."""
    if node is None or depth > 3:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if isinstance(node, ast.Name) and node.id in bound:
        return _strings(bound[node.id], bound, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("items", "keys") \
            and not node.args:
        return _strings(node.func.value, bound, depth + 1)
    return set()


def _loop_keys(scope: ast.AST, bound: dict[str, ast.expr]) -> dict[str, set[str]]:
    """Loop variables that run over the string keys of a literal: `for name, module in modules.items():` binds
    `name` to each key of `modules`; `for name in ("vllm", "vllm.config"):` to each item."""
    out: dict[str, set[str]] = {}
    for loop in walk(scope):
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            continue
        keys = _strings(loop.iter, bound)
        if not keys:
            continue
        target = loop.target
        if isinstance(target, ast.Tuple) and target.elts:
            target = target.elts[0]
        if isinstance(target, ast.Name):
            out.setdefault(target.id, set()).update(keys)
    return out


def _key_strings(key: ast.expr, bound: dict[str, ast.expr], loops: dict[str, set[str]]) -> set[str]:
    if isinstance(key, ast.Name) and key.id in loops:
        return loops[key.id]
    return _strings(key, bound) if isinstance(key, (ast.Constant, ast.Name)) else set()


def installed_directly(stmt: ast.AST, bound: dict[str, ast.expr], loops: dict[str, set[str]]) -> set[str]:
    """The module names `stmt` itself puts into `sys.modules` (its own stores, not the helpers it calls); `bound` and
    `loops`: the literal bindings and loop keys of the function or module the statement is in."""
    out: set[str] = set()
    for node in walk(stmt):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and _is_sys_modules(t.value):
                    out |= _key_strings(t.slice, bound, loops)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and _is_sys_modules(func.value):
                if func.attr in _STORES and node.args:
                    out |= _key_strings(node.args[0], bound, loops)
                elif func.attr == "update" and node.args:
                    out |= _strings(node.args[0], bound)
            elif node.args and _is_sys_modules(node.args[0]) and len(node.args) >= 2:
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if name in _STORES:  # `monkeypatch.setitem(sys.modules, k, v)`
                    out |= _key_strings(node.args[1], bound, loops)
                elif name == "dict":  # `patch.dict(sys.modules, {k: v})`
                    out |= _strings(node.args[1], bound)
    return out


class ModuleStandIns:
    """Which vLLM modules a statement of one file has replaced in `sys.modules`, through the file's own functions."""

    def __init__(self, tree: ast.Module, text: str, outer: "list[ModuleStandIns] | None" = None):
        """`outer`: the `conftest.py` files pytest loads before this test file, nearest first (`conftests_above`)."""
        self.outer = [c for c in outer or () if c.active]
        self.active = "sys.modules" in text or bool(self.outer)
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))} \
            if self.active else {}
        self._by_function: dict[str, set[str]] = {}
        self._names: dict[int, tuple[dict[str, ast.expr], dict[str, set[str]]]] = {}
        self._tree = tree
        self._module_level: tuple[set[str], set[str]] | None = None

    def by_function(self, name: str, depth: int = 0) -> set[str]:
        """What calling the file's function `name` installs (its own stores and its helpers', a few calls deep)."""
        if name in self._by_function:
            return self._by_function[name]
        fn = self.functions.get(name)
        if fn is None or depth > _MAX_DEPTH:
            return set()
        self._by_function[name] = set()  # a recursive helper installs what its other statements do
        found = set()
        for stmt in fn.body:
            found |= self.installed(stmt, fn, depth + 1)
        self._by_function[name] = found
        return found

    def installed(self, stmt: ast.AST, scope: ast.AST, depth: int = 0) -> set[str]:
        """The module names a statement installs, by itself or through a call of one of the file's functions."""
        if not self.active:
            return set()
        out: set[str] = set()
        nodes = list(walk(stmt))
        if any(isinstance(n, ast.Name) and n.id == "sys" or isinstance(n, ast.Constant) and n.value == "sys.modules"
               for n in nodes):
            names = self._names.get(id(scope))
            if names is None:
                bound = _literal_bindings(scope)
                names = self._names[id(scope)] = (bound, _loop_keys(scope, bound))
            out |= installed_directly(stmt, *names)
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
                out |= self.by_function(node.func.id, depth)
        return out

    def module_level(self) -> tuple[set[str], set[str]]:
        """(what the file's top level installs, the names of its functions that top level calls): once the module is
        imported its stand-ins are in `sys.modules`, so a function runs with them unless the top level itself calls it
        (perhaps before the install)."""
        if self._module_level is None:
            installed: set[str] = set()
            called: set[str] = set()
            for stmt in self._tree.body:
                if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                installed |= self.installed(stmt, self._tree)
                called |= {n.func.id for n in walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            self._module_level = (installed, called)
        return self._module_level

    def at_module_start(self) -> set[str]:
        """What the `conftest.py` files above a test file have installed at their top level before pytest imports it."""
        return {m for c in self.outer for m in c.module_level()[0]}

    def at_start(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
        """What is in `sys.modules` before `fn` runs: what the file's top level and the conftest files' installed
        (unless the top level calls `fn`), and what the pytest fixtures installed: those `fn` names as parameters (the
        file's own, else the nearest conftest's of that name), and every `autouse=True` fixture of them all."""
        if not self.active:
            return set()
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        installed, called = self.module_level()
        # the conftest files ran before this module was imported, even for a function its top level calls
        out: set[str] = (set(installed) if fn.name not in called else set()) | self.at_module_start()
        named: set[str] = set()
        for stand_ins in [self, *self.outer]:
            for name, other in stand_ins.functions.items():
                if other is fn or not _is_fixture(other):
                    continue
                if (name in params and name not in named) or _is_autouse(other):
                    out |= stand_ins.by_function(name)
                named.add(name)  # a nearer file's fixture of this name hides a farther one's
        return out


def stood_in_anywhere(file, source) -> set[str]:
    """Every vLLM module the file, its fixtures or the `conftest.py` files above it put into `sys.modules` somewhere
    (at their top level or in any function): a patch that names its target by a dotted string resolves through such
    a stand-in whenever it runs after the install, as a test's patches do (28e F1: the Ascend AgentSDK tests stub
    `vllm.entrypoints.openai.serving_chat` in an autouse fixture, then `patch("vllm...serving_chat.OpenAIServingChat")`).
    Unlike an import, the order within the file is not followed: a test file that stubs a module patches its stub."""
    stand_ins = ModuleStandIns(file.tree, file.text, conftests_above(file.rel, source))
    if not stand_ins.active:
        return set()
    out = stand_ins.at_module_start() | stand_ins.module_level()[0]
    for fn in walk(file.tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in fn.body:
                out |= stand_ins.installed(stmt, fn)
            out |= stand_ins.at_start(fn)
    return out


def stood_in_for(ctx, file) -> set[str]:
    """`stood_in_anywhere` of a client file, once per scan (`ctx.once`); nothing to read in a file that is no test and
    names no `sys.modules`."""
    from driftcheck.client_model.client import is_test_path

    if "sys.modules" not in file.text and not is_test_path(file.rel):
        return set()
    memo = ctx.once(_stand_ins_by_file)
    if file.rel not in memo:
        memo[file.rel] = stood_in_anywhere(file, ctx.client)
    return memo[file.rel]


def _stand_ins_by_file(_ctx) -> dict[str, set[str]]:
    return {}


def through_stand_in(path: str, stood: set[str]) -> bool:
    """Whether a dotted path resolves through a stand-in: a prefix of it is in `sys.modules` as the client's object."""
    parts = path.split(".")
    return any(".".join(parts[:i]) in stood for i in range(1, len(parts) + 1))


def conftests_above(rel: str, source) -> "list[ModuleStandIns]":
    """The stand-ins of the `conftest.py` files pytest imports before test file `rel` (its folder's and each folder's
    above it, nearest first; not `rel` itself), read once per client. Only a test file runs under them: the package's
    own modules are imported without pytest (KA1's twins)."""
    from driftcheck.client_model.client import is_test_path

    if source is None or not is_test_path(rel):
        return []
    cache = source.__dict__.setdefault("_conftest_stand_ins", {})
    parts = rel.split("/")[:-1]
    out = []
    for depth in range(len(parts), -1, -1):
        path = "/".join([*parts[:depth], "conftest.py"])
        if path == rel:
            continue
        if path not in cache:
            cache[path] = None
            file = source.file_at(path)
            try:
                text = file.text if file is not None else source.tree.read_text(path)
                tree = file.tree if file is not None else ast.parse(text)
            except Exception:  # no conftest there (or none Python reads): nothing installed
                continue
            if "sys.modules" in text:
                cache[path] = ModuleStandIns(tree, text)
        if cache[path] is not None:
            out.append(cache[path])
    return out


def _fixture_call(dec: ast.expr) -> ast.expr:
    return dec.func if isinstance(dec, ast.Call) else dec


def _is_fixture(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any((dotted_name(_fixture_call(d)) or "").rpartition(".")[2] == "fixture" for d in fn.decorator_list)


def _is_autouse(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and (dotted_name(d.func) or "").rpartition(".")[2] == "fixture"
               and any(k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value is True
                       for k in d.keywords) for d in fn.decorator_list)
