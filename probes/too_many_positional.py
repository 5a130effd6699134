"""DC004 too-many-positional: a vLLM call passes more positional arguments than the target accepts.

When vLLM drops a parameter, or makes the rest keyword-only, a call that passed them by position
raises `TypeError: ... takes N positional arguments but M were given`; when the dropped parameter came before one the
call passes by keyword, the positional arguments now reach that one too: `TypeError: ... got multiple values for
argument`. Worse, when a parameter is inserted in the middle, positional calls bind values to the wrong names
silently; pass by keyword (DC121 reports that shift where the client's own vLLM is known).
"""

from __future__ import annotations

from driftcheck.rules.callcheck import bound_calls, when_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.signatures import POS, POSONLY

RULE = Rule("DC004", "too-many-positional", "Call passes more positional arguments than the target accepts", "error", raises=("TypeError",))


def check(ctx: ScanContext):
    for bc in bound_calls(ctx):
        for problem in bc.problems:
            if problem.kind == "too-many-positional":
                sig = bc.signature
                yield bc.qualify(ctx.finding(
                    RULE, f"{bc.callee} {problem.detail} in {ctx.version_label()}: TypeError when this line runs. "
                    f"The signature is now {sig.render()}.",
                    bc.use.loc, ctx.vllm_location(sig.path, sig.line), bc.use.target.qualname, when=when_of(bc.use),
                    signature=sig.render(),
                ))
            elif problem.kind == "duplicate-argument":
                sig = bc.signature
                yield bc.qualify(ctx.finding(
                    RULE, f"{bc.callee} gets '{problem.name}' both by position and by keyword in {ctx.version_label()}"
                    f"{_lands_on(sig, problem.name)}: TypeError when this line runs. The signature is now {sig.render()}.",
                    bc.use.loc, ctx.vllm_location(sig.path, problem.param.line if problem.param else sig.line),
                    bc.use.target.qualname, when=when_of(bc.use), signature=sig.render(),
                ))


def _lands_on(sig, name: str) -> str:
    """Why a keyword the call passes is also filled by position: the call's positional arguments reach it because
    fewer parameters come before it than the call passes by position (one before it was removed, or moved behind it:
    `get_attn_backend(head_size, dtype, kv_cache_dtype, block_size, use_mla=False)` once vLLM 0.18 dropped
    `block_size`). An inserted parameter pushes it further back and never causes this."""
    positional = [p.name for p in sig.params if p.kind in (POSONLY, POS)]
    if name not in positional:
        return ""
    n = positional.index(name) + 1
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(n, f"{n}th")
    before = "no parameter comes" if n == 1 else f"only {n - 1} parameter{'s' if n > 2 else ''} come{'' if n > 2 else 's'}"
    return (f": the call's {ordinal} positional argument binds it, since {before} before it now (a parameter before "
            "it was removed, or moved behind it)")


# ------------------------------------------------------------------------------------- traceback signatures
SIGNATURES = (
    Signature("{0}() takes fewer positional arguments in this vLLM.", "A vLLM function takes fewer positional arguments.",
              message=r"(\w+)\(\) takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given", priority=40),
)
