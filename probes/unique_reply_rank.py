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

from driftcheck import bodies
from driftcheck.api_index import Resolved
from driftcheck.context import ScanContext
from driftcheck.findings import Rule
from driftcheck.usage import loc_of

RULE = Rule("DC104", "unique-reply-rank", "Indexing the single reply of collective_rpc(unique_reply_rank=)", "error",
            fix="unwrap-unique-reply", kind="behaviour", raises=("TypeError", "IndexError"))

DEFAULT_EXECUTOR = "vllm.v1.executor.multiproc_executor.MultiprocExecutor"


def single_reply(api, executor: str = DEFAULT_EXECUTOR) -> tuple[str, int] | None:
    """Where the executor returns one reply for unique_reply_rank, or None if it returns a list."""
    resolved, fn = bodies.method(api, executor, "collective_rpc")
    if fn is None:
        return None
    for node in ast.walk(fn):
        if isinstance(node, ast.IfExp) and isinstance(node.body, ast.Subscript):
            index = bodies.literal(node.body.slice)
            if index == 0 and ("rank" in ast.unparse(node.test)):
                return resolved.path, node.lineno
    doc = ast.get_docstring(fn) or ""
    if "single result" in doc and "unique_reply_rank" in doc:
        return resolved.path, fn.body[0].lineno
    return None


def indexed_replies(file, call: ast.Call) -> list[ast.Subscript]:
    """`collective_rpc(...)[i]`, or `r = collective_rpc(...); ... r[i]` in the same function."""
    tree = file.tree
    out: list[ast.Subscript] = []
    fn = bodies.enclosing_function(tree, call) or tree
    names: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and node.value is call:
            out.append(node)
        if isinstance(node, ast.Assign) and node.value is call:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names:
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                out.append(node)
    return out


def executor_of(ctx: ScanContext, call: ast.Call) -> str:
    for use in ctx.usage.calls:
        if use.node is call and use.target.owner is not None:
            return use.target.owner.qualname
    return DEFAULT_EXECUTOR


def check(ctx: ScanContext):
    for rpc in ctx.usage.rpcs:
        if not rpc.unique_reply_rank:
            continue
        subs = indexed_replies(rpc.file, rpc.node)
        if not subs:
            continue
        executor = executor_of(ctx, rpc.node)
        if not isinstance(ctx.api.resolve(executor), Resolved):
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
