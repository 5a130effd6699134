"""DC107 default-flipped: a config flag the client leaves at its default changed default.

For the config classes the client builds by hand (`SchedulerConfig(...)`, `CacheConfig(...)`...),
every field the client does not pass takes the target's default. When that default differs from
the one in the vLLM the client was written for (its declared requirement), the client's behaviour
changes without a line of its code changing: `SchedulerConfig.async_scheduling` False until 0.13,
None (auto, on where supported) from 0.14; `CacheConfig.enable_prefix_caching` None until 0.11,
True from 0.12. Reported as a warning when the flag flips between off/on/auto, else as info.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name
from driftcheck.vllm_model import bodies
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Location, Rule
from driftcheck.sources.sources import module_name_for

RULE = Rule("DC107", "default-flipped", "Default of a config field the client relies on changed", "info", kind="behaviour", baseline=True)

SWITCH_VALUES = (True, False, None)


def _shown(default: str | None, value=bodies.NOT_LITERAL) -> str:
    """`lambda: X()` default factories read as their value; a default spelled as another class's field with the value
    it has (`0 (ModelConfig.seed)`)."""
    if default and default.startswith("lambda:") and default.endswith("()"):
        return default[len("lambda:"):-2].strip()
    if value is not bodies.NOT_LITERAL and default and bodies.literal_src(default) is bodies.NOT_LITERAL:
        return f"{value!r} ({default})"
    return default or "None"


def _value(api, path: str, text: str | None, depth: int = 0):
    """What a default evaluates to, where driftcheck can tell (else `bodies.NOT_LITERAL`): a literal; `Field(default=X)`
    / `field(default=X)`; a class attribute another config class defines (`revision: str | None =
    ModelConfig.revision`, vLLM's `EngineArgs`), read as that class's own field default. Batch 20d's R2: 157 infos
    "changed from None to ModelConfig.revision" at 0.33.0 against 0.8.5 compared spellings, not values."""
    value = bodies.literal_src(text)
    if value is not bodies.NOT_LITERAL or text is None or depth > 3:
        return value
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):
        return bodies.NOT_LITERAL
    if isinstance(node, ast.Call) and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in ("Field", "field"):
        given = next((k.value for k in node.keywords if k.arg == "default"), None)
        if given is None and node.args and not isinstance(node.args[0], ast.Starred):
            given = node.args[0]  # pydantic's `Field(20)`
        return _value(api, path, ast.unparse(given), depth + 1) if given is not None else bodies.NOT_LITERAL
    if isinstance(node, ast.Attribute) and node.attr == "value" and isinstance(node.value, ast.Attribute):
        return _enum_value(api, path, node.value)  # `LoadFormat.AUTO.value` (30d: 0.10.0's `LoadConfig.load_format`)
    owner_name = dotted_name(node.value) if isinstance(node, ast.Attribute) else None
    module = api.module(module_name_for(path)) if owner_name else None
    owner = api.resolve_in_scope(module, owner_name) if module is not None else None
    if not isinstance(owner, Resolved) or owner.kind != "class":
        return bodies.NOT_LITERAL
    if _str_enum(owner):
        return _member_string(api, owner, node.attr)
    sig = api.constructor(owner)
    field = sig.get(node.attr) if sig is not None else None
    if field is None or not field.has_default:
        return bodies.NOT_LITERAL
    return _value(api, sig.path, field.default, depth + 1)


def _enum_value(api, path: str, member: ast.Attribute):
    """The literal an Enum class of the file's scope assigns to `member` (`LoadFormat.AUTO`), what its `.value` is."""
    enum_name = dotted_name(member.value)
    module = api.module(module_name_for(path)) if enum_name else None
    owner = api.resolve_in_scope(module, enum_name) if module is not None else None
    if not isinstance(owner, Resolved) or owner.kind != "class" or owner.cls is None or \
            not {b.rsplit(".", 1)[-1] for b in owner.cls.bases} & {"Enum", "StrEnum", "IntEnum"}:
        return bodies.NOT_LITERAL
    return _member_string(api, owner, member.attr)


def _str_enum(cls: Resolved) -> bool:
    """`class ConfigFormat(str, enum.Enum)` / `StrEnum`: a member is equal to its string value, so a default spelled
    `ConfigFormat.AUTO` is the `'auto'` an older release wrote (batch 20g's DF1 left these as infos "changed")."""
    bases = {b.rsplit(".", 1)[-1] for b in (cls.cls.bases if cls.cls is not None else [])}
    return "StrEnum" in bases or ("str" in bases and bool(bases & {"Enum", "StrEnum"}))


def _member_string(api, cls: Resolved, member: str):
    """The string literal a str-enum class body assigns to `member` (else `bodies.NOT_LITERAL`)."""
    node = api.class_node(cls)
    for stmt in node.body if node is not None else []:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == member for t in stmt.targets) \
                and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return stmt.value.value
    return bodies.NOT_LITERAL


def _leaves_a_default(ctx: ScanContext, call) -> bool:
    """Whether the construction may leave a parameter with a default unbound at the target (so, with no baseline,
    one that may have changed): batch 20b's U1, tecovllm-modelzoo's `MultipleOf(16)` of a one-field dataclass whose
    field has no default, was an open question that the target alone answers."""
    sig = ctx.api.constructor(call.target)
    if sig is None or call.shape.star_kwargs or call.shape.star_args:
        return True  # cannot tell what it binds
    bound = set(call.shape.keywords) | {p.name for p in sig.params[: call.shape.n_positional]}
    return any(p.has_default and p.name not in bound for p in sig.params)


def check(ctx: ScanContext):
    configs = [c for c in ctx.usage.calls if c.kind == "construct" and ctx.api.is_dataclass_like(c.target)]
    if not configs:
        return
    baseline = ctx.baseline()
    if baseline is None:
        configs = [c for c in configs if _leaves_a_default(ctx, c)]
        if not configs:
            return  # every construction binds every field that has a default: none can take a changed one
        classes = sorted({c.target.qualname.rsplit(".", 1)[-1] for c in configs})
        shown = ", ".join(f"`{n}`" for n in classes[:5]) + (f" and {len(classes) - 5} more" if len(classes) > 5 else "")
        # the reason names what was not compared (batch 21c: it named only the first construction's line)
        yield ctx.unknown(RULE, f"{len(configs)} construction(s) of vLLM dataclass-like classes ({shown}; the first here) may "
                          f"leave parameters at defaults that changed since the client's vLLM; no baseline vLLM to "
                          f"compare config defaults with ({ctx.baseline_note or 'unavailable'})", configs[0].loc)
        return
    if baseline.version and baseline.version == ctx.api.version:
        return
    for call in configs:
        if call.shape.star_kwargs:
            continue
        old_cls = baseline.resolve(call.target.qualname)
        if not isinstance(old_cls, Resolved) or old_cls.kind != "class":
            continue
        new_sig, old_sig = ctx.api.constructor(call.target), baseline.constructor(old_cls)
        if new_sig is None or old_sig is None:
            continue
        passed = set(call.shape.keywords)
        positional = [p.name for p in new_sig.params[: call.shape.n_positional]]
        for new in new_sig.params:
            old = old_sig.get(new.name)
            if new.name in passed or new.name in positional or old is None or not (old.has_default and new.has_default):
                continue
            if old.default == new.default:
                continue
            old_v, new_v = _value(baseline, old_sig.path, old.default), _value(ctx.api, new_sig.path, new.default)
            if old_v == new_v and old_v is not bodies.NOT_LITERAL and type(old_v) is type(new_v):
                continue
            # off/on/auto only as written: a value handed on to another config class may be normalised there
            # (0.8.5's `enforce_eager=None` became False in `ModelConfig`; batch 20g's DF1)
            written = bodies.literal_src(old.default), bodies.literal_src(new.default)
            switch = any(written[0] is v for v in SWITCH_VALUES) and any(written[1] is v for v in SWITCH_VALUES)
            cls_name = call.target.qualname.rsplit(".", 1)[-1]
            old_text, new_text = _shown(old.default, old_v), _shown(new.default, new_v)
            yield ctx.finding(
                RULE,
                f"{cls_name}.{new.name} is left at its default, which changed from {old_text} in vLLM {baseline.version} "
                f"to {new_text} in {ctx.version_label()}"
                + (" (None: vLLM decides at run time, often on where supported)." if new_v is None and switch else "."),
                call.loc, ctx.vllm_location(new_sig.path, new.line),
                f"{call.target.qualname}.{new.name}", when="silent", severity="warning" if switch else "info",
                old_default=old.default, new_default=new.default,
                baseline=Location(old_sig.path, old.line, baseline.source_line(old_sig.path, old.line), version=baseline.version).to_json(),
            )
