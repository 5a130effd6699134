"""Whether a same-named object in the target is another thing than the one the client's own vLLM had: what keeps
DC001's and DC002's new homes (and the move-import fix) off an unrelated object that only shares a name (batch 21a's
annotations sent to an unrelated class; 30d MSG-2: V0's `SamplingMetadata` sent to V1's, which shares no member)."""

from __future__ import annotations

from driftcheck.vllm_model.resolved import Resolved


def unlike(old: Resolved, new: Resolved, version: str) -> str | None:
    """How `new` is another thing than `old` (a different kind, or a class sharing none of the old class's own
    members), or None where it may be the same. `version`: the release `old` is from, for the message."""
    if old.kind != new.kind:
        return f"a {new.kind} there, a {old.kind} in vLLM {version}"
    if old.kind == "class" and old.cls is not None and new.cls is not None:
        before, now = _own_members(old.cls), _own_members(new.cls)
        if before and not before & now:
            return f"a class with none of the members vLLM {version}'s had"
    return None


def _own_members(ci) -> set[str]:
    return {m for m in ci.methods if not m.startswith("__")} | set(ci.class_attrs) | {f.name for f in ci.fields} \
        | set(ci.instance_attrs)
