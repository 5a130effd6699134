"""DC005 missing-argument: a vLLM call omits a parameter that the target requires.

`Scheduler(...)` gained a required `block_size` in 0.11.1; `SchedulerConfig(...)` requires the
InitVars `max_model_len` and `is_encoder_decoder` from 0.12. The call raises `TypeError: missing
1 required positional argument` (a pydantic `ValidationError: Field required` for `@config`
classes) when the line runs. The finding points at the parameter's definition in the target, and
the `add-argument` fix passes the value the target's own engine uses.
"""

from __future__ import annotations

from dataclasses import dataclass

from driftcheck.rules.callcheck import bound_calls, when_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Fact, Signature, called_name, confirm_param
from driftcheck.vllm_model.engine_values import EngineValue, engine_value


@dataclass
class ArgumentToAdd:
    """What `add-argument` passes: the parameter, and the value the target's own engine uses (None: none found)."""

    parameter: str
    value: EngineValue | None


RULE = Rule("DC005", "missing-argument", "Call omits an argument the target vLLM requires", "error", fix="add-argument",
            raises=("TypeError", "ValueError", "ValidationError"), payload=ArgumentToAdd)


def check(ctx: ScanContext):
    for bc in bound_calls(ctx):
        for problem in bc.problems:
            if problem.kind != "missing-argument":
                continue
            sig = bc.signature
            param = problem.param
            what = "an InitVar field" if param.annotation and param.annotation.startswith("InitVar") else "a required parameter"
            # a pydantic model's (BaseModel subclass, 26e N1) or pydantic dataclass's validator raises, not the call
            pydantic = bc.use.kind == "construct" and (sig.origin == "pydantic-model" or
                                                       ctx.api.is_dataclass_like(bc.use.target) == "pydantic")
            error = f"ValidationError ({param.name}: Field required)" if pydantic else f"TypeError (missing required argument '{param.name}')"
            finding = bc.qualify(ctx.finding(
                RULE,
                f"{bc.callee} does not pass '{param.name}', {what} in {ctx.version_label()}: {error} when this line runs.",
                bc.use.loc, ctx.vllm_location(sig.path, param.line or sig.line), f"{bc.use.target.qualname}({param.name}=)",
                when=when_of(bc.use), parameter=param.name, annotation=param.annotation, signature=sig.render(),
                raises=None if pydantic else ["TypeError"],  # what a `try` must catch to handle it (MA)
            ))
            if finding.fix:  # only a finding the fix may touch needs the engine's value
                finding.payload = ArgumentToAdd(param.name, engine_value(ctx.api, bc.use.target, sig, param.name, bc.use.node))
            yield finding


# ------------------------------------------------------------------------------------- traceback signatures
FIELD_REQUIRED = r"validation errors? for (\w+)\s*\n(?:.*\n)*?\s*(\w+)\s*\n\s*Field required"
MISSING_ARG = r"([\w.]+?)(?:\.__init__)?\(\) missing \d+ required (?:positional |keyword-only )?arguments?: '(\w+)'"

SIGNATURES = (
    Signature("{0} requires '{1}' in this vLLM (a required field or InitVar the client does not pass).",
              "A vLLM @config class gained a required field or InitVar.",
              message=FIELD_REQUIRED, priority=70,
              confirm=lambda api, _tb, m: confirm_param(api, m.group(1), m.group(2), required=True),
              facts=(Fact("SchedulerConfig.is_encoder_decoder is a required InitVar from vLLM 0.12.",
                          when=r"SchedulerConfig[\s\S]*\bis_encoder_decoder\b"),)),
    Signature("{0}() requires '{1}' in this vLLM (a parameter added without a default).",
              "A vLLM function gained a required parameter.",
              message=MISSING_ARG, priority=50,
              confirm=lambda api, tb, m: confirm_param(api, called_name(tb, m.group(1)), m.group(2), required=True),
              facts=(Fact("Scheduler(block_size=) is required from vLLM 0.11.1.",
                          when=r"Scheduler\b[\s\S]*'block_size'|'block_size'[\s\S]*\bScheduler\("),)),
)
