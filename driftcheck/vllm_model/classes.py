"""Classes of the target: the MRO (with the external bases vLLM classes derive from), a member looked up
along it (attributes assigned in any method, decorators that create members), the subclasses of a class
in the tree and members only a subclass defines.
"""

from __future__ import annotations

import ast
import builtins
import re

from driftcheck.astnodes import dotted_name, nodes_of, own_scope, source_text, walk
from driftcheck.vllm_model.external_apis import TORCH_NN_MODULE
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.resolved import External, InSubclass, Missing, Resolved, Result, Unknown
from driftcheck.vllm_model.stdlib_classes import stdlib_members
from driftcheck.sources.sources import module_name_for


# External bases whose members we know well enough to call a lookup "missing" rather than "unknown".
CLOSED_EXTERNAL_BASES = {
    "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol", "enum.Enum", "enum.IntEnum",
    "enum.StrEnum", "enum.Flag", "enum.IntFlag", "typing.NamedTuple", "typing.TypedDict", "typing_extensions.TypedDict",
    "torch.nn.Module", "typing_extensions.NamedTuple",
    # msgspec.Struct: its own members are all dunders (__struct_fields__, __struct_config__, __copy__, ...) and an
    # instance has no __dict__, so it holds its fields and nothing else; a class (or one above it) that passes
    # `dict=True` gives its instances a __dict__ any code may add to, and stays open (mro)
    "msgspec.Struct",
}
_CTYPES_RECORDS = {f"ctypes.{kind}" for kind in ("Structure", "Union", "BigEndianStructure", "LittleEndianStructure",
                                                   "BigEndianUnion", "LittleEndianUnion")}
_STRUCT_EXTERNALS = {"msgspec.Struct", "typing.Generic", "builtins.object"}  # bases a Struct's layout keeps
_MARKER_BASES = {"builtins.object", "abc.ABC", "typing.Generic"}  # bases that add no members an object would carry
_ENUM_MEMBERS = {"name", "value", "_name_", "_value_", "_missing_", "_member_map_", "_value2member_map_", "_member_names_"}
KNOWN_EXTERNAL_MEMBERS = {
    "torch.nn.Module": TORCH_NN_MODULE,
    "enum.Enum": _ENUM_MEMBERS,
    "enum.IntEnum": _ENUM_MEMBERS,
    "enum.StrEnum": _ENUM_MEMBERS,
    "enum.Flag": _ENUM_MEMBERS,
    "enum.IntFlag": _ENUM_MEMBERS,
    "typing.NamedTuple": {"_fields", "_field_defaults", "_asdict", "_replace", "_make", "count", "index"},
    "typing_extensions.NamedTuple": {"_fields", "_field_defaults", "_asdict", "_replace", "_make", "count", "index"},
    "pydantic.BaseModel": {
        "model_dump", "model_dump_json", "model_validate", "model_copy", "model_fields", "model_config",
        "model_json_schema", "model_construct", "model_fields_set", "model_post_init", "model_validate_json",
        "model_computed_fields", "model_extra", "model_rebuild", "model_parametrized_name",
        "dict", "json", "copy", "parse_obj", "parse_raw", "schema", "construct", "validate",
    },
}


RECORD_BASES = {  # external base -> how `Cls(...)` binds (read from the class's fields, see ApiIndex.constructor)
    "typing.NamedTuple": "namedtuple", "typing_extensions.NamedTuple": "namedtuple",
    "typing.TypedDict": "typeddict", "typing_extensions.TypedDict": "typeddict",
    "enum.Enum": "enum", "enum.IntEnum": "enum", "enum.StrEnum": "enum", "enum.Flag": "enum", "enum.IntFlag": "enum",
    "msgspec.Struct": "struct", "pydantic.BaseModel": "model",
}


EXTERNAL_ALIASES = {"nn.Module": "torch.nn.Module", "torch.nn.modules.module.Module": "torch.nn.Module", "BaseModel": "pydantic.BaseModel"}


def base_name_of(base_expr: str) -> str:
    """A base as written, without its type arguments: `ModelRunnerBase[T]` -> `ModelRunnerBase`."""
    return re.sub(r"\[.*\]$", "", base_expr).strip()


class ClassLookup:
    """MROs, class members and subclasses."""

    # ------------------------------------------------------------------ classes
    def mro(self, cls: Resolved) -> tuple[list[Resolved], bool, list[str]]:
        """(classes in MRO order, open?, external bases). Open = some base we cannot see into."""
        if cls.qualname in self._mro:
            return self._mro[cls.qualname]
        self._mro[cls.qualname] = ([cls], True, [])  # cycle guard
        order: list[Resolved] = [cls]
        is_open = cls.cls.dynamic_attrs if cls.cls else True
        externals: list[str] = []
        for base_expr in cls.cls.bases if cls.cls else []:
            base_name = base_name_of(base_expr)
            base = self.resolve_in_scope(cls.module, base_name) if cls.module else Unknown(base_name, "")
            if isinstance(base, Resolved) and base.qualname == cls.qualname:
                base = self._name_before_class(cls, base_name)  # `class X(X)`: the base is what `X` named before
                if not isinstance(base, (Resolved, External)):
                    base_name = f"what `{base_name}` named before `class {base_name}({base_name})` ({cls.path}:{cls.line})"
            if not isinstance(base, (Resolved, External)) and base_name in EXTERNAL_ALIASES:
                base = External(EXTERNAL_ALIASES[base_name])  # `nn.Module` however `nn` was imported
            if isinstance(base, Resolved) and base.kind == "class":
                sub_order, sub_open, sub_ext = self.mro(base)
                for c in sub_order:
                    if all(c.qualname != o.qualname for o in order):
                        order.append(c)
                is_open = is_open or sub_open
                externals.extend(sub_ext)
            elif isinstance(base, External):
                qual = EXTERNAL_ALIASES.get(base.qualname.removeprefix("builtins."), base.qualname)
                for alias, canonical in EXTERNAL_ALIASES.items():
                    if qual.endswith(alias):
                        qual = canonical
                externals.append(qual)
                if base.qualname.startswith("builtins.") or qual in CLOSED_EXTERNAL_BASES:
                    continue
                is_open = True
            else:
                is_open = True
                externals.append(base_name)
        if not is_open and "msgspec.Struct" in externals and any(
                c.cls is not None and c.cls.class_kwargs.get("dict", "False") != "False" for c in order):
            is_open = True  # `class S(msgspec.Struct, dict=True)`: instances take any attribute
        self._mro[cls.qualname] = (order, is_open, externals)
        return order, is_open, externals

    def struct_layout(self, cls: Resolved) -> str | None:
        """How a msgspec.Struct's instances take an attribute its class does not define (msgspec 0.23, KC1):
        "frozen" (`frozen=True` on it or above it: every store raises AttributeError), "slots" (no `dict=True`
        anywhere: AttributeError), "dict" (`dict=True`: a __dict__ takes any name). None when the class is no
        Struct, or when a base is not one (a plain mixin gives instances a __dict__) or is not read."""
        order, _, externals = self.mro(cls)
        if "msgspec.Struct" not in externals or not set(externals) <= _STRUCT_EXTERNALS or \
                any(c.cls is None or "__setattr__" in c.cls.methods for c in order):
            return None
        frozen = {c.cls.class_kwargs.get("frozen", "False") for c in order}
        if "True" in frozen:
            return "frozen"
        if any(c.cls.class_kwargs.get("dict", "False") != "False" for c in order):
            return "dict"  # `dict=True`, or a value driftcheck cannot read: a __dict__ may take the name (a warning)
        if frozen != {"False"}:
            return None  # `frozen=<a name>`: whether every store raises is decided at import time
        # a base that is no Struct and declares no __slots__ (vLLM's PydanticMsgspecMixin) gives instances a __dict__
        plain = any("msgspec.Struct" not in self.mro(c)[2] and "__slots__" not in c.cls.class_attrs for c in order)
        return "dict" if plain else "slots"

    def _struct_with_dict(self, cls: Resolved) -> str | None:
        """Where `dict=True` opens a msgspec.Struct whose bases driftcheck all read (`path:line` of the class that
        says it), or None."""
        order, _, externals = self.mro(cls)
        if "msgspec.Struct" not in externals or not set(externals) <= _STRUCT_EXTERNALS or \
                any(c.cls is None or c.cls.dynamic_attrs for c in order):
            return None
        for c in order:
            if c.cls.class_kwargs.get("dict", "False") != "False":
                return f"{c.path}:{c.line}"
        return None

    def _name_before_class(self, cls: Resolved, name: str) -> Result:
        """What a module-level `name` held before `class name(name):` rebinds it: a class statement evaluates its
        bases first, so `from vllm.model_executor.models.llama import LlamaDecoderLayer` then `class
        LlamaDecoderLayer(LlamaDecoderLayer)` (vLLM's llama_eagle3.py) derives from the imported class, not from
        itself. Only top-level imports before the class statement are read; anything else stays unknown."""
        tree = self.parse(cls.path) if cls.path else None
        mod = cls.module
        found: str | None = None
        for node in tree.body if tree is not None and mod is not None else ():
            if node.lineno >= cls.line:
                break
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        found = f"{resolve_relative(mod.name, mod.is_package, node.level, node.module)}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname == name:
                        found = alias.name
            elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign)):
                targets = [node.name] if not isinstance(node, ast.Assign) else \
                    [t.id for t in node.targets if isinstance(t, ast.Name)]
                if name in targets:
                    found = None  # bound by something else than an import: not read
        return self.resolve(found) if found is not None else Unknown(name, "not bound by a top-level import")

    def is_marker(self, cls: Resolved) -> bool:
        """A class that declares nothing (`class AttentionMetadata: pass`), nor do its bases, and that the tree uses
        as the name of a family of types: the bound of a TypeVar in its module (`T = TypeVar("T",
        bound=AttentionMetadata)`) or the base of classes that carry the members. Objects annotated with it need not
        derive from it (vLLM 0.13.0's V1 attention backends' metadata dataclasses, and a platform's, do not), so an
        annotation naming it says nothing about the members of what it holds."""
        order, _, externals = self.mro(cls)
        if any(e not in _MARKER_BASES for e in externals):
            return False
        if any(c.cls.methods or c.cls.fields or c.cls.class_attrs or c.cls.instance_attrs or c.cls.dynamic_attrs
               or c.cls.dynamic_names or c.cls.decorators for c in order):
            return False
        return self.names_a_family(cls)

    def is_protocol(self, cls: Resolved) -> bool:
        """A class that lists `typing.Protocol` (or `typing_extensions.Protocol`, `Protocol[T]`) among its own bases: a
        structural type. An object annotated with it is any class that has the members it names (vLLM 0.13.0's
        `TokenizerLike`, which `LLM.get_tokenizer()` returns and the Hugging Face tokenizers it loads do not derive
        from), so what its methods take says nothing certain about the object's. A class deriving from a protocol
        without listing `Protocol` itself is a concrete class (Python's own rule)."""
        for base_expr in cls.cls.bases if cls.cls else []:
            base = self.resolve_in_scope(cls.module, base_name_of(base_expr)) if cls.module else None
            if isinstance(base, External) and base.qualname in ("typing.Protocol", "typing_extensions.Protocol"):
                return True
        return False

    def never_instantiated(self, cls: Resolved) -> bool:
        """An abstract class (an `@abstractmethod` of its own or inherited) that nothing in the tree derives from: no
        object vLLM makes is one. vLLM 0.8.5's `SequenceGroupOutput`, whose implementations say
        `__metaclass__ = SequenceGroupOutput` instead of deriving from it: a value annotated with it is another class."""
        order, _, externals = self.mro(cls)
        if not any(e in ("abc.ABC", "abc.ABCMeta") for e in externals) and \
                not any("abc" in c.cls.decorator_kwargs.get("__metaclass__", "").lower() for c in order):
            return False  # without ABCMeta an @abstractmethod does not stop anyone making one
        seen: set[str] = set()
        abstract = False
        for c in order:  # the definition that wins: a concrete override implements an inherited abstract method
            for name, fn in c.cls.methods.items():
                if name not in seen:
                    seen.add(name)
                    abstract = abstract or any(d.rsplit(".", 1)[-1] == "abstractmethod" for d in fn.decorators)
        return abstract and not self.subclasses(cls, limit=1)

    def names_a_family(self, cls: Resolved) -> bool:
        """The tree uses the class as the name of a family of types: the bound of a TypeVar in its module, or the base
        of other classes (vLLM 0.10.2's V0 `AttentionMetadata`, which the V0 backends' metadata derive from while the V1
        backends' and platforms' do not)."""
        return self._bounds_a_typevar(cls) or bool(self.subclasses(cls, limit=1))

    def _bounds_a_typevar(self, cls: Resolved) -> bool:
        tree = self.parse(cls.path) if cls.path else None
        name = cls.qualname.rsplit(".", 1)[-1]
        for node in nodes_of(tree, ast.Call) if tree is not None else ():
            if (dotted_name(node.func) or "").rsplit(".", 1)[-1] == "TypeVar":
                for k in node.keywords:
                    if k.arg == "bound" and (isinstance(k.value, ast.Name) and k.value.id == name
                                             or isinstance(k.value, ast.Constant) and k.value.value == name):
                        return True
        return False

    def class_member(self, cls: Resolved, name: str) -> Result:
        found = self._class_member(cls, name)
        other = cls.otherwise
        if other is not None and other.cls is not None and isinstance(found, Resolved) \
                and found.kind in ("method", "attribute"):
            # the name the class was reached by holds another class when the `if` that rebinds it is not taken
            # (vLLM 0.10.0: `AsyncLLMEngine = AsyncLLM` under `if envs.VLLM_USE_V1`): that class's own method of this
            # name is what runs then, and what it returns may be another class (`type_of`); so is its own attribute
            # (vLLM 0.8.5's `LLMEngine = V1LLMEngine` under `if envs.is_set("VLLM_USE_V1") and envs.VLLM_USE_V1`:
            # the V0 engine's `self.output_processor` is a SequenceGroupOutputProcessor, the V1 one's an
            # OutputProcessor, QA3)
            theirs = self._class_member(other, name)
            if isinstance(theirs, Resolved) and theirs.kind in ("method", "attribute") \
                    and (theirs.func is not None) == (found.func is not None) and theirs.qualname != found.qualname:
                found.otherwise = theirs
        if isinstance(found, (Resolved, Missing)) and getattr(found, "otherwise", None) is None:
            found = self._through_rebound_base(cls, name, found)
        return found

    def _rebound_bases(self, cls: Resolved) -> list[tuple[Resolved, Resolved]]:
        """(base, the class its name holds otherwise) for each base of the class or of a class above it whose name an
        `if` of vLLM binds to one of two classes (`if TYPE_CHECKING or not is_rocm(): from .nvidia.model import
        Layer` / `else: from .amd.model import Layer`; `class DraftLayer(Layer)`, vLLM 0.34.0's muse_spark, QE5)."""
        key = cls.qualname
        if key not in self._rebound:
            out: list[tuple[Resolved, Resolved]] = []
            for c in self.mro(cls)[0]:
                for base_expr in c.cls.bases if c.cls is not None and c.module is not None else []:
                    base = self.resolve_in_scope(c.module, base_name_of(base_expr))
                    other = base.otherwise if isinstance(base, Resolved) and base.kind == "class" else None
                    if other is not None and other.cls is not None and other.qualname != base.qualname:
                        out.append((base, other))
            self._rebound[key] = out
        return self._rebound[key]

    def _through_rebound_base(self, cls: Resolved, name: str, found: Result) -> Result:
        """A member found on (or missing from) one of a rebound base's two classes: the other class's member of that
        name is what runs when the `if` goes the other way (as for `cls.otherwise`); a member only the other class
        has cannot be told missing."""
        for base, other in self._rebound_bases(cls):
            if isinstance(found, Missing):
                if not isinstance(self.class_member(other, name), Missing):
                    return Unknown(f"{cls.qualname}.{name}", f"{cls.qualname} derives from `{base.qualname}` or, "
                                   f"depending on a condition checked where that base is bound, `{other.qualname}`, "
                                   f"which has '{name}': which one this vLLM runs is decided at run time")
                continue
            owner = found.owner
            if found.kind not in ("method", "attribute") or owner is None \
                    or all(c.qualname != owner.qualname for c in self.mro(base)[0]):
                continue
            theirs = self._class_member(other, name)
            if isinstance(theirs, Resolved) and theirs.kind in ("method", "attribute") \
                    and (theirs.func is not None) == (found.func is not None) and theirs.qualname != found.qualname:
                found.otherwise = theirs
                break
        return found

    def _class_member(self, cls: Resolved, name: str) -> Result:
        order, is_open, externals = self.mro(cls)
        for c in order:
            ci = c.cls
            assert ci is not None
            if name in ci.methods:
                fn = ci.methods[name]
                kind = "attribute" if fn.is_property else "method"
                return Resolved(kind, f"{c.qualname}.{name}", c.path, fn.line, module=c.module, cls=ci, func=fn, owner=c,
                                type_expr=fn.returns if fn.is_property else None)
            for f in ci.fields:
                if f.name == name:
                    return Resolved("attribute", f"{c.qualname}.{name}", c.path, f.line, module=c.module, cls=ci, owner=c,
                                    type_expr=f.annotation)
            if name in ci.class_attrs:
                return Resolved("attribute", f"{c.qualname}.{name}", c.path, ci.class_attrs[name], module=c.module, cls=ci, owner=c)
            if name in ci.instance_attrs:
                line, type_expr = ci.instance_attrs[name]
                return Resolved("attribute", f"{c.qualname}.{name}", c.path, line, module=c.module, cls=ci, owner=c, type_expr=type_expr)
        for ext in externals:
            if name in KNOWN_EXTERNAL_MEMBERS.get(ext, ()) or name in _builtin_members(ext) or name in stdlib_members(ext):
                return External(f"{ext}.{name}")
        for c in order:  # `for n in ("W_K", "W_V"): setattr(self, n, ...)`: the class's own strings name its members
            if c.cls.dynamic_names and c.module is not None and name in c.module.identifier_strings:
                return External(f"{c.qualname}.{name} (set by name)")
        if name.startswith("__") and name.endswith("__"):
            return External(f"builtins.object.{name}")
        if any(e in _CTYPES_RECORDS for e in externals) and self._ctypes_field(order, name):
            return External(f"{cls.qualname}.{name} (a field its `_fields_` declares)")
        made_by = self._decorator_creating(order, name)
        if made_by is not None:
            return External(f"{made_by}.{name} (set by the decorator)")
        if is_open:
            widened = self._struct_with_dict(cls)
            if widened is not None:  # driftcheck read every base: only `dict=True` opens it (KC1)
                return Unknown(f"{cls.qualname}.{name}", f"{cls.qualname} is a msgspec.Struct that `dict=True` "
                               f"({widened}) gives a __dict__: it defines no '{name}', but any code may set one on "
                               "its instances")
            dynamic = self._dynamic_lookup(order, name)
            if dynamic is not None:
                return Unknown(f"{cls.qualname}.{name}", dynamic, read_hook=True)
            computed = self._computed_bases(order)
            if computed:
                return Unknown(f"{cls.qualname}.{name}", f"{cls.qualname} inherits from {computed}, a name vLLM binds to a "
                               "value computed at import time, not to a class statement: "
                               "driftcheck cannot list its members")
            # once a base: a diamond reaches `torch.nn.Parameter` through two vLLM bases ("inherits from
            # torch.nn.Parameter, torch.nn.Parameter", 0.13.0's GroupQuantScaleParameter)
            why = ", ".join(dict.fromkeys(externals)) or "a dynamic __getattr__"
            return Unknown(f"{cls.qualname}.{name}", f"{cls.qualname} inherits from {why}, which driftcheck does not read")
        other = cls.otherwise
        if other is not None and other.cls is not None and not isinstance(self.class_member(other, name), Missing):
            return Unknown(f"{cls.qualname}.{name}", f"the name this class was reached by is `{cls.qualname}` or, "
                           f"depending on a condition checked where it is bound, `{other.qualname}`, which has '{name}': "
                           f"which one this vLLM runs is decided at run time")
        members: list[str] = []
        for c in order:
            ci = c.cls
            members += list(ci.methods) + [f.name for f in ci.fields] + list(ci.class_attrs) + list(ci.instance_attrs)
        return Missing(f"{cls.qualname}.{name}", f"'{cls.cls.name}' has no attribute '{name}'", cls.path, cls.line,
                       tuple(members))

    def _computed_bases(self, order: list[Resolved]) -> str:
        """The bases in the MRO that vLLM binds to a computed value rather than a class statement
        (`(ReasoningAdapter, ToolAdapter) = make_adapters(MistralParser)`, vLLM 0.28.0's tool parsers), as
        "`qualname` (path:line)"; empty when there is none (TL3)."""
        out: list[str] = []
        for c in order:
            for base_expr in c.cls.bases if c.cls is not None and c.module is not None else []:
                base = self.resolve_in_scope(c.module, base_name_of(base_expr))
                binding = base.module.bindings.get(base.qualname.rsplit(".", 1)[-1]) \
                    if isinstance(base, Resolved) and base.kind == "value" and base.module is not None else None
                if binding is not None and binding.kind == "assign":
                    out.append(f"`{base.qualname}` ({base.path}:{binding.line})")
        return ", ".join(dict.fromkeys(out))

    def _dynamic_lookup(self, order: list[Resolved], name: str) -> str | None:
        """Why a member of a class whose MRO defines `__getattr__` / `__getattribute__` cannot be told, naming that
        method and, when it hands the name on (`return getattr(self.worker, attr)`, vLLM's `WorkerWrapperBase`), to
        what: NA2 (before: "inherits from a dynamic __getattr__", of a class that defines it itself). None when no
        class of the MRO defines one (the openness is an external base's)."""
        for c in order:
            for method in ("__getattribute__", "__getattr__"):
                fn = c.cls.methods.get(method) if c.cls is not None else None
                if fn is None:
                    continue
                where = f"`{c.qualname.rsplit('.', 1)[-1]}.{method}` ({c.path}:{fn.line})"
                node = self._method_node(c, method)
                params = node.args.posonlyargs + node.args.args if node is not None else []
                body = [st for st in node.body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))] \
                    if node is not None else []
                if len(params) == 2 and len(body) == 1 and isinstance(body[0], ast.Return) \
                        and isinstance(body[0].value, ast.Call) and dotted_name(body[0].value.func) == "getattr" \
                        and len(body[0].value.args) == 2 and isinstance(body[0].value.args[1], ast.Name) \
                        and body[0].value.args[1].id == params[1].arg:
                    target = source_text(body[0].value.args[0])
                    return (f"{where} hands every name the class lacks on to `{target}`, an object made at run time: "
                            f"whether it has '{name}' depends on the class it is built from there")
                return f"{where} answers names the class does not define, at run time: driftcheck cannot tell '{name}'"
        return None

    def new_chooses_class(self, cls: Resolved) -> tuple[Resolved, frozenset[str]] | None:
        """The class of `cls`'s MRO whose `__new__` may hand back an instance of another class (vLLM's
        `PluggableLayer` / `CustomOp`: `return super().__new__(op_registry_oot[name])`), with the containers that
        `__new__` looks the class up in (`op_registry_oot`; empty when it reads none); None when `Cls(...)` builds a
        `Cls`. Python calls `__new__` first and then `type(obj).__init__` when `obj` is an instance of `Cls`: the
        `__init__` that binds the arguments may be a subclass's. `return super().__new__(cls)` hands the choice on."""
        for c in self.mro(cls)[0]:
            node = self._method_node(c, "__new__")
            if node is None:
                continue
            params = node.args.posonlyargs + node.args.args
            scope = own_scope(node)
            returns = [n.value for n in scope if isinstance(n, ast.Return)]
            if params and returns and all(_news_first(r, params[0].arg) for r in returns):
                continue
            return c, frozenset(_container(n.value) for n in scope if isinstance(n, ast.Subscript)
                                and isinstance(n.ctx, ast.Load) and _container(n.value))
        return None

    def subscript_gives_member(self, cls: Resolved) -> bool:
        """`E["NAME"]` on an Enum class is one of its members (`EnumMeta.__getitem__`), not the class: also where a
        metaclass of the class's own overrides `__getitem__` only to return `super().__getitem__(...)` (vLLM
        0.31.0's `AttentionBackendEnum[name].get_class()`). False for other classes (a subscripted generic is the
        class), and for a metaclass driftcheck cannot read or whose `__getitem__` may return anything else."""
        order, _, externals = self.mro(cls)
        if not any(RECORD_BASES.get(e) == "enum" for e in externals):
            return False
        for c in order:
            meta = c.cls.decorator_kwargs.get("__metaclass__") if c.cls is not None else None
            if meta is None:
                continue
            target = self.resolve_in_scope(c.module, meta) if c.module is not None else None
            if not (isinstance(target, Resolved) and target.kind == "class"):
                return False
            for m in self.mro(target)[0]:
                node = self._method_node(m, "__getitem__")
                if node is not None:
                    returns = [n.value for n in own_scope(node) if isinstance(n, ast.Return)]
                    return bool(returns) and all(_supers_getitem(r) for r in returns)
        return True

    def containers_filled_by(self, owner: Resolved, method: str) -> frozenset[str]:
        """The containers a method of `owner`'s MRO (or a function nested in it) stores items into:
        `register_oot`'s `op_registry_oot[reg_name] = layer_cls`."""
        found = self.class_member(owner, method)
        if not (isinstance(found, Resolved) and found.owner is not None):
            return frozenset()
        node = self._method_node(found.owner, method)
        return frozenset(_container(n.value) for n in ast.walk(node) if isinstance(n, ast.Subscript)
                         and isinstance(n.ctx, ast.Store) and _container(n.value)) if node is not None else frozenset()

    def _method_node(self, c: Resolved, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        fn = c.cls.methods.get(name) if c.cls is not None else None
        if fn is None:
            return None
        return self.function_node(Resolved("method", f"{c.qualname}.{name}", c.path, fn.line, module=c.module,
                                           cls=c.cls, func=fn, owner=c))

    def reshaping_decorator(self, target: Resolved) -> str | None:
        """A decorator of this function that may change how it is called: a third-party one we do not read
        (other than those known to keep the signature), or one of vLLM's that hands the function to such a
        decorator (`tilelang_jit` returns `tilelang.jit(...)(fn)`, whose kernels take extra keywords)."""
        if target.func is None or target.module is None:
            return None
        for deco in target.func.decorators:
            if deco in _PLAIN_DECORATORS:
                continue
            found = self.resolve_in_scope(target.module, deco)
            if isinstance(found, External) and _reshapes(found.qualname):
                return found.qualname
            if isinstance(found, (Missing, Unknown)) and deco.split(".")[0] in target.module.bindings:
                # `@tilelang.jit(...)` where `tilelang` is imported in one branch and `= None` in the other
                return f"{deco} (not readable)"
            if isinstance(found, Resolved) and found.func is not None and found.module is not None:
                for inner in found.func.hands_back:
                    made = self.resolve_in_scope(found.module, inner)
                    if isinstance(made, External) and _reshapes(made.qualname):
                        return f"{found.qualname} -> {made.qualname}"
                    if isinstance(made, (Missing, Unknown)) and inner.split(".")[0] in found.module.bindings:
                        return f"{found.qualname} -> {inner} (not readable)"  # `global tilelang; import tilelang` later
        return None

    def wrapper_keywords(self, target: Resolved) -> frozenset[str]:
        """Keywords a vLLM decorator's wrapper takes on top of what the function it wraps takes: the wrapper hands
        the call on (`fn(*args, **kwargs)`) after taking keywords out of its `**kwargs` (`kwargs.pop("decorate")`,
        `del kwargs["x"]`) or naming them itself (`def dec(*args, decorate=True, **kwargs)`). vLLM 0.8-0.10's
        `@_not_fully_sharded_can_replace` lets `can_replace_layer(..., decorate=False)` run (XA)."""
        if target.func is None or target.module is None:
            return frozenset()
        out: set[str] = set()
        for found in self._decorator_functions(target.module, target.func.decorators):
            node = self.function_node(found)
            if node is not None:
                out |= _forwarding_wrapper_keywords(node)
        return frozenset(out)

    def _decorator_functions(self, module, decorators) -> list[Resolved]:
        """The functions of the tree that decorators name (past those known to keep the signature)."""
        found = [self.resolve_in_scope(module, deco) for deco in decorators if deco not in _PLAIN_DECORATORS]
        return [f for f in found if isinstance(f, Resolved) and f.func is not None]

    def init_wrapper_defaults(self, c: Resolved) -> frozenset[str]:
        """Parameters a class decorator's replacement `__init__` takes itself with a default (`@support_torch_compile`
        sets `cls.__init__` to `def __init__(self, *, vllm_config=None, prefix="", **kwargs)`, which fills in the
        current config and hands it to the class's own `__init__`): a call that leaves them out is no missing
        argument (ZU). Followed from the decorator through the helpers it returns the class through, a few deep."""
        if c.module is None or c.cls is None:
            return frozenset()
        out: set[str] = set()
        for found in self._decorator_functions(c.module, c.cls.decorators):
            out |= self._replaced_init_defaults(found, 0)
        return frozenset(out)

    def _replaced_init_defaults(self, fn: Resolved, depth: int) -> set[str]:
        node = self.function_node(fn) if depth < 4 and fn.module is not None else None
        if node is None:
            return set()
        nested = {n.name: n for n in walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not node}
        params = node.args.posonlyargs + node.args.args
        if params and "__init__" in fn.func.decorator_sets:
            for stmt in walk(node):  # `cls.__init__ = __init__`, the nested def it assigns
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name) and stmt.value.id in nested and any(
                        isinstance(t, ast.Attribute) and t.attr == "__init__" and isinstance(t.value, ast.Name)
                        and t.value.id == params[0].arg for t in stmt.targets):
                    wrapper = nested[stmt.value.id].args
                    named = wrapper.posonlyargs + wrapper.args
                    positional = list(zip(named[len(named) - len(wrapper.defaults):], wrapper.defaults))
                    keyword = [(a, d) for a, d in zip(wrapper.kwonlyargs, wrapper.kw_defaults) if d is not None]
                    return {a.arg for a, _d in positional + keyword}
            return set()
        out: set[str] = set()
        for stmt in walk(node):  # `return helper(cls)`, `return cls_decorator_helper(cls)` (a nested def), or the
            # nested decorator itself (`@support_torch_compile(dynamic_arg_dims=...)`): followed
            if not (isinstance(stmt, ast.Return) and isinstance(stmt.value, (ast.Call, ast.Name))):
                continue
            name = stmt.value.id if isinstance(stmt.value, ast.Name) else dotted_name(stmt.value.func)
            if name in nested:
                out |= self._nested_returns(fn, nested[name], depth)
            elif name:
                found = self.resolve_in_scope(fn.module, name)
                if isinstance(found, Resolved) and found.func is not None:
                    out |= self._replaced_init_defaults(found, depth + 1)
        return out

    def _nested_returns(self, fn: Resolved, inner: ast.FunctionDef | ast.AsyncFunctionDef, depth: int) -> set[str]:
        """A nested helper's `return other(cls, ...)`: what `other`, a module-level function, replaces."""
        out: set[str] = set()
        for stmt in walk(inner):
            name = dotted_name(stmt.value.func) if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call) else None
            found = self.resolve_in_scope(fn.module, name) if name else None
            if isinstance(found, Resolved) and found.func is not None:
                out |= self._replaced_init_defaults(found, depth + 1)
        return out

    def _ctypes_field(self, order: list[Resolved], name: str) -> bool:
        """A `ctypes.Structure` / `Union` makes an attribute of every name its `_fields_` lists (`_fields_ =
        [("internal", ctypes.c_byte * 128)]`, vLLM's `ncclUniqueId`): read from the literal list of the classes of the
        MRO."""
        for c in order:
            tree = self.parse(c.path) if c.path and "_fields_" in c.cls.class_attrs else None
            for node in nodes_of(tree, ast.ClassDef) if tree is not None else ():
                if node.name != c.cls.name or node.lineno != c.line:
                    continue
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_fields_" for t in stmt.targets) \
                            and isinstance(stmt.value, (ast.List, ast.Tuple)):
                        for item in stmt.value.elts:
                            if isinstance(item, (ast.Tuple, ast.List)) and item.elts and isinstance(item.elts[0], ast.Constant) \
                                    and item.elts[0].value == name:
                                return True
        return False

    def _decorator_creating(self, order: list[Resolved], name: str) -> str | None:
        """A decorator of the class or of one of its methods that sets `name` on the object
        (`@JitWarmupRegistry.capture def __init__` whose wrapper does `instance.jit_warmup_registry = ...`)."""
        for c in order:
            if c.module is None:
                continue
            for deco in {*c.cls.decorators, *(d for fn in c.cls.methods.values() for d in fn.decorators)}:
                if deco in _PLAIN_DECORATORS:
                    continue
                found = self.resolve_in_scope(c.module, deco)
                if isinstance(found, Resolved) and found.func is not None and name in found.func.decorator_sets:
                    return found.qualname
        return None

    def subclasses(self, cls: Resolved, limit: int = 400) -> list[Resolved]:
        """Classes of the tree that derive from `cls`, transitively (found by a text search for
        `class X(... Name ...)`, then confirmed through the MRO)."""
        if cls.qualname in self._subclasses:
            return self._subclasses[cls.qualname]
        self._subclasses[cls.qualname] = []  # cycle guard
        from driftcheck.vllm_model.bodies import text_index_for  # bodies imports this module

        index = text_index_for(self)
        out: list[Resolved] = []
        seen = {cls.qualname}
        todo = [cls]
        while todo and len(out) < limit:
            base = todo.pop()
            short = base.qualname.rsplit(".", 1)[-1]
            names = [short] + self._aliases_of(base)  # `KVConnectorBase = KVConnectorBase_V1`: subclasses name either
            for rel, sub_name in [hit for name in names for hit in index.classes_naming_base(name)]:
                mod = self.module(module_name_for(rel))
                if mod is None or sub_name not in mod.classes:
                    continue
                sub = Resolved("class", f"{mod.name}.{sub_name}", mod.path, mod.classes[sub_name].line, module=mod,
                               cls=mod.classes[sub_name])
                if sub.qualname in seen:
                    continue
                order, _, _ = self.mro(sub)
                if any(c.qualname == base.qualname for c in order[1:]):
                    seen.add(sub.qualname)
                    out.append(sub)
                    todo.append(sub)
        self._subclasses[cls.qualname] = out
        return out

    def member_in_subclass(self, cls: Resolved, name: str, count: bool = True) -> InSubclass | None:
        """The first subclass that defines `name`, with how many others do too (vLLM 0.6.3's AttentionMetadata:
        eight backends' metadata classes have seq_lens_tensor, directly or through PagedAttentionMetadata); without
        `count`, the first one alone (a caller that only asks whether any does)."""
        found: InSubclass | None = None
        for sub in self.subclasses(cls):
            member = self.class_member(sub, name)  # the subclass's own body or another of its bases (a mixin's sibling)
            if isinstance(member, Resolved):
                where = (member.path, member.line)
            elif isinstance(member, External):  # nn.Module's API, a member set by computed name...
                where = (sub.path, sub.line)
            else:
                continue
            if found is None:
                found = InSubclass(f"{cls.qualname}.{name}", sub.qualname, *where)
                if not count:
                    break
            else:
                found.others += 1
        return found


def _container(node: ast.expr) -> str | None:
    """The last name of a subscripted container: `op_registry_oot`, `cls._registry` -> `_registry`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _news_first(value: ast.expr | None, first: str) -> bool:
    """`super().__new__(cls, ...)` / `object.__new__(cls)` / `Base.__new__(cls)`: an object of the class called."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "__new__" \
        and bool(value.args) and isinstance(value.args[0], ast.Name) and value.args[0].id == first


def _supers_getitem(value: ast.expr | None) -> bool:
    """`super().__getitem__(name)`: the lookup the metaclass overrides, handed on."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "__getitem__" \
        and isinstance(value.func.value, ast.Call) and dotted_name(value.func.value.func) == "super"


def _builtin_members(ext: str) -> frozenset[str]:
    """Members of a builtin base (`dict` for TypedDict: a TypedDict is a dict at run time)."""
    if RECORD_BASES.get(ext) == "typeddict":
        ext = "builtins.dict"
    value = getattr(builtins, ext.removeprefix("builtins."), None) if ext.startswith("builtins.") else None
    return frozenset(dir(value)) if isinstance(value, type) else frozenset()


_PLAIN_DECORATORS = {"property", "staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod", "override",
                     "functools.cached_property", "cached_property", "overload", "typing.overload"}
# third-party decorators known to hand back a function called as the original is
_KEEPS_SIGNATURE = ("functools.", "contextlib.", "typing.", "typing_extensions.", "abc.", "torch.no_grad", "torch.inference_mode",
                    "torch.enable_grad", "torch.compile", "torch.jit.", "torch._dynamo.", "torch.compiler.", "torch.library.",
                    "torch.cuda.", "torch.autocast", "deprecated.", "builtins.", "warnings.", "dataclasses.", "lru_cache", "cache")


def _reshapes(qualname: str) -> bool:
    return not any(qualname == k.rstrip(".") or qualname.startswith(k) for k in _KEEPS_SIGNATURE)


def _forwarding_wrapper_keywords(deco: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The keywords the wrapper a decorator returns takes for itself before it calls the function it decorates (the
    decorator's first parameter) with its own `*args, **kwargs`: its keyword-only parameters and the literal keys it
    pops or deletes from its `**kwargs`. Empty when the decorator returns no such wrapper."""
    params = deco.args.posonlyargs + deco.args.args
    if not params:
        return set()
    wrapped = params[0].arg
    returned = {n.value.id for n in own_scope(deco) if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    out: set[str] = set()
    for inner in deco.body:
        if not (isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner.name in returned
                and inner.args.kwarg is not None):
            continue
        rest = inner.args.kwarg.arg
        forwards = any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == wrapped
                       and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == rest for k in c.keywords)
                       for c in ast.walk(inner))
        if not forwards:
            continue
        out |= {a.arg for a in inner.args.kwonlyargs}
        for n in ast.walk(inner):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "pop" \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id == rest and n.args \
                    and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
                out.add(n.args[0].value)
            elif isinstance(n, ast.Delete):
                out |= {t.slice.value for t in n.targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                        and t.value.id == rest and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)}
    return out
