"""DC101 request-block-hasher: hand-built `Request(...)` without `block_hasher` while prefix caching is on.

When prefix caching is enabled, the scheduler's `BlockPool.cache_full_blocks` needs
`request.block_hashes`, which a `Request` only computes when it was given a `block_hasher`
(vLLM's engine core builds one with `get_request_block_hasher` and `init_none_hash`). A client that
builds `Request` objects by hand without it fails on the first scheduling step: from vLLM 0.10.1 to
0.25 with a message-less `AssertionError` (`assert len(request.block_hashes) >= num_full_blocks`),
from 0.26 with `IndexError: list index out of range` inside `cache_full_blocks`. Prefix caching is
on when the client's `CacheConfig(...)` leaves `enable_prefix_caching` at the target's default and
that default is True (from 0.12), or sets it to True.

This probe reads `cache_full_blocks`' body (the assert, or the indexing of the resolved hashes)
and `CacheConfig`'s default; it does not go by version numbers. Fixes: `disable-prefix-caching`
(safe for prefill-only extraction, and it also avoids truncated hidden states, see DC102) or
`add-block-hasher` (when the client needs caching).
"""

from __future__ import annotations

import ast

from driftcheck import bodies
from driftcheck.context import ScanContext
from driftcheck.errors import SourceError
from driftcheck.findings import Rule

RULE = Rule("DC101", "request-block-hasher", "Request built without block_hasher while prefix caching is on", "error",
            fix="disable-prefix-caching", kind="behaviour", raises=("AssertionError", "IndexError"))

BLOCK_POOL = "vllm.v1.core.block_pool.BlockPool"


def block_hash_requirement(api) -> tuple[str, int, str] | None:
    """(path, line, how) where cache_full_blocks needs request.block_hashes, or None."""
    resolved, fn = bodies.method(api, BLOCK_POOL, "cache_full_blocks")
    if fn is None:
        return None
    asserts = bodies.find_asserts(fn, "request.block_hashes", "len(")
    if asserts:
        a = asserts[0]
        how = "assert" if a.msg is None else "assert-with-message"
        return resolved.path, a.lineno, how
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and node.attr == "block_hashes" and isinstance(node.value, ast.Name) and node.value.id == "request":
            # The hashes are indexed per new full block: an empty list ends in IndexError.
            subscripts = [s for s in ast.walk(fn) if isinstance(s, ast.Subscript) and "block_hash" in ast.unparse(s.value)]
            line = subscripts[-1].lineno if subscripts else node.lineno
            return resolved.path, line, "index"
    return "", 0, "none"


def prefix_caching_state(ctx: ScanContext) -> tuple[str, object, str]:
    """('on'|'off'|'maybe', the client's CacheConfig call loc or None, explanation)."""
    default = bodies.constructor_default(ctx.api, "vllm.config.CacheConfig", "enable_prefix_caching")
    default_value = bodies.literal_src(default.value) if default and default.param else bodies.NOT_LITERAL
    calls = [c for c in ctx.usage.calls if c.kind == "construct" and c.target.qualname.endswith(".CacheConfig")]
    for call in calls:
        kw = bodies.keyword(call.node, "enable_prefix_caching")
        if kw is not None:
            value = bodies.literal(kw.value)
            if value is False:
                return "off", call, "the client passes enable_prefix_caching=False"
            if value is True:
                return "on", call, "the client passes enable_prefix_caching=True"
            return "maybe", call, f"the client passes enable_prefix_caching={ast.unparse(kw.value)}"
        if call.shape.star_kwargs:
            return "maybe", call, "the client passes **kwargs to CacheConfig"
    where = "the client's CacheConfig(...) leaves" if calls else "the client builds no CacheConfig; the target's"
    if default_value is True:
        return "on", calls[0] if calls else None, f"{where} enable_prefix_caching at its default, True"
    if default_value in (False, None):
        return "off", calls[0] if calls else None, f"{where} enable_prefix_caching at its default, {default_value}"
    return "maybe", calls[0] if calls else None, "the default of CacheConfig.enable_prefix_caching is not a literal"


CACHE_BUILDERS = ("BlockPool(", "KVCacheManager(", "get_kv_cache_coordinator(")


def _drives_block_pool(ctx: ScanContext) -> bool:
    """Whether the client itself builds something that schedules with a block pool (a Scheduler, a
    KVCacheManager): only then does its hand-built Request reach cache_full_blocks for certain."""
    for use in ctx.usage.calls:
        if use.kind != "construct":
            continue
        try:
            text = ctx.api.tree.read_text(use.target.path)
        except SourceError:  # unreadable: cannot tell, so do not claim certainty
            continue
        if any(builder in text for builder in CACHE_BUILDERS):
            return True
    return False


def check(ctx: ScanContext):
    requests = [c for c in ctx.usage.calls if c.kind == "construct" and c.target.qualname == "vllm.v1.request.Request"]
    if not requests:
        return
    sig = ctx.api.constructor(requests[0].target)
    if sig is None or sig.get("block_hasher") is None:
        return  # this vLLM has no block_hasher: the requirement does not exist
    missing = [c for c in requests if bodies.keyword(c.node, "block_hasher") is None and not c.shape.star_kwargs]
    if not missing:
        return
    requirement = block_hash_requirement(ctx.api)
    if requirement is None:
        for c in missing:
            yield ctx.unknown(RULE, f"cannot find {BLOCK_POOL}.cache_full_blocks in {ctx.version_label()} to check "
                              "whether Requests need block hashes", c.loc, "Request(block_hasher=)")
        return
    path, line, how = requirement
    if how == "none":
        return
    state, cache_call, why = prefix_caching_state(ctx)
    if state == "off":
        return
    drives = _drives_block_pool(ctx)
    failure = ("a message-less AssertionError in BlockPool.cache_full_blocks" if how == "assert" else
               "an AssertionError in BlockPool.cache_full_blocks" if how == "assert-with-message" else
               "IndexError: list index out of range inside BlockPool.cache_full_blocks")
    for c in missing:
        yield ctx.finding(
            RULE,
            f"Request(...) is built without block_hasher, so request.block_hashes stays empty; {why}, and in "
            f"{ctx.version_label()} cache_full_blocks needs those hashes: {failure} on the first scheduling step.",
            c.loc, ctx.vllm_location(path, line), "vllm.v1.request.Request(block_hasher=)", when="call",
            severity="warning" if state == "maybe" or not drives else None,
            failure=how, prefix_caching=state,
            cache_config=ctx.client_location(cache_call.loc).to_json() if cache_call else None,
        )
