"""The client side: every use the client makes of vLLM, with light type inference.

For each client file we record vLLM imports, calls (constructors, functions, methods of inferred
vLLM objects), attribute reads/writes on inferred vLLM objects, `collective_rpc("name")` string
dispatch, and functions whose `self` is a vLLM object we cannot type (bound with
`types.MethodType`, assigned over a model's `forward`, or methods of a worker extension named in
`worker_extension_cls=`). Inference is deliberately small: `x = Cls(...)`, `self.x = Cls(...)`,
annotations, walrus, vLLM return annotations and client functions' return annotations.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .api_index import ApiIndex, Resolved
from .client import ClientFile, ClientSource
from .signatures import CallShape


@dataclass
class Loc:
    path: str
    line: int
    col: int
    code: str
    end_line: int = 0
    end_col: int = 0


@dataclass
class ImportUse:
    loc: Loc
    module: str
    name: str | None
    runtime_only: bool  # inside a function: fails only when that code runs
    guarded: bool  # inside try/except ImportError: the client expects it may be absent
    type_only: bool


@dataclass
class CallUse:
    loc: Loc
    kind: str  # construct | function | method
    target: Resolved
    shape: CallShape
    node: ast.Call
    file: ClientFile
    runtime_only: bool = True


@dataclass
class AttrUse:
    loc: Loc
    owner: Resolved  # the vLLM class of the receiver
    attr: str
    store: bool
    result: object  # Resolved | Missing | Unknown | External
    node: ast.Attribute
    file: ClientFile


@dataclass
class ModuleAttrUse:
    loc: Loc
    module: str
    attr: str
    result: object
    runtime_only: bool


@dataclass
class RpcUse:
    loc: Loc
    method: str | None  # None when the method is not a string literal
    node: ast.Call
    file: ClientFile
    unique_reply_rank: bool


@dataclass
class BoundFunction:
    """A client function whose `self` is a vLLM object of a type we cannot infer."""

    name: str
    how: str  # method-type | forward-assignment | worker-extension
    loc: Loc
    node: ast.FunctionDef | ast.AsyncFunctionDef
    file: ClientFile
    self_names: dict[str, Loc] = field(default_factory=dict)  # names read on `self` that the client never sets


@dataclass
class Usage:
    imports: list[ImportUse] = field(default_factory=list)
    calls: list[CallUse] = field(default_factory=list)
    attrs: list[AttrUse] = field(default_factory=list)
    module_attrs: list[ModuleAttrUse] = field(default_factory=list)
    rpcs: list[RpcUse] = field(default_factory=list)
    bound: list[BoundFunction] = field(default_factory=list)
    worker_extensions: list[tuple[str, Loc]] = field(default_factory=list)  # dotted class path, where named
    client_set_attrs: set[str] = field(default_factory=set)  # attributes the client sets on foreign objects
    files: list[ClientFile] = field(default_factory=list)


# ----------------------------------------------------------------------------- inferred values
@dataclass(frozen=True)
class ModRef:
    module: str


@dataclass
class ClassRef:
    cls: Resolved


@dataclass
class FuncRef:
    func: Resolved


@dataclass
class Instance:
    cls: Resolved


@dataclass
class BoundMethod:
    method: Resolved
    owner: Resolved


@dataclass
class ClientSelf:
    cls_name: str


@dataclass
class ClientFunc:
    node: ast.FunctionDef | ast.AsyncFunctionDef


def loc_of(file: ClientFile, node: ast.AST) -> Loc:
    line = getattr(node, "lineno", 1)
    return Loc(
        path=file.rel,
        line=line,
        col=getattr(node, "col_offset", 0) + 1,
        code=file.code(line),
        end_line=getattr(node, "end_lineno", line) or line,
        end_col=(getattr(node, "end_col_offset", 0) or 0) + 1,
    )


def call_shape(node: ast.Call) -> CallShape:
    n_pos = sum(1 for a in node.args if not isinstance(a, ast.Starred))
    return CallShape(
        n_positional=n_pos,
        keywords=[k.arg for k in node.keywords if k.arg is not None],
        star_args=any(isinstance(a, ast.Starred) for a in node.args),
        star_kwargs=any(k.arg is None for k in node.keywords),
    )


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return _dotted(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _catches_import_error(handlers: list[ast.ExceptHandler]) -> bool:
    for h in handlers:
        if h.type is None:
            return True
        names = [_dotted(t) for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])]
        if any(n in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException") for n in names):
            return True
    return False


class _FileAnalyzer:
    def __init__(self, api: ApiIndex, file: ClientFile, usage: Usage, package: str):
        self.api = api
        self.file = file
        self.usage = usage
        self.package = package
        self.module_env: dict[str, object] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.self_types: dict[str, dict[str, object]] = {}  # client class -> attr -> inferred
        self.client_class_members: dict[str, set[str]] = {}
        self.client_class_vllm_bases: dict[str, list[Resolved]] = {}
        self.reported: set[tuple[int, int, str]] = set()

    # -------------------------------------------------------------- imports
    def collect_imports(self) -> None:
        self._imports_in(self.file.tree.body, runtime_only=False, guarded=False, type_only=False, env=self.module_env)
        for node in self.file.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node

    def _imports_in(self, body: list[ast.stmt], runtime_only: bool, guarded: bool, type_only: bool, env: dict) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._record_import(node, runtime_only, guarded, type_only, env)
            elif isinstance(node, ast.If):
                tc = _is_type_checking(node.test)
                self._imports_in(node.body, runtime_only, guarded, type_only or tc, env)
                self._imports_in(node.orelse, runtime_only, guarded, type_only, env)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                g = guarded or _catches_import_error(node.handlers)
                self._imports_in(node.body, runtime_only, g, type_only, env)
                for h in node.handlers:
                    self._imports_in(h.body, runtime_only, guarded, type_only, env)
                self._imports_in(node.orelse, runtime_only, guarded, type_only, env)
                self._imports_in(node.finalbody, runtime_only, guarded, type_only, env)
            elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
                self._imports_in(node.body, runtime_only, guarded, type_only, env)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not runtime_only:
                pass  # function bodies are handled with their own environment
            elif isinstance(node, ast.ClassDef) and not runtime_only:
                self._imports_in(node.body, runtime_only, guarded, type_only, env)

    def _record_import(self, node: ast.Import | ast.ImportFrom, runtime_only: bool, guarded: bool, type_only: bool, env: dict) -> None:
        loc = loc_of(self.file, node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != self.package:
                    continue
                self.usage.imports.append(ImportUse(loc, alias.name, None, runtime_only, guarded, type_only))
                if alias.asname:
                    env[alias.asname] = ModRef(alias.name)
                else:
                    env[alias.name.split(".")[0]] = ModRef(alias.name.split(".")[0])
            return
        if node.level or not node.module or node.module.split(".")[0] != self.package:
            return
        for alias in node.names:
            self.usage.imports.append(ImportUse(loc, node.module, alias.name, runtime_only, guarded, type_only))
            if alias.name == "*":
                continue
            result = self.api.resolve(f"{node.module}.{alias.name}")
            env[alias.asname or alias.name] = self._value_of(result)

    def _value_of(self, result: object) -> object:
        if isinstance(result, Resolved):
            if result.kind == "module":
                return ModRef(result.qualname)
            if result.kind == "class":
                return ClassRef(result)
            if result.kind == "function":
                return FuncRef(result)
            if result.kind == "attribute":
                t = self.api.type_of(result)
                return Instance(t) if t else None
        return None

    # ------------------------------------------------------------ inference
    def infer(self, node: ast.expr | None, env: dict) -> object:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in self.module_env:
                return self.module_env[node.id]
            if node.id in self.functions:
                return ClientFunc(self.functions[node.id])
            return None
        if isinstance(node, ast.NamedExpr):
            return self.infer(node.value, env)
        if isinstance(node, ast.Attribute):
            base = self.infer(node.value, env)
            return self._member_value(base, node.attr)
        if isinstance(node, ast.Call):
            func = self.infer(node.func, env)
            if isinstance(func, ClassRef):
                return Instance(func.cls)
            if isinstance(func, FuncRef):
                t = self.api.type_of(func.func)
                return Instance(t) if t else None
            if isinstance(func, BoundMethod):
                t = self.api.type_of(func.method)
                return Instance(t) if t else None
            if isinstance(func, ClientFunc) and func.node.returns is not None:
                return self._annotation_value(func.node.returns)
            return None
        if isinstance(node, ast.Await):
            return self.infer(node.value, env)
        return None

    def _member_value(self, base: object, attr: str) -> object:
        if isinstance(base, ModRef):
            mod = self.api.module(base.module)
            if mod is None:
                return None
            return self._value_of(self.api.module_member(mod, attr))
        if isinstance(base, Instance):
            result = self.api.class_member(base.cls, attr)
            if isinstance(result, Resolved):
                if result.kind == "method":
                    return BoundMethod(result, base.cls)
                t = self.api.type_of(result)
                return Instance(t) if t else None
            return None
        if isinstance(base, ClassRef):
            result = self.api.class_member(base.cls, attr)
            if isinstance(result, Resolved) and result.kind == "method":
                return BoundMethod(result, base.cls)
            return None
        if isinstance(base, ClientSelf):
            value = self.self_types.get(base.cls_name, {}).get(attr)
            if value is not None:
                return value
            for vbase in self.client_class_vllm_bases.get(base.cls_name, []):
                return self._member_value(Instance(vbase), attr)
            return None
        return None

    def _annotation_value(self, annotation: ast.expr) -> object:
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            left, right = annotation.left, annotation.right
            if isinstance(right, ast.Constant) and right.value is None:
                return self._annotation_value(left)  # the inner part may itself be a string: `"X" | None`
            elif isinstance(left, ast.Constant) and left.value is None:
                return self._annotation_value(right)
            else:
                return None
        if isinstance(annotation, ast.Subscript) and _dotted(annotation.value) in ("Optional", "typing.Optional"):
            return self._annotation_value(annotation.slice)  # `Optional["X"]`
        value = self.infer(annotation, {})
        if isinstance(value, ClassRef):
            return Instance(value.cls)
        return None

    def build_env(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, outer: dict, self_cls: str | None) -> dict:
        env: dict[str, object] = dict(outer)
        args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        for i, arg in enumerate(args):
            if i == 0 and self_cls is not None and "staticmethod" not in [_dotted(d) for d in fn.decorator_list]:
                env[arg.arg] = ClientSelf(self_cls)
            elif arg.annotation is not None:
                env[arg.arg] = self._annotation_value(arg.annotation)
            else:
                env.pop(arg.arg, None)
        local_imports: dict[str, object] = {}
        self._imports_in(fn.body, runtime_only=True, guarded=False, type_only=False, env=local_imports)
        env.update(local_imports)
        assigned_types: dict[str, list[object]] = {}
        for node in _walk_scope(fn.body):
            target_value: list[tuple[str, object]] = []
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target_value.append((node.targets[0].id, self.infer(node.value, env)))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                target_value.append((node.target.id, self._annotation_value(node.annotation)))
            elif isinstance(node, ast.NamedExpr):
                target_value.append((node.target.id, self.infer(node.value, env)))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                for t in ast.walk(node.target) if isinstance(node, (ast.For, ast.AsyncFor)) else []:
                    if isinstance(t, ast.Name):
                        target_value.append((t.id, None))
            for name, value in target_value:
                assigned_types.setdefault(name, []).append(value)
                env[name] = value
        for name, values in assigned_types.items():
            first = values[0]
            if any(type(v) is not type(first) or (isinstance(v, Instance) and v.cls.qualname != first.cls.qualname) for v in values):
                env[name] = None  # conflicting assignments: do not guess
        for node in _walk_scope(fn.body):
            # `isinstance(x, Sub)` narrows x to a type we do not track: stop guessing x's type.
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                    and node.args and isinstance(node.args[0], ast.Name):
                env[node.args[0].id] = None
        return env

    # ------------------------------------------------------------- classes
    def prepare_classes(self) -> None:
        for name, cls in self.classes.items():
            members: set[str] = set()
            vbases: list[Resolved] = []
            for base in cls.bases:
                value = self.infer(base, {})
                if isinstance(value, ClassRef):
                    vbases.append(value.cls)
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members.add(stmt.name)
                elif isinstance(stmt, ast.Assign):
                    members.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    members.add(stmt.target.id)
            self.client_class_members[name] = members
            self.client_class_vllm_bases[name] = vbases
        # Two rounds so that `self.a = X(); self.b = self.a.f()` settles.
        for _ in range(2):
            for name, cls in self.classes.items():
                types: dict[str, object] = self.self_types.setdefault(name, {})
                for stmt in cls.body:
                    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    env = self.build_env(stmt, self.module_env, name)
                    first = (stmt.args.posonlyargs + stmt.args.args)[0].arg if (stmt.args.posonlyargs + stmt.args.args) else None
                    for node in _walk_scope(stmt.body):
                        targets: list[ast.expr] = []
                        value_node = None
                        if isinstance(node, ast.Assign):
                            targets, value_node = node.targets, node.value
                        elif isinstance(node, ast.AnnAssign):
                            targets = [node.target]
                        for t in targets:
                            if isinstance(t, (ast.Tuple, ast.List)):
                                # `(self.a, self.b) = ...`: members, types unknown
                                for elt in ast.walk(t):
                                    if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == first:
                                        self.client_class_members[name].add(elt.attr)
                                continue
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == first:
                                self.client_class_members[name].add(t.attr)
                                if isinstance(node, ast.AnnAssign):
                                    value = self._annotation_value(node.annotation)
                                else:
                                    value = self.infer(value_node, env)
                                if value is not None:
                                    types[t.attr] = value

    # ----------------------------------------------------------------- uses
    def analyse(self) -> None:
        self.collect_imports()
        self.prepare_classes()
        self._find_bound_functions()
        self._visit_scope(self.file.tree.body, self.module_env, runtime_only=False)
        for fn in self.functions.values():
            self._visit_function(fn, None)
        for name, cls in self.classes.items():
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._visit_function(stmt, name)

    def _visit_function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls_name: str | None, outer: dict | None = None) -> None:
        env = self.build_env(fn, outer if outer is not None else self.module_env, cls_name)
        self._visit_scope(fn.body, env, runtime_only=True)
        for node in _walk_scope(fn.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._visit_function(node, None, env)

    def _visit_scope(self, body: list[ast.stmt], env: dict, runtime_only: bool) -> None:
        for node in _walk_scope(body):
            if isinstance(node, ast.Call):
                self._visit_call(node, env, runtime_only)
            elif isinstance(node, ast.Attribute):
                self._visit_attribute(node, env, runtime_only)
            elif isinstance(node, ast.keyword) and node.arg == "worker_extension_cls":
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    self.usage.worker_extensions.append((node.value.value, loc_of(self.file, node.value)))
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and not (isinstance(t.value, ast.Name) and t.value.id == "self"):
                        self.usage.client_set_attrs.add(t.attr)

    def _visit_call(self, node: ast.Call, env: dict, runtime_only: bool) -> None:
        func = self.infer(node.func, env)
        loc = loc_of(self.file, node)
        shape = call_shape(node)
        if isinstance(func, ClassRef):
            self.usage.calls.append(CallUse(loc, "construct", func.cls, shape, node, self.file, runtime_only))
        elif isinstance(func, FuncRef):
            self.usage.calls.append(CallUse(loc, "function", func.func, shape, node, self.file, runtime_only))
        elif isinstance(func, BoundMethod):
            self.usage.calls.append(CallUse(loc, "method", func.method, shape, node, self.file, runtime_only))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "collective_rpc":
            method = None
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "method"), None)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                method = first.value
            urr = any(k.arg == "unique_reply_rank" for k in node.keywords)
            self.usage.rpcs.append(RpcUse(loc, method, node, self.file, urr))

    def _visit_attribute(self, node: ast.Attribute, env: dict, runtime_only: bool) -> None:
        base = self.infer(node.value, env)
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        key = (node.lineno, node.col_offset, node.attr)
        if key in self.reported:
            return
        if isinstance(base, Instance):
            self.reported.add(key)
            result = self.api.class_member(base.cls, node.attr)
            self.usage.attrs.append(AttrUse(loc_of(self.file, node), base.cls, node.attr, store, result, node, self.file))
        elif isinstance(base, ModRef) and not store:
            mod = self.api.module(base.module)
            if mod is None:
                return
            self.reported.add(key)
            result = self.api.module_member(mod, node.attr)
            self.usage.module_attrs.append(ModuleAttrUse(loc_of(self.file, node), base.module, node.attr, result, runtime_only))
        elif isinstance(base, ClientSelf) and node.attr not in self.client_class_members.get(base.cls_name, set()):
            for vbase in self.client_class_vllm_bases.get(base.cls_name, []):
                self.reported.add(key)
                result = self.api.class_member(vbase, node.attr)
                self.usage.attrs.append(AttrUse(loc_of(self.file, node), vbase, node.attr, store, result, node, self.file))
                break

    # ------------------------------------------------------- bound functions
    def _find_bound_functions(self) -> None:
        found: dict[str, tuple[str, ast.AST]] = {}
        for node in ast.walk(self.file.tree):
            if isinstance(node, ast.Call) and _dotted(node.func) in ("types.MethodType", "MethodType") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Name) and first.id in self.functions:
                    found.setdefault(first.id, ("method-type", node))
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.functions:
                        found.setdefault(node.value.id, ("forward-assignment", node))
        for name, (how, site) in found.items():
            fn = self.functions[name]
            self.usage.bound.append(self._bound(fn, how, name))

    def _bound(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, how: str, name: str, own_members: set[str] | None = None) -> BoundFunction:
        args = fn.args.posonlyargs + fn.args.args
        self_name = args[0].arg if args else "self"
        bound = BoundFunction(name, how, loc_of(self.file, fn), fn, self.file)
        stored = set(own_members or ())
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
                if isinstance(node.ctx, ast.Store):
                    stored.add(node.attr)
        guarded = _hasattr_guarded(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
                if isinstance(node.ctx, ast.Load) and node.attr not in stored and not node.attr.startswith("__") \
                        and id(node) not in guarded:
                    bound.self_names.setdefault(node.attr, loc_of(self.file, node))
        return bound

    def add_worker_extension(self, class_name: str) -> None:
        cls = self.classes.get(class_name)
        if cls is None:
            return
        members = set(self.client_class_members.get(class_name, set()))
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.usage.bound.append(self._bound(stmt, "worker-extension", f"{class_name}.{stmt.name}", members))


def _hasattr_guarded(fn: ast.AST) -> set[int]:
    """Nodes under `a if hasattr(x, "n") else b` / `if hasattr(...)`: the client already handles both vLLMs."""
    out: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.IfExp, ast.If)) and "hasattr(" in ast.unparse(node.test):
            branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.body + node.orelse
            for branch in branches if isinstance(node, ast.IfExp) else [ast.Module(body=branches, type_ignores=[])]:
                out.update(id(n) for n in ast.walk(branch))
    return out


def _walk_scope(body: list[ast.stmt]):
    """ast.walk over statements, not descending into nested functions, lambdas or classes."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # a function statement of `body` itself: seen, not entered (it has its own scope)
        for child in reversed(list(ast.iter_child_nodes(node))):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield child  # seen (for nested-function handling) but not entered
                continue
            stack.append(child)


def analyse_client(client: ClientSource, api: ApiIndex) -> Usage:
    usage = Usage(files=client.files)
    analyzers: dict[str, _FileAnalyzer] = {}
    for file in client.files:
        analyzer = _FileAnalyzer(api, file, usage, api.package)
        analyzer.analyse()
        analyzers[file.module] = analyzer
    # A worker extension named by string becomes part of the worker: its `self` is a vLLM worker.
    for dotted, _loc in usage.worker_extensions:
        module, _, cls_name = dotted.rpartition(".")
        analyzer = analyzers.get(module)
        if analyzer is not None:
            analyzer.add_worker_extension(cls_name)
    return usage
