"""The save-then-replace patch: `orig = attn_utils._reshape_kv_cache` then `attn_utils._reshape_kv_cache = wrap(orig)`.
The read runs before the client's own store of the name, so it reads vLLM's object: where vLLM no longer has it, the
read raises AttributeError, whatever the store after it sets (23a's M2, turboquant-amd at vLLM 0.33.0). Elsewhere a
name the client patches is the client's business (the store may run first).
"""

from __future__ import annotations

import ast
import weakref

from driftcheck.astnodes import assignment_targets, nodes_of

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_READS: "weakref.WeakKeyDictionary[ast.AST, frozenset[int]]" = weakref.WeakKeyDictionary()


def read_before_own_store(tree: ast.Module) -> frozenset[int]:
    """The ids of the attribute reads `X.a` that run, in their block, before or in the one statement of the file
    that stores `X.a` (the same text): `X.a` is stored nowhere else in the file, so nothing the file does sets it
    before the read (a counter the file sets up at import and bumps later is stored twice: not one of these)."""
    found = _READS.get(tree)
    if found is None:
        found = _READS[tree] = frozenset(_reads(tree))
    return found


def _reads(tree: ast.Module):
    imported = {(a.asname or a.name).split(".")[0] for n in nodes_of(tree, ast.Import, ast.ImportFrom) for a in n.names}
    stored: dict[str, int] = {}
    for node in nodes_of(tree, ast.Attribute):
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _on_an_import(node, imported):
            text = ast.unparse(node)
            stored[text] = stored.get(text, 0) + 1
    once = {text for text, count in stored.items() if count == 1}
    if not once:
        return
    for block in _blocks(tree):
        at: dict[str, int] = {}
        for i, stmt in enumerate(block):
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                for target in assignment_targets(stmt):
                    if isinstance(target, ast.Attribute) and (text := ast.unparse(target)) in once:
                        at.setdefault(text, i)
        if not at:
            continue
        for i, stmt in enumerate(block[:max(at.values()) + 1]):
            for node in _own_nodes(stmt):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and at.get(ast.unparse(node), -1) >= i:
                    yield id(node)


def _on_an_import(node: ast.Attribute, imported: set[str]) -> bool:
    """`attn_utils.f = ...` / `Backend.m = ...` / `vllm.x.f = ...`: a name of a module or class the file imports, what
    a patch replaces; not `self.x` or a local object's member (most files store only those: their blocks are then not
    walked)."""
    base = node.value
    while isinstance(base, ast.Attribute):
        base = base.value
    return isinstance(base, ast.Name) and base.id in imported


def _blocks(tree: ast.Module):
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value


def _own_nodes(stmt: ast.stmt):
    """The statement's nodes that run when it does: not the bodies of the functions, classes or lambdas it defines."""
    if isinstance(stmt, _SCOPES):
        return
    todo = [stmt]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES))
