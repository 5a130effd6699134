"""DC105 tensor-truthiness: `if not x:` where x may be a tensor received from vLLM.

`bool(tensor)` raises `RuntimeError: Boolean value of Tensor with more than one value is
ambiguous` for any tensor with more than one element (and is silently wrong for a one-element
tensor). It bites when a vLLM change turns a list into a tensor under the client's feet, as the
`collective_rpc(..., unique_reply_rank=)` reply change did in speculators 0.3.0
(`aux_hidden_states = captured_states_list[0]; if not aux_hidden_states:`).

The probe flags truthiness tests (`if x`, `if not x`, `while x`, `x and ...`, `bool(x)`) on values
that are tensors by vLLM's annotations, or that are elements of a single collective_rpc reply (see
DC104). Fix: `tensor-truthiness` rewrites the test to `x is None or len(x) == 0`.
"""

from __future__ import annotations

import ast

from driftcheck.vllm_model import bodies
from driftcheck.astnodes import nodes_of, walk, within
from driftcheck.rules.context import ScanContext
from driftcheck.vllm_model.facts import executor_of, indexed_replies, single_reply
from driftcheck.rules.findings import Rule
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.tbsigs import Fact, Signature

RULE = Rule("DC105", "tensor-truthiness", "Truthiness test on a value that may be a tensor", "error",
            fix="tensor-truthiness", kind="behaviour", raises=("RuntimeError",))


def _tests_in(fn: ast.AST):
    """Expressions whose truth value Python takes."""
    for node in walk(fn):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            yield node.test
        elif isinstance(node, ast.BoolOp):
            yield from node.values
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node.operand
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" and node.args:
            yield node.args[0]


def _tested_names(fn: ast.AST) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for test in _tests_in(fn):
        inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        if isinstance(inner, ast.Name):
            out.setdefault(inner.id, test)
    return out


def _tensor_annotated(ann: str | None) -> bool:
    if not ann:
        return False
    outer = ann.replace(" ", "").split("|")
    return any(p in ("torch.Tensor", "Tensor") for p in outer)


def check(ctx: ScanContext):
    # 1. Elements of a single collective_rpc reply.
    for rpc in ctx.usage.rpcs:
        if not rpc.unique_reply_rank:
            continue
        subs = indexed_replies(rpc.file, rpc.node)
        where = single_reply(ctx.api, executor_of(ctx, rpc.node)) if subs else None
        if where is None:
            continue
        fn = next((f for f in walk(rpc.file.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and f.lineno <= rpc.node.lineno <= (f.end_lineno or f.lineno)), rpc.file.tree)
        assigned = {t.id: a.value for a in walk(fn) if isinstance(a, ast.Assign) and a.value in subs
                    for t in a.targets if isinstance(t, ast.Name)}
        for name, test in _tested_names(fn).items():
            if name in assigned:
                yield ctx.finding(
                    RULE,
                    f"`{ast.unparse(test)}` tests the truth of `{name}` = `{ast.unparse(assigned[name])}`; in "
                    f"{ctx.version_label()} collective_rpc(\"{rpc.method}\", unique_reply_rank=...) returns the reply itself, "
                    f"so `{name}` is one element of it (a tensor when the worker returns a list of tensors): RuntimeError: "
                    "Boolean value of Tensor with more than one value is ambiguous.",
                    loc_of(rpc.file, test), ctx.vllm_location(*where), name, when="call", rpc_method=rpc.method,
                )
    # 2. Values annotated as tensors by vLLM.
    tensor_calls = {id(c.node): c for c in ctx.usage.calls
                    if c.target.func is not None and _tensor_annotated(c.target.func.returns)}
    if not tensor_calls:
        return
    functions: dict[int, tuple] = {}  # only the functions that hold a tensor-returning call
    for use in tensor_calls.values():
        fn = bodies.enclosing_function(use.file.tree, use.node)
        if fn is not None:
            functions.setdefault(id(fn), (use.file, fn))
    for file, fn in functions.values():
        assigned = {t.id: a.value for a in within(nodes_of(file.tree, ast.Assign), fn) if id(a.value) in tensor_calls
                    for t in a.targets if isinstance(t, ast.Name)}
        if not assigned:
            continue  # no name holds a tensor here: no test to walk the function for
        for name, test in _tested_names(fn).items():
            if name in assigned:
                use = tensor_calls[id(assigned[name])]
                yield ctx.finding(
                    RULE, f"`{ast.unparse(test)}` tests the truth of `{name}`, which {use.target.qualname.rsplit('.', 1)[-1]}() "
                    f"returns as a tensor in {ctx.version_label()}: RuntimeError: Boolean value of Tensor with more than "
                    "one value is ambiguous.",
                    loc_of(file, test), ctx.location_of(use.target), name, when="call",
                )


# ------------------------------------------------------------------------------------- traceback signatures
def _confirm_reply(api, _tb, _m):
    where = single_reply(api)
    return (where is not None, f"{where[0]}:{where[1]} returns one reply for unique_reply_rank" if where else
            "collective_rpc returns a list in this vLLM")


HIDDEN_STATES_REPLY = r"if not \w*hidden_states\b"  # the client line of the speculators reply change (DC104)

SIGNATURES = (
    Signature("a truthiness test (`if not x:`) was applied to a tensor.",
              "A value the client tests for truth is a tensor in this vLLM; bool() of a tensor with more than one "
              "element raises.",
              message=r"Boolean value of Tensor with more than one value is ambiguous", confirm=_confirm_reply, priority=80,
              facts=(Fact("When the value came from collective_rpc(..., unique_reply_rank=r) and was indexed with [0], the "
                          "root cause is DC104: that call returns the reply itself from vLLM 0.12, so [0] took the first "
                          "tensor.", when=HIDDEN_STATES_REPLY, where="message"),
                     Fact("collective_rpc(..., unique_reply_rank=r) returns the rank's reply itself from vLLM 0.12, so "
                          "indexing it yields a tensor where a list was expected.", when=HIDDEN_STATES_REPLY))),
)
