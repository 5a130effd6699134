"""Patch classes: a client class whose decorator is handed a vLLM class or module, and which lists in a class attribute
the names of its own members that the client's patch framework sets onto that target (ZT).

The shape the vLLM blog's plugin-system post spread (omni-npu's `vllm_patches`):

    @register_patch("BlockTablePatch", BlockTable)
    class BlockTablePatch(VLLMPatch):
        _attr_names_to_apply = ["__init__", "compute_slot_mapping"]
        def __init__(self, ..., sink_len: int = 0): ...

with, in the framework's base class, `for name in cls._attr_names_to_apply: setattr(target, name, cls.__dict__[name])`.
Each listed member is then `BlockTable.__init__ = BlockTablePatch.__init__`, a patch the phases record as any other
(the replacement's signature for calls, the class's `self` as the target's). Three pieces of evidence, all needed: the
decorator call is given the vLLM class or module; the class attribute lists only names the class body defines; some
client file loops over an attribute of that name and calls `setattr(_, <the loop variable>, _)` in the loop.

The other shape sets every member of the patch class (ArcticInference's `ArcticPatch`, LC1):

    class EngineArgsPatch(ArcticPatch[EngineArgs]):
        def __new__(cls, *args, **kwargs): ...
        def add_cli_args(parser): ...

with, in a method of the framework's base class, `for name, attr in cls.__dict__.items(): ... setattr(target, name,
attr)`. The evidence: the class derives from a client class subscripted with the vLLM class or module, and that
subscripted class's body holds such a loop over `cls.__dict__.items()` (or `vars(cls).items()`) that hands the loop's
name to `setattr`. Each member the patch class's body defines is then set onto the target, except the names Python
puts in every class dict (`__module__`, `__doc__`, `__qualname__`, ...), which such loops skip."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from driftcheck.astnodes import dotted_name, nodes_of, within
from driftcheck.client_model.client import kept_on


def applied_lists(usage) -> frozenset[str]:
    """Attribute names the client loops over to set each name with `setattr` (`for name in cls.NAMES:` ...
    `setattr(target, name, attr)`), over every client file; made once per client."""
    def build() -> frozenset[str]:
        out: set[str] = set()
        for file in usage.files:
            # the file's `setattr(_, name, _)` calls first, from its node buckets: walking every loop's body (nested
            # loops again and again) cost a whole-platform client a second
            setters = [n for n in nodes_of(file.tree, ast.Call) if dotted_name(n.func) == "setattr" and len(n.args) == 3
                       and isinstance(n.args[1], ast.Name)]
            if not setters:
                continue
            for loop in nodes_of(file.tree, ast.For):
                if not (isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Attribute)):
                    continue
                if any(n.args[1].id == loop.target.id for n in within(setters, loop)):
                    out.add(loop.iter.attr)
        return frozenset(out)
    return kept_on(usage, "_applied_name_lists", usage.files, build)


def patch_class_pairs(tree: ast.Module, is_target: Callable[[ast.expr], bool],
                      applied: frozenset[str]) -> Iterator[tuple[ast.expr, str, ast.expr, ast.ClassDef]]:
    """(target expression, member name, `PatchClass.member`, the class) for each member a patch class of this file
    lists to be set onto the vLLM class or module its decorator is handed."""
    if not applied:
        return
    for cls in nodes_of(tree, ast.ClassDef):
        targets = [a for d in cls.decorator_list if isinstance(d, ast.Call) for a in d.args if is_target(a)]
        if not targets:
            continue
        defined = _defined_in(cls)
        for stmt in cls.body:
            names = _listed_names(stmt, applied)
            if not names or not all(n in defined for n in names):
                continue
            for name in names:
                for target in targets:
                    value = ast.copy_location(ast.Attribute(value=ast.Name(id=cls.name, ctx=ast.Load()), attr=name,
                                                            ctx=ast.Load()), stmt)
                    yield target, name, value, cls


_APPLIER_TEXT = re.compile(rb"setattr\(")

# names every class's __dict__ holds that a whole-class patch loop skips (or that mean nothing on the target)
_CLASS_DICT_NAMES = frozenset({"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__parameters__",
                               "__orig_bases__", "__annotations__", "__firstlineno__", "__static_attributes__",
                               "__classcell__", "__slots__"})


def whole_class_appliers(usage, source=None) -> frozenset[str]:
    """Names of client classes with a method that loops over its class's own `__dict__` items and `setattr`s each name
    onto something (`for name, attr in cls.__dict__.items(): setattr(target, name, attr)`), over every client file,
    those without vLLM too (the framework's base needs none: `source`, the `ClientSource`); made once per client."""
    def build() -> frozenset[str]:
        out: set[str] = set()
        # files without vLLM are read only where a file with vLLM derives a class from a subscripted base
        subscripted = any(isinstance(b, ast.Subscript) for f in usage.files for c in nodes_of(f.tree, ast.ClassDef)
                          for b in c.bases)
        others = source.other_files(matching=_APPLIER_TEXT) if source is not None and subscripted else ()
        for file in [*usage.files, *others]:
            setters = [n for n in nodes_of(file.tree, ast.Call) if dotted_name(n.func) == "setattr" and len(n.args) == 3
                       and isinstance(n.args[1], ast.Name)]
            if not setters:
                continue
            loops = [loop for loop in nodes_of(file.tree, ast.For) if _loops_over_own_dict(loop)
                     and any(n.args[1].id == loop.target.elts[0].id for n in within(setters, loop))]
            if not loops:
                continue
            for cls in nodes_of(file.tree, ast.ClassDef):
                if within(loops, cls):
                    out.add(cls.name)
        return frozenset(out)
    return kept_on(usage, "_whole_class_appliers", usage.files, build)


def code_swapping_appliers(usage, source=None) -> frozenset[str]:
    """The appliers (`whole_class_appliers`) defined in a file that assigns some function's `__code__`: a module
    function they patch is changed in place (`target_attr.__code__ = replacement.__code__`), not rebound by name."""
    appliers = whole_class_appliers(usage, source)

    def build() -> frozenset[str]:
        if not appliers:
            return frozenset()
        files = [*usage.files, *(source.other_files(matching=_CODE_SWAP) if source is not None else ())]
        out: set[str] = set()
        for file in files:
            if not any(isinstance(t, ast.Attribute) and t.attr == "__code__" for n in nodes_of(file.tree, ast.Assign)
                       for t in n.targets):
                continue
            out |= {c.name for c in nodes_of(file.tree, ast.ClassDef) if c.name in appliers}
        return frozenset(out)
    return kept_on(usage, "_code_swapping_appliers", usage.files, build)


_CODE_SWAP = re.compile(rb"\.__code__\s*=")


def _loops_over_own_dict(loop: ast.For) -> bool:
    """`for name, attr in cls.__dict__.items():` / `vars(cls).items()` in a classmethod (its first parameter `cls`)."""
    if not (isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2
            and isinstance(loop.target.elts[0], ast.Name)):
        return False
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items" and not it.args):
        return False
    owner = it.func.value  # the class's own dict: an instance's (`self.__dict__`) holds no class members
    if isinstance(owner, ast.Attribute) and owner.attr == "__dict__":
        return isinstance(owner.value, ast.Name) and owner.value.id == "cls"
    return (isinstance(owner, ast.Call) and dotted_name(owner.func) == "vars" and len(owner.args) == 1
            and isinstance(owner.args[0], ast.Name) and owner.args[0].id == "cls")


def whole_class_pairs(tree: ast.Module, is_target: Callable[[ast.expr], bool],
                      appliers: frozenset[str]) -> Iterator[tuple[ast.expr, str, ast.expr, ast.ClassDef]]:
    """(target expression, member name, `PatchClass.member`, the class) for each member of a class derived from
    `Applier[Target]`, an applier setting every member of its subclasses onto the vLLM class or module `Target`."""
    if not appliers:
        return
    for cls in nodes_of(tree, ast.ClassDef):
        targets = [b.slice for b in cls.bases if isinstance(b, ast.Subscript)
                   and (dotted_name(b.value) or "").rsplit(".", 1)[-1] in appliers and is_target(b.slice)]
        if not targets:
            continue
        for name in sorted(_defined_in(cls) - _CLASS_DICT_NAMES):
            stmt = next(s for s in cls.body if name in _defined_in_stmt(s))
            for target in targets:
                value = ast.copy_location(ast.Attribute(value=ast.Name(id=cls.name, ctx=ast.Load()), attr=name,
                                                        ctx=ast.Load()), stmt)
                yield target, name, value, cls


def _defined_in_stmt(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, ast.Assign):
        return {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    return set()


def _listed_names(stmt: ast.stmt, applied: frozenset[str]) -> list[str]:
    """`NAMES = ["a", "b"]` (or a tuple, or annotated) in a class body, where `NAMES` is a list the client applies."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return []
    if not (isinstance(target, ast.Name) and target.id in applied and isinstance(value, (ast.List, ast.Tuple))):
        return []
    names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return names if len(names) == len(value.elts) else []


def _defined_in(cls: ast.ClassDef) -> set[str]:
    out: set[str] = set()
    for stmt in cls.body:
        out |= _defined_in_stmt(stmt)
    return out


def replacement_function(usage, dotted: str | None):
    """(class node or None, function node) of the client function a patch assigns, by the dotted path the phases record
    (`pkg.mod.Cls.method` or `pkg.mod.function`, `Rebinding.replacement`), in a client file that imports vLLM; None
    when it is not found there."""
    if not dotted:
        return None
    module, _, fn_name = dotted.rpartition(".")
    parent, _, owner = module.rpartition(".")
    outer = usage.file_of_module(parent) if parent else None  # `pkg.mod.Cls.method`
    cls = next((c for c in nodes_of(outer.tree, ast.ClassDef) if c.name == owner), None) if outer is not None else None
    file = outer if cls is not None else usage.file_of_module(module)  # `pkg.mod.function`
    if file is None:
        return None
    scope = cls.body if cls is not None else file.tree.body
    fn = next((f for f in scope if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == fn_name), None)
    return (cls, fn) if fn is not None else None
