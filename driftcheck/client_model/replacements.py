"""Classes whose `__new__` builds another class: vLLM's `PluggableLayer` and `CustomOp` hand back the class an
out-of-tree plugin registered (`@Wrapper.register_oot class X(Wrapper)`), so `Wrapper(...)` runs X's `__init__`
(Python calls `type(obj).__init__` when `__new__` returns an instance of the class called). A client subclass
handed to a method of a vLLM class is recorded in the class phase (`Usage.replacements`); a construction is then
checked against each replacement registered through a method that fills the container `__new__` reads.
"""

from __future__ import annotations

import ast
import bisect

from driftcheck.astnodes import children, nodes_of, walk
from driftcheck.client_model.inference import ClassRef
from driftcheck.client_model.uses import Usage
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.signatures import check_call


def registered_with(analyzer, name: str, cls: ast.ClassDef) -> list[tuple[str, str]]:
    """(vLLM class, method) for each method of a vLLM class a client class is handed to: decorated by it
    (`@Wrapper.register_oot`, `@CustomOp.register_oot(name="RMSNorm")`) or passed to it in any client file
    (`CustomOp.register_oot(_decorated_op_cls=X, name=...)`, also from a loop over a table of classes: the
    analyzers' shared `registered_classes`, filled by `registrations` in the class phase before this one)."""
    out: list[tuple[str, str]] = []
    for callee in (d.func if isinstance(d, ast.Call) else d for d in cls.decorator_list):
        if isinstance(callee, ast.Attribute):
            owner = analyzer.infer(callee.value, {})
            if isinstance(owner, ClassRef) and (owner.cls.qualname, callee.attr) not in out:
                out.append((owner.cls.qualname, callee.attr))
    for registrar in analyzer.registered_classes.get(f"{analyzer.file.module}.{name}", []):
        if tuple(registrar) not in out:
            out.append(tuple(registrar))
    return out


def registrations(analyzer) -> dict[str, list[tuple[str, str]]]:
    """Client class ("module.Name") -> (vLLM class, method) for each call of this file that hands the class to a method
    of a vLLM class: the class by its name (defined here or imported from another client module, also inside the
    function) or through a loop variable over a literal table of classes (`for name, op_cls in OPS.items():
    CustomOp.register_oot(_decorated_op_cls=op_cls, name=name)`, OPS a dict literal of this file). The callee's
    owner is inferred in the calling function's scope (its own imports count: vllm-ascend imports CustomOp there)."""
    tree = analyzer.file.tree
    names = _class_names(analyzer)
    loop_vars = {n.id for loop in nodes_of(tree, ast.For, ast.AsyncFor) for n in walk(loop.target) if isinstance(n, ast.Name)}
    wanted = names.keys() | loop_vars
    lines = sorted(call.lineno for call in nodes_of(tree, ast.Call) if isinstance(call.func, ast.Attribute) and any(
        isinstance(a, ast.Name) and a.id in wanted for a in [*call.args, *(k.value for k in call.keywords)]))
    if not lines:
        return {}
    tables = _tables(tree)
    out: dict[str, list[tuple[str, str]]] = {}
    for scope, calls, loops in _scopes(tree, lines):
        env: dict | None = None
        for call in calls:
            if not isinstance(call.func, ast.Attribute):
                continue
            given: list[str] = []
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                if not isinstance(arg, ast.Name):
                    continue
                if arg.id in names:
                    given.append(names[arg.id])
                for loop in loops:
                    if loop.lineno <= call.lineno <= (loop.end_lineno or loop.lineno):
                        given += [names[n] for n in _loop_elements(loop, arg.id, tables) if n in names]
            if not given:
                continue
            if env is None:
                env = analyzer.local_imports(scope, record=False) if scope is not None else {}
            owner = analyzer.infer(call.func.value, env)
            if isinstance(owner, ClassRef):
                for label in given:
                    found = out.setdefault(label, [])
                    if (owner.cls.qualname, call.func.attr) not in found:
                        found.append((owner.cls.qualname, call.func.attr))
    return out


def _class_names(analyzer) -> dict[str, str]:
    """Name -> "module.Class" for the file's own classes and the names it imports from other client modules."""
    own = analyzer.usage.client_packages()
    out = {name: f"{analyzer.file.module}.{name}" for name in analyzer.classes}
    package = analyzer.file.rel.endswith("__init__.py")
    for node in nodes_of(analyzer.file.tree, ast.ImportFrom):
        source = resolve_relative(analyzer.file.module, package, node.level, node.module)
        if source in own:
            for a in node.names:
                if a.name != "*":
                    out.setdefault(a.asname or a.name, f"{source}.{a.name}")
    return out


def _tables(tree: ast.AST) -> dict[str, list[ast.expr]]:
    """Name -> the literal dicts, lists, tuples or sets the file assigns to it (anywhere: `global OPS; OPS = {...}`)."""
    out: dict[str, list[ast.expr]] = {}
    for node in nodes_of(tree, ast.Assign, ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(node.value, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
            for t in targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node.value)
    return out


def _loop_elements(loop: ast.For, var: str, tables: dict[str, list[ast.expr]]) -> list[str]:
    """The class names `var` takes in `for ... in TABLE.items()/.values()/TABLE/[A, B]`, where `var` is the loop's
    target or the value half of its `(key, value)` target over `.items()`."""
    it, method = loop.iter, None
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args:
        it, method = it.func.value, it.func.attr
    literals = [it] if isinstance(it, (ast.Dict, ast.List, ast.Tuple, ast.Set)) else \
        tables.get(it.id, []) if isinstance(it, ast.Name) else []
    target = loop.target
    if method == "items":
        ok = isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name) \
            and target.elts[1].id == var
    else:
        ok = isinstance(target, ast.Name) and target.id == var and method in (None, "values")
    if not ok:
        return []
    out: list[str] = []
    for lit in literals:
        if isinstance(lit, ast.Dict):
            values = lit.values if method in ("items", "values") else []
        else:
            values = lit.elts if method is None else []
        out += [v.id for v in values if isinstance(v, ast.Name)]
    return out


def _scopes(tree: ast.Module, lines: list[int]):
    """(function or None for module level, the calls of that scope, its for-loops), nested functions separately; only
    the scopes whose lines hold one of `lines` (sorted: where a call hands on a name), the others cannot register."""
    fns = [fn for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef)
           if bisect.bisect_right(lines, fn.end_lineno) > bisect.bisect_left(lines, fn.lineno)]
    for scope in [None, *fns]:
        body = tree.body if scope is None else scope.body
        calls: list[ast.Call] = []
        loops: list[ast.For] = []
        todo = list(body)
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Call):
                calls.append(node)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                loops.append(node)
            todo += children(node)
        if calls:
            yield scope, calls, loops


def built_as_replacement(api, usage: Usage, cls: Resolved, shape) -> bool:
    """`Wrapper(..., gate_is_fused=True)` where the client registers `@Wrapper.register_oot class X(Wrapper)` whose
    `__init__` accepts the call, and a `__new__` of Wrapper's MRO picks the class to build from the container that
    registrar fills (or reads none: any registration counts). A registrar that fills another container
    (`CustomOp.register`, in-tree names) replaces nothing."""
    candidates = usage.replacements.get(cls.qualname)
    chooser = api.new_chooses_class(cls) if candidates else None
    if chooser is None:
        return False
    order = {c.qualname: c for c in api.mro(cls)[0]}
    for _label, sig, registrars in candidates:
        if check_call(sig.without_first(), shape):
            continue
        for owner, method in registrars:
            if owner in order and (not chooser[1] or chooser[1] & api.containers_filled_by(order[owner], method)):
                return True
            if owner not in order and chooser[1] and _fills_the_same_table(api, owner, method, chooser):
                return True
    return False


def _fills_the_same_table(api, owner: str, method: str, chooser) -> bool:
    """A registrar of a class outside the built class's MRO that fills the table its `__new__` reads: vLLM 0.22's
    `FusedMoE` is a `PluggableLayer`, whose `__new__` reads the module's `op_registry_oot`, and `CustomOp.register_oot`
    (of the same module) fills that dict too (GH: vllm-ascend registers its `AscendFusedMoE` through
    `CustomOp.register_oot`). Only a class of the chooser's own module: a container is known by its name."""
    found = api.resolve(owner)
    return isinstance(found, Resolved) and found.kind == "class" and found.path == chooser[0].path \
        and bool(chooser[1] & api.containers_filled_by(found, method))
