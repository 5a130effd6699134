"""DC117 orphaned-override: the client overrides a vLLM method that the target no longer has nor calls.

A plugin customises vLLM by overriding a method of a vLLM class: a MoE layer's `select_experts`, a runner's
`_prepare_inputs`, a model's `get_input_embeddings`. When a release drops that method from the base class and routes
the work elsewhere (a router object, a renamed hook), nothing fails: the override simply stops running, and what it
customised silently goes back to vLLM's behaviour. No import breaks and no signature check sees it, because the
client's method is still a valid method of its own class.

How driftcheck decides (client_model/orphaned_overrides.py): the client's own vLLM (its declared requirement, the
baseline) finds the method on one of the class's vLLM bases, as vLLM's own; the target finds it on none of them, nor
on an external base whose members driftcheck knows; no other line of the client reads it as an attribute or holds it
as a string; and every mention of the name in the target's sources is vLLM's own `def` or a call on an object typed
as a class outside the client class's MRO. A `getattr` string, an untyped receiver or a Protocol anywhere in vLLM
means it may still be called: no finding. The same fact makes the override's body code that never runs, so the drift
inside it (a member the new base lacks) is a warning, not an error.

No fix: where the customisation should go now is a design decision. The message names a call vLLM still makes of
the name, when there is one, and the methods the base class gained since the client's vLLM, when they are few (up to
4): one of them may be the hook's new home (llm-d's `get_handlers` and 0.34.0's `OffloadingSpec.get_worker`), or none. Without a baseline (the client declares no vLLM, or `--client-vllm` is not given)
nothing is reported.
"""

from __future__ import annotations

from driftcheck.client_model.orphaned_overrides import orphaned_overrides
from driftcheck.client_model.uses import Loc
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule

RULE = Rule("DC117", "orphaned-override", "Client overrides a vLLM method the target no longer has nor calls",
            "warning", kind="behaviour", whole_client=True, baseline=True)


def check(ctx: ScanContext):
    baseline = ctx.baseline()
    for o in orphaned_overrides(ctx.client.files, ctx.api, baseline, ctx.usage, ctx.client):
        if not o.overrode:
            continue  # no evidence it was one of vLLM's hooks: its body's drift is a warning, but nothing to report
        short = o.base.rsplit(".", 1)[-1]
        now = (f" {ctx.version_label()} calls `{o.method}` only on `{o.called_on[0].rsplit('.', 1)[-1]}` objects now "
               f"({o.called_on[1]}:{o.called_on[2]}).") if o.called_on else ""
        gained = (f" Methods `{short}` has now and vLLM {o.baseline_version}'s had not: "
                  f"{', '.join(f'`{m}`' for m in o.gained)}.") if o.gained else ""
        message = (f"`{o.cls}.{o.method}` overrides `{short}.{o.method}`, a method of vLLM {o.baseline_version} "
                   f"({o.base_path}:{o.base_line}) that {ctx.version_label()} no longer has on `{short}` nor calls on "
                   f"the client's objects, and no client code calls it: the override never runs, so what it "
                   f"customises silently stops.{now}{gained}")
        file = ctx.client.file_at(o.rel)
        yield ctx.finding(RULE, message, Loc(o.rel, o.line, o.col, file.code(o.line) if file else ""), ctx.vllm_location(o.base_path, o.base_line, baseline),
                          f"{short}.{o.method}", when="silent", fix=False)
