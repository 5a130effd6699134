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
from driftcheck.astnodes import own_scope

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
        mapping = _mapping_reply(ctx, rpc.method)
        for sub in subs:
            if mapping is None:
                outcome, when = "the index silently takes the first element of the reply.", "silent"
            else:
                outcome, when = (f"the reply is what the client's worker extension `{mapping[0]}` returns ({mapping[1]}), a "
                                 "dict or None: the index looks up the dict's key 0 (KeyError unless it has one; TypeError "
                                 "on None), not a first element."), "call"
            yield ctx.finding(
                RULE,
                f"`{ast.unparse(sub)}` indexes the reply of collective_rpc(\"{rpc.method}\", unique_reply_rank=...), but in "
                f"{ctx.version_label()} that call returns the rank's reply itself, not a list: {outcome}",
                loc_of(rpc.file, sub), ctx.vllm_location(*where), f"{executor}.collective_rpc(unique_reply_rank=)", when=when,
                rpc_method=rpc.method, rpc_line=rpc.loc.line,
            )


_DICT_FACTORIES = {"dict", "defaultdict", "OrderedDict", "Dict"}


def _mapping_reply(ctx: ScanContext, method: str) -> tuple[str, str] | None:
    """(`Cls.method`, "path:line") when the rpc names one method of the client's worker extensions and every `return`
    of it gives a dict or None, at least one a dict (a speculators fork's `_get_captured_states`: `return None` or
    `return result`, `result: dict[str, list[Tensor]] = {...}`): `[0]` of that reply is no first element (FA3)."""
    found = [b for b in ctx.usage.bound if b.how == "worker-extension" and b.name.rsplit(".", 1)[-1] == method]
    if len(found) != 1:
        return None
    fn = found[0].node
    returns = [n for n in own_scope(fn) if isinstance(n, ast.Return)]
    kinds = [_value_kind(r.value, fn) for r in returns]
    if not returns or "dict" not in kinds or any(k not in ("dict", "none") for k in kinds):
        return None
    first = returns[kinds.index("dict")]
    return found[0].name, f"{found[0].file.rel}:{first.lineno}"


def _value_kind(value: ast.expr | None, fn: ast.AST) -> str:
    """"none", "dict" or "other" for a returned value; a local name is a dict when every binding of it in `fn` is
    one (a dict display or comprehension, a `dict(...)`-like call, or an annotation naming dict)."""
    if value is None or isinstance(value, ast.Constant) and value.value is None:
        return "none"
    if isinstance(value, (ast.Dict, ast.DictComp)):
        return "dict"
    if isinstance(value, ast.Call) and (getattr(value.func, "id", None) or getattr(value.func, "attr", None)) in _DICT_FACTORIES:
        return "dict"
    if isinstance(value, ast.Name):
        kinds = []
        for node in own_scope(fn):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == value.id:
                annotation = node.annotation.value if isinstance(node.annotation, ast.Subscript) else node.annotation
                named = getattr(annotation, "id", None) or getattr(annotation, "attr", None)
                kinds.append("dict" if named in _DICT_FACTORIES else "other" if node.value is None or isinstance(node.value, ast.Name)
                             else _value_kind(node.value, fn))  # a name bound to a name: not followed (no cycle)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets):
                kinds.append(_value_kind(node.value, fn) if not isinstance(node.value, ast.Name) else "other")
            elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.With, ast.AsyncWith)):
                targets = [i.optional_vars for i in node.items if i.optional_vars is not None] \
                    if isinstance(node, (ast.With, ast.AsyncWith)) else [node.target]
                if any(isinstance(n, ast.Name) and n.id == value.id for t in targets for n in ast.walk(t)):
                    kinds.append("other")
        return "dict" if kinds and all(k == "dict" for k in kinds) else "other"
    return "other"
