"""DC104 unique-reply-rank: indexing the reply of `collective_rpc(..., unique_reply_rank=r)`.

In vLLM 0.11 `collective_rpc` always returned a list (one reply per worker, or a one-element list
with `unique_reply_rank`). From 0.12 (`MultiprocExecutor.collective_rpc`: "Returns single result if
unique_reply_rank ... is provided") it returns that rank's reply itself. Code written for the old
shape, `replies = collective_rpc(..., unique_reply_rank=0); states = replies[0]`, now silently
takes the first element of the reply: in speculators 0.3.0 the first layer's tensor instead of the
list of layers, which then fails at `if not aux_hidden_states:` with `Boolean value of Tensor with
more than one value is ambiguous` (DC105), or worse, runs on with wrong data.

The probe reads the executor's `collective_rpc` body (a `return x[0] if ... else x` keyed on
`unique_reply_rank`, or the docstring) to decide. Fix: `unwrap-unique-reply`.
"""

from __future__ import annotations

import ast

from driftcheck.rules.context import ScanContext
from driftcheck.vllm_model.facts import executor_found, executor_of, indexed_replies, single_reply
from driftcheck.rules.findings import Rule
from driftcheck.client_model.uses import loc_of

RULE = Rule("DC104", "unique-reply-rank", "Indexing the single reply of collective_rpc(unique_reply_rank=)", "error",
            fix="unwrap-unique-reply", kind="behaviour", raises=("TypeError", "IndexError"))

def check(ctx: ScanContext):
    for rpc in ctx.usage.rpcs:
        if not rpc.unique_reply_rank:
            continue
        subs = indexed_replies(rpc.file, rpc.node)
        if not subs:
            continue
        executor = executor_of(ctx, rpc.node)
        if not executor_found(ctx.api, executor):
            yield ctx.unknown(RULE, f"cannot find {executor} in {ctx.version_label()} to read collective_rpc's reply shape", rpc.loc)
            continue
        where = single_reply(ctx.api, executor)
        if where is None:
            continue
        for sub in subs:
            yield ctx.finding(
                RULE,
                f"`{ast.unparse(sub)}` indexes the reply of collective_rpc(\"{rpc.method}\", unique_reply_rank=...), but in "
                f"{ctx.version_label()} that call returns the rank's reply itself, not a list: the index silently takes the "
                "first element of the reply.",
                loc_of(rpc.file, sub), ctx.vllm_location(*where), f"{executor}.collective_rpc(unique_reply_rank=)", when="silent",
                rpc_method=rpc.method, rpc_line=rpc.loc.line,
            )
