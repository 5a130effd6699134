"""Light type inference of client values: what a name, attribute, call or annotation holds (a vLLM
module, class, function or instance, a client function, `self` of a client class), and the local
environment of a function. Deliberately small: `x = Cls(...)`, `self.x = Cls(...)`, annotations,
walrus, vLLM return annotations and client functions' return annotations; a local bound to values of
different types has no one type.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from driftcheck.astnodes import children, dotted_name, nodes_within
from driftcheck.vllm_model.class_summary import flatten_class_body
from driftcheck.vllm_model.function_summary import MODULE_REGISTRARS
from driftcheck.client_model.isinstance_narrowing import predicate_test, predicates
from driftcheck.client_model.overlay import in_overlay
from driftcheck.client_model.plain_classes import builds_as_written
from driftcheck.client_model.saved_originals import read_before_own_store
from driftcheck.vllm_model.resolved import Missing, Resolved


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
    # (vLLM module, name, client file, line) of the `from module import name` (or `module.name` read) that bound it:
    # the client may have rebound that name on that module (`Usage.rebound`)
    via: tuple[str, str, str, int] | None = None


@dataclass
class Instance:
    cls: Resolved
    built: bool = False  # the client constructs it here (`Cls(...)`): the object is this class, not one annotated so
    # the name of the vLLM module-level object it is (`MULTIMODAL_REGISTRY`, FC2): the client may put its own there
    held_by: str = ""


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
    built: bool = False  # an object the file builds (`x = Sub(...)`), not the `self` of the class's own methods


@dataclass
class SuperOf:
    """`super()` in a method of a client class: members come from the class's bases, not the class. `start`: for
    `super(Base, self)` with `Base` the class's one vLLM base, the vLLM class after `Base` where the lookup starts."""

    cls_name: str
    start: Resolved | None = None


@dataclass
class UnboundMethod:
    """`Cls.method` read on the class: called with an explicit `self`."""

    method: Resolved
    owner: Resolved


@dataclass(frozen=True)
class BuiltinValue:
    """A module-level value vLLM binds once to a literal or a builtin's call (`QUANTIZATION_METHODS = list(...)`):
    an object of exactly that builtin type, whose members Python itself lists."""
    qualname: str  # "vllm.model_executor.layers.quantization.QUANTIZATION_METHODS"
    type_name: str  # "list"
    path: str
    line: int


BUILTIN_TYPES = {"list": list, "dict": dict, "set": set, "tuple": tuple, "frozenset": frozenset, "str": str}


@dataclass
class ClientFunc:
    node: ast.FunctionDef | ast.AsyncFunctionDef


REGISTRARS = MODULE_REGISTRARS  # torch.nn.Module's setters by name
NOT_PATCH_MODULES = {"typing", "typing_extensions", "collections", "abc", "builtins", "dataclasses", "enum", "types",
                     "functools", "torch", "numpy", "pydantic"}
BINDINGS = "\0bindings"  # env key: name -> [(line, value)] for names bound to different values in a function
ELEMENTS = "\0elements"  # env key: loop variable -> the class of the elements it iterates (evidence about callers only)
UNIONS = "\0unions"  # env key: parameter annotated `A | B` -> the vLLM classes it may hold (evidence for stores only)
STORED = "\0stored"  # env key: "name.attr" -> what the function stores there (None: values of different types)
ABSENT = object()  # a vLLM import the target lacks: a fallback import of the same name may take its place


def _bound_names(target: ast.expr) -> list[str]:
    """The local names an assignment target binds (`a, (b, *c) = ...`), not the bases of `self.x = ...`."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _bound_names(elt)]
    return []


def same_value(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, (Instance, ClassRef)):
        return a.cls.qualname == b.cls.qualname
    return a == b


ANY_MODULE = "<every loaded module>"  # Usage.patched key: a name the client sets on each module in sys.modules


def base_name(base: ast.expr) -> str | None:
    """The dotted name of a class base, `Patch[Target]` read as `Patch`."""
    return dotted_name(base.value if isinstance(base, ast.Subscript) else base)


def settle_absent(env: dict) -> None:
    for name, value in env.items():
        if value is ABSENT:
            env[name] = None


class ValueInference:
    """What a client expression holds, read against the vLLM model and the file's own definitions."""

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
            if result.kind == "value" and result.type_expr and result.type_expr[:-2] in BUILTIN_TYPES:
                return BuiltinValue(result.qualname, result.type_expr[:-2], result.path, result.line)
            if result.kind == "value" and result.type_expr and result.module is not None:
                # a module-level instance vLLM builds once at import (`MULTIMODAL_REGISTRY = MultiModalRegistry()`):
                # an object of that class when what built it is a class (FC2); `_held_replaced` asks, when a member is
                # read, whether the client puts its own object there
                t = self.api.class_from_annotation(result.module, result.type_expr)
                return Instance(t, held_by=result.qualname.rpartition(".")[2]) if t else None
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
            if isinstance(node.value, ast.Name) and env.get(STORED) and f"{node.value.id}.{node.attr}" in env[STORED]:
                return env[STORED][f"{node.value.id}.{node.attr}"]  # what this function stored there itself
            base = self.infer(node.value, env)
            return self._member_value(base, node.attr)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "super" and "super" not in env \
                    and "super" not in self.module_env and "super" not in self.functions:
                return self._super(node, env)
            loaded = self._loaded_module(node)
            if loaded is not None:
                return loaded
            read = self._getattr_read(node, env)
            if read is not None:
                # `getattr(vllm_config, "kv_transfer_config", None)`: the member, where it is there (29b R2: reads of
                # fields 0.32.0 removed from the config it returns went unchecked)
                return self._member_value(self.infer(read[0], env), read[1])
            func = self.infer(node.func, env)
            if isinstance(func, ClassRef):
                return Instance(func.cls, built=True)
            if isinstance(func, FuncRef):
                t = self.api.type_of(func.func)
                return Instance(t) if t else None
            if isinstance(func, BoundMethod):
                t = self.api.type_of(func.method)
                if t is None and func.method.func is not None and func.method.func.returns_built == ["cls"] \
                        and isinstance(node.func, ast.Attribute) and isinstance(self.infer(node.func.value, env), ClassRef):
                    t = func.owner  # `EngineArgs.from_cli_args(args)`: a classmethod that returns `cls(...)` (26c M1)
                return Instance(t) if t else None
            if isinstance(func, ClientFunc) and func.node.returns is not None:
                return self._annotation_value(func.node.returns) if self._returns_one_class(func.node) else None
            if func is None and isinstance(node.func, ast.Attribute):
                owner = self.infer(node.func.value, env)
                if isinstance(owner, ClientSelf):
                    return self._own_method_returns(owner.cls_name, node.func.attr)
            if func is None and isinstance(node.func, ast.Name) and self._built_client_class(node.func.id, env):
                # an object of a client class of this file with vLLM bases: its own members first, then what it
                # inherits (tpu-inference's `TPULRUCacheWorkerLoRAManager(...).create_lora_manager(model)`; 22b's M3)
                return ClientSelf(node.func.id, built=True)
            if func is None and isinstance(node.func, ast.Name) and node.func.id in self.foreign:
                built = self._built_class_elsewhere(node.func.id)  # the same, for a class another client file defines
                return ClientSelf(built, built=True) if built is not None else None
            return None
        if isinstance(node, ast.Await):
            return self.infer(node.value, env)
        if isinstance(node, ast.Subscript):
            # `ModelRunnerBase[ModelInputForNeuron]`: a generic class subscripted is that class (as a base, or built)
            value = self.infer(node.value, env)
            if isinstance(value, ClassRef) and self.api.subscript_gives_member(value.cls):
                return Instance(value.cls)  # `AttentionBackendEnum["FLASHINFER"]`: an Enum's member, by name (LA)
            return value if isinstance(value, ClassRef) else None
        return None

    def names_import_module(self) -> bool:
        """Whether the file's text names `import_module` at all: asked for every statement and function, read once."""
        found = self.__dict__.get("_names_import_module")
        if found is None:
            found = self.__dict__["_names_import_module"] = "import_module" in self.file.text
        return found

    def _getattr_read(self, call: ast.Call, env: dict) -> tuple[ast.expr, str] | None:
        """(the object, the name) of a builtin `getattr(obj, "name")` or `getattr(obj, "name", default)`."""
        return self.builtin_lookup(call, env, {"getattr": (2, 3)})

    def builtin_lookup(self, call: ast.Call, env: dict, arities: dict[str, tuple[int, ...]]) -> tuple[ast.expr, str] | None:
        """(the object, the literal name) of a call of the builtin `getattr` / `hasattr` (not a name the file binds
        itself) with one of the argument counts `arities` allows it, e.g. {"getattr": (3,), "hasattr": (2,)}."""
        func = call.func
        if not isinstance(func, ast.Name) or len(call.args) not in arities.get(func.id, ()) or call.keywords \
                or func.id in env or func.id in self.module_env or func.id in self.functions:
            return None
        name = call.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier()):
            return None
        return call.args[0], name.value

    def _client_subclass_built(self, value: ast.expr) -> bool:
        """`Cls(...)` of a client class of this file that derives from vLLM classes."""
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
            bool(self.client_class_vllm_bases.get(value.func.id))

    def _own_method_returns(self, cls_name: str, name: str) -> object:
        """What `self.name(...)` returns in a client class of this file that defines `name` itself: its return
        annotation's vLLM class, where its own returns agree (`self.model = self._create_auto_model(...)` with
        `-> Optional[LLM]`: a None it returns fails on any member read as surely); not where a client subclass
        overrides it (JC4)."""
        cls = self.classes.get(cls_name)
        fn = next((s for s in flatten_class_body(cls.body) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and s.name == name), None) if cls is not None else None
        if fn is None or fn.returns is None or any(dotted_name(d) in _NOT_CALLED for d in fn.decorator_list) \
                or self._client_subclass_defines(cls_name, name):
            return None
        return self._annotation_value(fn.returns) if self._returns_one_class(fn) else None

    def _returns_one_class(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Whether the client function's own returns agree with its return annotation, as far as they can be read: not
        where it returns a name its body binds to values of different classes (vLLM's own test helper `_create_proposer(
        ...) -> EagleProposer` returns a DFlashProposer, a sibling class, for "dflash"), nor an object of another
        class than the annotation names. Python does not check the annotation; the code decides."""
        cache = self.__dict__.setdefault("_return_checks", {})
        if id(fn) not in cache:
            cache[id(fn)] = True  # while it is worked out (a function returning its own call)
            annotated = self._annotation_value(fn.returns)
            env = self.build_env(fn, self.module_env, None)
            conflicted = env.get(BINDINGS, {})
            agrees = True
            for node in self._scope(fn.body):
                if isinstance(node, ast.Return) and node.value is not None:
                    if isinstance(node.value, ast.Name) and node.value.id in conflicted:
                        agrees = False
                        break
                    value = self.infer(node.value, env)
                    if isinstance(value, Instance) and isinstance(annotated, Instance) and \
                            value.cls.qualname != annotated.cls.qualname:
                        agrees = False
                        break
                    if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                            and node.value.func.id in self.classes and node.value.func.id not in env:
                        agrees = False  # an object of the client's own class (a stand-in, a remote client: JC4)
                        break
            cache[id(fn)] = agrees
        return cache[id(fn)]

    def loaded_module_name(self, call: ast.Call) -> str | None:
        """`importlib.import_module("vllm.v1.core.block_pool")`, the whole name given as a constant: the vLLM module it
        loads. A relative name, a `package=` argument or a client's own copy gives None."""
        dotted = dotted_name(call.func) or ""
        if dotted == "import_module":
            loads = self.foreign.get("import_module") == "importlib"
        else:
            head, _, leaf = dotted.partition(".")
            # `import importlib.abc` binds the `importlib` package too
            loads = leaf == "import_module" and (self.foreign.get(head) or "").split(".")[0] == "importlib"
        if not loads or len(call.args) != 1 or call.keywords:
            return None
        arg = call.args[0]
        name = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
        if name.split(".")[0] != self.package or name in self.usage.shadowed or in_overlay(self.usage.overlay, name):
            return None
        return name

    def _loaded_module(self, call: ast.Call) -> ModRef | None:
        """The release module `loaded_module_name` names, as `import vllm.v1.core.block_pool as m` binds it (ContextPilot
        reaches `BlockPool` this way, batch 18b); None where the release lacks it."""
        name = self.loaded_module_name(call)
        return ModRef(name) if name is not None and self.api.module(name) is not None else None

    def _element_value(self, iterable: ast.expr, env: dict) -> object:
        """What `for r in scheduler_output.scheduled_new_reqs` binds `r` to, when vLLM annotates that attribute as a
        container of one class; None otherwise."""
        if not isinstance(iterable, ast.Attribute):
            return None
        base = self.infer(iterable.value, env)
        if not isinstance(base, Instance):
            return None
        cls = self.api.element_type_of(self.api.class_member(base.cls, iterable.attr))
        return Instance(cls) if cls is not None else None

    def _third_party_class(self, node: ast.expr) -> str | None:
        """The qualified name of a class a name imported from a third party (neither vLLM nor a module of the client)
        spells: LMCache's `LMCacheConnectorMetadata` in `isinstance(connector_metadata, LMCacheConnectorMetadata)`."""
        dotted = dotted_name(node)
        module = self.foreign.get(dotted.split(".")[0]) if dotted else None
        if not module or module.split(".")[0] in self._client_roots():
            return None
        known = self.__dict__.setdefault("_client_modules", {})  # module -> whether the client has it (read once)
        if module not in known:
            source = getattr(self, "client_source", None)
            known[module] = source is not None and source.module_tree(module) is not None
        if known[module]:
            return None  # a client module that imports no vLLM
        imported_whole = module.split(".")[0] == dotted.split(".")[0]  # `import lmcache.x` binds `lmcache`
        return dotted if imported_whole else f"{module}.{dotted}"

    def _client_roots(self) -> set[str]:
        roots = self.__dict__.get("_roots")
        if roots is None:
            roots = self.__dict__["_roots"] = {f.module.split(".")[0] for f in self.usage.files}
        return roots

    def _member_value(self, base: object, attr: str) -> object:
        if isinstance(base, ModRef):
            mod = self.api.module(base.module)
            if mod is None:
                return None
            if (base.module, attr) in self.usage.patched:
                if (base.module, attr) not in self.usage.rebound:
                    return None
                value = self._value_of(self.api.module_member(mod, attr))  # a function the client rebinds: checked
                return FuncRef(value.func, (base.module, attr, "", 0)) if isinstance(value, FuncRef) else None  # against both
            return self._value_of(self.api.module_member(mod, attr))
        if isinstance(base, Instance):
            if self._patched_on(base.cls, attr) or self._replaced(base.cls, base.built) or self._held_replaced(base):
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
        if isinstance(base, SuperOf):
            if base.start is not None:  # `super(Base, self)`: Base's own base comes next, then its MRO
                return ClassRef(base.start) if attr == "__init__" else self._member_value(Instance(base.start), attr)
            if attr in self._ancestor_members(base.cls_name) or not self._vllm_bases_decide(base.cls_name, attr):
                return None  # a client base (or a base driftcheck does not read) comes first in the MRO
            vbases = self.client_class_vllm_bases.get(base.cls_name, [])
            if attr == "__init__":  # the next base's constructor, as vLLM builds it (dataclass fields, pydantic...)
                return ClassRef(vbases[0]) if len(vbases) == 1 else None
            for vbase in vbases:
                value = self._member_value(Instance(vbase), attr)
                if value is not None:
                    return value
            return None
        if isinstance(base, ClientSelf):
            if attr in self.client_members(base.cls_name):
                return self._self_type(base.cls_name, attr)  # the client's own member: typed only if set from vLLM
            if self._client_base_first(base.cls_name, attr):
                return None  # a client mixin of another file defines it before the vLLM bases listed after it
            for vbase in self.client_class_vllm_bases.get(base.cls_name, []):
                value = self._member_value(Instance(vbase), attr)
                if value is not None:
                    # of an object the file built, only a method: a data member may hold what the client put there
                    # (tpu-inference's test sets `attn.kv_b_proj = MagicMock(...)` on the layer it built)
                    return None if base.built and not isinstance(value, BoundMethod) else value
            return None
        return None

    def _self_type(self, cls_name: str, attr: str) -> object:
        """What `self.attr` holds in a method of the client class: the type the class's own methods set it to, else
        that of the first client ancestor of this file that sets it (mteb's `self.llm = LLM(...)` in a base
        `__init__`, called in a subclass: 25d's R2); a class between that sets or defines it decides instead."""
        for name in (cls_name, *self._client_ancestors(cls_name)):
            if attr in self.client_class_members.get(name, ()):
                return self.self_types.get(name, {}).get(attr)
        return None

    def _built_client_class(self, name: str, env: dict) -> bool:
        """`name(...)` builds the class of that name this file defines once at its top level, from vLLM bases, with no
        `__new__` and no metaclass that may hand back another object."""
        cls = self.classes.get(name)
        return cls is not None and name not in env and name not in self.module_env \
            and bool(self.client_class_vllm_bases.get(name)) \
            and builds_as_written(self.file.tree, cls, self.client_members(name))

    def _is_patch_base(self, node: ast.expr) -> bool:
        """A generic base of the client's own (not typing's, not vLLM's): `Patch[Target]`."""
        name = dotted_name(node)
        if name is None:
            return False
        first = name.split(".")[0]
        if name in self.classes:
            return True
        source = self.foreign.get(first)
        return source is not None and source.split(".")[0] not in NOT_PATCH_MODULES

    def _replaced(self, cls: Resolved, built: bool = False) -> bool:
        """The client puts its own class in the place of this vLLM class in the module that defines it (`request.
        StreamingUpdate = OmniStreamingUpdate`, or on every loaded module): a value of it may be the client's class.
        `built`: the client builds the value itself (`Cls(...)` through its own import of the class)."""
        own = self.file_patches
        if not self.usage.patched and not own:
            return False
        where, _, name = cls.qualname.rpartition(".")
        if (where, name) in self.usage.patched or (where, name) in own or (ANY_MODULE, name) in self.usage.patched:
            return True
        # the name replaced by this file in a module that imports the class (a test's `monkeypatch.setattr("vllm.v1.
        # worker.gpu.eplb_utils.EplbState", Fake)`): what that module builds may be the file's class while its test
        # runs. Not another file's patch (a test patches for its own run: vLLM's test_nixl_desc_geometry replaces
        # `base_worker.TransferTopology`, test_nixl_connector builds the real one), nor what the client builds through
        # its own import of the class (vLLM's benchmark builds `InputBatch(...)`)
        return not built and any(attr == name and self._binds(owner, attr, cls) for owner, attr in own)

    def _held_replaced(self, value: Instance) -> bool:
        """A vLLM module-level object (FC2) the client puts its own object in the place of, on any module or by a
        test's patch of this file (`vllm.multimodal.MULTIMODAL_REGISTRY = MyRegistry()`, `mock.patch("vllm.multimodal.
        MULTIMODAL_REGISTRY")`): what the name holds is the client's business."""
        if not value.held_by:
            return False
        return any(attr == value.held_by for _where, attr in self.usage.patched) \
            or any(attr == value.held_by for _where, attr in self.file_patches)

    def _binds(self, module: str, attr: str, cls: Resolved) -> bool:
        found = self.api.resolve(f"{module}.{attr}")
        return isinstance(found, Resolved) and found.qualname == cls.qualname

    def _patched_on(self, cls: Resolved, attr: str) -> bool:
        """The client sets `attr` on this class (or one of its bases) itself: anywhere, or (a test's patch by path)
        in this file."""
        own = self.file_patches
        if not self.usage.patched and not own:
            return False
        order, _, _ = self.api.mro(cls)
        return any((c.qualname, attr) in self.usage.patched or (c.qualname, attr) in own for c in order)

    def _client_base_first(self, cls_name: str, attr: str, _seen: frozenset = frozenset()) -> bool:
        """Whether a client base from another file (itself or a client ancestor of its) defines `attr` before any vLLM
        base that has it, in the order Python's MRO consults the bases listed on the class (`class M(ClientMixin,
        VllmModel)` with `embed_input_ids` in ClientMixin: the mixin's method runs, not the Protocol's)."""
        return self._bases_first(cls_name, attr, _seen) is True

    def _bases_first(self, cls_name: str, attr: str, seen: frozenset) -> bool | None:
        cls = self.classes.get(cls_name)
        if cls is None or cls_name in seen:
            return None
        for base in cls.bases:
            name = base_name(base)
            label = self._base_label(base)
            if name in self.classes:
                found = self._bases_first(name, attr, seen | {cls_name})
            elif label is not None and self._client_class_info(label) is not None:
                found = self._table_defines(label, attr, set())
            else:
                value = self.infer(base.value if isinstance(base, ast.Subscript) else base, self.class_env(cls_name))
                # a vLLM base that has it comes first
                found = False if isinstance(value, ClassRef) and not isinstance(self.api.class_member(value.cls, attr), Missing) else None
            if found is not None:
                return found
        return None

    def _table_defines(self, label: str, attr: str, seen: set) -> bool | None:
        """True when the client class `label` (of any client file, read by `StandIns._client_class_info`) or a client
        ancestor defines `attr` before a vLLM base of theirs that has it, False when such a vLLM base comes first, None
        when neither has it."""
        if label in seen or len(seen) > 50:
            return None
        seen.add(label)
        own, bases = self._client_class_info(label)[:2]
        if attr in own:
            return True
        for base in bases:
            if self._client_class_info(base) is not None:
                found = self._table_defines(base, attr, seen)
                if found is not None:
                    return found
                continue
            vbase = self.api.resolve(base)
            if isinstance(vbase, Resolved) and vbase.kind == "class" and not isinstance(self.api.class_member(vbase, attr), Missing):
                return False
        return None

    def class_env(self, cls_name: str) -> dict:
        """The names a client class's bases and methods read: for a class a function defines, that function's own
        (its imports of vLLM, its locals), else the module's alone (an empty environment: `infer` reads the module's
        after it) (JC2)."""
        fn = self.local_class_scopes.get(cls_name)
        if fn is None:
            return {}
        env = self._class_envs.get(id(fn))
        if env is None:
            self._class_envs[id(fn)] = {}  # a cycle through this class's own bases reads the module's names
            env = self._class_envs[id(fn)] = self.build_env(fn, self.module_env, None)
        return env

    def client_members(self, cls_name: str, _seen: frozenset = frozenset()) -> set[str]:
        """Members a client class has from its own body and its client-side bases in this file."""
        members = set(self.client_class_members.get(cls_name, set()))
        cls = self.classes.get(cls_name)
        if cls is not None and cls_name not in _seen:
            for base in cls.bases:
                name = base_name(base)
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
        if isinstance(annotation, ast.Subscript) and dotted_name(annotation.value) in ("Optional", "typing.Optional"):
            return self._annotation_value(annotation.slice)  # `Optional["X"]`
        value = self.infer(annotation, {})
        if isinstance(value, ClassRef):
            return Instance(value.cls)
        return None

    def _union_members(self, annotation: ast.expr) -> list[Instance]:
        """The vLLM classes of a union annotation (`"Attention | MLAAttention"`, `Union[A, B]`, `Optional[Union[A, B]]`):
        the object is one of them, which driftcheck cannot tell (reads on it are not checked), but a member stored on
        it is set on whichever it is."""
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return []
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            parts = [annotation.left, annotation.right]
        elif isinstance(annotation, ast.Subscript) and dotted_name(annotation.value) in ("Union", "typing.Union", "Optional",
                                                                                        "typing.Optional"):
            parts = list(annotation.slice.elts) if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        else:
            value = self._annotation_value(annotation)
            return [value] if isinstance(value, Instance) else []
        out: list[Instance] = []
        for part in parts:
            for member in self._union_members(part):
                if all(m.cls.qualname != member.cls.qualname for m in out):
                    out.append(member)
        return out

    def local_imports(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, record: bool) -> dict:
        """What the imports in `fn`'s body bind (their names from outside vLLM join `self.foreign` either way)."""
        local: dict[str, object] = {}
        if not nodes_within(self.file.tree, fn, ast.Import, ast.ImportFrom) and not (
                self.names_import_module() and any((dotted_name(c.func) or "").endswith("import_module")
                                                   for c in nodes_within(self.file.tree, fn, ast.Call))):
            return local  # (most functions: no import statement, nor a module loaded by name, in their lines)
        first = len(self.usage.imports)
        stand_ins = self.module_stand_ins()
        self._imports_in(fn.body, runtime_only=True, guarded=False, type_only=False, env=local,
                         stood=stand_ins.at_start(fn) if stand_ins.active else None, scope=fn)
        if not record:
            del self.usage.imports[first:]
        settle_absent(local)
        return local

    def _scope(self, body: list[ast.stmt]) -> list[ast.AST]:
        """The nodes of one scope, walked once (environments, classes and visits all read them)."""
        found = self._scopes.get(id(body))
        if found is None:
            found = self._scopes[id(body)] = _walk_scope(body)
        return found

    def _binding_nodes(self, body: list[ast.stmt]) -> list[ast.AST]:
        """The nodes of one scope that `build_env` reads (calls, assignments, loops, `with`), in the scope's order:
        the names, attributes and constants it would step over are most of a scope, and an environment is built
        for every function in every pass."""
        key = ("bindings", id(body))
        found = self._scopes.get(key)
        if found is None:
            found = self._scopes[key] = [n for n in self._scope(body) if isinstance(n, _BINDING_KINDS)]
        return found

    def saved_original(self, node: ast.Attribute, env: dict) -> object:
        """`_orig = Cls.forward` (or `m.f`) read before the file's one store of that name (`saved_originals`): what
        vLLM's own class or module holds there, the client's patch notwithstanding (23b's R6: vllm-gaudi calls the saved
        `Qwen3NextAttention.forward` with an argument 0.26.0's no longer takes)."""
        if id(node) not in read_before_own_store(self.file.tree):
            return None
        owner = self.infer(node.value, env)
        if isinstance(owner, ModRef):
            mod = self.api.module(owner.module)
            found = self._value_of(self.api.module_member(mod, node.attr)) if mod is not None else None
            return found if isinstance(found, FuncRef) else None
        if isinstance(owner, ClassRef):
            result = self.api.class_member(owner.cls, node.attr)
            if isinstance(result, Resolved) and result.kind == "method" and result.func is not None:
                if result.func.is_classmethod or result.func.is_static:
                    return BoundMethod(result, owner.cls)
                return UnboundMethod(result, owner.cls)
        return None

    def _captured(self, value: object, node: ast.Assign, env: dict | None = None) -> object:
        """`_orig = m.f`: the name holds the function `m.f` is when this line runs, not what a later `m.f = patched`
        puts there (batch 20i's W1: rdna4's wrapper calls `_orig(...)`, vLLM's own function, whose changed signature
        the replacement's was taken for). A function read through a module attribute is read at the call (via line 0);
        bound to a name, it was read here."""
        if isinstance(value, FuncRef) and value.via is not None and not value.via[3] and isinstance(node.value, ast.Attribute):
            return FuncRef(value.func, (value.via[0], value.via[1], self.file.rel, node.lineno))
        if value is None and env is not None and isinstance(node.value, ast.Attribute):
            return self.saved_original(node.value, env)
        return value

    def build_env(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, outer: dict, self_cls: str | None,
                  record: bool = False) -> dict:
        """The names `fn`'s body binds, with what they hold. Only the visit (`record`) keeps the ImportUse of each
        import inside the function: the phases build the same environment (and bind the same names) to type
        `self.x`, and recording it there too listed one import once per phase round."""
        env: dict[str, object] = dict(outer)
        args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        unions: dict[str, list[Instance]] = {}
        for i, arg in enumerate(args):
            if i == 0 and self_cls is not None and "staticmethod" not in [dotted_name(d) for d in fn.decorator_list]:
                env[arg.arg] = ClientSelf(self_cls)
            elif arg.annotation is not None:
                env[arg.arg] = self._annotation_value(arg.annotation)
                members = self._union_members(arg.annotation) if env[arg.arg] is None else []
                if len(members) > 1:
                    unions[arg.arg] = members
            else:
                env.pop(arg.arg, None)
        # a parameter the body rebinds holds either value: its annotation counts as one of its assignments
        assigned_types: dict[str, list[object]] = {a.arg: [env[a.arg]] for a in args if a.arg in env}
        bindings: dict[str, list[tuple[int, object]]] = {a.arg: [(fn.lineno, env[a.arg])] for a in args if a.arg in env}
        # an unannotated parameter (or `*args` / `**kwargs`) named like a module-level name or an outer one hides it:
        # `def apply(f): f(1, 2, 3)` calls the argument, not an imported vLLM `f` (batch 20i's S1)
        params = [a.arg for a in args] + [a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
        for name in params:
            if name not in env and (name in outer or name in self.module_env or name in self.functions):
                env[name] = None
        local_imports = self.local_imports(fn, record)
        env.update(local_imports)
        narrowed: list[str] = []
        stored: dict[str, list[object]] = {}
        elements: dict[str, object] = {}
        outside: dict[str, str] = {}  # a name `isinstance` narrows to a third party's class -> that class
        preds = predicates(self.file.tree)
        for node in self._binding_nodes(fn.body):
            tested = predicate_test(node, preds) if isinstance(node, ast.Call) else None
            if tested is not None and isinstance(tested[0], ast.Name):
                # `isinstance(x, C)`, or a call of the file's predicate doing it (`self._is_meta(x)`, 26b VB1)
                narrowed.append(tested[0].id)
                found = self._third_party_class(tested[1])
                if found is not None:
                    outside[tested[0].id] = found
                continue
            target_value: list[tuple[str, object]] = []
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        target_value.append((target.id, self._captured(self.infer(node.value, env), node, env)))
                    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                            not isinstance(env.get(target.value.id), ClientSelf):
                        # `scheduler.client = _StubLookupClient(...)` on a vLLM object: reads of `scheduler.client` in
                        # this function hold the stub, not what vLLM annotates (its own test of the mooncake store)
                        value = self.infer(node.value, env)
                        if value is None and self._client_subclass_built(node.value):
                            continue  # `connector.connector_worker = FakeWorker(...)`, a subclass of vLLM's worker:
                            # what vLLM annotates still holds (its members, and those the subclass adds)
                        stored.setdefault(f"{target.value.id}.{target.attr}", []).append(value)
                    else:  # `result, _, *rest = args`: names bound to values we do not type
                        target_value += [(n, None) for n in _bound_names(target)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                target_value.append((node.target.id, self._annotation_value(node.annotation)))
            elif isinstance(node, ast.NamedExpr):
                target_value.append((node.target.id, self.infer(node.value, env)))
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, ast.Name):
                element = self._element_value(node.iter, env) or _third_party_element(node.iter, outside)
                earlier = elements.get(node.target.id, element)
                # the same name over containers of different classes tells nothing
                elements[node.target.id] = element if same_value(earlier, element) else None
            if isinstance(node, (ast.For, ast.AsyncFor)):  # (a comprehension's variable stays inside it)
                target_value += [(n, None) for n in _bound_names(node.target)]
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                target_value += [(n, None) for item in node.items if item.optional_vars is not None
                                 for n in _bound_names(item.optional_vars)]
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn:
                # a class or function the body defines is its own, whatever the module imports under that name (vLLM's
                # test defines `class FusedMoE3DWithLoRA(BaseLayerWithLoRA)` inside itself over the imported one)
                target_value.append((node.name, None))
            for name, value in target_value:
                assigned_types.setdefault(name, []).append(value)
                bindings.setdefault(name, []).append((node.lineno, value))
                env[name] = value
        conflicted: dict[str, list[tuple[int, object]]] = {}
        for name, values in assigned_types.items():
            if len(values) < 2:
                continue
            first = values[0]
            if any(not same_value(v, first) for v in values):  # `TileScheduler = A` here, `= B` there
                env[name] = None  # conflicting assignments: do not guess
                conflicted[name] = sorted(bindings.get(name, []), key=lambda b: b[0])
        env[BINDINGS] = conflicted
        env[ELEMENTS] = elements
        env[UNIONS] = {name: members for name, members in unions.items() if len(assigned_types.get(name, ())) < 2}
        env[STORED] = {path: values[0] if all(same_value(v, values[0]) for v in values) else None
                       for path, values in stored.items()}
        for name in narrowed:  # `isinstance(x, Sub)` narrows x to a type we do not track: stop guessing x's type
            env[name] = None
        return env


def _third_party_element(iterable: ast.expr, outside: dict[str, str]) -> object:
    """What `for r in meta.requests` binds `r` to when `meta` is narrowed to a third party's class: an element of a
    container that library fills (`Foreign("lmcache....LMCacheConnectorMetadata.requests[]")`), evidence about callers
    only (a parameter annotated with a vLLM class that receives it); None otherwise."""
    if isinstance(iterable, ast.Attribute) and isinstance(iterable.value, ast.Name) and iterable.value.id in outside:
        return Foreign(f"{outside[iterable.value.id]}.{iterable.attr}[]")
    return None


# decorators whose method `self.m(...)` does not call as written (a property's value is no callable)
_NOT_CALLED = ("property", "functools.cached_property", "cached_property")

# every node type build_env's loop acts on; any other node leaves the environment as it is
_BINDING_KINDS = (ast.Call, ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension,
                  ast.With, ast.AsyncWith, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _walk_scope(body: list[ast.stmt]) -> list[ast.AST]:
    """ast.walk over statements, not descending into nested functions, lambdas or classes (depth first)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(body))
    seen, push, pop = out.append, stack.append, stack.pop
    while stack:
        node = pop()
        seen(node)
        if node.__class__ in _OWN_SCOPE:
            continue  # a function statement of `body` itself: seen, not entered (it has its own scope)
        below = children(node)  # a new list: reversed in place, pushed so that the first child comes off first
        below.reverse()
        for child in below:
            kind = child.__class__
            if kind in _NESTED:
                if kind in _FUNCTIONS:
                    seen(child)  # seen (for nested-function handling) but not entered
                continue
            push(child)
    return out


# node classes (a parsed tree's nodes are of these exact classes: a set lookup beats isinstance at every node)
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_OWN_SCOPE = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})
_NESTED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
