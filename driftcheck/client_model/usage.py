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
import builtins
from dataclasses import dataclass, field

from driftcheck.vllm_model.api_index import ApiIndex, External, InSubclass, Missing, Resolved
from driftcheck.astnodes import attribute_stores, dotted_name, nodes_of
from driftcheck.client_model.client import ClientFile, ClientSource
from driftcheck.vllm_model.external_apis import TORCH_NN_MODULE
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.signatures import CallShape, signature_from_args


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
    unreached: bool = False  # a fallback import in `except ImportError:` whose try body imports fine on the target


@dataclass
class CallUse:
    loc: Loc
    kind: str  # construct | function | method
    target: Resolved
    shape: CallShape
    node: ast.Call
    file: ClientFile
    runtime_only: bool = True
    driven_by_vllm: bool = False  # in a method of a client subclass of a vLLM class: vLLM's engine calls this code


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
    unanalysed: list[tuple[str, str]] = field(default_factory=list)  # (file, why) for files we could not follow
    patched: set[tuple[str, str]] = field(default_factory=set)  # (vLLM module/class qualname, name) the client sets
    # vLLM class -> member -> (client subclass, file, line) for members that client subclasses add
    subclass_members: dict[str, dict[str, tuple[str, str, int]]] = field(default_factory=dict)
    # vLLM class -> method -> [(client subclass.method, its signature)]: the overrides a base-typed call may reach
    client_overrides: dict[str, dict[str, list]] = field(default_factory=dict)
    client_subclass_members: dict[str, set[str]] = field(default_factory=dict)  # client class -> its subclasses' members
    # client class "module.Name" -> (its own members, the dotted names of its bases): ancestors across files
    client_class_table: dict[str, tuple[set[str], list[str]]] = field(default_factory=dict)
    # method name -> [(class of x, file, line)] for calls `type(x).m(obj, ...)`: m's `self` may be another object
    unbound_called: dict[str, list[tuple[str, str, int]]] = field(default_factory=dict)
    # callee name -> [(parameter position or keyword, class of the value passed, file, line)]
    passed: dict[str, list[tuple[int | str, str, str, int]]] = field(default_factory=dict)

    def checked(self) -> int:
        """How many uses of vLLM were looked up: the denominator of precision figures."""
        return len(self.imports) + len(self.calls) + len(self.attrs) + len(self.module_attrs) + len(self.rpcs) + len(self.bound)


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


@dataclass(frozen=True)
class Foreign:
    """An object of a class outside vLLM (`transformers.PretrainedConfig`): its members are not checked, but it
    is evidence of what a parameter really receives."""
    qualname: str


@dataclass
class BoundMethod:
    method: Resolved
    owner: Resolved


@dataclass
class ClientSelf:
    cls_name: str


@dataclass
class UnboundMethod:
    """`Cls.method` read on the class: called with an explicit `self`."""

    method: Resolved
    owner: Resolved


@dataclass
class ClientFunc:
    node: ast.FunctionDef | ast.AsyncFunctionDef


REGISTRARS = ("register_buffer", "register_parameter", "register_module", "add_module")
NOT_PATCH_MODULES = {"typing", "typing_extensions", "collections", "abc", "builtins", "dataclasses", "enum", "types",
                     "functools", "torch", "numpy", "pydantic"}
_BINDINGS = "\0bindings"  # env key: name -> [(line, value)] for names bound to different values in a function
_ABSENT = object()  # a vLLM import the target lacks: a fallback import of the same name may take its place


def _bound_names(target: ast.expr) -> list[str]:
    """The local names an assignment target binds (`a, (b, *c) = ...`), not the bases of `self.x = ...`."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _bound_names(elt)]
    return []


def _same_value(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (Instance, ClassRef)):
        return a.cls.qualname == b.cls.qualname
    return a == b


def _base_name(base: ast.expr) -> str | None:
    """The dotted name of a class base, `Patch[Target]` read as `Patch`."""
    return _dotted(base.value if isinstance(base, ast.Subscript) else base)


def _settle(env: dict) -> None:
    for name, value in env.items():
        if value is _ABSENT:
            env[name] = None


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


_dotted = dotted_name


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
        self.foreign: dict[str, str] = {}  # name -> module, for names imported from outside vLLM
        self.patched_functions: dict[str, Resolved] = {}  # module function -> the vLLM class it is set on
        self.patch_bases: dict[str, list[Resolved]] = {}  # client class -> vLLM classes its methods are set on
        self._driven = False  # visiting a method of a client class derived from a vLLM class
        self._setters: set[str] | None = None  # functions of this file that set attributes by a given name
        self._scopes: dict[int, list[ast.AST]] = {}  # id(body) -> its scope's nodes (the tree outlives the analyzer)
        self._conflicting: dict[str, set[str]] = {}  # client class -> self attributes assigned values of different types

    # -------------------------------------------------------------- imports
    def collect_imports(self) -> None:
        self._imports_in(self.file.tree.body, runtime_only=False, guarded=False, type_only=False, env=self.module_env)
        _settle(self.module_env)
        for node in self.file.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            else:
                continue
            if node.name in self.module_env:  # `class LlamaDecoderLayer(LlamaDecoderLayer)`: the client's own wins
                del self.module_env[node.name]

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
                body_env: dict = {}
                self._imports_in(node.body, runtime_only, g, type_only, body_env)
                body_runs = self._imports_resolve(node.body)
                for h in node.handlers:
                    handler_env: dict = {}
                    first = len(self.usage.imports)
                    self._imports_in(h.body, runtime_only, guarded, type_only, handler_env)
                    if body_runs:  # the try body's vLLM imports all exist here: this fallback never runs
                        for use in self.usage.imports[first:]:
                            use.unreached = True
                    # The handler's import is the fallback: it binds a name only when the try body's own
                    # import of it fails on this target (a vLLM name it lacks), never over the client's own.
                    for name, value in handler_env.items():
                        if name not in body_env or body_env[name] is _ABSENT:
                            body_env[name] = value
                env.update({k: (None if v is _ABSENT else v) for k, v in body_env.items()})
                self._imports_in(node.orelse, runtime_only, guarded, type_only, env)
                self._imports_in(node.finalbody, runtime_only, guarded, type_only, env)
            elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
                self._imports_in(node.body, runtime_only, guarded, type_only, env)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not runtime_only:
                pass  # function bodies are handled with their own environment
            elif isinstance(node, ast.ClassDef) and not runtime_only:
                self._imports_in(node.body, runtime_only, guarded, type_only, env)

    def _imports_resolve(self, body: list[ast.stmt]) -> bool:
        """Whether every import statement directly in `body` is a vLLM import the target has."""
        imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
        if not imports:
            return False
        for n in imports:
            names = [(a.name, None) for a in n.names] if isinstance(n, ast.Import) else [(n.module or "", a.name) for a in n.names]
            for module, name in names:
                if n.__class__ is ast.ImportFrom and (n.level or not module):
                    return False
                if module.split(".")[0] != self.package or self.api.module(module) is None:
                    return False
                if name not in (None, "*") and not isinstance(self.api.resolve(f"{module}.{name}"), (Resolved, External)):
                    return False
        return True

    def _record_import(self, node: ast.Import | ast.ImportFrom, runtime_only: bool, guarded: bool, type_only: bool, env: dict) -> None:
        loc = loc_of(self.file, node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if alias.name.split(".")[0] != self.package:
                    env[bound] = None  # someone else's module: shadows any earlier vLLM binding of the name
                    self.foreign[bound] = alias.name
                    continue
                self.usage.imports.append(ImportUse(loc, alias.name, None, runtime_only, guarded, type_only))
                env[bound] = ModRef(alias.name if alias.asname else bound)
            return
        if node.level or not node.module or node.module.split(".")[0] != self.package:
            for alias in node.names:
                if alias.name != "*":
                    env[alias.asname or alias.name] = None  # the client's own (or a third party's) name
                    is_pkg = self.file.rel.endswith("__init__.py")
                    self.foreign[alias.asname or alias.name] = (
                        resolve_relative(self.file.module, is_pkg, node.level, node.module) if node.level else node.module or "")
            return
        for alias in node.names:
            self.usage.imports.append(ImportUse(loc, node.module, alias.name, runtime_only, guarded, type_only))
            if alias.name == "*":
                continue
            result = self.api.resolve(f"{node.module}.{alias.name}")
            value = self._value_of(result)
            env[alias.asname or alias.name] = _ABSENT if isinstance(result, Missing) else value

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
                return Instance(t) if t else self._foreign_type(result)
        return None

    def _foreign_type(self, result: Resolved) -> Foreign | None:
        qualname = self.api.foreign_type(result)
        return Foreign(qualname) if qualname else None

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
            if mod is None or (base.module, attr) in self.usage.patched:
                return None
            return self._value_of(self.api.module_member(mod, attr))
        if isinstance(base, Instance):
            if self._patched_on(base.cls, attr):
                return None
            result = self.api.class_member(base.cls, attr)
            if isinstance(result, Resolved):
                if result.kind == "method":
                    return BoundMethod(result, base.cls)
                t = self.api.type_of(result)
                return Instance(t) if t else self._foreign_type(result)
            return None
        if isinstance(base, ClassRef):
            if self._patched_on(base.cls, attr):
                return None
            result = self.api.class_member(base.cls, attr)
            if isinstance(result, Resolved) and result.kind == "method":
                if result.func is not None and not (result.func.is_classmethod or result.func.is_static):
                    return UnboundMethod(result, base.cls)  # `Cls.m(self, ...)`: self is passed explicitly
                return BoundMethod(result, base.cls)
            if isinstance(result, Resolved) and result.kind == "class":
                return ClassRef(result)
            return None
        if isinstance(base, ClientSelf):
            if attr in self.client_members(base.cls_name):
                value = self.self_types.get(base.cls_name, {}).get(attr)
                return value  # the client's own member: its type only if the client set it from vLLM
            for vbase in self.client_class_vllm_bases.get(base.cls_name, []):
                value = self._member_value(Instance(vbase), attr)
                if value is not None:
                    return value
            return None
        return None

    def _is_patch_base(self, node: ast.expr) -> bool:
        """A generic base of the client's own (not typing's, not vLLM's): `Patch[Target]`."""
        name = _dotted(node)
        if name is None:
            return False
        first = name.split(".")[0]
        if name in self.classes:
            return True
        source = self.foreign.get(first)
        return source is not None and source.split(".")[0] not in NOT_PATCH_MODULES

    def _patched_on(self, cls: Resolved, attr: str) -> bool:
        """The client sets `attr` on this class (or one of its bases) itself."""
        if not self.usage.patched:
            return False
        order, _, _ = self.api.mro(cls)
        return any((c.qualname, attr) in self.usage.patched for c in order)

    def client_members(self, cls_name: str, _seen: frozenset = frozenset()) -> set[str]:
        """Members a client class has from its own body and its client-side bases in this file."""
        members = set(self.client_class_members.get(cls_name, set()))
        cls = self.classes.get(cls_name)
        if cls is not None and cls_name not in _seen:
            for base in cls.bases:
                name = _base_name(base)
                if name in self.classes:
                    members |= self.client_members(name, _seen | {cls_name})
        return members

    def _declared_value(self, node: ast.AnnAssign, env: dict, cls_name: str) -> object:
        """`self.x: A = B(...)` holds a B whatever the annotation says (it may not hold:
        `self.model_runner: GPUModelRunner = GPUModelRunnerV2(...)  # type: ignore`); A when B is not a class.
        `self.x: A = self.make()` holds what the client's `make` returns: no one type when it builds several."""
        call = node.value if isinstance(node.value, ast.Call) else None
        built = self.infer(call, env) if call is not None else None
        if isinstance(built, Instance):
            return built
        func = call.func if call is not None else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            made = self._returned_instances(cls_name, func.attr)
            if len(made) > 1:
                return None
            if made:
                return made[0]
        return self._annotation_value(node.annotation)

    def _returned_instances(self, cls_name: str, method: str) -> list[Instance]:
        """The vLLM classes a client method's `return X(...)` statements build (distinct, in order)."""
        cls = self.classes.get(cls_name)
        fn = next((s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == method),
                  None) if cls is not None else None
        if fn is None:
            return []
        env = self.build_env(fn, self.module_env, cls_name)
        out: list[Instance] = []
        for node in self._scope(fn.body):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Call):
                value = self.infer(node.value, env)
                if isinstance(value, Instance) and all(v.cls.qualname != value.cls.qualname for v in out):
                    out.append(value)
        return out

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

    def _scope(self, body: list[ast.stmt]) -> list[ast.AST]:
        """The nodes of one scope, walked once (environments, classes and visits all read them)."""
        found = self._scopes.get(id(body))
        if found is None:
            found = self._scopes[id(body)] = list(_walk_scope(body))
        return found

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
        # a parameter the body rebinds holds either value: its annotation counts as one of its assignments
        assigned_types: dict[str, list[object]] = {a.arg: [env[a.arg]] for a in args if a.arg in env}
        bindings: dict[str, list[tuple[int, object]]] = {a.arg: [(fn.lineno, env[a.arg])] for a in args if a.arg in env}
        local_imports: dict[str, object] = {}
        self._imports_in(fn.body, runtime_only=True, guarded=False, type_only=False, env=local_imports)
        _settle(local_imports)
        env.update(local_imports)
        narrowed: list[str] = []
        for node in self._scope(fn.body):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                    and node.args and isinstance(node.args[0], ast.Name):
                narrowed.append(node.args[0].id)
                continue
            target_value: list[tuple[str, object]] = []
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        target_value.append((target.id, self.infer(node.value, env)))
                    else:  # `result, _, *rest = args`: names bound to values we do not type
                        target_value += [(n, None) for n in _bound_names(target)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                target_value.append((node.target.id, self._annotation_value(node.annotation)))
            elif isinstance(node, ast.NamedExpr):
                target_value.append((node.target.id, self.infer(node.value, env)))
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                target_value += [(n, None) for n in _bound_names(node.target)]
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                target_value += [(n, None) for item in node.items if item.optional_vars is not None
                                 for n in _bound_names(item.optional_vars)]
            for name, value in target_value:
                assigned_types.setdefault(name, []).append(value)
                bindings.setdefault(name, []).append((node.lineno, value))
                env[name] = value
        conflicted: dict[str, list[tuple[int, object]]] = {}
        for name, values in assigned_types.items():
            if len(values) < 2:
                continue
            first = values[0]
            if any(not _same_value(v, first) for v in values):  # `TileScheduler = A` here, `= B` there
                env[name] = None  # conflicting assignments: do not guess
                conflicted[name] = sorted(bindings.get(name, []), key=lambda b: b[0])
        env[_BINDINGS] = conflicted
        for name in narrowed:  # `isinstance(x, Sub)` narrows x to a type we do not track: stop guessing x's type
            env[name] = None
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
                elif isinstance(base, ast.Subscript) and self._is_patch_base(base.value):
                    # `class P(SomePatch[GPUModelRunner])`: P's methods are grafted onto the class in brackets
                    for arg in base.slice.elts if isinstance(base.slice, ast.Tuple) else [base.slice]:
                        target = self.infer(arg, {})
                        if isinstance(target, ClassRef):
                            vbases.append(target.cls)
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members.add(stmt.name)
                elif isinstance(stmt, ast.Assign):
                    members.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    members.add(stmt.target.id)
            self.client_class_members[name] = members
            self.client_class_vllm_bases[name] = vbases
        for name, grafted in self.patch_bases.items():
            if name in self.client_class_vllm_bases:
                self.client_class_vllm_bases[name] += grafted
        for name in self.classes:  # a client class inherits the vLLM bases of its client bases
            for ancestor in self._client_ancestors(name):
                for vbase in self.client_class_vllm_bases.get(ancestor, []):
                    if all(v.qualname != vbase.qualname for v in self.client_class_vllm_bases[name]):
                        self.client_class_vllm_bases[name].append(vbase)
        # Two rounds so that `self.a = X(); self.b = self.a.f()` settles.
        for _ in range(2):
            for name, cls in self.classes.items():
                types: dict[str, object] = self.self_types.setdefault(name, {})
                conflicting = self._conflicting.setdefault(name, set())
                for stmt in cls.body:
                    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    env = self.build_env(stmt, self.module_env, name)
                    first = (stmt.args.posonlyargs + stmt.args.args)[0].arg if (stmt.args.posonlyargs + stmt.args.args) else None
                    for node in self._scope(stmt.body):
                        targets: list[ast.expr] = []
                        value_node = None
                        if isinstance(node, ast.Assign):
                            targets, value_node = node.targets, node.value
                        elif isinstance(node, ast.AnnAssign):
                            targets = [node.target]
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                                and node.func.value.id == first and node.args and isinstance(node.args[0], ast.Constant) \
                                and isinstance(node.args[0].value, str) and (node.func.attr in REGISTRARS or node.func.attr == "setattr"):
                            self.client_class_members[name].add(node.args[0].value)  # nn.Module's registered members
                        if isinstance(node, ast.Call) and (_dotted(node.func) or "").rstrip("_").endswith("setattr") \
                                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == first \
                                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                            # setattr(self, "x", v) and object.__setattr__(self, "x", v)
                            self.client_class_members[name].add(node.args[1].value)
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
                                    value = self._declared_value(node, env, name)
                                else:
                                    value = self.infer(value_node, env)
                                previous = types.get(t.attr)
                                if t.attr in conflicting:
                                    continue
                                if value is None and not (isinstance(value_node, ast.Constant) and value_node.value is None) \
                                        and not isinstance(node, ast.AnnAssign):
                                    # `self.experts = ClientExperts(...)` in one branch, `= vllm.Factory(...)` in
                                    # another: a value we cannot type makes the attribute's type unknown
                                    conflicting.add(t.attr)
                                    types.pop(t.attr, None)
                                    continue
                                if previous is not None and value is not None and not _same_value(previous, value):
                                    conflicting.add(t.attr)  # `self.drafter = A(...)` here, `= B(...)` there: do not guess
                                    types.pop(t.attr, None)
                                elif value is not None:
                                    types[t.attr] = value

    # --------------------------------------------------------------- patches
    def collect_patches(self) -> None:
        """What the client sets on vLLM classes and modules (`Cls.m = f`, `setattr(Cls, "m", f)`, `mod._X = None`):
        those names exist at run time, and a function set on a class is that class's method."""
        for node in nodes_of(self.file.tree, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Call):
            pairs: list[tuple[ast.expr, str, ast.expr | None]] = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for elt in ast.walk(t):
                        if isinstance(elt, ast.Attribute) and isinstance(elt.ctx, ast.Store):
                            pairs.append((elt.value, elt.attr, node.value if isinstance(elt, type(t)) and elt is t else None))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                pairs.append((node.args[0], node.args[1].value, node.args[2] if len(node.args) > 2 else None))
            if isinstance(node, ast.Call):
                created = self._attribute_created_by(node)
                if created:
                    self.usage.client_set_attrs.add(created)
            for obj, attr, value in pairs:
                if not (isinstance(obj, ast.Name) and obj.id == "self"):
                    self.usage.client_set_attrs.add(attr)
                base = self.infer(obj, self.module_env)
                if isinstance(base, ModRef):
                    self.usage.patched.add((base.module, attr))
                elif isinstance(base, (ClassRef, Instance)):
                    self.usage.patched.add((base.cls.qualname, attr))
                    if isinstance(base, ClassRef):
                        self._graft(value, base.cls)

    def _attribute_created_by(self, call: ast.Call) -> str | None:
        """`layer.register_parameter("w", ...)`, or `self._set_buffer(layer, "w", ...)` where that helper of the
        client's sets an attribute by the name it is given: the attribute name the call creates."""
        name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) else None
        if name is None:
            return None
        if name in REGISTRARS and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            return call.args[0].value
        if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str) \
                and name in self._named_setters():
            return call.args[1].value
        return None

    def _named_setters(self) -> set[str]:
        """The file's functions that set an attribute by a name they are given (setattr / register_* with a variable)."""
        if self._setters is None:
            self._setters = set()
            for fn in nodes_of(self.file.tree, ast.FunctionDef, ast.AsyncFunctionDef):
                for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                    callee = _dotted(call.func) or ""
                    args = call.args
                    if (callee.rstrip("_").endswith("setattr") and len(args) >= 2 and not isinstance(args[1], ast.Constant)) or \
                            (callee.rsplit(".", 1)[-1] in REGISTRARS and args and not isinstance(args[0], ast.Constant)):
                        self._setters.add(fn.name)
                        break
        return self._setters

    def _graft(self, value: ast.expr | None, cls: Resolved) -> None:
        if isinstance(value, ast.Name) and value.id in self.functions:
            self.patched_functions[value.id] = cls
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in self.classes:
            self.patch_bases.setdefault(value.value.id, []).append(cls)

    def _patch_self(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: Resolved) -> str:
        """A synthetic client class for a module function set on a vLLM class: its `self` is that class."""
        name = f"<patch {fn.name}>"
        args = fn.args.posonlyargs + fn.args.args
        first = args[0].arg if args else None
        self.client_class_members[name] = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                                           and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) and n.value.id == first}
        self.client_class_vllm_bases[name] = [cls]
        return name

    def _base_label(self, base: ast.expr) -> str | None:
        """A base as "module.Name": a class of this file, or a name imported from another module."""
        dotted = _base_name(base) or ""
        first = dotted.split(".")[0]
        if dotted in self.classes:
            return f"{self.file.module}.{dotted}"
        if first in self.foreign:
            return f"{self.foreign[first]}.{dotted}" if self.foreign[first] else dotted
        return None

    def _inherited_members(self, name: str) -> set[str]:
        """A client class's members with those of its client ancestors in any file (`class AsyncOmni(AsyncOmniBase,
        EngineClient)` where AsyncOmniBase derives from OmniBase, defined in a third file)."""
        out = set(self.client_members(name))
        todo = [b for b in (self._base_label(b) for b in self.classes[name].bases) if b]
        seen: set[str] = set()
        while todo:
            label = todo.pop()
            if label in seen or len(seen) > 50:
                continue
            seen.add(label)
            own, bases = self.usage.client_class_table.get(label, (set(), []))
            out |= own
            todo += bases
        return out

    def record_client_classes(self) -> None:
        for name, cls in self.classes.items():
            self.usage.client_class_table[f"{self.file.module}.{name}"] = (
                set(self.client_members(name)), [b for b in (self._base_label(b) for b in cls.bases) if b])

    def register_subclasses(self) -> None:
        """Members client subclasses add to vLLM classes: a value typed as the base may be one of them."""
        for name, cls in self.classes.items():
            label = f"{self.file.module}.{name}"
            for base in cls.bases:  # and to the client's own classes, across files (template methods)
                base_label = self._base_label(base)
                if base_label is not None:
                    self.usage.client_subclass_members.setdefault(base_label, set()).update(self.client_members(name))
            inherited = self._inherited_members(name) if self.client_class_vllm_bases.get(name) else set()
            for vbase in self.client_class_vllm_bases.get(name, []):
                order, _, _ = self.api.mro(vbase)
                for c in order:
                    table = self.usage.subclass_members.setdefault(c.qualname, {})
                    for member in inherited:
                        table.setdefault(member, (label, self.file.rel, cls.lineno))
                    overrides = self.usage.client_overrides.setdefault(c.qualname, {})
                    for stmt in cls.body:
                        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            overrides.setdefault(stmt.name, []).append(
                                (f"{label}.{stmt.name}", signature_from_args(stmt.args, self.file.rel, stmt.lineno)))

    def collect_worker_extensions(self) -> None:
        """`worker_extension_cls="pkg.mod.Cls"` as a keyword, a dict entry, `setdefault` or an item assignment."""
        key = "worker_extension_cls"
        for node in nodes_of(self.file.tree, ast.keyword, ast.Dict, ast.Call, ast.Assign):
            values: list[ast.expr] = []
            if isinstance(node, ast.keyword) and node.arg == key:
                values.append(node.value)
            elif isinstance(node, ast.Dict):
                values += [v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == key]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("setdefault", "update") \
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value == key:
                values.append(node.args[1])
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                                                      and t.slice.value == key for t in node.targets):
                values.append(node.value)
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    self.usage.worker_extensions.append((value.value, loc_of(self.file, value)))

    # ----------------------------------------------------------------- uses
    def analyse(self) -> None:
        self._find_bound_functions()
        self._visit_scope(self.file.tree.body, self.module_env, runtime_only=False)
        for fn in self.functions.values():
            patched = self.patched_functions.get(fn.name)
            self._visit_function(fn, self._patch_self(fn, patched) if patched is not None else None)
        for name, cls in self.classes.items():
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._visit_function(stmt, name)

    def _visit_function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls_name: str | None, outer: dict | None = None) -> None:
        env = self.build_env(fn, outer if outer is not None else self.module_env, cls_name)
        driven = self._driven  # nested functions keep the flag of the method they are in
        if cls_name is not None:
            self._driven = bool(self.client_class_vllm_bases.get(cls_name))
        self._visit_scope(fn.body, env, runtime_only=True)
        for node in self._scope(fn.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._visit_function(node, None, env)
        self._driven = driven

    def _visit_scope(self, body: list[ast.stmt], env: dict, runtime_only: bool) -> None:
        for node in self._scope(body):
            if isinstance(node, ast.Call):
                self._visit_call(node, env, runtime_only)
            elif isinstance(node, ast.Attribute):
                self._visit_attribute(node, env, runtime_only)
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and not (isinstance(t.value, ast.Name) and t.value.id == "self"):
                        self.usage.client_set_attrs.add(t.attr)

    def _record_passed_types(self, node: ast.Call, env: dict) -> None:
        """What class each argument of a call holds, by the callee's name: a parameter annotated `ModelConfig`
        that a caller hands a Hugging Face config is not a ModelConfig (see DC006's annotation doubt)."""
        callee = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else None
        if callee is None:
            return
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call) \
                and _dotted(node.func.value.func) == "type" and node.args and node.func.value.args:
            of = self.infer(node.func.value.args[0], env)  # `type(self.base_layer).m(self)`: m of base_layer's class
            owner = of.cls.qualname if isinstance(of, Instance) else None
            first = self.infer(node.args[0], env)
            if owner is None and isinstance(first, ClientSelf) and callee in self.client_members(first.cls_name):
                # `if hasattr(self, "base_layer"): type(self.base_layer).m(self)` inside the class that defines m:
                # m's `self` is whatever this `self` is, which the hasattr says may be a wrapper
                vbases = self.client_class_vllm_bases.get(first.cls_name) or []
                owner = vbases[0].qualname if vbases else f"{self.file.module}.{first.cls_name}"
            if owner is not None:
                self.usage.unbound_called.setdefault(callee, []).append((owner, self.file.rel, node.lineno))
        args = [(i, a) for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)]
        args += [(k.arg, k.value) for k in node.keywords if k.arg]
        for key, arg in args:
            if not isinstance(arg, (ast.Name, ast.Attribute)):
                continue
            value = self.infer(arg, env)
            if value is None and isinstance(arg, ast.Name) and arg.id in env.get(_BINDINGS, {}):
                # `config = config.hf_config` above this call: the binding that last precedes it (straight-line
                # code; evidence only, never a type for checking)
                before = [v for line, v in env[_BINDINGS][arg.id] if line < node.lineno]
                value = before[-1] if before else None
            qualname = value.cls.qualname if isinstance(value, Instance) else value.qualname if isinstance(value, Foreign) else None
            if qualname is not None:
                self.usage.passed.setdefault(callee, []).append((key, qualname, self.file.rel, node.lineno))

    def _visit_call(self, node: ast.Call, env: dict, runtime_only: bool) -> None:
        func = self.infer(node.func, env)
        loc = loc_of(self.file, node)
        self._record_passed_types(node, env)
        shape = call_shape(node)
        if isinstance(func, ClassRef):
            self.usage.calls.append(CallUse(loc, "construct", func.cls, shape, node, self.file, runtime_only, self._driven))
        elif isinstance(func, FuncRef):
            self.usage.calls.append(CallUse(loc, "function", func.func, shape, node, self.file, runtime_only, self._driven))
        elif isinstance(func, BoundMethod):
            self.usage.calls.append(CallUse(loc, "method", func.method, shape, node, self.file, runtime_only, self._driven))
        elif isinstance(func, UnboundMethod):
            self.usage.calls.append(CallUse(loc, "function", func.method, shape, node, self.file, runtime_only, self._driven))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "collective_rpc" and not self._own_dispatch(node.func.value, env):
            method = None
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "method"), None)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                method = first.value
            urr = any(k.arg == "unique_reply_rank" for k in node.keywords)
            self.usage.rpcs.append(RpcUse(loc, method, node, self.file, urr))

    def _own_dispatch(self, receiver: ast.expr, env: dict) -> bool:
        """`self.collective_rpc(...)` in a client class that defines `collective_rpc` itself and derives from no
        vLLM class: it dispatches to the client's own workers, not vLLM's (vLLM's own executors, scanned as a
        client, are vLLM classes and still checked)."""
        value = self.infer(receiver, env)
        if not isinstance(value, ClientSelf) or "collective_rpc" not in self.client_members(value.cls_name):
            return False
        if self.client_class_vllm_bases.get(value.cls_name):
            return False
        own = self.api.resolve(f"{self.file.module}.{value.cls_name}") if self.file.module.split(".")[0] == self.package else None
        return not (isinstance(own, Resolved) and own.kind == "class")

    def _visit_attribute(self, node: ast.Attribute, env: dict, runtime_only: bool) -> None:
        base = self.infer(node.value, env)
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        key = (node.lineno, node.col_offset, node.attr)
        if key in self.reported:
            return
        if isinstance(base, Instance):
            self.reported.add(key)
            if self._patched_on(base.cls, node.attr):
                return
            result = self._look_up(base.cls, node.attr, store)
            self.usage.attrs.append(AttrUse(loc_of(self.file, node), base.cls, node.attr, store, result, node, self.file))
        elif isinstance(base, ModRef) and not store:
            mod = self.api.module(base.module)
            if mod is None or (base.module, node.attr) in self.usage.patched:
                return
            self.reported.add(key)
            result = self.api.module_member(mod, node.attr)
            self.usage.module_attrs.append(ModuleAttrUse(loc_of(self.file, node), base.module, node.attr, result, runtime_only))
        elif isinstance(base, ClientSelf) and node.attr not in self.client_members(base.cls_name):
            vbases = self.client_class_vllm_bases.get(base.cls_name, [])
            if not vbases:
                return
            self.reported.add(key)
            if any(self._patched_on(v, node.attr) for v in vbases) or self._client_subclass_defines(base.cls_name, node.attr):
                return
            if not self._vllm_bases_decide(base.cls_name, node.attr):
                return
            results = [(v, self.api.class_member(v, node.attr)) for v in vbases]  # the client class's MRO: every vLLM base
            owner, result = next(((v, r) for v, r in results if not isinstance(r, Missing)), results[0])
            if isinstance(result, Missing):
                result = self._created_elsewhere(owner, node.attr, store, result, self._client_is_module(base.cls_name))
            if isinstance(result, Missing) and not store and any(
                    e.split(".")[-1] == "Protocol" for v in vbases for e in self.api.mro(v)[2]):
                # a mixin of a Protocol: the concrete class it is mixed into supplies what the Protocol leaves out
                result = InSubclass(f"{owner.qualname}.{node.attr}", "", owner.path, owner.line)
            self.usage.attrs.append(AttrUse(loc_of(self.file, node), owner, node.attr, store, result, node, self.file))

    def _look_up(self, cls: Resolved, attr: str, store: bool = False) -> object:
        """A member of a vLLM-typed value: the declared class first, then the classes the value may really be."""
        result = self.api.class_member(cls, attr)
        if not isinstance(result, Missing):
            return result
        order, _, externals = self.api.mro(cls)
        if any(e.split(".")[-1] == "Protocol" for e in externals):
            # a Protocol is a structural type: the object is any class that has what it needs
            return InSubclass(f"{cls.qualname}.{attr}", "", cls.path, cls.line)  # "" = any class
        for c in order:
            where = self.usage.subclass_members.get(c.qualname, {}).get(attr)
            if where is not None:
                return InSubclass(f"{cls.qualname}.{attr}", *where)
        found = self.api.member_in_subclass(cls, attr)
        if found is not None:
            return found
        return self._created_elsewhere(cls, attr, store, result)

    def _client_is_module(self, cls_name: str) -> bool:
        """Whether a client class derives from torch's nn.Module itself (a base outside vLLM)."""
        for name in [cls_name, *self._client_ancestors(cls_name)]:
            cls = self.classes.get(name)
            for base in cls.bases if cls is not None else []:
                dotted = _base_name(base) or ""
                source = self.foreign.get(dotted.split(".")[0], "")
                if source.split(".")[0] == "torch" and dotted.rsplit(".", 1)[-1] == "Module":
                    return True
        return False

    def _created_elsewhere(self, cls: Resolved, attr: str, store: bool, result: object, module: bool = False) -> object:
        """Missing from every class body, but made on the object by other code (the client's, or vLLM's own
        `layer.register_parameter("w13_weight", ...)`): it exists once that code ran."""
        if store:
            return result  # a write vLLM never reads: DC006 says so
        if not module and "torch.nn.Module" not in self.api.mro(cls)[2]:
            # only modules get members from their collaborators (quantization methods register weights on the
            # layer); anywhere else `obj.name = ...` on some other object says nothing about this class
            return result
        if attr in self.usage.client_set_attrs:
            return External(f"client-set.{attr}")  # the client itself sets it on some object
        outside = self.api.assigned_from_outside(attr)
        if outside is not None:
            return External(f"assigned-at.{outside[0]}:{outside[1]}")
        return result

    def _client_subclass_defines(self, cls_name: str, attr: str) -> bool:
        """`self.m` in a client class whose own subclasses define `m` (template methods)."""
        for name, cls in self.classes.items():
            if name != cls_name and attr in self.client_class_members.get(name, set()) and \
                    cls_name in self._client_ancestors(name):
                return True
        if attr in self.usage.client_subclass_members.get(f"{self.file.module}.{cls_name}", ()):
            return True  # a subclass in another client file defines it
        own = self.api.resolve(f"{self.file.module}.{cls_name}") if self.file.module.split(".")[0] == self.package else None
        if isinstance(own, Resolved) and own.kind == "class":  # the client is (a copy of) vLLM's own tree
            return self.api.member_in_subclass(own, attr) is not None
        return False

    def _vllm_bases_decide(self, cls_name: str, attr: str) -> bool:
        """Whether the vLLM bases alone decide `self.attr`: False when another base of the client class
        (torch's nn.Module, a third-party class we do not read) has, or may have, the member."""
        for name in [cls_name, *self._client_ancestors(cls_name)]:
            cls = self.classes.get(name)
            for base in cls.bases if cls is not None else []:
                node = base.value if isinstance(base, ast.Subscript) else base
                dotted = _dotted(node)
                if dotted is None or dotted in self.classes or isinstance(self.infer(node, {}), ClassRef):
                    continue
                source = self.foreign.get(dotted.split(".")[0])
                if source is None:
                    if hasattr(builtins, dotted):
                        continue  # object, Exception...
                    return False
                root = source.split(".")[0]
                if root == "torch" and dotted.rsplit(".", 1)[-1] == "Module":
                    if attr in TORCH_NN_MODULE:
                        return False
                    continue  # nn.Module's members are known
                if root not in ("abc", "typing", "typing_extensions"):
                    return False
        return True

    def _client_ancestors(self, cls_name: str, _seen: frozenset = frozenset()) -> set[str]:
        out: set[str] = set()
        cls = self.classes.get(cls_name)
        if cls is None or cls_name in _seen:
            return out
        for base in cls.bases:
            name = _base_name(base)
            if name in self.classes:
                out |= {name} | self._client_ancestors(name, _seen | {cls_name})
        return out

    # ------------------------------------------------------- bound functions
    def _find_bound_functions(self) -> None:
        found: dict[str, tuple[str, ast.AST]] = {}
        for node in nodes_of(self.file.tree, ast.Call, ast.Assign):
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
    usage, analyzers = prepare_client(client, api)
    for analyzer in list(analyzers.values()):
        _guarded_phase(lambda a: a.analyse(), analyzer, analyzers, usage)
    finish_client(usage, api)
    return usage


def finish_client(usage: Usage, api: ApiIndex) -> None:
    """What needs every file's uses: members the client itself sets on typed objects (rules that read it
    declare `Rule.whole_client`, so units.py runs them after every file was visited)."""
    _credit_client_stores(usage, api)


def prepare_client(client: ClientSource, api: ApiIndex) -> tuple[Usage, dict[str, "_FileAnalyzer"]]:
    """The phases over all files; what is left is each file's own visit (`analyse`, see units.py)."""
    usage = Usage(files=client.files)
    analyzers: dict[str, _FileAnalyzer] = {}
    # Phases over all files: what the client defines and patches anywhere is known before any use is checked.
    phases = [lambda a: a.collect_imports(), lambda a: a.collect_patches(), lambda a: a.prepare_classes(),
              lambda a: a.record_client_classes(), lambda a: a.register_subclasses(), lambda a: a.collect_worker_extensions()]
    for file in client.files:
        analyzers[file.module] = _FileAnalyzer(api, file, usage, api.package)
    for phase in phases:
        for analyzer in list(analyzers.values()):
            _guarded_phase(phase, analyzer, analyzers, usage)
    # A worker extension named by string becomes part of the worker: its `self` is a vLLM worker.
    for dotted, _loc in usage.worker_extensions:
        module, _, cls_name = dotted.rpartition(".")
        analyzer = analyzers.get(module)
        if analyzer is not None:
            analyzer.add_worker_extension(cls_name)
    return usage, analyzers


def _credit_client_stores(usage: Usage, api: ApiIndex) -> None:
    """A member the client itself assigns on objects of a vLLM class exists on those objects once that code
    ran: reading it is the client's own attribute, not a vLLM drift. Two kinds of evidence: a store on a
    receiver of the same (or a related) class anywhere in the client, or a store through the same variable
    name in the same file (`prefill = attn_metadata.prefill; prefill.req_to_token = ...` in a builder, then
    `prefill.req_to_token` in the backend that reads it). An assignment on some unrelated object hides nothing."""
    typed: dict[str, list[AttrUse]] = {}
    for use in usage.attrs:
        if use.store and isinstance(use.result, Missing):
            typed.setdefault(use.attr, []).append(use)
    by_name: dict[str, set[tuple[str, str]]] = {}  # file -> {(variable, attribute)} it assigns
    chained: dict[tuple[str, str], str] | None = None  # (last receiver attribute, attribute) -> where, in any file
    for use in usage.attrs:
        if use.store or not isinstance(use.result, Missing):
            continue
        made = _typed_store(use, typed.get(use.attr, ()), api)
        if made is None and isinstance(use.node.value, ast.Name):
            if use.file.rel not in by_name:
                by_name[use.file.rel] = _named_stores(use.file.tree)
            if (use.node.value.id, use.attr) in by_name[use.file.rel]:
                made = f"{use.file.rel} assigns {use.node.value.id}.{use.attr}"
        elif made is None and isinstance(use.node.value, ast.Attribute):
            # `vllm_config.scheduler_config._original_cls = ...` in a platform hook that types vllm_config as Any
            if chained is None:
                chained = _chained_stores(usage.files)
            made = chained.get((use.node.value.attr, use.attr))
        if made is not None:
            use.result = External(f"client-set.{use.owner.qualname}.{use.attr} ({made})")


def _typed_store(use: AttrUse, stores, api: ApiIndex) -> str | None:
    mro = {c.qualname for c in api.mro(use.owner)[0]}
    for store in stores:
        if store.owner.qualname in mro or use.owner.qualname in {c.qualname for c in api.mro(store.owner)[0]}:
            return f"{store.loc.path}:{store.loc.line}"
    return None


def _chained_stores(files) -> dict[tuple[str, str], str]:
    """(last receiver attribute, attribute) -> where, for `a.b.attr = ...` anywhere in the client."""
    out: dict[tuple[str, str], str] = {}
    for file in files:
        for t, line in attribute_stores(file.tree):
            if isinstance(t.value, ast.Attribute):
                out.setdefault((t.value.attr, t.attr), f"{file.rel}:{line}")
    return out


def _named_stores(tree: ast.AST) -> set[tuple[str, str]]:
    """(variable, attribute) for `var.attr = ...` in a file; each class's `self` is another object, so not those."""
    return {(t.value.id, t.attr) for t, _line in attribute_stores(tree)
            if isinstance(t.value, ast.Name) and t.value.id not in ("self", "cls")}


def _guarded_phase(phase, analyzer: "_FileAnalyzer", analyzers: dict, usage: Usage) -> None:
    """A file too deeply nested for the analysis (a 2,500-long attribute chain) is reported, never a crash."""
    try:
        phase(analyzer)
    except RecursionError:
        analyzers.pop(analyzer.file.module, None)
        usage.unanalysed.append((analyzer.file.rel, "expressions nested too deeply to follow"))
