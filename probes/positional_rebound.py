"""DC121 positional-rebound: a positional argument of a vLLM call now binds a parameter that had another place.

When vLLM removes a parameter from the middle of a signature and adds one at the end, a call that passes its arguments
by position still passes the right number of them, so nothing counts it wrong (DC003-DC005 are silent), but from the
removed one on every argument lands in its neighbour's parameter. lmcache 0.3.9's
`get_rope(head_size, rotary_dim, max_position, base, is_neox_style, rope_scaling, dtype, partial_rotary_factor)` on
vLLM 0.12.0, which dropped `base` and appended `dual_chunk_attention_config`: `is_neox_style` gets the base,
`rope_parameters` the bool (and `rope_parameters.items()` raises AttributeError), one release before the call has too
many arguments (batch 20e's W1).

How driftcheck decides: with the client's own vLLM (`--client-vllm`, or its declared requirement) and the target, for
each call that passes arguments by position (no `*args`) to a function, method or class both releases define, the
parameter each positional argument binds in each release. A finding where some argument now binds a parameter that the
client's vLLM also has, at another position: the value meant for one parameter goes to another that exists for
another purpose. A parameter renamed in place (the new name unknown to the client's vLLM) is no finding, unless its
annotation now names another vLLM class, neither deriving from the other (0.8.5's `init_app_state(engine_client,
vllm_config: VllmConfig, ...)`, which 0.8.4 declared `model_config: ModelConfig`: 30a R2). Without the
client's own vLLM nothing is compared (DC107's question says a baseline is missing).

A warning: the call may still run (a value of a type both parameters take), it does something else. No fix: which
keyword each value was meant for is the client's to say (`get_rope(..., is_neox_style=...)`).
"""

from __future__ import annotations

from driftcheck.rules.callcheck import baseline_signature, bound_calls, when_of
from driftcheck.sources.sources import module_name_for
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.vllm_model.signatures import POS, POSONLY, Signature, check_call

RULE = Rule("DC121", "positional-rebound", "A positional argument of a vLLM call now binds another parameter",
            "warning", kind="behaviour", baseline=True, raises=("TypeError", "AttributeError"))


def check(ctx: ScanContext):
    calls = [bc for bc in bound_calls(ctx) if bc.signature is not None and not bc.problems
             and bc.use.shape.n_positional and not bc.use.shape.star_args and not bc.use.via_super]
    if not calls:
        return
    baseline = ctx.baseline()
    if baseline is None or (baseline.version and baseline.version == ctx.api.version):
        return
    for bc in calls:
        old = baseline_signature(baseline, bc.use)
        if old is None:
            continue
        if check_call(old, bc.use.shape):
            continue  # the call did not fit the client's own vLLM either: that release is not what it was written for
        n = bc.use.shape.n_positional
        before, now = _positional(old), _positional(bc.signature)
        if len(before) < n or len(now) < n:
            continue  # the client's vLLM rejected it already, or the target does (DC004)
        moved = [(i, before[i], now[i]) for i in range(n) if now[i] != before[i] and now[i] in before]
        if not moved:
            retyped = _renamed_and_retyped(ctx, baseline, old, bc.signature, n)
            if retyped is not None:
                yield bc.qualify(_retyped_finding(ctx, baseline, bc, *retyped))
            continue
        i = next(k for k in range(n) if now[k] != before[k])  # where the shift starts (a new parameter may take it)
        meant, lands = before[i], now[i]
        ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(i + 1, f"{i + 1}th")
        shifted = n - i - 1
        others = f" (and the {shifted} after it, each into another's place)" if shifted else ""
        then = f"vLLM {baseline.version}" if baseline.version else "the client's own vLLM"
        yield bc.qualify(ctx.finding(
            RULE, f"{bc.callee}'s {ordinal} positional argument bound `{meant}` in {then} and binds "
                  f"`{lands}` in {ctx.version_label()}{others}: vLLM inserted, removed or moved a parameter at or before it, so the "
                  f"values land in other parameters. The signature is now {bc.signature.render()}; pass them by keyword.",
            bc.use.loc, ctx.vllm_location(bc.signature.path, bc.signature.line), bc.use.target.qualname,
            when=when_of(bc.use), fix=False, meant=meant, binds=lands, position=i + 1,
        ))


def _renamed_and_retyped(ctx: ScanContext, baseline, old: Signature, new: Signature, n: int):
    """(position, old parameter, new parameter, old class, new class) of the first positional parameter the call binds
    that was renamed in place and now names another vLLM class (30a R2: 0.8.5's `init_app_state(engine_client,
    vllm_config: VllmConfig, state, args)`, where 0.8.4 took `model_config: ModelConfig`): the client's object is handed
    to code that reads the other class's members. None where neither class is known or one derives from the other."""
    olds, news = _positional_params(old), _positional_params(new)
    names = {p.name for p in old.params}
    for i in range(n):
        was, now = olds[i], news[i]
        if now.name == was.name or now.name in names or not (was.annotation and now.annotation):
            continue
        before = _annotated_class(baseline, old.path, was.annotation)
        after = _annotated_class(ctx.api, new.path, now.annotation)
        if before is None or after is None:
            continue
        short = lambda api, c: {m.qualname.rsplit(".", 1)[-1] for m in api.mro(c)[0]}  # noqa: E731
        if before.qualname.rsplit(".", 1)[-1] in short(ctx.api, after) or \
                after.qualname.rsplit(".", 1)[-1] in short(baseline, before):
            continue
        return i, was, now, before, after
    return None


def _annotated_class(api, path: str, annotation: str):
    mod = api.module(module_name_for(path)) if path else None
    found = api.class_from_annotation(mod, annotation) if mod is not None else None
    return found if found is not None and found.kind == "class" else None


def _retyped_finding(ctx: ScanContext, baseline, bc, i: int, was, now, before, after):
    ordinal = {1: "1st", 2: "2nd", 3: "3rd"}.get(i + 1, f"{i + 1}th")
    then = f"vLLM {baseline.version}" if baseline.version else "the client's own vLLM"
    return ctx.finding(
        RULE, f"{bc.callee}'s {ordinal} positional argument bound `{was.name}: {was.annotation}` in {then} and binds "
              f"`{now.name}: {now.annotation}` in {ctx.version_label()}: vLLM renamed the parameter and made it take a "
              f"`{after.qualname.rsplit('.', 1)[-1]}`, not a `{before.qualname.rsplit('.', 1)[-1]}`, so the object the "
              f"client passes is read as the other class. The signature is now {bc.signature.render()}.",
        bc.use.loc, ctx.vllm_location(bc.signature.path, bc.signature.line), bc.use.target.qualname,
        when=when_of(bc.use), fix=False, meant=was.name, binds=now.name, position=i + 1)


def _positional_params(sig: Signature) -> list:
    return [p for p in sig.params if p.kind in (POSONLY, POS)]


def _positional(sig: Signature) -> list[str]:
    return [p.name for p in sig.params if p.kind in (POSONLY, POS)]
