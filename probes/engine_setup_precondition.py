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

from driftcheck.api_index import Resolved
from driftcheck.astnodes import nodes_of
from driftcheck.bodies import text_index_for
from driftcheck.context import ScanContext
from driftcheck.errors import SourceError
from driftcheck.findings import Rule

RULE = Rule("DC108", "engine-setup-precondition", "vLLM call needs engine-core setup the client never does", "error",
            fix="replay-engine-setup", kind="behaviour", raises=("ValueError", "RuntimeError", "AssertionError"))

NOT_YET = re.compile(r"\b(?:not|never)\b[^.]{0,60}?\b(?:yet|initiali[sz]ed|resolved|set up|been called)\b", re.I)
NAMED = re.compile(r"[(`']([a-z_][a-z0-9_]{3,})(?:\(\))?[)`']")


NOT_YET_BYTES = re.compile(rb"\b(?:not|never)\b[^\n]{0,60}?\b(?:yet|initiali[sz]ed|resolved|set up|been called)\b", re.I)


def precondition_index(api) -> dict[str, list[tuple[str, int, str, str]]]:
    """function name -> [(path, raise line, message, setup name)] for every "not ... yet" raise in the target.

    Text only (one byte-regex pass over the tree, no parsing), computed once per tree and kept with its text index."""
    index = text_index_for(api)
    return index.remember("engine_setup_precondition:v2", lambda: _scan_preconditions(index))


def _scan_preconditions(index) -> dict[str, list[tuple[str, int, str, str]]]:
    out: dict[str, list] = {}
    for rel, data in index.blobs().items():
        if b"raise" not in data or not NOT_YET_BYTES.search(data):
            continue
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines()
        for m in NOT_YET.finditer(text):
            hit = _raise_around(lines, text.count("\n", 0, m.start()))
            if hit is None:
                continue
            raise_line, message = hit
            function = _enclosing_def(lines, raise_line)
            if function is None:
                continue
            # names in the message's own words, not inside an f-string's `{...}` (`{', '.join(unsupported)}`)
            for setup in NAMED.findall(re.sub(r"\{[^{}]*\}", "", message)):
                entry = (rel, raise_line + 1, message, setup)
                if entry not in out.setdefault(function, []):
                    out[function].append(entry)
    return out


_STRING = re.compile(r"""[rbuf]*(["'])(.*?)(?<!\\)\1""")


def _raise_around(lines: list[str], index: int) -> tuple[int, str] | None:
    """(0-based line of the `raise`, its message's string pieces) when line `index` is inside a raise's message."""
    for back in range(index, max(index - 8, -1), -1):
        stripped = lines[back].lstrip()
        if stripped.startswith("raise "):
            indent = len(lines[back]) - len(stripped)
            pieces = []
            for i in range(back, min(back + 12, len(lines))):
                line = lines[i]
                if i > back and (not line.strip() or len(line) - len(line.lstrip()) <= indent):
                    break
                pieces += [m.group(2) for m in _STRING.finditer(line)]
            message = "".join(pieces)
            return (back, message) if NOT_YET.search(message) else None
        if back < index and (not stripped or stripped.startswith(("def ", "class ", "if ", "return "))):
            return None
    return None


def _enclosing_def(lines: list[str], index: int) -> str | None:
    indent = len(lines[index]) - len(lines[index].lstrip())
    for back in range(index - 1, -1, -1):
        line = lines[back]
        m = re.match(r"(\s*)(?:async\s+)?def\s+(\w+)", line)
        if m and len(m.group(1)) < indent:
            return m.group(2)
    return None


def _called_names_in_source(api, target, preconditions: dict) -> list[str]:
    """Which precondition-guarded functions the target's body calls, read from its source lines (no parse:
    a whole-platform client calls a thousand vLLM functions)."""
    func = target.func
    try:
        lines = api.tree.read_text(target.path).splitlines()[func.line - 1:func.end_line]
    except SourceError:
        return []
    body = "\n".join(lines)
    return [name for name in preconditions if f"{name}(" in body and re.search(rf"\b{re.escape(name)}\(", body)]


def _client_calls(ctx: ScanContext) -> set[str]:
    names = set()
    for file in ctx.usage.files:
        for node in nodes_of(file.tree, ast.Call):
            f = node.func
            names.add(f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "")
    return names


def _engine_call_site(api, name: str) -> tuple[str, int] | None:
    index = text_index_for(api)
    needle = f"{name}(".encode()
    for rel in sorted(index.files_mentioning(name), key=lambda r: ("/engine/" not in r, r)):
        data = index.blob(rel)
        for m in re.finditer(re.escape(needle), data):
            line_start = data.rfind(b"\n", 0, m.start()) + 1
            if data[line_start:m.start()].strip().startswith((b"def ", b"async def ")):
                continue
            return rel, data.count(b"\n", 0, m.start()) + 1
    return None


def check(ctx: ScanContext):
    if not ctx.usage.calls:
        return
    preconditions = precondition_index(ctx.api)
    if not preconditions:
        return
    client_calls = _client_calls(ctx)
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
        candidates = list(preconditions.get(own, []))
        if not candidates:
            for name in _called_names_in_source(ctx.api, target, preconditions):
                candidates += preconditions.get(name, [])
        for rel, raise_line, text, setup in candidates:
            if setup in client_calls or (use.loc.path, use.loc.line) in done:
                continue
            where = _engine_call_site(ctx.api, setup)
            if where is None:
                continue  # the named setup is not called anywhere in the target: not a recipe
            done.add((use.loc.path, use.loc.line))
            error = (re.search(r"raise\s+([\w.]+)", ctx.api.source_line(rel, raise_line)) or [None, "an exception"])[1]
            message = (f"{own}() in {ctx.version_label()} raises unless `{setup}(...)` ran first: \"{text.strip()[:150]}\". "
                       f"vLLM's own engine calls it at {where[0]}:{where[1]}; this client never does: {error} when this "
                       "line runs.")
            yield ctx.finding(RULE, message, use.loc, ctx.vllm_location(rel, raise_line), f"{target.qualname} needs {setup}",
                              when="call", setup=setup, engine_call=f"{where[0]}:{where[1]}")
