"""DC003 unknown-keyword: a vLLM call passes a keyword the target's signature does not accept.

`get_kv_cache_config_from_groups(kv_cache_specs=...)` (the parameter was dropped in 0.12) or
`Request(eos_token_id=...)` (dropped later) raise `TypeError: ... got an unexpected keyword
argument` when the line runs. For vLLM's pydantic `@config` classes (extra="forbid", from 0.16.0)
the same mistake is a `ValidationError`; a pydantic dataclass that does not forbid extras (`@config` up to
0.15.1 only returns the class, and pydantic's default is extra="ignore") drops the value silently: a warning,
no fix. Constructors of dataclasses and `@config` classes are synthesised
from their fields, so this covers `SchedulerConfig(...)`, `CacheConfig(...)` and friends.
"""

from __future__ import annotations

import difflib

from driftcheck.rules.callcheck import bound_calls, when_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Fact, Signature, called_name, confirm_param

RULE = Rule("DC003", "unknown-keyword", "Call passes a keyword the target vLLM does not accept", "error", fix="drop-keyword", raises=("TypeError",))


def check(ctx: ScanContext):
    for bc in bound_calls(ctx):
        for problem in bc.problems:
            if problem.kind != "unknown-keyword":
                continue
            sig = bc.signature
            passed = set(bc.use.shape.keywords)
            unpassed = [n for n in sig.names() if n not in passed]
            renamed = difflib.get_close_matches(problem.name, unpassed, n=1, cutoff=0.75)
            extra = ctx.api.unknown_keywords(bc.use.target) if bc.use.kind == "construct" else None
            if extra in (None, "forbid"):
                message = (
                    f"{bc.callee} got an unexpected keyword argument '{problem.name}' in {ctx.version_label()}: "
                    f"{'ValidationError (extra fields forbidden)' if extra else 'TypeError'} when this line runs. "
                    f"The signature is now {sig.render()}."
                )
                severity, fix = None, True
            else:
                # a pydantic dataclass that does not forbid extras: no error, but the value never reaches a field
                what = {"ignore": "its config does not forbid extra keywords, so pydantic silently drops the value",
                        "allow": "its config allows extra keywords, so the value is kept as an attribute no field declares",
                        "unknown": "driftcheck cannot read its pydantic config: unless it forbids extra keywords, "
                                   "pydantic drops the value without an error"}[extra]
                message = (f"{bc.callee} has no field '{problem.name}' in {ctx.version_label()}: {what}, and "
                           f"the setting has no effect. The fields are now {sig.render()}.")
                severity, fix = "warning", False
            if renamed:
                message += f" Renamed to '{renamed[0]}'?"
            yield bc.qualify(ctx.finding(
                RULE, message, bc.use.loc, ctx.vllm_location(sig.path, sig.line), f"{bc.use.target.qualname}({problem.name}=)",
                when=when_of(bc.use), severity=severity, fix=fix, keyword=problem.name,
                renamed_to=renamed[0] if renamed else None, signature=sig.render(), pydantic_extra=extra,
            ))


# ------------------------------------------------------------------------------------- traceback signatures
UNEXPECTED_KW = r"(\w+)(?:\.__init__)?\(\) got an unexpected keyword argument '(\w+)'"

SIGNATURES = (
    Signature("{0}() no longer accepts '{1}' in this vLLM (parameter removed or renamed).",
              "A vLLM function dropped or renamed a parameter.",
              message=UNEXPECTED_KW, priority=60,
              confirm=lambda api, tb, m: confirm_param(api, called_name(tb, m.group(1)), m.group(2), absent=True),
              facts=(Fact("get_kv_cache_config_from_groups() lost kv_cache_specs= in vLLM 0.12.", when=r"'kv_cache_specs'"),
                     Fact("Request() lost eos_token_id= after vLLM 0.16.", when=r"'eos_token_id'"))),
)
