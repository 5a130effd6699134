"""Members the client itself sets on typed objects (run by `finish_client` once every file was visited)."""

from __future__ import annotations

import ast

from driftcheck.astnodes import attribute_stores
from driftcheck.client_model.uses import AttrUse, Usage
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.resolved import External, Missing, Resolved, Unknown


def credit_client_stores(usage: Usage, api: ApiIndex) -> None:
    """A member the client itself assigns on objects of a vLLM class exists on those objects once that code
    ran: reading it is the client's own attribute, not a vLLM drift. Two kinds of evidence: a store on a
    receiver of the same (or a related) class anywhere in the client, or a store through the same variable
    name in the same file (`prefill = attn_metadata.prefill; prefill.req_to_token = ...` in a builder, then
    `prefill.req_to_token` in the backend that reads it). An assignment on some unrelated object hides nothing."""
    typed: dict[str, list[tuple[Resolved, str]]] = {}  # attribute -> (class of the receiver, where) of each store
    for use in usage.attrs:
        if use.store and isinstance(use.result, Missing):
            typed.setdefault(use.attr, []).append((use.owner, f"{use.loc.path}:{use.loc.line}"))
    for owner, attr, where in usage.union_stores:  # a receiver annotated `A | B` is one of them
        typed.setdefault(attr, []).append((owner, where))
    by_name: dict[str, set[tuple[str, str]]] = {}  # file -> {(variable, attribute)} it assigns
    chained: dict[tuple[str, str], str] | None = None  # (last receiver attribute, attribute) -> where, in any file
    for use in usage.attrs:
        if use.store or not isinstance(use.result, Missing):
            continue
        made = _typed_store(use, typed.get(use.attr, ()), api)
        if made is None and isinstance(use.node.value, ast.Name):
            if use.file.rel not in by_name:
                by_name[use.file.rel] = _named_stores(use.file.tree)
            if (use.node.value.id, use.attr) in by_name[use.file.rel]:
                made = f"{use.file.rel} assigns {use.node.value.id}.{use.attr}"
        elif made is None and isinstance(use.node.value, ast.Attribute):
            # `vllm_config.scheduler_config._original_cls = ...` in a platform hook that types vllm_config as Any
            if chained is None:
                chained = _chained_stores(usage.files)
            made = chained.get((use.node.value.attr, use.attr))
        if made is not None:
            use.result = External(f"client-set.{use.owner.qualname}.{use.attr} ({made})")
        elif use.unread_may_set is not None:
            use.result = Unknown(use.result.qualname, use.unread_may_set)  # a plugin the client runs under may set it


def _typed_store(use: AttrUse, stores, api: ApiIndex) -> str | None:
    mro = {c.qualname for c in api.mro(use.owner)[0]}
    for owner, where in stores:
        if owner.qualname in mro or use.owner.qualname in {c.qualname for c in api.mro(owner)[0]}:
            return where
    return None


def _chained_stores(files) -> dict[tuple[str, str], str]:
    """(last receiver attribute, attribute) -> where, for `a.b.attr = ...` anywhere in the client."""
    out: dict[tuple[str, str], str] = {}
    for file in files:
        for t, line in attribute_stores(file.tree):
            if isinstance(t.value, ast.Attribute):
                out.setdefault((t.value.attr, t.attr), f"{file.rel}:{line}")
    return out


def _named_stores(tree: ast.AST) -> set[tuple[str, str]]:
    """(variable, attribute) for `var.attr = ...` in a file; each class's `self` is another object, so not those."""
    return {(t.value.id, t.attr) for t, _line in attribute_stores(tree)
            if isinstance(t.value, ast.Name) and t.value.id not in ("self", "cls")}
