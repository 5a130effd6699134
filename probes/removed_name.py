"""DC008 removed-name: a name the client uses on an untyped vLLM object is gone from the target.

Some receivers cannot be typed statically: a function bound onto a vLLM model with
`types.MethodType` (speculators' patched `forward`), a function assigned over a method, or a
worker extension mixed into vLLM's worker by name. For those, driftcheck compares with the vLLM
the client was written for (its declared requirement, fetched the same way as a target): it finds
the classes that had every name the function uses on `self` there (duck typing), and reports a
name that those classes no longer define in the target. When the same classes gained one new
name instead, it reports the rename (`get_input_embeddings` -> `embed_input_ids` in 0.11.1).
"""

from __future__ import annotations

from collections import Counter

from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Location, Rule
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.class_skeleton import has_member
from driftcheck.vllm_model.resolved import External, Resolved
from driftcheck.vllm_model.text_index import TextIndex
from driftcheck.rules.tbsigs import Fact, Signature

RULE = Rule("DC008", "removed-name", "Name used on an untyped vLLM object is gone from the target", "error", fix="rename-method", raises=("AttributeError",),
            baseline=True)

GONE_RATIO = 0.8  # a name must be gone from this share of the matching classes to count as removed


def _index(ctx: ScanContext, api) -> TextIndex:
    return text_index_for(api)


def _candidates(base: TextIndex, names: list[str]) -> tuple[list, list[str]]:
    """Classes of the baseline that define all of `names` that the baseline defines anywhere."""
    counts = sorted(((len(base.files_mentioning(n)), n) for n in names))
    defined = []
    classes = None
    for _count, name in counts:
        found = base.classes_defining(name) if classes is None else [c for c in classes if name in c.members]
        if not found:
            if classes is None and not base.classes_defining(name):
                continue  # not a vLLM name at all (set by torch, by the client...)
            continue
        defined.append(name)
        classes = found
    return classes or [], defined


def _representative(index: TextIndex, gone: list) -> tuple:
    """The class the others build on (mentioned by most of the affected files): LlamaModel, not Apertus."""
    files = {now.path for _old, now in gone}

    def mentions(pair) -> tuple:
        name = pair[1].name.encode()
        return (-sum(1 for f in files if name in index.blob(f)), pair[1].path)

    return sorted(gone, key=mentions)[0]


def _still_has(api, index: TextIndex, now, name: str) -> bool:
    """Whether the target's class still has `name` as vLLM's model reads it, through its MRO too: a method moved to a
    mixin, or one the baseline class's text only called (`self.set_active_loras(a, b)` in GPUModelRunner, defined by
    its base LoRAModelRunnerMixin, which the text scanner took for a tuple target). Read from the module's top level
    where that is enough (`class_skeleton`), else from the whole module."""
    module = now.path[:-3].replace("/", ".").removesuffix(".__init__") if now.path.endswith(".py") else None
    if module is None:
        return False
    quick = has_member(api, index.blob(now.path).decode("utf-8", "replace"), now.path, now.name, now.line, name)
    if quick is not None:
        return quick
    cls = api.resolve(f"{module}.{now.name}")
    if not (isinstance(cls, Resolved) and cls.kind == "class" and cls.cls is not None):
        return False
    return isinstance(api.member(cls, name), (Resolved, External))


def _no_baseline_message(b, note: str | None, names: list[str]) -> str:
    """Which names, on what, and why they cannot be checked: the names read on the first parameter, the line that binds
    or stores the function, and the missing baseline (batch 21c: "uses 2 name(s) on an untyped vLLM object" named
    neither the names nor the object)."""
    args = b.node.args.posonlyargs + b.node.args.args
    first = args[0].arg if args else "self"
    names = sorted(names)
    shown = ", ".join(f"`{first}.{n}`" for n in names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    where = f" ({b.site.path}:{b.site.line}: `{b.site.code.strip()[:80]}`)" if b.site is not None else ""
    what = {"method-type": f"the object `types.MethodType` binds it to{where}",
            "forward-assignment": f"its `self` where the object it is stored on{where} is a class (driftcheck cannot "
                                  f"type that object)",
            "worker-extension": "a vLLM worker (it is a method of a worker extension)"}.get(b.how, f"an untyped vLLM object ({b.how})")
    return (f"`{b.name}` reads {shown} on `{first}`, {what}; whether vLLM still has those names is checked against the "
            f"client's own vLLM, and there is none ({note or 'the client declares no vLLM requirement; pass --client-vllm'})")


def check(ctx: ScanContext):
    # a function assigned onto a vLLM class (`ModelInputForGPUBuilder._compute_lens = fn`) has a typed `self`: DC006
    # checks it against that class, and where the class is gone its import fails first (DC001/DC002); the classes that
    # merely share its names say nothing about it
    # a function stored only where it is not bound (a module: `mamba_utils.batch_memcpy = fn`; an instance attribute:
    # `self.native_impl = fn`) has no `self`: its first parameter is an argument like the others (batch 21c's YF)
    # a function stored only on objects of a package vLLM requires (`PreTrainedModel.m = fn`, `torch.Tensor.copy_ = fn`)
    # has that package's object as `self`, never a vLLM one: vLLM's classes that share its names say nothing (TJ1)
    bound = [b for b in ctx.usage.bound if b.self_names and b.onto_class is None and b.stored_unbound is None
             and b.onto_foreign is None]
    if not bound:
        return
    baseline = ctx.baseline()
    if baseline is None:
        for b in bound:
            # only what the check below would ask: a name the client sets itself (`Trainer._old_compute_loss = ...` next
            # to `Trainer.compute_loss = fn`, unsloth @ 015bdef) is no question about vLLM (NA6)
            names = [n for n in b.self_names if n not in ctx.usage.client_set_attrs]
            if names:
                yield ctx.unknown(RULE, _no_baseline_message(b, ctx.baseline_note, names), b.loc, b.name)
        return
    if baseline.version and baseline.version == ctx.api.version:
        return
    base_idx, target_idx = _index(ctx, baseline), _index(ctx, ctx.api)
    for b in bound:
        names = [n for n in b.self_names if n not in ctx.usage.client_set_attrs]
        candidates, defined = _candidates(base_idx, names)
        if not candidates:
            continue
        for name in defined:
            still, gone = [], []
            for c in candidates:
                now = target_idx.class_by_name(c.path, c.name)
                if now is None:
                    continue  # the class itself moved or went: not evidence about this name
                (still if name in now.members or _still_has(ctx.api, target_idx, now, name) else gone).append((c, now))
            if not gone or len(gone) < GONE_RATIO * (len(still) + len(gone)):
                continue
            gained = Counter()
            for old, now in gone:
                gained.update(set(now.members) - set(old.members))
            renamed = None
            if gained:
                top = gained.most_common(2)
                candidate, count = top[0]
                # one new name that most of the classes share and no other ties with: a class that gained several
                # members (every one of them counted once) names no rename (`late_interaction_runner` for
                # GPUModelRunner's `num_draft_tokens`)
                if count >= 0.6 * len(gone) and (len(top) == 1 or top[1][1] < count):
                    renamed = candidate
            old, now = _representative(target_idx, gone)
            loc = b.self_names[name]
            where_now = now.members.get(renamed, now.line) if renamed else now.line
            message = (f"`self.{name}` in `{b.name}` ({b.how.replace('-', ' ')}): {len(gone)} of {len(still) + len(gone)} vLLM "
                       f"classes that match this receiver defined '{name}' in vLLM {baseline.version} and no longer do in "
                       f"{ctx.version_label()}: AttributeError when this line runs.")
            if renamed:
                message += f" They define '{renamed}' instead (renamed)."
            yield ctx.finding(
                RULE, message, loc, ctx.vllm_location(now.path, where_now), f"{now.name}.{name}", when="call",
                fix=bool(renamed), renamed_to=renamed,
                baseline=Location(old.path, old.members[name], baseline.source_line(old.path, old.members[name]),
                                  version=baseline.version).to_json(),
                classes_affected=[f"{n.name}" for _o, n in gone[:12]], classes_total=len(still) + len(gone),
            )


# ------------------------------------------------------------------------------------- traceback signatures
NO_ATTRIBUTE = r"'(\w+)' object has no attribute '(\w+)'"


def _confirm_missing_attr(api, _tb, m):
    import difflib

    cls, attr = m.group(1), m.group(2)
    index = text_index_for(api)
    classes = [c for rel in index.files_mentioning(f"class {cls}") for c in index.classes_in(rel) if c.name == cls]
    if not classes:
        return False, f"no class {cls} in this vLLM"
    has = [c for c in classes if attr in c.members]
    if has:
        return False, f"{cls} defines '{attr}' at {has[0].path}:{has[0].members[attr]}"
    near = difflib.get_close_matches(attr, list(classes[0].members), n=2, cutoff=0.4)
    return True, f"{cls} ({classes[0].path}:{classes[0].line}) has no '{attr}'" + (f"; it has {', '.join(near)}" if near else "")


SIGNATURES = (
    Signature("{0} has no attribute '{1}' in this vLLM: renamed or removed.",
              "A vLLM class lost an attribute or method (renamed or removed).",
              message=NO_ATTRIBUTE, exc_types=("AttributeError",), wrapped=True, confirm=_confirm_missing_attr, priority=30,
              facts=(Fact("get_input_embeddings became embed_input_ids in vLLM 0.11.1.",
                          when=r"has no attribute 'get_input_embeddings'"),)),
)
