"""Methods of a client class that only code which never runs refers to: their bodies never run either.

vllm-plugin-FL's MLA backend binds `self._run_prefill_new_tokens = self._run_prefill_new_tokens_trtllm_ragged` only
under `elif use_trtllm_ragged_deepseek_prefill():`, a helper of the file that returns False (guards.py makes that
branch unreachable). Nothing else names `_run_prefill_new_tokens_trtllm_ragged`: not another line of the file, not
another client file, and not vLLM, whose own copy of the method is on a class the plugin's class does not derive
from. A member read in such a method is read by code that never runs (MB2, batch 25b).

A method counts only when every mention of its name in its file (an attribute, a name, a string) lies inside an
unreachable span of that file, no other client file names it, it has no decorator and is no dunder, and vLLM's sources
name it only as `self.<name>` inside classes that are not among the client class's vLLM bases: vLLM calls a method by
its name, on a receiver that may be the client's object only through such a base (or through any other receiver,
which counts as a caller). Asked only for files that have such a branch, with the other cross-file facts (a
change to another file can bring a method back to life).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.client_classes import vllm_bases_through
from driftcheck.client_model.guards import Guard, body_span, unreachable_branches
from driftcheck.vllm_model.bodies import text_index_for


def dead_methods_of(files, api, usage, source) -> dict[str, list[Guard]]:
    """File -> its dead-method guards, for every client file with a branch that never runs (a flag the file only sets
    false, a helper that only returns false: guards.unreachable_branches). A cross-file fact: another file naming a
    method keeps it alive, so it is worked out with the other cross-file facts and goes into the units' digest."""
    out: dict[str, list[Guard]] = {}
    for f in files:
        spans = unreachable_branches(f.tree)
        found = dead_methods(f, spans, api, usage, source) if spans else []
        if found:
            out[f.rel] = found
    return out


def dead_methods(file, unreachable: list[Guard], api, usage, source) -> list[Guard]:
    """Guards ("dead") over the bodies of `file`'s methods that only its unreachable code refers to."""
    if not unreachable:
        return []
    tree = file.tree
    inside = [(g.start, g.end, g) for g in unreachable]
    mentions: dict[str, list[int]] = {}
    for node in nodes_of(tree, ast.Attribute):
        mentions.setdefault(node.attr, []).append(node.lineno)
    for node in nodes_of(tree, ast.Name):
        mentions.setdefault(node.id, []).append(node.lineno)
    for node in nodes_of(tree, ast.Constant):
        if isinstance(node.value, str) and node.value.isidentifier():
            mentions.setdefault(node.value, []).append(node.lineno)
    out: list[Guard] = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list or \
                    (fn.name.startswith("__") and fn.name.endswith("__")) or not fn.body:
                continue
            lines = mentions.get(fn.name, [])
            guard = _all_inside(lines, inside)
            if guard is None or _named_elsewhere(source, file, fn.name) or \
                    _vllm_may_call(api, usage, f"{file.module}.{cls.name}", fn.name):
                continue
            start, end = body_span(fn.body)
            out.append(Guard(start, end, "dead", frozenset(), guard.line, frozenset({fn.name}),
                             where=f"`{fn.name}` is named only in code that never runs ({guard.describe()})"))
    return out


def _all_inside(lines: list[int], spans: list[tuple[int, int, Guard]]) -> Guard | None:
    """The unreachable guard over the first of `lines`, when every one of them lies in some unreachable span (and
    there is one at least)."""
    first = None
    for line in lines:
        hit = next((g for start, end, g in spans if start <= line <= end), None)
        if hit is None:
            return None
        first = first or hit
    return first


def _named_elsewhere(source, file, name: str) -> bool:
    """Another client file names it (importing vLLM or not)."""
    if any(f is not file and name in f.text for f in source.files):
        return True
    return next(iter(source.other_files(containing=name)), None) is not None


def _vllm_may_call(api, usage, label: str, name: str) -> bool:
    """Whether vLLM's sources may call `name` on the client class's objects: any mention that is not `self.<name>` in
    a class outside the client class's vLLM bases (with their MROs) counts."""

    bases = {c.qualname for b in vllm_bases_through(usage, api, [label]) for c in api.mro(b)[0]}
    for rel in text_index_for(api).files_mentioning(name):
        tree = api.parse(rel)
        if tree is None:
            return True
        module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for cls_name, node in _mentions(tree, name):
            if cls_name is None or f"{module}.{cls_name}" in bases:
                return True
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                return True
    return False


def _mentions(tree: ast.Module, name: str):
    """(top-level class around it or None, node) for every attribute, name or string `name` in `tree`."""
    spans = [(n.lineno, n.end_lineno or n.lineno, n.name) for n in tree.body if isinstance(n, ast.ClassDef)]
    for node in nodes_of(tree, ast.Attribute, ast.Name, ast.Constant, ast.FunctionDef, ast.AsyncFunctionDef):
        hit = (isinstance(node, ast.Attribute) and node.attr == name) or (isinstance(node, ast.Name) and node.id == name) \
            or (isinstance(node, ast.Constant) and node.value == name)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue  # vLLM's own definition of a method of that name is no call
        if hit:
            line = node.lineno
            yield next((c for s, e, c in spans if s <= line <= e), None), node
