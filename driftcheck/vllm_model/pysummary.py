"""One module's `ast`, summarised into plain data: names, imports, classes, functions, fields.

The summary is resolution-free (it never looks at another module), so it can be cached by the
file's content hash and reused across vLLM versions that ship the same file. Cross-module work
(re-exports, MRO, constructors) happens in `api_index`.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from dataclasses import dataclass, field

from driftcheck.astnodes import dotted_name
from driftcheck.vllm_model.signatures import Signature, signature_from_args

SCHEMA = 12  # bump when the summary's shape changes (invalidates the on-disk cache)


@dataclass
class Binding:
    """A module-level name: what it is and where it was bound."""

    kind: str  # class | function | import | module-import | assign | alias
    line: int
    target: str = ""  # import: dotted "module.name" (or module for module-import); alias: expression
    type_only: bool = False  # bound only under `if TYPE_CHECKING:`
    fallback: "Binding | None" = None  # the `except ImportError:` binding used when this one fails to import


@dataclass
class FunctionInfo:
    name: str
    line: int
    end_line: int
    signature: Signature
    decorators: list[str] = field(default_factory=list)
    returns: str | None = None
    wraps_dataclass: bool = False  # body calls `dataclass(...)`: a decorator like vLLM's @config
    # attributes it sets on the first parameter of itself or of a function it defines: used as a decorator,
    # it creates them on what it decorates (`def wrapped(instance, ...): instance.registry = ...`)
    decorator_sets: list[str] = field(default_factory=list)
    # callables whose result it returns (`return tilelang.jit(...)(fn)` -> "tilelang.jit"): used as a
    # decorator, the decorated function becomes what they make
    hands_back: list[str] = field(default_factory=list)
    # classes its `return X(...)` statements build: "Name.attr" as written, or ".pkg.mod:Name" for a name the
    # function imports itself (`from vllm.v1.worker.gpu.model_runner import GPUModelRunner as V2; return V2(...)`)
    returns_built: list[str] = field(default_factory=list)

    @property
    def is_static(self) -> bool:
        return "staticmethod" in self.decorators

    @property
    def is_classmethod(self) -> bool:
        return "classmethod" in self.decorators

    @property
    def is_property(self) -> bool:
        return any(d in ("property", "cached_property", "functools.cached_property") or d.endswith(".setter") for d in self.decorators)


@dataclass
class FieldInfo:
    """A class-level annotated name, the raw material of dataclass constructors."""

    name: str
    line: int
    annotation: str
    has_value: bool
    has_default: bool
    default: str | None = None
    init: bool = True
    kw_only: bool | None = None  # None: decided by the class decorator

    @property
    def is_classvar(self) -> bool:
        return self.annotation.startswith(("ClassVar", "typing.ClassVar"))

    @property
    def is_initvar(self) -> bool:
        return self.annotation.startswith(("InitVar", "dataclasses.InitVar"))

    @property
    def is_kw_only_marker(self) -> bool:
        return self.annotation in ("KW_ONLY", "dataclasses.KW_ONLY")


@dataclass
class ClassInfo:
    name: str
    line: int
    end_line: int
    bases: list[str]
    decorators: list[str]
    decorator_kwargs: dict[str, str]
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    fields: list[FieldInfo] = field(default_factory=list)
    class_attrs: dict[str, int] = field(default_factory=dict)
    instance_attrs: dict[str, tuple[int, str | None]] = field(default_factory=dict)  # name -> (line, type expr)
    dynamic_attrs: bool = False  # defines __getattr__/__getattribute__
    class_kwargs: dict[str, str] = field(default_factory=dict)  # `class C(Base, total=False, kw_only=True)`
    dynamic_names: bool = False  # `setattr(self, name, ...)` / `self.register_buffer(name, ...)` with a computed name


@dataclass
class GetattrInfo:
    """A module-level `__getattr__`: the names it serves and whether it refuses all others."""

    line: int
    names: dict[str, str | None] = field(default_factory=dict)  # name -> dotted target, or None if opaque
    closed: bool = False
    deprecated: bool = False


@dataclass
class ModuleInfo:
    name: str
    path: str
    is_package: bool
    bindings: dict[str, Binding] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    all_names: list[str] | None = None
    getattr: GetattrInfo | None = None
    dicts: dict[str, dict[str, str]] = field(default_factory=dict)
    syntax_error: str | None = None
    lines: int = 0
    dynamic_globals: bool = False  # hands `globals()` to code (protobuf `_pb2`, generated modules): names made at import
    identifier_strings: list[str] = field(default_factory=list)  # string constants that are identifiers (for dynamic_names)


_dotted = dotted_name


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return _dotted(node) or ast.unparse(node)


def _is_type_checking(test: ast.expr) -> bool:
    name = _dotted(test)
    return name in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    """`from ..x import y` inside `module` -> absolute dotted module name."""
    if level == 0:
        return target or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if target:
        return f"{base}.{target}" if base else target
    return base


# Cheap source-text tests that let a summary skip whole-AST walks that cannot find anything:
# no `dataclass(` call anywhere -> no function wraps dataclass(); no `setattr` -> statements suffice.
_DATACLASS_CALL = re.compile(r"dataclass\s*\(")


class _Summariser:
    def __init__(self, info: ModuleInfo, scan_calls: bool = True, scan_setattr: bool = True):
        self.info = info
        self.scan_calls = scan_calls
        self.scan_setattr = scan_setattr

    def run(self, tree: ast.Module) -> None:
        self._block(tree.body, type_only=False)

    def _bind(self, name: str, binding: Binding) -> None:
        existing = self.info.bindings.get(name)
        # A runtime binding beats one that exists only for type checkers.
        if existing is not None and not existing.type_only and binding.type_only:
            return
        self.info.bindings[name] = binding

    def _block(self, body: list[ast.stmt], type_only: bool) -> None:
        info = self.info
        for node in body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self._bind(alias.asname, Binding("module-import", node.lineno, alias.name, type_only))
                    else:
                        top = alias.name.split(".")[0]
                        self._bind(top, Binding("module-import", node.lineno, top, type_only))
            elif isinstance(node, ast.ImportFrom):
                module = resolve_relative(info.name, info.is_package, node.level, node.module)
                for alias in node.names:
                    if alias.name == "*":
                        if not type_only:
                            info.star_imports.append(module)
                        continue
                    self._bind(alias.asname or alias.name, Binding("import", node.lineno, f"{module}.{alias.name}", type_only))
            elif isinstance(node, ast.ClassDef):
                info.classes[node.name] = summarise_class(node, info.path, scan_calls=self.scan_calls,
                                                          scan_setattr=self.scan_setattr)
                self._bind(node.name, Binding("class", node.lineno, type_only=type_only))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                fn = summarise_function(node, info.path, scan_calls=self.scan_calls)
                if node.name == "__getattr__":
                    info.getattr = _summarise_getattr(node, info)
                if "overload" in fn.decorators or "typing.overload" in fn.decorators:
                    if node.name in info.functions:
                        continue
                info.functions[node.name] = fn
                self._bind(node.name, Binding("function", node.lineno, type_only=type_only))
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                self._assignment(node, type_only)
            elif isinstance(node, ast.If):
                if _is_type_checking(node.test):
                    self._block(node.body, type_only=True)
                    self._block(node.orelse, type_only=type_only)
                else:
                    self._block(node.body, type_only)
                    self._block(node.orelse, type_only)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                before = dict(self.info.bindings)
                self._block(node.body, type_only)
                normal = {k: v for k, v in self.info.bindings.items() if before.get(k) is not v}
                for handler in node.handlers:
                    self._block(handler.body, type_only)
                # `try: from opentelemetry.trace import Tracer / except ImportError: class Tracer: ...`: the
                # handler's definition is a fallback; the try body's binding is what a normal install has.
                for name, binding in normal.items():
                    handler_binding = self.info.bindings.get(name)
                    if handler_binding is not binding and handler_binding is not None:
                        binding.fallback = handler_binding
                    self.info.bindings[name] = binding
                self._block(node.orelse, type_only)
                self._block(node.finalbody, type_only)
            elif isinstance(node, ast.With):
                self._block(node.body, type_only)

    def _assignment(self, node: ast.stmt, type_only: bool) -> None:
        info = self.info
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:  # AugAssign: `__all__ += [...]`
            if isinstance(node.target, ast.Name) and node.target.id == "__all__":
                names = _string_list(node.value)
                if names is not None:
                    info.all_names = (info.all_names or []) + names
            return
        for target in targets:
            for name_node in _assigned_names(target):
                name = name_node.id
                if name == "__all__":
                    names = _string_list(value) if value is not None else None
                    if names is not None:
                        info.all_names = names
                    continue
                kind, expr = "assign", ""
                if isinstance(value, (ast.Name, ast.Attribute)) and isinstance(target, ast.Name):
                    kind, expr = "alias", _dotted(value) or ""
                if isinstance(value, ast.Dict) and isinstance(target, ast.Name):
                    mapping = _string_dict(value)
                    if mapping is not None:
                        info.dicts[name] = mapping
                self._bind(name, Binding(kind, node.lineno, expr, type_only))


def _assigned_names(target: ast.expr) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        out: list[ast.Name] = []
        for elt in target.elts:
            out.extend(_assigned_names(elt.value if isinstance(elt, ast.Starred) else elt))
        return out
    return []


def _string_list(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for elt in node.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                out.append(elt.value)
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_list(node.left), _string_list(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _string_dict(node: ast.Dict) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out[key.value] = value.value
        elif isinstance(value, ast.Tuple) and value.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
        ):
            out[key.value] = ":".join(e.value for e in value.elts)  # ("module", "attr") lazy maps
        else:
            out[key.value] = ""
    return out


def summarise_function(node: ast.FunctionDef | ast.AsyncFunctionDef, path: str, *, scan_calls: bool = True) -> FunctionInfo:
    wraps = False
    for sub in ast.walk(node) if scan_calls else ():
        if isinstance(sub, ast.Call):
            name = _dotted(sub.func) or ""
            if name.split(".")[-1] == "dataclass":
                wraps = True
                break
    return FunctionInfo(
        name=node.name,
        line=node.lineno,
        end_line=getattr(node, "end_lineno", node.lineno) or node.lineno,
        signature=signature_from_args(node.args, path, node.lineno),
        decorators=[_decorator_name(d) for d in node.decorator_list],
        returns=ast.unparse(node.returns) if node.returns is not None else None,
        wraps_dataclass=wraps,
        decorator_sets=_decorator_sets(node),
        hands_back=_hands_back(node),
        returns_built=_returns_built(node),
    )


def _returns_built(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    local: dict[str, str] = {}
    built: list[str] = []
    for stmt in _walk_statements(fn):
        if isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                local[a.asname or a.name] = f"{'.' * stmt.level}{stmt.module or ''}:{a.name}"
        elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
            name = _dotted(stmt.value.func)
            if name and name.rsplit(".", 1)[-1][:1].isupper():  # a class, by the naming convention vLLM keeps
                built.append(name)
    return list(dict.fromkeys(local.get(b, b) for b in built))  # in the order the returns come


def _hands_back(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args}
    out = []
    for stmt in _walk_statements(fn):
        call = stmt.value if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call) else None
        # `return other(fn)` or `return other(...)(fn)`: the function handed to something else
        if call is not None and any(isinstance(a, ast.Name) and a.id in params for a in call.args):
            name = _dotted(call.func.func if isinstance(call.func, ast.Call) else call.func)
            if name:
                out.append(name)
    return sorted(set(out))


def _decorator_sets(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """What `fn`, used as a decorator, sets on what it decorates: on the first parameter of a wrapper it
    defines, or on its own first parameter when it returns it (a class decorator)."""
    sets: list[str] = []
    returns_first = False
    params = fn.args.posonlyargs + fn.args.args
    for stmt in _walk_statements(fn):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt is not fn:
            sets += _first_param_sets(stmt)
        elif isinstance(stmt, ast.Return) and params and isinstance(stmt.value, ast.Name) and stmt.value.id == params[0].arg:
            returns_first = True
    if returns_first:
        sets += _first_param_sets(fn)
    return sorted(set(sets))


def _first_param_sets(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return []
    first = params[0].arg
    return [t.attr for stmt in _walk_statements(fn) if isinstance(stmt, (ast.Assign, ast.AnnAssign))
            for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) for t in _attr_targets(target)
            if isinstance(t.value, ast.Name) and t.value.id == first]


def _field_call_info(value: ast.expr) -> tuple[bool, str | None, bool, bool | None]:
    """(has_default, default_src, init, kw_only) for `field(...)`/`Field(...)` or a plain value."""
    if isinstance(value, ast.Call):
        fname = (_dotted(value.func) or "").split(".")[-1]
        if fname in ("field", "Field"):
            kws = {k.arg: k.value for k in value.keywords if k.arg}
            has_default = "default" in kws or "default_factory" in kws
            default_src = ast.unparse(kws["default"]) if "default" in kws else (
                ast.unparse(kws["default_factory"]) + "()" if "default_factory" in kws else None
            )
            if fname == "Field" and value.args:
                first = value.args[0]
                if not (isinstance(first, ast.Constant) and first.value is Ellipsis):
                    has_default, default_src = True, ast.unparse(first)
            init = True
            if "init" in kws and isinstance(kws["init"], ast.Constant) and kws["init"].value is False:
                init = False
            kw_only = None
            if "kw_only" in kws and isinstance(kws["kw_only"], ast.Constant):
                kw_only = bool(kws["kw_only"].value)
            return has_default, default_src, init, kw_only
    return True, ast.unparse(value), True, None


def summarise_class(node: ast.ClassDef, path: str, *, scan_calls: bool = True, scan_setattr: bool = True) -> ClassInfo:
    deco_kwargs: dict[str, str] = {}
    for d in node.decorator_list:
        if isinstance(d, ast.Call):
            for k in d.keywords:
                if k.arg:
                    deco_kwargs[k.arg] = ast.unparse(k.value)
    cls = ClassInfo(
        name=node.name,
        line=node.lineno,
        end_line=getattr(node, "end_lineno", node.lineno) or node.lineno,
        bases=[ast.unparse(b) for b in node.bases],
        decorators=[_decorator_name(d) for d in node.decorator_list],
        decorator_kwargs=deco_kwargs,
    )
    for k in node.keywords:
        if k.arg == "metaclass":
            cls.decorator_kwargs["__metaclass__"] = ast.unparse(k.value)
        if k.arg:
            cls.class_kwargs[k.arg] = ast.unparse(k.value)
    for stmt in _flatten_class_body(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = summarise_function(stmt, path, scan_calls=scan_calls)
            if ("overload" in fn.decorators or "typing.overload" in fn.decorators) and stmt.name in cls.methods:
                continue
            if any(d.endswith((".setter", ".deleter")) for d in fn.decorators) and stmt.name in cls.methods:
                continue
            cls.methods[stmt.name] = fn
            if stmt.name in ("__getattr__", "__getattribute__"):
                cls.dynamic_attrs = True
            _collect_instance_attrs(stmt, cls, full_walk=scan_setattr)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            annotation = ast.unparse(stmt.annotation)
            if stmt.value is None:
                has_default, default, init, kw_only = False, None, True, None
            else:
                has_default, default, init, kw_only = _field_call_info(stmt.value)
            cls.fields.append(
                FieldInfo(stmt.target.id, stmt.lineno, annotation, stmt.value is not None, has_default, default, init, kw_only)
            )
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in _assigned_names(target):
                    cls.class_attrs.setdefault(name.id, stmt.lineno)
            if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and _is_attrs_field(stmt.value):
                # attrs' `x = attr.ib(...)`: an init field with no annotation
                has_default, default, init, kw_only = _field_call_info(stmt.value)
                if not any(k.arg in ("default", "factory") for k in stmt.value.keywords):
                    has_default, default = False, None
                else:
                    has_default = True
                cls.fields.append(FieldInfo(stmt.targets[0].id, stmt.lineno, "", True, has_default, default, init, kw_only))
        elif isinstance(stmt, ast.ClassDef):
            cls.class_attrs.setdefault(stmt.name, stmt.lineno)
    return cls


def _is_attrs_field(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and (_dotted(value.func) or "") in ("attr.ib", "attr.attrib", "attrs.field", "attr.field")


def _flatten_class_body(body: list[ast.stmt]) -> list[ast.stmt]:
    """Class bodies sometimes define members under `if`/`try`; treat them as defined."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            out.extend(_flatten_class_body(stmt.body))
            out.extend(_flatten_class_body(stmt.orelse))
        elif isinstance(stmt, ast.Try):
            out.extend(_flatten_class_body(stmt.body))
            for h in stmt.handlers:
                out.extend(_flatten_class_body(h.body))
            out.extend(_flatten_class_body(stmt.orelse))
            out.extend(_flatten_class_body(stmt.finalbody))
        else:
            out.append(stmt)
    return out


_STATEMENT_FIELDS = ("items", "body", "handlers", "orelse", "finalbody", "cases")  # in each node type's _fields order


def _walk_statements(fn: ast.AST):
    """ast.walk restricted to statements (and except handlers, match cases, with-items), in the same
    breadth-first order: the nodes an assignment to `self.x` can be, without visiting expressions."""
    todo = deque([fn])
    while todo:
        node = todo.popleft()
        yield node
        for name in _STATEMENT_FIELDS:
            children = getattr(node, name, None)
            if children and type(children) is list:
                todo.extend(children)


_MODULE_REGISTRARS = ("register_buffer", "register_parameter", "register_module", "add_module")


def _collect_instance_attrs(fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: ClassInfo, full_walk: bool = True) -> None:
    """Attributes assigned on the first parameter anywhere in `fn`. `full_walk=False` skips expressions:
    only right when the module never calls `setattr` (the one expression-level form)."""
    if not fn.args.args and not fn.args.posonlyargs:
        return
    first = (fn.args.posonlyargs + fn.args.args)[0].arg
    param_annotations = {a.arg: a.annotation for a in fn.args.args + fn.args.kwonlyargs if a.annotation is not None}
    for sub in ast.walk(fn) if full_walk else _walk_statements(fn):
        targets: list[ast.expr] = []
        annotation: str | None = None
        value: ast.expr | None = None
        if isinstance(sub, ast.Assign):
            targets, value = sub.targets, sub.value
        elif isinstance(sub, ast.AnnAssign):
            targets, value, annotation = [sub.target], sub.value, ast.unparse(sub.annotation)
        elif isinstance(sub, ast.AugAssign):
            targets = [sub.target]
        elif isinstance(sub, (ast.For, ast.AsyncFor, ast.withitem)):
            targets = [sub.target] if isinstance(sub, (ast.For, ast.AsyncFor)) else [sub.optional_vars] if sub.optional_vars else []
        elif isinstance(sub, ast.Call) and _dotted(sub.func) == "setattr" and len(sub.args) >= 2:
            obj, name = sub.args[0], sub.args[1]
            if isinstance(obj, ast.Name) and obj.id == first and isinstance(name, ast.Constant) and isinstance(name.value, str):
                cls.instance_attrs.setdefault(name.value, (sub.lineno, None))
            elif isinstance(obj, ast.Name) and obj.id == first:
                cls.dynamic_names = True
            continue
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _MODULE_REGISTRARS \
                and isinstance(sub.func.value, ast.Name) and sub.func.value.id == first and sub.args \
                and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str):
            # torch.nn.Module serves registered buffers/parameters/submodules as attributes
            cls.instance_attrs.setdefault(sub.args[0].value, (sub.lineno, None))
            continue
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _MODULE_REGISTRARS \
                and isinstance(sub.func.value, ast.Name) and sub.func.value.id == first and sub.args:
            cls.dynamic_names = True
            continue
        for target in targets:
            for t in _attr_targets(target):
                if isinstance(t.value, ast.Name) and t.value.id == first:
                    type_expr = annotation
                    ctor = _dotted(value.func) if isinstance(value, ast.Call) else None
                    if ctor and annotation is not None and ctor != annotation:
                        # `self.x: A = B(...)` holds a B if B is a class, whatever A says: "B(A)" (see api_index)
                        type_expr = f"{ctor}({annotation})"
                    elif type_expr is None and ctor:
                        type_expr = ctor
                    elif type_expr is None and isinstance(value, ast.Name) and value.id in param_annotations:
                        type_expr = ast.unparse(param_annotations[value.id])
                    declared_only = annotation is not None and type_expr == annotation  # a bare declaration is authoritative
                    prev = cls.instance_attrs.get(t.attr)
                    if prev is None or (prev[1] is None and type_expr) or (declared_only and prev[1] != annotation):
                        cls.instance_attrs[t.attr] = (t.lineno, type_expr)
                    elif type_expr and prev[1] and type_expr not in split_union(prev[1]):
                        # `self.experts = MegaMoEExperts(...)` here, `= FusedMoEFactory(...)` there: one of these,
                        # not one type (a union resolves to no single class)
                        cls.instance_attrs[t.attr] = (prev[0], f"{prev[1]} | {type_expr}")


def split_union(expr: str) -> list[str]:
    """`A | B(C | None) | None` -> ["A", "B(C | None)", "None"]: the `|` outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(expr[start:i].strip())
            start = i + 1
    parts.append(expr[start:].strip())
    return parts


def _attr_targets(target: ast.expr) -> list[ast.Attribute]:
    if isinstance(target, ast.Attribute):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        out: list[ast.Attribute] = []
        for elt in target.elts:
            out.extend(_attr_targets(elt.value if isinstance(elt, ast.Starred) else elt))
        return out
    return []


def _summarise_getattr(fn: ast.FunctionDef | ast.AsyncFunctionDef, info: ModuleInfo) -> GetattrInfo:
    """Read the lazy-import / deprecated-alias maps served by a module `__getattr__`."""
    result = GetattrInfo(line=fn.lineno)
    param = fn.args.args[0].arg if fn.args.args else "name"
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Compare) and isinstance(sub.left, ast.Name) and sub.left.id == param:
            for op, right in zip(sub.ops, sub.comparators):
                if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
                    result.names.setdefault(right.value, None)
                elif isinstance(op, ast.In) and isinstance(right, ast.Name):
                    result.names.update({k: ("map:" + v) if v else None for k, v in info.dicts.get(right.id, {}).items()})
                    result.names.setdefault(f"@dict:{right.id}", None)
                elif isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                    for elt in right.elts:
                        if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                            result.names.setdefault(elt.value, None)
        if isinstance(sub, ast.Call) and (_dotted(sub.func) or "").endswith("warn"):
            result.deprecated = True
    # `if name == "x": from m import x; return x` -> x comes from m.
    for sub in ast.walk(fn):
        if isinstance(sub, ast.If) and isinstance(sub.test, ast.Compare):
            right = sub.test.comparators[0] if sub.test.comparators else None
            if isinstance(right, ast.Constant) and isinstance(right.value, str):
                for inner in ast.walk(ast.Module(body=sub.body, type_ignores=[])):
                    if isinstance(inner, ast.ImportFrom):
                        module = resolve_relative(info.name, info.is_package, inner.level, inner.module)
                        for alias in inner.names:
                            if (alias.asname or alias.name) == right.value or alias.name == right.value:
                                result.names[right.value] = f"{module}.{alias.name}"
    result.names = {k: v for k, v in result.names.items() if not k.startswith("@dict:")}
    last = fn.body[-1] if fn.body else None
    result.closed = _always_raises(last)
    # `elif name in globals()` means "anything defined here"; it does not open the module further.
    return result


def _always_raises(stmt: ast.stmt | None) -> bool:
    if stmt is None:
        return False
    if isinstance(stmt, ast.Raise):
        return True
    if isinstance(stmt, ast.If):
        return bool(stmt.orelse) and _always_raises(stmt.orelse[-1])
    return False


def summarise_source(name: str, path: str, is_package: bool, source: str) -> ModuleInfo:
    info = ModuleInfo(name=name, path=path, is_package=is_package, lines=source.count("\n") + 1)
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        info.syntax_error = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}" + (f" (line {line})" if line else "")
        return info
    _Summariser(info, scan_calls=_DATACLASS_CALL.search(source) is not None,
                scan_setattr="setattr" in source or "register_" in source or "add_module" in source).run(tree)
    if "globals()" in source:
        info.dynamic_globals = _hands_out_globals(tree)
    if any(c.dynamic_names for c in info.classes.values()):
        info.identifier_strings = sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                                          and isinstance(n.value, str) and n.value.isidentifier()})
    return info


def _hands_out_globals(tree: ast.Module) -> bool:
    """`globals()` passed to a call or written through: the module's names are made at import time."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if any(_is_globals_call(a) for a in node.args) or any(_is_globals_call(k.value) for k in node.keywords):
                return True
            if isinstance(node.func, ast.Attribute) and _is_globals_call(node.func.value) and node.func.attr in ("update", "setdefault", "__setitem__"):
                return True
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) and _is_globals_call(t.value) for t in targets):
                return True
            if isinstance(node, ast.Assign) and _is_globals_call(node.value):
                return True  # `_globals = globals()`, then handed to a builder
    return False


def _is_globals_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals" and not node.args
