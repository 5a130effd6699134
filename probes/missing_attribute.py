"""DC006 missing-attribute: the client reads an attribute or calls a method that the target's class lacks.

driftcheck infers the vLLM type of receivers (`self.scheduler = Scheduler(...)`, annotations,
vLLM return annotations) and looks the attribute up through the class's MRO, including attributes
assigned in any method and dataclass fields. A read fails with `AttributeError` when the line runs;
a write to an attribute vLLM no longer has is silently ignored by vLLM (a warning).
"""

from __future__ import annotations

import ast

from driftcheck import bodies
from driftcheck.api_index import InSubclass, Missing, Resolved, Unknown
from driftcheck.context import ScanContext, once_per_client
from driftcheck.findings import Rule

# No codemod: "similar" names are a hint, not a rename the target proves (DC008, which compares with the
# client's own vLLM, is the rule that renames), so a DC006 finding never offers one.
RULE = Rule("DC006", "missing-attribute", "Attribute or method not found on the target's vLLM class", "error", raises=("AttributeError",))


MISMATCH_MIN = 3  # distinct attributes, all absent from the annotated class, before the annotation is doubted


def _annotated_parameter(use) -> tuple[int, str] | None:
    """(function id, parameter) when the receiver is a parameter of the enclosing function with an annotation."""
    if not isinstance(use.node.value, ast.Name):
        return None
    fn = bodies.enclosing_function(use.file.tree, use.node)
    if fn is None:
        return None
    name = use.node.value.id
    for arg in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        if arg.arg == name and arg.annotation is not None:
            return id(fn), name
    return None


def _mismatched_annotations(ctx: ScanContext) -> dict[tuple[int, str], list[str]]:
    """Parameters whose annotated class has none of the (several) attributes the function reads from them:
    `def __init__(self, config: ModelConfig)` handed a Hugging Face config. The annotation, not vLLM, is
    what changed there, so those reads are warnings, not certain failures."""
    reads: dict[tuple[int, str], dict[str, object]] = {}
    for use in ctx.usage.attrs:
        if use.store:
            continue
        key = _annotated_parameter(use)
        if key is not None:
            reads.setdefault(key, {})[use.attr] = use.result
    # the class "fits" only through members it defines (an attribute some other code assigns somewhere is no sign)
    return {k: sorted(a for a, r in v.items() if isinstance(r, Missing)) for k, v in reads.items()
            if len(v) >= MISMATCH_MIN and not any(isinstance(r, Resolved) for r in v.values())
            and any(isinstance(r, Missing) for r in v.values())}


def check(ctx: ScanContext):
    seen_unknown: set[str] = set()
    mismatched = _mismatched_annotations(ctx)
    for use in ctx.usage.attrs:
        symbol = f"{use.owner.qualname}.{use.attr}"
        if isinstance(use.result, Unknown):
            if symbol not in seen_unknown:
                seen_unknown.add(symbol)
                yield once_per_client(ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {use.result.reason}", use.loc, symbol))
            continue
        if isinstance(use.result, InSubclass) and not use.store:
            sub = use.result
            why = (f"only {sub.subclass} defines it, so this line fails with AttributeError when the object is not one of those"
                   if sub.subclass else "it is a Protocol, so the object passed may be any class that has it")
            yield ctx.finding(
                RULE, f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}; {why}.",
                use.loc, ctx.vllm_location(sub.path, sub.line) if sub.path.startswith(ctx.api.package + "/") else None,
                symbol, when="call", severity="warning", fix=False, defined_by=sub.subclass or None,
            )
            continue
        if not isinstance(use.result, Missing):
            continue
        near = use.result.near
        doubted = None if use.store else mismatched.get(_annotated_parameter(use) or (0, ""))
        if doubted:
            yield ctx.finding(
                RULE, f"`{use.owner.cls.name}` has no attribute '{use.attr}' in {ctx.version_label()}, nor any of the "
                f"{len(doubted)} attributes this function reads from `{use.node.value.id}` ({', '.join(doubted[:5])}): "
                "its annotation likely does not describe the value passed; if it does, AttributeError when this line runs.",
                use.loc, ctx.vllm_location(use.owner.path, use.owner.line), symbol, when="call", severity="warning",
                fix=False, annotation_doubted=True,
            )
            continue
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
