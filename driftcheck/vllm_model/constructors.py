"""What `Cls(...)` binds: constructors synthesised from dataclass, pydantic, vLLM `@config`, attrs, msgspec,
NamedTuple, TypedDict, Enum and exception classes, or the class's own `__init__` along the MRO.
"""

from __future__ import annotations

import ast
import builtins
import re

from driftcheck.vllm_model.classes import CLOSED_EXTERNAL_BASES, RECORD_BASES
from driftcheck.vllm_model.resolved import External, Resolved
from driftcheck.vllm_model.signatures import KWONLY, POS, POSONLY, VARARG, VARKW, Param, Signature


_EXTRA = re.compile(r"""\bextra\s*=\s*(?:["']|(?:\w+\.)*)(forbid|ignore|allow)\b""")  # ConfigDict(extra="forbid"), Extra.forbid

ATTRS_DECORATORS = {"attr.s", "attr.attrs", "attr.define", "attr.frozen", "attr.mutable", "attrs.define", "attrs.frozen",
                    "attrs.mutable"}


class Constructors:
    """Constructor signatures of target classes."""

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

    def unknown_keywords(self, cls: Resolved) -> str | None:
        """What a pydantic dataclass does with a keyword it has no field for, when `Cls(...)` binds against its
        generated `__init__` (which takes `*args, **kwargs` and hands them to the validator): "forbid"
        (ValidationError), "ignore" (silently dropped: pydantic's default), "allow" (kept as an extra attribute), or
        "unknown" (a config driftcheck cannot read). None when the constructor is not a pydantic dataclass's.
        The class's own config wins (its decorator's `config=ConfigDict(extra=...)`, a `__pydantic_config__` in its
        body, or a vLLM decorator that builds one: `@config` from 0.16.0 on), then the nearest pydantic dataclass
        base's (pydantic merges a subclass's config over its base's)."""
        order = self.mro(cls)[0]
        for c in order:
            if "__init__" in c.cls.methods:
                return None  # its own __init__ binds the call
            kind = self.is_dataclass_like(c)
            if kind or self._is_attrs(c):
                if kind != "pydantic":
                    return None
                pydantic = [b for b in order[order.index(c):] if self.is_dataclass_like(b) == "pydantic"]
                for b in pydantic:
                    mode = self._own_extra(b)
                    if mode is not None:
                        return mode
                return "ignore"
            if "__new__" in c.cls.methods:
                return None
        return None

    def _own_extra(self, c: Resolved) -> str | None:
        """The `extra` a pydantic dataclass's own config sets: the decorator call's text first (`config=` merges over
        what a decorator function builds), a config named there and bound at module level, `__pydantic_config__`
        in the body, then the body of a vLLM decorator function; None when none sets it, "unknown" when the
        config is a value driftcheck cannot read."""
        node = self.class_node(c)
        if node is None:
            return "unknown"
        tree = self.parse(c.path) if c.path else None
        for deco in node.decorator_list:
            text = ast.unparse(deco)
            found = _EXTRA.search(text)
            if found:
                return found.group(1)
            named = next((k.value for k in deco.keywords if k.arg == "config"), None) if isinstance(deco, ast.Call) else None
            if isinstance(named, ast.Name):
                bound = [n.value for n in (tree.body if tree is not None else []) if isinstance(n, ast.Assign)
                         and any(isinstance(t, ast.Name) and t.id == named.id for t in n.targets)]
                found = _EXTRA.search(ast.unparse(bound[-1])) if len(bound) == 1 else None
                if len(bound) != 1:
                    return "unknown"
                if found:
                    return found.group(1)
            elif named is not None and not isinstance(named, ast.Call):
                return "unknown"
        for stmt in node.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == "__pydantic_config__" for t in targets) and stmt.value is not None:
                found = _EXTRA.search(ast.unparse(stmt.value))
                if found:
                    return found.group(1)
        for deco in c.cls.decorators:
            target = self.resolve_in_scope(c.module, deco.split("(")[0]) if c.module is not None else None
            fn = self.function_node(target) if isinstance(target, Resolved) and target.kind == "function" else None
            found = _EXTRA.search(ast.unparse(fn)) if fn is not None else None
            if found:
                return found.group(1)  # vLLM 0.16.0+'s `config`: `ConfigDict(extra="forbid")`
        return None

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
                # a class decorator's replacement `__init__` that fills these in itself (ZU), on this class or above
                supplied = set().union(*(self.init_wrapper_defaults(k) for k in order[:order.index(c) + 1]))
                return sig.with_defaults(supplied) if supplied else sig
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


def _is_builtin_exception(qual: str) -> bool:
    name = qual.removeprefix("builtins.")
    value = getattr(builtins, name, None) if qual.startswith("builtins.") else None
    return isinstance(value, type) and issubclass(value, BaseException)
