"""DC006 missing-attribute: the client reads an attribute or calls a method that the target's class lacks.

driftcheck infers the vLLM type of receivers (`self.scheduler = Scheduler(...)`, annotations,
vLLM return annotations) and looks the attribute up through the class's MRO, including attributes
assigned in any method and dataclass fields. A read fails with `AttributeError` when the line runs;
a write to an attribute vLLM no longer has is silently ignored by vLLM (a warning).
"""

from __future__ import annotations

from driftcheck.api_index import InSubclass, Missing, Unknown
from driftcheck.context import ScanContext
from driftcheck.findings import Rule

# No codemod: "similar" names are a hint, not a rename the target proves (DC008, which compares with the
# client's own vLLM, is the rule that renames), so a DC006 finding never offers one.
RULE = Rule("DC006", "missing-attribute", "Attribute or method not found on the target's vLLM class", "error", raises=("AttributeError",))


def check(ctx: ScanContext):
    seen_unknown: set[str] = set()
    for use in ctx.usage.attrs:
        symbol = f"{use.owner.qualname}.{use.attr}"
        if isinstance(use.result, Unknown):
            if symbol not in seen_unknown:
                seen_unknown.add(symbol)
                yield ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {use.result.reason}", use.loc, symbol)
            continue
        if isinstance(use.result, InSubclass) and not use.store:
            sub = use.result
            yield ctx.finding(
                RULE, f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}; only {sub.subclass} "
                f"defines it, so this line fails with AttributeError when the object is not one of those.",
                use.loc, ctx.vllm_location(sub.path, sub.line) if sub.path.startswith(ctx.api.package + "/") else None,
                symbol, when="call", severity="warning", fix=False, defined_by=sub.subclass,
            )
            continue
        if not isinstance(use.result, Missing):
            continue
        near = use.result.near
        if use.store:
            message = (f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}: this assignment "
                       "creates a new attribute that vLLM never reads.")
            severity = "warning"
        else:
            message = f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}: AttributeError when this line runs."
            severity = None
        if near:
            message += f" Similar: {', '.join(near)}."
        yield ctx.finding(
            RULE, message, use.loc, ctx.vllm_location(use.owner.path, use.owner.line), symbol, when="call",
            severity=severity, fix=False, similar=near or None,
        )
