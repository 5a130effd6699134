"""DC125 fallback-taken: the client probes for a vLLM name its own vLLM had and the target lacks, so its fallback runs.

Plugins reach vLLM names defensively: `fn = getattr(numa_utils, "_can_set_mempolicy", None)` and a branch that uses it
when it is there, `if hasattr(Scheduler, "_update_after_schedule"): Scheduler._update_after_schedule = patched`. When a
release drops the name, nothing fails: the getattr returns its default, the hasattr is False, and what the client did
with the name (a NUMA policy, a patch) silently stops happening. No import breaks and no attribute read fails, so no
other rule sees it (29a's kunpeng-affinity-plugin on 0.34.0).

How driftcheck decides: the builtin `getattr(x, "name", default)` (three arguments) or `hasattr(x, "name")`, with a
literal name, on a vLLM module, class or object the client's code types (`client_model/visitor.py`
`_record_name_probe`); the target lacks the name (certainly: no `__getattr__`, no unread base), and the client's own
vLLM (its declared requirement, or `--client-vllm`) has it. A probe for a name newer than the client's vLLM is the
client preparing for a release, and is no finding; without a baseline nothing is reported. The finding points at the
probe and names where the client's vLLM defined the name. No fix: what should replace the name is a design decision.
"""

from __future__ import annotations

from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.vllm_model.resolved import External, Missing, Resolved

# guardable=False: the finding is about the probe itself, the guard of everything after it
RULE = Rule("DC125", "fallback-taken", "Client probes for a vLLM name its own vLLM had and the target lacks", "warning",
            kind="behaviour", baseline=True, guardable=False)


def check(ctx: ScanContext):
    found = [p for p in ctx.usage.name_probes if isinstance(p.result, Missing)]
    if not found:
        return
    baseline = ctx.baseline()
    if baseline is None:
        return
    for probe in found:
        before = _in_baseline(baseline, probe)
        if before is None:
            continue
        short = f"{probe.owner.rsplit('.', 1)[-1]}.{probe.name}"
        now = ("returns its default every time, so what the client does with it" if probe.how == "getattr" else
               "is False every time, so the branch that uses it")
        where = f" ({before.path}:{before.line})" if isinstance(before, Resolved) and before.path else ""
        yield ctx.finding(
            RULE, f"`{short}` is in vLLM {baseline.version}, the client's vLLM{where}, and gone in {ctx.version_label()}: "
            f"this `{probe.how}` {now} silently stops running.", probe.loc,
            ctx.location_of(before, baseline) if isinstance(before, Resolved) and before.path else None,
            f"{probe.owner}.{probe.name}", when="silent", fix=False)


def _in_baseline(baseline, probe) -> Resolved | External | None:
    """What the client's own vLLM has under the probed name, None where it has nothing either."""
    if probe.on_module:
        found = baseline.resolve(f"{probe.owner}.{probe.name}")
    else:
        cls = baseline.resolve(probe.owner)
        found = baseline.class_member(cls, probe.name) if isinstance(cls, Resolved) and cls.kind == "class" else None
    return found if isinstance(found, (Resolved, External)) else None
