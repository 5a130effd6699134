"""`driftcheck bisect`: the first nightly build where each finding appears (and the last where it did not).

Given builds b0 < b1 < ... < bn (a `nightlies:` range, oldest first), the client is scanned on the
oldest (`--good`) and the newest (`--bad`). Every finding (at or above `--fail-on`) present on one end
and not on the other is then located by bisection, all of them at once: a build in the middle is
scanned, the findings whose state there matches the bad end go left, the others right. That is about
log2(n) scans per distinct change point, not n. Like `git bisect`, it assumes a finding that appears
stays; a build that cannot be fetched or read is skipped (its neighbour is scanned instead), and an
edge next to skipped builds says so. For each finding the report gives the last good and first bad
build, the vLLM evidence line on the first bad one, and the diff of that vLLM file between the two.
A finding's identity across builds is its fingerprint (rule, vLLM symbol, client file, client code).
"""

from __future__ import annotations

import difflib
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from driftcheck.report import progress
from driftcheck.errors import DriftcheckError
from driftcheck.vllm_model import file_memo
from driftcheck.rules.findings import SEVERITY_RANK, Finding

MAX_DIFF_LINES = 40


@dataclass
class Edge:
    fingerprint: str
    change: str  # appeared | went-away
    rule: str
    name: str
    severity: str
    message: str
    client: dict | None
    vllm: dict | None  # the evidence on the build where the finding exists
    last_good: str  # the last build on the old side of the change
    first_bad: str  # the first build on the new side
    skipped: list[str] = field(default_factory=list)  # unreadable builds between the two
    vllm_diff: list[str] = field(default_factory=list)  # the evidence file, last_good -> first_bad
    diff_note: str | None = None

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ClientBisect:
    client: str
    good: str
    bad: str
    edges: list[Edge] = field(default_factory=list)
    scanned: list[str] = field(default_factory=list)  # builds scanned for this client, in order
    unreadable: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"client": self.client, "good": self.good, "bad": self.bad, "scans": len(self.scanned),
                "scanned": self.scanned, "unreadable": self.unreadable, "edges": [e.to_json() for e in self.edges]}


@dataclass
class BisectReport:
    builds: list[str]
    fail_on: str
    clients: list[ClientBisect]
    seconds: float = 0.0

    def to_json(self) -> dict:
        from driftcheck.sources.nightly import describe, is_nightly_version

        return {"builds": len(self.builds), "first": self.builds[0], "last": self.builds[-1], "fail_on": self.fail_on,
                "dates": {v: describe(v).get("built") or describe(v).get("date") for v in self.builds if is_nightly_version(v)},
                "clients": [c.to_json() for c in self.clients], "seconds": round(self.seconds, 2)}


class _Scanner:
    """Targets fetched (two ahead, in the background) and findings memoised per (build, client)."""

    def __init__(self, cache_dir: Path, client_vllm: str | None, use_cache: bool, fail_on: str):
        self.cache_dir = cache_dir
        self.client_vllm = client_vllm
        self.use_cache = use_cache
        self.threshold = SEVERITY_RANK[fail_on]
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="driftcheck-bisect-fetch")
        self.targets: dict[str, Future] = {}
        self.results: dict[tuple[str, str], dict[str, Finding] | str] = {}
        self.baselines: dict = {}
        file_memo.keep_across_trees()  # neighbouring builds share most files: each is read once

    def prefetch(self, version: str) -> None:
        from driftcheck.sources.targets import resolve_vllm

        if version not in self.targets:
            self.targets[version] = self.pool.submit(resolve_vllm, version, self.cache_dir)

    def target(self, version: str):
        self.prefetch(version)
        return self.targets[version].result()

    def findings(self, version: str, spec: str, client) -> dict[str, Finding] | str:
        """fingerprint -> finding at or above the threshold, or why the build could not be read."""
        from driftcheck.scan.pipeline import ScanOptions, scan

        key = (version, spec)
        if key not in self.results:
            try:
                result = scan(self.target(version), [client], ScanOptions(cache_dir=self.cache_dir, use_cache=self.use_cache,
                                                                          client_vllm=self.client_vllm, baseline_cache=self.baselines))
                if result.internal_errors:
                    self.results[key] = result.internal_errors[0]
                else:
                    self.results[key] = {f.fingerprint(): f for f in result.visible() if SEVERITY_RANK[f.severity] >= self.threshold}
            except DriftcheckError as exc:
                self.results[key] = exc.one_line()
        return self.results[key]

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def run_bisect(builds: list[str], client_specs: list[str], cache_dir: Path, good: str | None = None, bad: str | None = None,
               fail_on: str = "error", client_vllm: str | None = None, use_cache: bool = True) -> BisectReport:
    from driftcheck.sources.targets import resolve_client

    started = time.perf_counter()
    lo, hi = _index(builds, good, "--good", 0), _index(builds, bad, "--bad", len(builds) - 1)
    if lo >= hi:
        raise DriftcheckError(f"bisect needs a good build older than the bad one (got {builds[lo]} and {builds[hi]})",
                              "give a range of at least two builds, e.g. --vllm nightlies:0.28..0.29")
    window = builds[lo:hi + 1]
    clients = [(spec, resolve_client(spec, cache_dir)) for spec in client_specs]
    scanner = _Scanner(cache_dir, client_vllm, use_cache, fail_on)
    out = []
    try:
        scanner.prefetch(window[0])
        scanner.prefetch(window[-1])
        for spec, client in clients:
            out.append(_bisect_client(window, spec, client, scanner))
    except BaseException:
        from driftcheck.sources.fetch import stop_running_pips

        scanner.pool.shutdown(wait=False, cancel_futures=True)
        stop_running_pips()  # interrupted: the fetches ahead stop too (their download folders are removed)
        raise
    finally:
        scanner.close()
    return BisectReport(window, fail_on, out, time.perf_counter() - started)


def _index(builds: list[str], version: str | None, option: str, default: int) -> int:
    if version is None:
        return default
    if version not in builds:
        raise DriftcheckError(f"{option} {version} is not one of the {len(builds)} builds in the range",
                              f"the range runs {builds[0]} .. {builds[-1]}")
    return builds.index(version)


def _bisect_client(window: list[str], spec: str, client, scanner: _Scanner) -> ClientBisect:
    report = ClientBisect(spec, window[0], window[-1])

    def state(i: int) -> dict[str, Finding] | None:
        version = window[i]
        fresh = (version, spec) not in scanner.results
        got = scanner.findings(version, spec, client)
        if fresh:
            report.scanned.append(version)
            if isinstance(got, str):
                report.unreadable[version] = got
                progress.warn(f"bisect: vLLM {version} could not be checked ({got}); skipping it")
            else:
                progress.info(f"bisect {spec}: {version} has {len(got)} finding(s) at or above the threshold "
                              f"(scan {len(report.scanned)}; {len(window)} builds, ~{_budget(len(window))} scans per change point)")
        return None if isinstance(got, str) else got

    first, last = state(0), state(len(window) - 1)
    for end, got in ((window[0], first), (window[-1], last)):
        if got is None:
            raise DriftcheckError(f"bisect: vLLM {end} could not be checked: {report.unreadable[end]}",
                                  "pick another end with --good/--bad, or a narrower range")
    changed = {fp: "appeared" for fp in last if fp not in first}
    changed.update({fp: "went-away" for fp in first if fp not in last})
    edges: list[tuple[int, int, set[str], list[str]]] = []

    def solve(lo: int, hi: int, keys: set[str], skipped: list[str]) -> None:
        if not keys:
            return
        inner = list(range(lo + 1, hi))
        inner.sort(key=lambda i: abs(i - (lo + hi) / 2))  # the middle first, then its neighbours (skip the unreadable)
        for mid in inner:
            # warm the two builds the next step may need while this one is scanned
            scanner.prefetch(window[(lo + mid) // 2])
            scanner.prefetch(window[(mid + hi) // 2])
            at_mid = state(mid)
            if at_mid is None:
                skipped = skipped + [window[mid]]
                continue
            # a key whose state at mid is already the new one changed in (lo, mid], else in (mid, hi]
            left = {k for k in keys if (k in at_mid) == (changed[k] == "appeared")}
            solve(lo, mid, left, [s for s in skipped if window.index(s) < mid])
            solve(mid, hi, keys - left, [s for s in skipped if window.index(s) > mid])
            return
        edges.append((lo, hi, keys, [window[i] for i in range(lo + 1, hi)]))

    solve(0, len(window) - 1, set(changed), [])
    for lo, hi, keys, skipped in edges:
        old, new = state(lo), state(hi)
        for fp in sorted(keys):
            f = new[fp] if changed[fp] == "appeared" else old[fp]
            edge = Edge(fp, changed[fp], f.rule, f.name, f.severity, f.message, f.client.to_json() if f.client else None,
                        f.vllm.to_json() if f.vllm else None, window[lo], window[hi], skipped)
            edge.vllm_diff, edge.diff_note = _evidence_diff(scanner, window[lo], window[hi], f, changed[fp] == "appeared")
            report.edges.append(edge)
    report.edges.sort(key=lambda e: (window.index(e.first_bad), e.rule, e.fingerprint))
    return report


def _budget(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _evidence_diff(scanner: _Scanner, old_v: str, new_v: str, f: Finding, appeared: bool) -> tuple[list[str], str | None]:
    """The hunks of the evidence file's diff between the two builds nearest the evidence line."""
    if f.vllm is None or not f.vllm.path:
        return [], "the finding names no vLLM line"
    path = f.vllm.path
    texts = []
    for version in (old_v, new_v):
        try:
            tree = scanner.target(version).tree
            texts.append(tree.read_text(path).splitlines() if tree.is_file(path) else None)
        except DriftcheckError:
            texts.append(None)
    old, new = texts
    if old is None and new is None:
        return [], f"{path} is in neither build's sources"
    if old is None or new is None:
        return [], f"{path} is new in {new_v}" if old is None else f"{path} is gone in {new_v}"
    if old == new:
        return [], f"{path} is the same in both builds: what changed is elsewhere (the line the finding names is unchanged)"
    line = f.vllm.line or 1
    hunks = _hunks(old, new)
    side = 1 if appeared else 0  # the evidence line is in the build where the finding exists
    best = min(hunks, key=lambda h: _distance(h[side], line))
    header, body = best[2], best[3]
    if len(body) > MAX_DIFF_LINES:
        body = body[:MAX_DIFF_LINES] + [f"... ({len(best[3]) - MAX_DIFF_LINES} more lines)"]
    return [f"--- {path} ({old_v})", f"+++ {path} ({new_v})", header, *body], None


def _hunks(old: list[str], new: list[str]):
    """[((old_start, old_end), (new_start, new_end), header, lines)] of a unified diff with 3 lines of context."""
    out = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(3):
        o1, o2 = group[0][1] + 1, group[-1][2]
        n1, n2 = group[0][3] + 1, group[-1][4]
        lines = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + x for x in old[i1:i2]]
                continue
            lines += ["-" + x for x in old[i1:i2]]
            lines += ["+" + x for x in new[j1:j2]]
        out.append(((o1, o2), (n1, n2), f"@@ -{o1},{o2 - o1 + 1} +{n1},{n2 - n1 + 1} @@", lines))
    return out


def _distance(span: tuple[int, int], line: int) -> int:
    lo, hi = span
    return 0 if lo <= line <= hi else min(abs(line - lo), abs(line - hi))


def render_text(report: BisectReport) -> str:
    from driftcheck.sources.nightly import describe

    def when(v: str) -> str:
        d = describe(v)
        return f" ({d['built'].replace('T', ' ')})" if "built" in d else (f" ({d['date']})" if "date" in d else "")

    lines = [f"bisected {len(report.builds)} builds {report.builds[0]} .. {report.builds[-1]} (findings at or above {report.fail_on})"]
    for c in report.clients:
        lines.append(f"{c.client}: {len(c.edges)} change(s), {len(c.scanned)} scan(s) of {len(report.builds)} builds")
        if not c.edges:
            lines.append(f"  nothing at or above {report.fail_on} differs between {c.good} and {c.bad}")
        for e in c.edges:
            where = f"{e.client['path']}:{e.client['line']}" if e.client else "?"
            lines.append(f"  {e.rule} {e.name} {e.severity} {where} {e.change}: {e.message[:160]}")
            lines.append(f"    last good: {e.last_good}{when(e.last_good)}")
            lines.append(f"    first bad: {e.first_bad}{when(e.first_bad)}")
            if e.skipped:
                lines.append(f"    (between them, not checked: {', '.join(e.skipped)})")
            if e.vllm:
                lines.append(f"    vLLM line: {e.vllm['path']}:{e.vllm['line']}  {e.vllm.get('code', '')}")
            if e.diff_note:
                lines.append(f"    {e.diff_note}")
            lines += [f"    {x}" for x in e.vllm_diff]
        for v, why in c.unreadable.items():
            lines.append(f"  could not check {v}: {why}")
    lines.append(f"({report.seconds:.1f} s)")
    return "".join(x + "\n" for x in lines)

