"""Shared by the three call-site probes: bind every vLLM call the client makes, once per scan."""

from __future__ import annotations

from dataclasses import dataclass

from .api_index import Resolved
from .context import ScanContext
from .signatures import CallProblem, Signature, check_call
from .usage import CallUse


@dataclass
class BoundCall:
    use: CallUse
    signature: Signature | None
    problems: list[CallProblem]
    callee: str  # what a user would call it: `Scheduler(...)`, `executor.execute_model(...)`


def signature_for(ctx: ScanContext, use: CallUse) -> Signature | None:
    target = use.target
    if use.kind == "construct":
        return ctx.api.constructor(target)
    if target.func is None:
        return None
    sig = target.func.signature
    if use.kind == "method" and not target.func.is_static:
        sig = sig.without_first()
    sig.path = target.path
    return sig


def callee_label(use: CallUse) -> str:
    target: Resolved = use.target
    short = target.qualname.rsplit(".", 2)
    if use.kind == "method":
        return f"{short[-2]}.{short[-1]}()"
    return f"{short[-1]}()"


def bound_calls(ctx: ScanContext) -> list[BoundCall]:
    cached = ctx.options.get("_bound_calls")
    if cached is not None:
        return cached
    out: list[BoundCall] = []
    for use in ctx.usage.calls:
        sig = signature_for(ctx, use)
        problems = check_call(sig, use.shape) if sig is not None else []
        out.append(BoundCall(use, sig, problems, callee_label(use)))
    ctx.options["_bound_calls"] = out
    return out


def when_of(use: CallUse) -> str:
    return "call" if use.runtime_only else "import"
