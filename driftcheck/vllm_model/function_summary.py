"""One function summarised: its signature, decorators, what it returns and builds, the attributes it sets
on its first parameter.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name, first_line, source_text, walk, walk_statements
from driftcheck.vllm_model.module_summary import FunctionInfo
from driftcheck.vllm_model.signatures import signature_from_args


def decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return dotted_name(node) or ast.unparse(node)


def summarise_function(node: ast.FunctionDef | ast.AsyncFunctionDef, path: str, *, scan_calls: bool | list[int] = True,
                       statements: list[ast.AST] | None = None) -> FunctionInfo:
    """`statements`: `list(walk_statements(node))` when the caller has it (the class summary walks a method once).
    `scan_calls`: whether to look for a `dataclass(...)` call in the function, or the lines of the module that spell
    one (a function holding none of them is not walked: `@dataclass(...)` decorators put one in most config
    modules, where every function was walked for it)."""
    stmts = statements if statements is not None else list(walk_statements(node))
    if isinstance(scan_calls, list):
        first, last = first_line(node), getattr(node, "end_lineno", None) or node.lineno
        scan_calls = any(first <= line <= last for line in scan_calls)
    wraps = False
    for sub in walk(node) if scan_calls else ():
        if isinstance(sub, ast.Call):
            name = dotted_name(sub.func) or ""
            if name.split(".")[-1] == "dataclass":
                wraps = True
                break
    return FunctionInfo(
        name=node.name,
        line=node.lineno,
        end_line=getattr(node, "end_lineno", node.lineno) or node.lineno,
        signature=signature_from_args(node.args, path, node.lineno),
        decorators=[decorator_name(d) for d in node.decorator_list],
        returns=source_text(node.returns) if node.returns is not None else None,
        wraps_dataclass=wraps,
        decorator_sets=_decorator_sets(node, stmts),
        hands_back=_hands_back(node, stmts),
        returns_built=_returns_built(node, stmts),
        is_async=isinstance(node, ast.AsyncFunctionDef),
        async_generator=isinstance(node, ast.AsyncFunctionDef) and _yields(node),
    )


def _yields(fn: ast.AsyncFunctionDef) -> bool:
    """Whether the function itself yields (not a function, lambda or class defined in it)."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _returns_built(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmts: list[ast.AST]) -> list[str]:
    """Also "cls" for a classmethod whose every return builds its `cls` (`return cls(...)`, or `made = cls(...);
    return made` with `made` bound once): called on a class, it gives an object of that class (26c M1, EngineArgs's
    `from_cli_args`)."""
    local: dict[str, str] = {}
    built: list[str] = []
    first = (fn.args.posonlyargs + fn.args.args)[:1]
    cls = first[0].arg if first and any(dotted_name(d) == "classmethod" for d in fn.decorator_list) else None
    made: dict[str, int] = {}  # local name -> how many times bound, for a name bound to `cls(...)`
    returns: list[ast.Return] = []
    for stmt in stmts:
        if isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                local[a.asname or a.name] = f"{'.' * stmt.level}{stmt.module or ''}:{a.name}"
        elif isinstance(stmt, ast.Return):
            returns.append(stmt)
            if isinstance(stmt.value, ast.Call):
                name = dotted_name(stmt.value.func)
                if name and name.rsplit(".", 1)[-1][:1].isupper():  # a class, by the naming convention vLLM keeps
                    built.append(name)
        if cls:
            for name in _bound_names(stmt):
                made[name] = made.get(name, 0) + 1
    if cls and returns:
        once = {t.id for stmt in stmts if isinstance(stmt, ast.Assign) and _builds(stmt.value, cls)
                for t in stmt.targets if isinstance(t, ast.Name) and made.get(t.id) == 1}
        if all(r.value is not None and (_builds(r.value, cls) or isinstance(r.value, ast.Name) and r.value.id in once)
               for r in returns):
            built.append("cls")
    return list(dict.fromkeys(local.get(b, b) for b in built))  # in the order the returns come


def _bound_names(stmt: ast.AST) -> list[str]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
        stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)) else [i.optional_vars for i in stmt.items] if \
        isinstance(stmt, (ast.With, ast.AsyncWith)) else []
    return [n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)]


def _builds(value: ast.expr | None, cls: str) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == cls


def _hands_back(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmts: list[ast.AST]) -> list[str]:
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args}
    out = []
    for stmt in stmts:
        call = stmt.value if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call) else None
        # `return other(fn)` or `return other(...)(fn)`: the function handed to something else
        if call is not None and any(isinstance(a, ast.Name) and a.id in params for a in call.args):
            name = dotted_name(call.func.func if isinstance(call.func, ast.Call) else call.func)
            if name:
                out.append(name)
    return sorted(set(out))


def _decorator_sets(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmts: list[ast.AST]) -> list[str]:
    """What `fn`, used as a decorator, sets on what it decorates: on the first parameter of a wrapper it
    defines, or on its own first parameter when it returns it (a class decorator)."""
    sets: list[str] = []
    returns_first = False
    params = fn.args.posonlyargs + fn.args.args
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt is not fn:
            sets += _first_param_sets(stmt)
        elif isinstance(stmt, ast.Return) and params and isinstance(stmt.value, ast.Name) and stmt.value.id == params[0].arg:
            returns_first = True
    if returns_first:
        sets += _first_param_sets(fn, stmts)
    return sorted(set(sets))


def _first_param_sets(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmts: list[ast.AST] | None = None) -> list[str]:
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return []
    first = params[0].arg
    return [t.attr for stmt in (walk_statements(fn) if stmts is None else stmts) if isinstance(stmt, (ast.Assign, ast.AnnAssign))
            for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) for t in attr_targets(target)
            if isinstance(t.value, ast.Name) and t.value.id == first]


# torch.nn.Module's setters by name: `self.register_parameter("bias", None)` makes `self.bias` readable
MODULE_REGISTRARS = ("register_buffer", "register_parameter", "register_module", "add_module")


def attr_targets(target: ast.expr) -> list[ast.Attribute]:
    if isinstance(target, ast.Attribute):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        out: list[ast.Attribute] = []
        for elt in target.elts:
            out.extend(attr_targets(elt.value if isinstance(elt, ast.Starred) else elt))
        return out
    return []
