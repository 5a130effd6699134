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
client file loops over an attribute of that name and calls `setattr(_, <the loop variable>, _)` in the loop."""

from __future__ import annotations

import ast
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
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            out |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            out.add(stmt.target.id)
    return out
