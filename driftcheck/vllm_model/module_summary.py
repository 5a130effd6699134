"""The shape of a module's summary: plain data (bindings, functions, fields, classes, a module
`__getattr__` map), stored by `cache.SummaryCache` under `SCHEMA`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from driftcheck.vllm_model.signatures import Signature


SCHEMA = 19  # bump when the summary's shape or what it records changes (invalidates the on-disk cache)


@dataclass
class Binding:
    """A module-level name: what it is and where it was bound."""

    kind: str  # class | function | import | module-import | assign | alias
    line: int
    target: str = ""  # import: dotted "module.name" (or module for module-import); alias: expression
    type_only: bool = False  # bound only under `if TYPE_CHECKING:`
    fallback: "Binding | None" = None  # the `except ImportError:` binding used when this one fails to import
    optional: bool = False  # bound in a `try` whose handler binds nothing instead: absent when the try failed
    otherwise: "Binding | None" = None  # rebound in one branch of an `if`: what the name holds when that branch is not taken
    # assign: the callable a name bound once at module level is the result of (`MULTIMODAL_REGISTRY =
    # MultiModalRegistry()` -> "MultiModalRegistry", as written); "" when anything else, or anything more, binds it (FC2)
    builds: str = ""


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
    is_async: bool = False  # `async def`: a call makes a coroutine that runs only when awaited (DC118)
    async_generator: bool = False  # an `async def` that yields: a call makes an async generator, for `async for`

    @property
    def is_static(self) -> bool:
        """Takes no implicit first argument: `@staticmethod`, or `__new__`, which Python makes a static method
        without a decorator (`super().__new__(cls, data=data)` passes `cls` itself)."""
        return "staticmethod" in self.decorators or self.name == "__new__"

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
    dynamic_class_names: bool = False  # the same on the class itself (`setattr(cls, name, ...)` in a classmethod, `__new__`, `__init_subclass__`)
    # instance attributes `__init__` sets only under an `if` (and no other method sets): name -> (line, condition)
    conditional_attrs: dict[str, tuple[int, str]] = field(default_factory=dict)
    condition_flags: dict[str, list[str]] = field(default_factory=dict)  # such an attribute -> members recording its `if`


@dataclass
class GetattrInfo:
    """A module-level `__getattr__`: the names it serves and whether it refuses all others."""

    line: int
    names: dict[str, str | None] = field(default_factory=dict)  # name -> dotted target, or None if opaque
    closed: bool = False
    deprecated: bool = False
    none_otherwise: bool = False  # every statement an `if name == "x":` with no else: other names fall through to None
    served_tables: list[str] = field(default_factory=list)  # module-level names it serves the keys of (`name in T`)


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
    # module-level `name: Type` annotations, as written (`current_platform: Platform` under TYPE_CHECKING, which the
    # module's `__getattr__` serves): what such a global holds, for the calls vLLM makes on it (26k M1)
    annotations: dict[str, str] = field(default_factory=dict)
