"""Patches that name what they replace by strings: `mock.patch("vllm.engine.metrics.StatLogger.log")` (also as a
decorator or a `with`; `mock.patch.multiple("vllm.x", f=...)`), `monkeypatch.setattr("vllm.x.f", v)`, pytest-mock's
`mocker.patch(...)`, and wrapt's
`wrap_function_wrapper("vllm.engine.metrics", "StatLogger.__init__", w)` / `@patch_function_wrapper(module, name)`.

Each resolves its path when it starts: it imports the module, then looks each following name up with `getattr`, so a
name the release no longer has raises AttributeError there, before any wrapper runs (ENOVA's llmo instruments vLLM's
`StatLogger.__init__`, which 0.5.1 split into `LoggingStatLogger` / `PrometheusStatLogger`: 26f M4). The strings may be
held in names the function (or module) binds once to a literal, and joined by an f-string or `+` (llmo's
`f"{statlogger_object}.{statlogger_method}"`). `mock.patch(..., create=True)` and `monkeypatch.setattr(...,
raising=False)` create a missing name instead: they are left out.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass

from driftcheck.astnodes import dotted_name, functions_at, nodes_of, own_scope
from driftcheck.client_model.imported_functions import imported_path

# what each patcher is called once `patcher` has read the file's imports (`unittest.mock` read as `mock`)
BY_PATH = ("mock.patch", "mocker.patch", "monkeypatch.setattr")
# `mock.patch.multiple("vllm.x", f=..., g=...)`: each keyword a name looked up on the target (27d M3)
_MULTIPLE = ("mock.patch.multiple", "mocker.patch.multiple")
PATCH_WORDS = ("patch", "setattr", "wrap_")  # a file whose text holds none of these holds no such patch
_WRAPT = ("wrapt.wrap_function_wrapper", "wrapt.patch_function_wrapper", "wrapt.wrap_object")
# the object form, `patch.object(obj, "name")` / `monkeypatch.setattr(obj, "name", v)` / `delattr(obj, "name")`: the
# name is looked up on the object (monkeypatch's `delattr` takes a dotted string too)
_OBJECT = ("mock.patch.object", "mocker.patch.object", "monkeypatch.setattr", "monkeypatch.delattr")
_FIXTURES = ("mocker", "monkeypatch")  # pytest's fixtures come in as parameters, not imports
_IMPORTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # tree -> {bound name: what it imports}


def patcher(tree: ast.Module, func: ast.expr) -> str | None:
    """What a call's callee is through the file's imports when it is one of the patchers this module reads
    (`patch` after `from unittest.mock import patch` is "mock.patch"); None for anything else: a `patch` the file
    defines itself or never imports (nano-grpo calls one it never imported: a NameError, not a mock; 28b F1)."""
    dotted = dotted_name(func) or ""
    head, _, rest = dotted.partition(".")
    imported = _IMPORTS.get(tree)
    if imported is None:
        imported = _IMPORTS[tree] = _imported_names(tree)
    if head in imported:
        origin = ".".join(p for p in (imported[head], rest) if p)
    elif head in _FIXTURES:
        origin = dotted
    else:
        return None
    origin = origin.removeprefix("unittest.")
    return origin if origin in (*BY_PATH, *_OBJECT, *_MULTIPLE, *_WRAPT) else None


def _imported_names(tree: ast.Module) -> dict[str, str]:
    """{name: the module or member it is bound to} for every import in the file (a test imports `patch` inside a
    function or a `try` as often as at the top; the file's own defs are not imports and do not count)."""
    out: dict[str, str] = {}
    for node in nodes_of(tree, ast.Import, ast.ImportFrom):
        for a in node.names:
            if isinstance(node, ast.Import):
                out[a.asname or a.name.partition(".")[0]] = a.name if a.asname else a.name.partition(".")[0]
            elif node.module and not node.level:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


@dataclass(frozen=True)
class PatchPath:
    node: ast.Call  # the patch call
    path: str  # the whole dotted path it resolves: "vllm.engine.metrics.StatLogger.__init__"
    module: str | None  # where wrapt names the module apart ("vllm.engine.metrics"); None: any prefix of `path`
    rel: str = ""  # the client file that holds it (the rules read them from the visit's records, `Usage.patch_paths`)


def patch_paths(tree: ast.Module, package: str, rel: str = "") -> list[PatchPath]:
    """The file's patches whose path starts in `package` and can be spelled out; `rel` names the file."""
    out = []
    for call in nodes_of(tree, ast.Call):
        callee = patcher(tree, call.func) or ""
        if callee in (*BY_PATH, *_OBJECT) and call.args:
            if any(k.arg in ("create", "raising") for k in call.keywords):
                continue  # it may create the name (`create=True`, `raising=False`)
            path = _spelled(tree, call, call.args[0]) if callee in (*BY_PATH, "monkeypatch.delattr") else None
            if path is None and callee in _OBJECT and len(call.args) >= 2:
                # the object form: `patch.object(Worker, "m")`, `monkeypatch.setattr(envs, "X", v)` look the name up
                # on an object the file imports from vLLM (28e M1)
                owner = imported_path(tree, dotted_name(call.args[0]) or "")
                name = _spelled(tree, call, call.args[1])
                path = f"{owner}.{name}" if owner and name and name.isidentifier() else None
            if path and path.startswith(package + "."):
                out.append(PatchPath(call, path, None, rel))
        elif callee in _MULTIPLE and call.args and not any(k.arg == "create" for k in call.keywords):
            target = _spelled(tree, call, call.args[0])
            if target and target.startswith(package + "."):
                out += [PatchPath(call, f"{target}.{k.arg}", None, rel) for k in call.keywords if k.arg]
        elif callee in _WRAPT:
            given = dict(zip(("module", "name"), call.args[:2])) | {k.arg: k.value for k in call.keywords if k.arg}
            module = _spelled(tree, call, given["module"]) if "module" in given else None
            name = _spelled(tree, call, given["name"]) if "name" in given else None
            if module and name and (module == package or module.startswith(package + ".")):
                out.append(PatchPath(call, f"{module}.{name}", module, rel))
    return out


def _spelled(tree: ast.Module, call: ast.Call, expr: ast.expr) -> str | None:
    """The string `expr` certainly is: a literal, a name its scope binds once to one, an f-string or `+` of those."""
    if isinstance(expr, ast.Constant):
        return expr.value if isinstance(expr.value, str) else None
    if isinstance(expr, ast.JoinedStr):
        parts = [_spelled(tree, call, v.value if isinstance(v, ast.FormattedValue) else v) for v in expr.values]
        if any(isinstance(v, ast.FormattedValue) and (v.conversion != -1 or v.format_spec) for v in expr.values):
            return None
        return "".join(parts) if all(p is not None for p in parts) else None
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = _spelled(tree, call, expr.left), _spelled(tree, call, expr.right)
        return left + right if left is not None and right is not None else None
    if isinstance(expr, ast.Name):
        around = functions_at(tree, call.lineno)
        scope = own_scope(around[-1]) if around else list(tree.body)
        values = [n.value for n in scope if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Name) and n.targets[0].id == expr.id]
        stores = [n for n in scope if isinstance(n, ast.Name) and n.id == expr.id and not isinstance(n.ctx, ast.Load)]
        if len(values) == 1 and (not around or len(stores) == 1) and isinstance(values[0], ast.Constant) \
                and isinstance(values[0].value, str):
            return values[0].value
    return None
