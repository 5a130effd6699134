"""DC004 too-many-positional: a vLLM call passes more positional arguments than the target accepts.

When vLLM drops a parameter, or makes the rest keyword-only, a call that passed them by position
raises `TypeError: ... takes N positional arguments but M were given`. Worse, when a parameter is
inserted in the middle, positional calls bind values to the wrong names silently; pass by keyword.
"""

from __future__ import annotations

from driftcheck.rules.callcheck import bound_calls, when_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature

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
                    f" (a parameter was inserted before it): TypeError when this line runs. The signature is now {sig.render()}.",
                    bc.use.loc, ctx.vllm_location(sig.path, problem.param.line if problem.param else sig.line),
                    bc.use.target.qualname, when=when_of(bc.use), signature=sig.render(),
                ))


# ------------------------------------------------------------------------------------- traceback signatures
SIGNATURES = (
    Signature("{0}() takes fewer positional arguments in this vLLM.", "A vLLM function takes fewer positional arguments.",
              message=r"(\w+)\(\) takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given", priority=40),
)
