"""Run the probes of one scan: one vLLM target against one or more clients."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftcheck import __version__
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.bodies import save_text_indexes
from driftcheck.storage.cache import SummaryCache
from driftcheck.client_model.client import client_view, source_from_survey, survey
from driftcheck.rules.context import ScanContext
from driftcheck.errors import DriftcheckError
from driftcheck.rules.findings import Finding, UnknownResult, summarise
from driftcheck.client_model.guards import failing_handler, guard_at, running_fallback
from driftcheck.scan.suppress import apply_accepted, apply_inline
from driftcheck.sources.provenance import provenance
from driftcheck.sources.package_metadata import declared_vllm_version
from driftcheck.sources.targets import Target, resolve_vllm
from driftcheck.gc_pause import cyclic_gc_paused
from driftcheck.report import progress
from driftcheck.scan.unit_cache import ClientResult, UnitCache, code_digest, finding_from_json, tree_digest, unknown_from_json
from driftcheck.scan.presummarise import presummarise
from driftcheck.scan.units import MIN_FILES_FOR_POOL, default_jobs, merge, run_units


@dataclass
class ScanOptions:
    cache_dir: Path
    use_cache: bool = True
    only: list[str] | None = None  # rule ids or names
    client_vllm: str | None = None  # override of the vLLM the client was written for
    baseline_cache: dict | None = None  # share fetched baselines across repeated scans (fix, matrix)
    accepted_findings: dict | None = None  # a loaded --baseline document: hides accepted findings
    jobs: int | None = None  # worker processes for the client's files (None: $DRIFTCHECK_JOBS or every core)
    unit_cache: bool = True  # reuse per-file and whole-client results (with use_cache)


@dataclass
class ScanResult:
    vllm: Target
    clients: list[Target]
    findings: list[Finding] = field(default_factory=list)
    unknown: list[UnknownResult] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    baselines: dict[str, str] = field(default_factory=dict)  # client -> vLLM version compared with

    def visible(self) -> list[Finding]:
        return [f for f in self.findings if not f.suppressed]

    def to_json(self) -> dict[str, Any]:
        return {
            "driftcheck": __version__,
            "vllm": self.vllm.to_json(),
            "clients": [c.to_json() for c in self.clients],
            "findings": [f.to_json() for f in self.findings if not f.suppressed],
            "suppressed": [f.to_json() for f in self.findings if f.suppressed],
            "unknown": [u.to_json() for u in self.unknown],
            "summary": summarise(self.findings) | {"unknown": len(self.unknown), "suppressed": sum(1 for f in self.findings if f.suppressed),
                                                   "uses_checked": self.stats.get("uses_checked", 0)},
            "baselines": self.baselines,
            "provenance": provenance(self.vllm),
            "internal_errors": self.internal_errors,
            "stats": self.stats,
        }


def make_api(target: Target, options: ScanOptions) -> ApiIndex:
    cache = SummaryCache(options.cache_dir) if options.use_cache else None
    build = f"the {target.name} {target.version} sources" if target.name and target.version else None
    return ApiIndex(target.tree, target.version, cache=cache, build=build)


# what the user does about a client that names no one vLLM (the unknowns that quote the note fail the gate)
_GIVE_IT = "; give the vLLM it was written for with --client-vllm VERSION"


def _baseline_loader(client: Target, vllm: Target, options: ScanOptions, result: ScanResult):
    """Lazily fetch the vLLM this client was written for; (loader, note when unavailable)."""
    version = options.client_vllm
    if version is None:
        req = client.declared_vllm()
        if req is None:
            lines = client.vllm_requirement_lines()
            if lines:  # `vllm` with no version (exvllm): a requirement, but not of one release
                return None, f"{client.name or 'the client'} requires '{lines[0].strip()}' without a version{_GIVE_IT}"
            return None, f"{client.name or 'the client'} declares no vLLM requirement{_GIVE_IT}"
        version = declared_vllm_version(req)
        if version is None:
            return None, f"cannot pick one vLLM version from the client's requirement '{req}'{_GIVE_IT}"

    def load() -> ApiIndex | str:
        """The baseline, or why it is unavailable (the probes' unknowns say so, not "declares no requirement")."""
        try:
            target = resolve_vllm(version, options.cache_dir)
        except DriftcheckError as exc:
            result.baselines[client.name or "client"] = f"unavailable: {exc.one_line()}"
            return f"vLLM {version}, which the client declares, could not be read: {exc.one_line()}"
        result.baselines[client.name or "client"] = target.version or version
        return make_api(target, options)

    return load, None


def _memoised(loader, store: dict, key: str):
    def load():
        if key not in store:
            store[key] = loader()
        return store[key]

    return load


def scan(vllm: Target, clients: list[Target], options: ScanOptions, api: ApiIndex | None = None) -> ScanResult:
    with cyclic_gc_paused():
        return _scan(vllm, clients, options, api)


def _scan(vllm: Target, clients: list[Target], options: ScanOptions, api: ApiIndex | None) -> ScanResult:
    from driftcheck.probes import load_probes

    started = time.perf_counter()
    result = ScanResult(vllm=vllm, clients=clients)
    api_given = api  # the fixer's in-memory rescans: an overlay client, never cached
    api = api or make_api(vllm, options)
    probes = load_probes(options.only)
    files_checked = 0
    uses_checked = 0
    lines_by_file: dict[str, list[str]] = {}
    jobs = options.jobs if options.jobs is not None else default_jobs()
    cache = UnitCache(options.cache_dir) if options.use_cache and options.unit_cache and api_given is None else None
    counters = {"jobs": 1, "units_run": 0, "units_cached": 0, "client_cached": 0}
    baselines_loaded: dict = {}
    for client in clients:
        view = client_view(client.tree, client.prefixes or None)
        found = survey(client.tree, client.prefixes or None)
        key_base = _key_base(vllm, client, options, probes, api)
        whole_key = tree_digest(view, key_base) if cache is not None else ""
        done = cache.get(whole_key, ClientResult) if cache is not None else None
        if done is not None:
            counters["client_cached"] += 1
            files_checked += done.files
            pointed = {f["client"]["path"] for f in done.findings if f["client"]}
            for rel, data in found.importing:
                if rel in pointed:
                    lines_by_file[rel] = _decoded(view, rel, data).splitlines()
        else:
            loader, note = _baseline_loader(client, vllm, options, result)
            if loader is not None:  # one baseline per scan (and per process), not one per unit: each reads its tree's text
                shared = options.baseline_cache if options.baseline_cache is not None else baselines_loaded
                loader = _memoised(loader, shared, f"{client.name or client.location} {client.version}")
            with _bar_for(client, found) as bar:
                presummary = presummarise(api, [data for _rel, data in found.importing], jobs, MIN_FILES_FOR_POOL) \
                    if api_given is None else None  # from here on: the parse below, the phases, the visits
                try:
                    source = source_from_survey(client.tree, client.location, client.prefixes or None, found)
                except BaseException:
                    if presummary is not None:
                        presummary.stop()
                    raise
                found.importing.clear()  # their bytes, parsed now: the texts and trees are what the scan reads on
                lines_by_file.update({f.rel: f.lines for f in source.files})
                make_ctx = _ContextMaker(api, source, client.name or client.location, vllm.version, loader, note,
                                         result.baselines, client.name or "client")
                units, counts = run_units(api, source, probes, make_ctx, jobs, cache, key_base, presummary, bar)
            for k, v in counts.items():
                counters[k] = max(counters[k], v) if k == "jobs" else counters[k] + v
            findings, unknown, errors, uses, baselines = merge(units, len(probes))
            unknown = [*(UnknownResult("DC000", f"{rel} was not analysed: {why}", client_name=make_ctx.client_name).to_json()
                         for rel, why in source.unparsed), *unknown]  # files only a newer Python parses
            done = ClientResult(len(source.files), uses, findings, unknown, errors, baselines)
            if cache is not None and not any(v.startswith("unavailable") for v in done.baselines.values()):
                cache.put(whole_key, done)
            files_checked += len(source.files)
        uses_checked += done.uses
        result.baselines.update(done.baselines)
        result.findings += [finding_from_json(f) for f in done.findings]
        result.unknown += [unknown_from_json(u) for u in done.unknown]
        result.internal_errors += done.errors
    save_text_indexes()  # whole-tree answers of immutable trees, for the next scan
    result.findings = _dedupe(result.findings)
    result.findings.sort(key=Finding.sort_key)
    result.unknown = _dedupe_unknown(result.unknown)
    result.internal_errors = list(dict.fromkeys(result.internal_errors))
    apply_inline(result.findings, lines_by_file)
    if options.accepted_findings is not None:
        apply_accepted(result.findings, options.accepted_findings)
    result.stats = {
        "seconds": round(time.perf_counter() - started, 3),
        "client_files": files_checked,
        "uses_checked": uses_checked,
        "vllm_files_parsed": api.parsed_files,
        "vllm_modules_read": len([m for m in api._modules.values() if m is not None]),
        "peak_rss_mib": _peak_rss_mib(),
        **counters,
    }
    return result


def _peak_rss_mib() -> int | None:
    """The largest resident set this process or any worker it waited for reached so far (MiB): what a CI runner's
    memory must hold for this client. None where the platform does not say."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    import sys

    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10))  # macOS reports bytes, Linux KiB


@contextmanager
def _bar_for(client: Target, found):
    """A big client's progress, on a terminal only; a small client is done in about a second (no bar to flicker)."""
    if len(found.importing) < MIN_FILES_FOR_POOL:
        yield progress.NO_BAR
        return
    with progress.bar(f"{client.name or client.location}: reading {len(found.importing)} files") as bar:
        yield bar


def raised_by(finding: Finding, rule) -> tuple[str, ...]:
    """What this finding's line raises: its own `details["raises"]` where the rule knows it (DC005: a plain call's
    missing argument is a TypeError, only a pydantic construction's a ValidationError), else every exception the rule
    declares. A `try` handles the drift only if it catches one of these (batch 18a's MA)."""
    return tuple(finding.details.get("raises") or rule.raises)


def _apply_guard(finding: Finding, guards: dict, rule, failing: dict | None = None):
    """A use the client guards (try/except, hasattr, version check) is a warning at most, and never fixed; the guard
    found, or None. `failing`: path -> (line, raises) of the certain errors found with it, before any guard (see
    `guard_at`)."""
    if finding.client is None or not rule.guardable:
        return None
    text = finding.symbol or finding.client.code  # what the finding is about: a hasattr guard must check that name
    file_guards = guards.get(finding.client.path, []) or []
    if finding.details.get("type_test"):
        # the finding is an isinstance/issubclass test itself (DC119): the guard its own `if` makes of the test's
        # span is no guard of the test, whose second argument fails whatever the object is (HH2)
        file_guards = [g for g in file_guards if not (g.kind == "isinstance" and g.start == g.line
                                                      and g.start <= finding.client.line <= g.end)]
    if finding.details.get("child_process") or finding.details.get("raised_later"):
        # a command the client starts in a child: the parent's line raises nothing a `try` could catch (the probe
        # already read a call that raises on the exit status, child_exit.py); a def vLLM calls later (DC109) raises
        # there, outside the `try` that installed it (26g M2)
        file_guards = [g for g in file_guards if g.kind not in ("try", "expected")]
    present = finding.details.get("present")
    if present:
        # the finding is about a member the target has (a call that fits it badly, an await of a plain def): a probe
        # of that name holds on the target, so its branch runs (26e W1: `if hasattr(chat, "warmup"): await
        # chat.warmup()` where 0.19.1's warmup is a plain def)
        file_guards = [g for g in file_guards if not (g.kind == "hasattr" and g.probed and g.probed <= {present})]
    owners = set((finding.symbol or "").split(".")[:-1]) | set(finding.details.get("tested_as") or ())
    if owners:
        # `if isinstance(response, ErrorResponse): response.code`: the branch runs for the very class the finding is
        # about, whose objects lack the member: the test picks them, it does not spare them (26a's diffing-toolkit)
        file_guards = [g for g in file_guards if not (g.kind == "isinstance" and g.probed & owners)]
    lines = (failing or {}).get(finding.client.path, [])
    raises = raised_by(finding, rule)
    guard = guard_at(file_guards, finding.client.line, raises, text, guards.expression(finding.client), lines)
    if guard is None:
        running = running_fallback(file_guards, finding.client.line, raises, lines)
        if running is not None and finding.severity == "error":
            finding.message += (f" It is in the `except` fallback of the try at line {running[0].line}, whose body "
                                f"fails on this vLLM too (line {running[1]}), so the fallback runs.")
        return None
    finding.details["guarded"] = guard.describe()
    finding.fix = None
    # code that never runs handles nothing: it only never fails; an isinstance test only picks which objects reach the
    # use (29c: `isinstance(attn_module, ChunkedLocalAttention)` above a constructor call it does not protect); a
    # test's `pytest.raises` says itself that the test expects the failure
    handled = "" if guard.kind in ("replaced", "unreachable", "dead", "expected") or (guard.kind, guard.test) == ("rebound", "other") else \
        ": whether it runs depends on the class of the object tested there, which driftcheck does not know" \
        if guard.kind == "isinstance" else ", so the client handles it"
    again = failing_handler(guard, lines) if guard.kind == "try" else 0
    if again:
        handled = f", but its handler fails on this vLLM too (line {again}), so the error escapes there"
    if finding.severity == "error":
        finding.severity = "warning"
        finding.message += f" The use is {guard.describe()}{handled}."
    elif finding.severity == "warning" and guard.describe() not in finding.message:
        # a warning by kind names its guard too (27b), without claiming a failure it may not describe
        finding.message += f" The use is {guard.describe()}."
    return guard


def _dedupe_unknown(unknown: list[UnknownResult]) -> list[UnknownResult]:
    """One of each (a question asked from every file is one question), in a fixed order."""
    seen: dict[str, UnknownResult] = {}
    for u in unknown:
        seen.setdefault(json.dumps(u.to_json(), sort_keys=True), u)
    return sorted(seen.values(), key=lambda u: (u.client_name or "", u.client.path if u.client else "",
                                                u.client.line if u.client else 0, u.rule, u.symbol or "", u.message))


class _ContextMaker:
    def __init__(self, api, source, client_name, version, loader, note, baselines: dict, baseline_key: str):
        self.api, self.source, self.client_name, self.version, self.loader, self.note = api, source, client_name, version, loader, note
        self.baseline_key = baseline_key
        self.baselines = baselines  # what the loader records (in a worker: that worker's copy, sent back per unit)

    def __call__(self, usage) -> ScanContext:
        return ScanContext(self.api, usage, self.source, self.client_name, self.version, self.loader, self.note)


def _key_base(vllm: Target, client: Target, options: ScanOptions, probes, api: ApiIndex) -> str:
    """What every cached answer of this scan depends on besides the client's files."""
    return json.dumps([code_digest(), vllm.tree.fingerprint(), vllm.name, vllm.version, api.package,
                       client.name, client.version, client.location, client.vllm_requirement_lines(), options.client_vllm,
                       [p.RULE.id for p in probes]], default=str)


def _decoded(view, rel: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return view.read_text(rel)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple] = set()
    out = []
    for f in findings:
        key = (f.rule, f.symbol, f.client.path if f.client else None, f.client.line if f.client else None, f.client_name)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out
