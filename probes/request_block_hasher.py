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
from dataclasses import dataclass

from driftcheck.vllm_model import bodies
from driftcheck.rules.context import ScanContext
from driftcheck.vllm_model.facts import BLOCK_POOL, block_hash_requirement, is_request_class, prefix_caching_state
from driftcheck.rules.findings import Location, Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.astnodes import dotted_name, nodes_of, walk
from driftcheck.client_model.imported_functions import imported_path
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.client_model.inference import ANY_MODULE

@dataclass
class ConfigCall:
    """Where `disable-prefix-caching` turns caching off: the client's `CacheConfig(...)` that the Request's engine uses."""

    location: Location


RULE = Rule("DC101", "request-block-hasher", "Request built without block_hasher while prefix caching is on", "error",
            fix="disable-prefix-caching", kind="behaviour", raises=("AssertionError", "IndexError"), payload=ConfigCall)

CACHE_BUILDERS = (b"BlockPool(", b"KVCacheManager(", b"get_kv_cache_coordinator(")


def _block_pools(ctx: ScanContext) -> list[tuple[str, bool]]:
    """(client file, caching on) of each thing the client builds that schedules with a block pool (a Scheduler, a
    KVCacheManager): only then does its hand-built Request reach cache_full_blocks for certain. One built with
    `enable_caching=False` never caches full blocks."""
    out = []
    builds: dict[str, bool] = {}
    for use in ctx.usage.calls:
        if use.kind == "construct" and _builds_a_pool(ctx, use.target.path, builds):
            out.append((use.loc.path, not _caching_off(use.node)))
    return out


def _builds_a_pool(ctx: ScanContext, path: str, seen: dict[str, bool]) -> bool:
    """Whether the release file defining a class builds a block pool, once per file (a whole-platform client builds
    thousands of vLLM objects from a few hundred files). An unreadable file is no: cannot tell, so claim nothing."""
    if path not in seen:
        data = bodies.text_index_for(ctx.api).blob(path)  # the release's text, read once (scan/preload.py) for every rule
        seen[path] = any(builder in data for builder in CACHE_BUILDERS)
    return seen[path]


def _replaced_builds(ctx: ScanContext, files) -> list[tuple[str, bool]]:
    """(client file, caching on) of each build, in `files`, of a vLLM class that schedules with a block pool and
    that the client puts its own class in the place of (`mgr_mod.KVCacheManager = TPUKVCacheManager`): such a call
    is no construct use (its class may be the client's), but whichever class it builds gets the same
    `enable_caching` (tpu-inference's test_runner_slot_mamba.py builds `KVCacheManager(..., enable_caching=False)`
    beside its Requests while core/hybrid_coordinator.py installs a subclass)."""
    if not ctx.usage.patched:
        return []
    out = []
    builds: dict[str, bool] = {}
    for file in files:
        names: dict[str, str] = {}  # local name -> vLLM dotted name, from the file's `from vllm... import X`
        for node in walk(file.tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module \
                    and node.module.split(".")[0] == ctx.api.package:
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        if not names:
            continue
        for node in walk(file.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names):
                continue
            found = ctx.api.resolve(names[node.func.id])
            if getattr(found, "kind", None) != "class" or not _replaced(ctx, found.qualname):
                continue  # not a class the client replaces: a construct use already stands for it
            if _builds_a_pool(ctx, found.path, builds):
                out.append((file.rel, not _caching_off(node)))
    return out


def _replaced(ctx: ScanContext, qualname: str) -> bool:
    """The client puts its own class in the place of this vLLM class, in the module that defines it or in every
    loaded module (`ValueInference._replaced`, for which the client inference records no construct use)."""
    module, _, name = qualname.rpartition(".")
    return (module, name) in ctx.usage.patched or (ANY_MODULE, name) in ctx.usage.patched


def _drives_block_pool(pools: list[tuple[str, bool]], path: str) -> bool | str:
    """Whether the Requests built in `path` reach a caching block pool for certain: the pools built in that same file
    decide (tpu-inference's tests build their KVCacheManager with caching off next to the Requests). A caching pool
    built only in another file ("elsewhere": vllm-spyre's scheduler subclass, whose tests build Requests for a mocked
    scheduler or for `NewRequestData.from_request`) may never be handed these Requests: a warning, not an error."""
    here = [on for where, on in pools if where == path]
    if here:
        return any(here)
    return "elsewhere" if any(on for _, on in pools) else False


def _caching_off(node: ast.Call) -> bool:
    found = bodies.keyword(node, "enable_caching")
    return found is not None and isinstance(found.value, ast.Constant) and found.value.value is False


def _hashes_set_by_client(call) -> bool:
    """`req = Request(...); req.block_hashes = [...]` (or `.append`/`.extend`) in the same function: the client
    supplies the hashes itself."""
    fn = bodies.enclosing_function(call.file.tree, call.node)
    if fn is None:
        return False
    names = {t.id for n in walk(fn) if isinstance(n, ast.Assign) and n.value is call.node
             for t in n.targets if isinstance(t, ast.Name)}
    for n in walk(fn):
        targets = n.targets if isinstance(n, ast.Assign) else [n.func.value] if isinstance(n, ast.Call) and \
            isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend") else []
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr == "block_hashes" and isinstance(t.value, ast.Name) and t.value.id in names:
                return True
    return False


def check(ctx: ScanContext):
    requests = [c for c in ctx.usage.calls if c.kind == "construct" and is_request_class(c.target.qualname)]
    if not requests:
        return
    sig = ctx.api.constructor(requests[0].target)
    if sig is None:
        yield ctx.unknown(RULE, f"cannot read the constructor of {requests[0].target.qualname} in {ctx.version_label()} to "
                          "check whether Requests take a block_hasher", requests[0].loc, "Request(block_hasher=)")
        return
    if sig.get("block_hasher") is None:
        return  # this vLLM has no block_hasher: the requirement does not exist
    missing = [c for c in requests if bodies.keyword(c.node, "block_hasher") is None and not c.shape.star_kwargs
               and not _hashes_set_by_client(c) and not _only_read_by_its_callee(ctx, c)]
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
    pools = _block_pools(ctx)
    pools += _replaced_builds(ctx, {id(c.file): c.file for c in missing}.values())
    failure = ("a message-less AssertionError in BlockPool.cache_full_blocks" if how == "assert" else
               "an AssertionError in BlockPool.cache_full_blocks" if how == "assert-with-message" else
               "IndexError: list index out of range inside BlockPool.cache_full_blocks")
    for c in missing:
        drives = _drives_block_pool(pools, c.loc.path)
        where = ", ".join(sorted({f for f, on in pools if on}))
        elsewhere = f" (a block pool is built only in another file, {where}: whether these Requests reach it is not " \
                    "certain)" if drives == "elsewhere" else ""
        finding = ctx.finding(
            RULE,
            f"Request(...) is built without block_hasher, so request.block_hashes stays empty; {why}, and in "
            f"{ctx.version_label()} cache_full_blocks needs those hashes: {failure} on the first scheduling step"
            f"{elsewhere}.",
            c.loc, ctx.vllm_location(path, line), f"{c.target.qualname}(block_hasher=)", when="call",
            severity="warning" if state == "maybe" or drives is not True else None,
            failure=how, prefix_caching=state,
            cache_config=ctx.client_location(cache_call.loc).to_json() if cache_call else None,
        )
        if cache_call is not None:
            finding.payload = ConfigCall(ctx.client_location(cache_call.loc))
        yield finding


def _only_read_by_its_callee(ctx: ScanContext, c) -> bool:
    """Whether the Request is built as an argument of a vLLM function that only reads members off it (vLLM's warmup
    hands `Request(...)` to `NewRequestData.from_request`, which copies its fields into the worker's record): it
    outlives the call nowhere, so no scheduler or block pool ever holds it (28c FW3, vLLM 0.22.0-0.33.0's own
    `v1/worker/gpu/warmup.py`)."""
    outer = next((n for n in nodes_of(c.file.tree, ast.Call) if any(a is c.node for a in n.args)), None)
    path = imported_path(c.file.tree, dotted_name(outer.func) or "") if outer is not None else None
    if not path:
        return False
    owner, _, name = path.rpartition(".")
    found = ctx.api.resolve(path)
    if not (isinstance(found, Resolved) and found.func is not None):
        cls = ctx.api.resolve(owner)
        found = ctx.api.class_member(cls, name) if isinstance(cls, Resolved) and cls.kind == "class" else None
    fn = ctx.api.function_node(found) if isinstance(found, Resolved) and found.func is not None else None
    if fn is None:
        return False
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    bound = 1 if params and params[0] in ("self", "cls") and found.kind != "function" else 0
    index = bound + next(i for i, a in enumerate(outer.args) if a is c.node)
    if index >= len(params):
        return False
    param = params[index]
    reads = {id(n.value) for n in walk(fn) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    return all(id(n) in reads for n in walk(fn) if isinstance(n, ast.Name) and n.id == param)


# ------------------------------------------------------------------------------------- traceback signatures
def _confirm_block(api, tb, _m):
    req = block_hash_requirement(api)
    if req is None:
        return False, "BlockPool.cache_full_blocks not found in this vLLM"
    path, line, how = req
    if how == "none":
        return False, "this vLLM's cache_full_blocks does not need request.block_hashes"
    wanted = "index" if tb.exc_type.endswith("IndexError") else "assert"
    return how.startswith(wanted), f"{path}:{line} ({how})"


SIGNATURES = (
    Signature("BlockPool.cache_full_blocks asserted that the request has block hashes; a Request built by hand without "
              "block_hasher has none while prefix caching is on.",
              "vLLM 0.10.1+ asserts len(request.block_hashes) >= num_full_blocks in BlockPool.cache_full_blocks when prefix "
              "caching is on, and CacheConfig.enable_prefix_caching defaults to True from 0.12.",
              exc_types=("AssertionError",), needs_frame="cache_full_blocks", confirm=_confirm_block, priority=130),
    Signature("cache_full_blocks indexed the request's block hashes, which are empty because the Request was built "
              "without block_hasher while prefix caching is on.",
              "vLLM 0.26+ resolves request.block_hashes in BlockPool.cache_full_blocks without an assert; an empty list "
              "ends in IndexError.",
              exc_types=("IndexError",), needs_frame="cache_full_blocks", confirm=_confirm_block, priority=120),
)
