"""DC108 engine-setup-precondition: a vLLM call needs state that only vLLM's engine core sets up.

Clients that build vLLM's engine by hand (a Scheduler, an executor, KV-cache configs) skip what
`EngineCore` does between those steps. When a release adds such a step, the call that depends on
it raises at run time, after the model has loaded. From vLLM 0.29,
`get_kv_cache_config_from_groups` reads `cache_config.get_resolved_kv_cache_layout()`, which raises
`ValueError: KV cache layout has not been resolved yet; it is resolved once by the engine core
(resolve_kv_cache_layout)` unless `resolve_kv_cache_layout(...)` ran first.

The probe reads the bodies of the vLLM functions the client calls and of the functions they call
(two levels), finds `raise` statements whose message says some state is "not ... yet" and names
the function that sets it up, and reports the client call when the client never calls that
function. The finding points at the raise and at the engine core's own call of the setup function,
which is the recipe to copy.
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass

from driftcheck.vllm_model import bodies
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.astnodes import attribute_stores, nodes_of
from driftcheck.rules.context import ScanContext
from driftcheck.errors import SourceError
from driftcheck.vllm_model.facts import engine_call_site, precondition_index, setup_assigns
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Fact, Signature


@dataclass
class EngineSetup:
    """What `replay-engine-setup` copies: the setup function, and where vLLM's engine core calls it."""

    setup: str
    engine_path: str
    engine_line: int


RULE = Rule("DC108", "engine-setup-precondition", "vLLM call needs engine-core setup the client never does", "error",
            fix="replay-engine-setup", kind="behaviour", raises=("ValueError", "RuntimeError", "AssertionError"),
            payload=EngineSetup, reads_release=True)

_CALLED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # api -> (path, first, last line) -> names
_LINES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # api -> path -> its lines
_DEFS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # api -> function name -> how many `def`s the tree has


def _called_names_in_source(api, target, preconditions: dict) -> list[str]:
    """Which precondition-guarded functions the target's body calls, read from its source lines (no parse:
    a whole-platform client calls a thousand vLLM functions). Asked once per function: a client calls the same
    ones from many lines, and each answer read and split the whole file again."""
    func = target.func
    answers = _CALLED.setdefault(api, {})
    key = (target.path, func.line, func.end_line)
    if key not in answers:
        try:
            lines = _lines(api, target.path)[func.line - 1:func.end_line]
        except SourceError:
            lines = None
        body = "\n".join(lines) if lines is not None else ""
        answers[key] = [name for name in preconditions if f"{name}(" in body and re.search(rf"\b{re.escape(name)}\(", body)]
    return answers[key]


def _defined_once(api, name: str) -> bool:
    """The tree defines one function of this name: a call found by name in a body's text is that function. vLLM 0.34.0
    has 70 `def add_request(`; one (a logits guard's) raises unless `eos_token_id` is resolved, and every other
    class's `add_request` was reported as needing it (QE1)."""
    counts = _DEFS.setdefault(api, {})
    if name not in counts:
        index = bodies.text_index_for(api)
        needle = re.compile(rb"\bdef\s+" + re.escape(name.encode()) + rb"\s*\(")
        counts[name] = sum(len(needle.findall(index.blob(rel))) for rel in index.files_mentioning(name))
    return counts[name] == 1


def _raised_in(target, entries: list) -> list:
    """The precondition raises that lie inside the target function itself (the index is keyed by bare name: other
    classes' methods of that name are other functions)."""
    func = target.func
    return [e for e in entries if e[0] == target.path and func.line <= e[1] <= (func.end_line or func.line)]


def _lines(api, path: str) -> list[str]:
    files = _LINES.setdefault(api, {})
    if path not in files:
        files[path] = api.tree.read_text(path).splitlines()
    return files[path]


def _client_assigns(ctx: ScanContext) -> dict[str, tuple[str, int]]:
    """Attribute name -> where the client assigns it on some object (`cache_config.kv_cache_layout = ...`)."""
    out: dict[str, tuple[str, int]] = {}
    for file in ctx.usage.files:
        for t, line in attribute_stores(file.tree):
            out.setdefault(t.attr, (file.rel, line))
    return out


def _client_calls(ctx: ScanContext) -> set[str]:
    names = set()
    for file in ctx.usage.files:
        for node in nodes_of(file.tree, ast.Call):
            f = node.func
            names.add(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "")
    return names


def check(ctx: ScanContext):
    if not ctx.usage.calls:
        return
    preconditions = precondition_index(ctx.api)
    if not preconditions:
        return
    client_calls = _client_calls(ctx)
    client_assigns: dict[str, tuple[str, int]] | None = None
    done: set[tuple[str, int]] = set()
    for use in ctx.usage.calls:
        if use.driven_by_vllm:
            continue  # a connector's or worker's method: vLLM's engine ran its own setup before calling it
        target = use.target
        if use.kind == "construct":
            init = ctx.api.class_member(target, "__init__")
            target = init if isinstance(init, Resolved) else None
        if target is None or target.func is None:
            continue
        own = target.qualname.rsplit(".", 1)[-1]
        candidates = _raised_in(target, preconditions.get(own, []))
        if not candidates:
            for name in _called_names_in_source(ctx.api, target, preconditions):
                if _defined_once(ctx.api, name):  # a name many classes define: which one the body calls is not known
                    candidates += preconditions.get(name, [])
        for rel, raise_line, text, setup in candidates:
            if setup in client_calls or (use.loc.path, use.loc.line) in done:
                continue
            where = engine_call_site(ctx.api, setup)
            if where is None:
                continue  # the named setup is not called anywhere in the target: not a recipe
            done.add((use.loc.path, use.loc.line))
            error = (re.search(r"raise\s+([\w.]+)", ctx.api.source_line(rel, raise_line)) or [None, "an exception"])[1]
            message = (f"{own}() in {ctx.version_label()} raises unless `{setup}(...)` ran first: \"{text.strip()[:150]}\". "
                       f"vLLM's own engine calls it at {where[0]}:{where[1]}; this client never does: {error} when this "
                       "line runs.")
            if client_assigns is None:
                client_assigns = _client_assigns(ctx)
            done_by_client = next((a for a in sorted(setup_assigns(ctx.api, setup)) if a in client_assigns), None)
            severity = None
            if done_by_client:  # the client sets what the setup sets (`cache_config.kv_cache_layout = ...`)
                path, line = client_assigns[done_by_client]
                message += (f" The client assigns `{done_by_client}` itself ({path}:{line}), which is what `{setup}` "
                            "sets, so it may meet the precondition.")
                severity = "warning"
            finding = ctx.finding(RULE, message, use.loc, ctx.vllm_location(rel, raise_line), f"{target.qualname} needs {setup}",
                                  when="call", setup=setup, engine_call=f"{where[0]}:{where[1]}", severity=severity,
                                  fix=None if done_by_client else True)
            finding.payload = EngineSetup(setup, where[0], where[1])
            yield finding


# ------------------------------------------------------------------------------------- traceback signatures
NOT_YET_SETUP = r"(?:not|never)\b[^.\n]{0,60}?\b(?:yet|initiali[sz]ed|resolved|set up|been called)\b[^\n]*?[(`']([a-z_][a-z0-9_]{3,})(?:\(\))?[)`']"


def _confirm_engine_setup(api, _tb, m):
    setup = m.group(1)
    raises = [(rel, line) for entries in precondition_index(api).values() for rel, line, _m, s in entries if s == setup]
    where = engine_call_site(api, setup)
    if not raises:
        return False, f"no raise naming {setup} in this vLLM"
    return True, f"{raises[0][0]}:{raises[0][1]} raises; the engine calls {setup} at " + (f"{where[0]}:{where[1]}" if where else "?")


SIGNATURES = (
    Signature("a vLLM function needs state that vLLM's engine core sets up with {0}(...), which this client "
              "(building the engine by hand) never calls.",
              "vLLM added a step that its engine core performs before this call.",
              message=NOT_YET_SETUP, confirm=_confirm_engine_setup, priority=100,
              facts=(Fact("From 0.29 EngineCore calls resolve_kv_cache_layout before get_kv_cache_config_from_groups "
                          "reads the layout.", when=r"\bresolve_kv_cache_layout\b"),)),
)
