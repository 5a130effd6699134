"""Shared by the three call-site probes: bind every vLLM call the client makes, once per scan."""

from __future__ import annotations

from dataclasses import dataclass

from driftcheck.vllm_model.resolved import Resolved
from driftcheck.rules.context import ScanContext
from driftcheck.vllm_model.signatures import CallProblem, Signature, check_call
from driftcheck.client_model.uses import CallUse


@dataclass
class BoundCall:
    use: CallUse
    signature: Signature | None
    problems: list[CallProblem]
    callee: str  # what a user would call it: `Scheduler(...)`, `executor.execute_model(...)`
    fits_override: str | None = None  # a subclass's override that accepts the call: the object may be one

    def qualify(self, finding):
        """A call that fits a subclass's override of the method is not certain to fail: a warning."""
        if self.fits_override is not None and finding.severity == "error":
            finding.severity = "warning"
            finding.fix = None
            finding.message += (f" The receiver may be a subclass whose override accepts this call "
                                f"({self.fits_override}), so this fails only when it is not.")
            finding.details["fits_override"] = self.fits_override
        return finding


def signature_for(ctx: ScanContext, use: CallUse) -> Signature | None:
    target = use.target
    if use.kind == "construct":
        return ctx.api.constructor(target)
    if target.func is None or ctx.api.reshaping_decorator(target) is not None:
        return None  # a decorator we cannot read may take other arguments (`@tilelang.jit` kernels)
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
    """Every vLLM call of the client, bound to the target's signature (once per scan, shared by three rules)."""
    return ctx.once(_bind_all)


def _bind_all(ctx: ScanContext) -> list[BoundCall]:
    out: list[BoundCall] = []
    for use in ctx.usage.calls:
        sig = signature_for(ctx, use)
        problems = check_call(sig, use.shape) if sig is not None else []
        out.append(BoundCall(use, sig, problems, callee_label(use),
                             _fitting_override(ctx, use) if problems and use.kind == "method" and not use.via_super else None))
    return out


def _fitting_override(ctx: ScanContext, use: CallUse) -> str | None:
    """The first override of the called method, in a client subclass or a subclass of the tree, that accepts
    the call's shape: a receiver typed as the base class may be such an object at run time."""
    owner, name = use.target.owner, use.target.qualname.rsplit(".", 1)[-1]
    if owner is None:
        return None
    for label, sig in ctx.usage.client_overrides.get(owner.qualname, {}).get(name, []):
        if not check_call(sig.without_first(), use.shape):
            return label
    for sub in ctx.api.subclasses(owner):
        fn = sub.cls.methods.get(name)
        if fn is not None and not fn.is_static and not check_call(fn.signature.without_first(), use.shape):
            return f"{sub.qualname}.{name}"
    return None


def when_of(use: CallUse) -> str:
    return "call" if use.runtime_only else "import"
