"""One walk per parsed tree: its nodes bucketed by type, for the many questions that scan a whole file.

Rules and the client analysis ask "every call in this file", "every try", "every assignment" many times
over; walking the tree once and keeping the buckets (for as long as the tree lives) is what makes a
whole-platform client affordable.
"""

from __future__ import annotations

import ast
import weakref
from collections import defaultdict

_INDEX: "weakref.WeakKeyDictionary[ast.AST, dict[type, list[ast.AST]]]" = weakref.WeakKeyDictionary()


def nodes_of(tree: ast.AST, *kinds: type) -> list:
    """The nodes of `tree` of the given types, each type's in `ast.walk` order."""
    index = _INDEX.get(tree)
    if index is None:
        index = defaultdict(list)
        for node in ast.walk(tree):
            index[type(node)].append(node)
        _INDEX[tree] = index
    if len(kinds) == 1:
        return index.get(kinds[0], [])
    return [n for kind in kinds for n in index.get(kind, ())]


def within(nodes: list, fn: ast.AST) -> list:
    """Those of `nodes` inside `fn`'s lines (what `ast.walk(fn)` would reach, nested functions included)."""
    start, end = fn.lineno, getattr(fn, "end_lineno", fn.lineno) or fn.lineno
    return [n for n in nodes if start <= getattr(n, "lineno", 0) <= end]


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def root_name(node: ast.expr) -> str | None:
    """The name an attribute / subscript chain starts from: `self` for `self.layer.w[0]`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def attribute_stores(tree: ast.AST) -> list[tuple[ast.Attribute, int]]:
    """Every `x.attr = ...` (also `+=`, annotated, and inside tuple targets) in `tree`, with its statement's line."""
    out: list[tuple[ast.Attribute, int]] = []
    for node in nodes_of(tree, ast.Assign, ast.AugAssign, ast.AnnAssign):
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            out += [(t, node.lineno) for t in ast.walk(target) if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store)]
    return out
