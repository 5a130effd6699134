"""Run the probes of one scan: one vLLM target against one or more clients."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .api_index import ApiIndex
from .bodies import save_text_indexes
from .cache import SummaryCache
from .client import load_client
from .context import ScanContext
from .errors import DriftcheckError
from .findings import Finding, UnknownResult, summarise
from .guards import guard_at, guards_of
from .suppress import apply_baseline, apply_inline
from .provenance import provenance
from .targets import Target, baseline_version, resolve_vllm
from .usage import analyse_client


@dataclass
class ScanOptions:
    cache_dir: Path
    use_cache: bool = True
    only: list[str] | None = None  # rule ids or names
    client_vllm: str | None = None  # override of the vLLM the client was written for
    baseline_cache: dict | None = None  # share fetched baselines across repeated scans (fix, matrix)
    baseline_file: dict | None = None  # a loaded --baseline document: hides accepted findings


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


def _baseline_loader(client: Target, vllm: Target, options: ScanOptions, result: ScanResult):
    """Lazily fetch the vLLM this client was written for; (loader, note when unavailable)."""
    version = options.client_vllm
    if version is None:
        req = client.declared_vllm()
        if req is None:
            return None, f"{client.name or 'the client'} declares no vLLM requirement"
        version = baseline_version(req)
        if version is None:
            return None, f"cannot pick one vLLM version from the client's requirement '{req}'"

    def load() -> ApiIndex | None:
        try:
            target = resolve_vllm(version, options.cache_dir)
        except DriftcheckError as exc:
            result.baselines[client.name or "client"] = f"unavailable: {exc.one_line()}"
            return None
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
    from driftcheck.probes import load_probes

    started = time.perf_counter()
    result = ScanResult(vllm=vllm, clients=clients)
    api = api or make_api(vllm, options)
    probes = load_probes(options.only)
    files_checked = 0
    uses_checked = 0
    lines_by_file: dict[str, list[str]] = {}
    for client in clients:
        source = load_client(client.tree, client.location, client.prefixes or None)
        files_checked += len(source.files)
        lines_by_file.update({f.rel: f.lines for f in source.files})
        usage = analyse_client(source, api)
        loader, note = _baseline_loader(client, vllm, options, result)
        if loader is not None and options.baseline_cache is not None:
            loader = _memoised(loader, options.baseline_cache, client.name or client.location)
        ctx = ScanContext(api, usage, source, client.name or client.location, vllm.version, loader, note)
        uses_checked += usage.checked()
        for rel, why in usage.unanalysed:
            result.unknown.append(UnknownResult("DC000", f"{rel} was not analysed: {why}", client_name=client.name))
        guards = {f.rel: guards_of(f.tree) for f in source.files}
        for probe in probes:
            try:
                for item in probe.check(ctx):
                    if isinstance(item, Finding):
                        _apply_guard(item, guards, probe.RULE)
                    (result.findings if isinstance(item, Finding) else result.unknown).append(item)
            except DriftcheckError:
                raise
            except Exception as exc:  # a probe bug must never turn into a silent pass
                where = traceback.extract_tb(exc.__traceback__)[-1]
                message = f"internal error in {probe.RULE.id} {probe.RULE.name}: {type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})"
                result.internal_errors.append(message)
                result.unknown.append(UnknownResult(probe.RULE.id, message, client_name=client.name))
    save_text_indexes()  # whole-tree answers of immutable trees, for the next scan
    result.findings = _dedupe(result.findings)
    result.findings.sort(key=Finding.sort_key)
    apply_inline(result.findings, lines_by_file)
    if options.baseline_file is not None:
        apply_baseline(result.findings, options.baseline_file)
    result.stats = {
        "seconds": round(time.perf_counter() - started, 3),
        "client_files": files_checked,
        "uses_checked": uses_checked,
        "vllm_files_parsed": api.parsed_files,
        "vllm_modules_read": len([m for m in api._modules.values() if m is not None]),
    }
    return result


def _apply_guard(finding: Finding, guards: dict, rule) -> None:
    """A use the client guards (try/except, hasattr, version check) is a warning at most, and never fixed."""
    if finding.client is None:
        return
    text = finding.symbol or finding.client.code  # what the finding is about: a hasattr guard must check that name
    guard = guard_at(guards.get(finding.client.path, []), finding.client.line, rule.raises, text)
    if guard is None:
        return
    finding.details["guarded"] = guard.describe()
    finding.fix = None
    if finding.severity == "error":
        finding.severity = "warning"
        finding.message += f" The use is {guard.describe()}, so the client handles it."


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
