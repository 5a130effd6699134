"""The tightest `vllm>=a,<b` a client is compatible with, from a matrix, next to what it declares.

The compatible block is the run of consecutive `ok` releases around the release the client was
written for (its pin, or the top of its declared range; else the first `ok` release). Its edges
name the first breaking release on each side and the rules that break it. A release that could not
be checked (not fetched, not readable: an `error` cell) is neither compatible nor breaking: the
block stops before it, the bound there is the last release checked (`<=`), and a note says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from driftcheck.gate.matrix import Matrix


@dataclass
class RangeReport:
    client: str
    computed: str | None  # e.g. ">=0.12.0,<0.17.0"; None when no tested release is compatible
    declared: str | None
    agrees: bool | None  # None when the client declares nothing
    lowest_ok: str | None = None
    highest_ok: str | None = None
    first_break_above: str | None = None
    rules_above: list[str] = field(default_factory=list)
    reason_above: str | None = None
    first_break_below: str | None = None
    rules_below: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return self.__dict__.copy()


def compute_range(matrix: Matrix, client: dict) -> RangeReport:
    spec = client["spec"]
    versions = [v for v in matrix.versions if matrix.cell(v, spec) is not None]
    status = {v: matrix.cell(v, spec).status for v in versions}
    declared = client.get("declared")
    anchor = None
    if declared:
        admitted = [v for v in versions if SpecifierSet(declared).contains(v, prereleases=True)]  # nightlies are .dev builds
        okish = [v for v in admitted if status[v] == "ok"]
        anchor = okish[-1] if okish else None
    if anchor is None:
        anchor = next((v for v in versions if status[v] == "ok"), None)
    report = RangeReport(spec, None, declared, None)
    if anchor is None:
        report.notes.append("no tested release is compatible")
        report.notes += _closest(matrix, spec, [v for v in versions if status[v] != "error"])
        report.agrees = False if declared else None
        _note_missing(report, matrix, spec, [v for v in versions if status[v] == "error"])
        return report
    i = versions.index(anchor)
    lo = hi = i
    while lo > 0 and status[versions[lo - 1]] == "ok":
        lo -= 1
    while hi + 1 < len(versions) and status[versions[hi + 1]] == "ok":
        hi += 1
    report.lowest_ok, report.highest_ok = versions[lo], versions[hi]
    parts = [f">={versions[lo]}"]
    if hi + 1 < len(versions) and status[versions[hi + 1]] != "error":
        above = matrix.cell(versions[hi + 1], spec)
        report.first_break_above, report.rules_above, report.reason_above = above.vllm, above.rules, above.first_error or above.message
        parts.append(f"<{above.vllm}")
    else:
        parts.append(f"<={versions[hi]}")
        if hi + 1 == len(versions):
            report.notes.append(f"compatible up to the newest release tested ({versions[hi]})")
        else:
            report.notes.append(f"the range stops at {versions[hi]}: {versions[hi + 1]} could not be checked")
    if lo > 0 and status[versions[lo - 1]] != "error":
        below = matrix.cell(versions[lo - 1], spec)
        report.first_break_below, report.rules_below = below.vllm, below.rules
    elif lo > 0:
        report.notes.append(f"the range starts at {versions[lo]}: {versions[lo - 1]} could not be checked")
    report.computed = ",".join(parts)
    missing = [v for v in versions if status[v] == "error"]
    if declared:
        declared_set = {v for v in versions if SpecifierSet(declared).contains(v, prereleases=True)} - set(missing)
        computed_set = set(versions[lo:hi + 1])
        report.agrees = declared_set == computed_set
        broken = sorted(declared_set - computed_set, key=Version)
        extra = sorted(computed_set - declared_set, key=Version)
        if broken:
            report.notes.append(f"declared range admits releases that break: {', '.join(broken)}")
        if extra:
            report.notes.append(f"compatible beyond the declared range: {', '.join(extra)}")
    _note_missing(report, matrix, spec, missing)
    return report


def _closest(matrix: Matrix, spec: str, checked: list[str]) -> list[str]:
    """Where to start when every release breaks: the errors per release, and the newest release with the fewest (its
    rules and first error), so the answer is a place to begin, not only "nothing fits"."""
    cells = [matrix.cell(v, spec) for v in checked]
    if not cells:
        return []
    best = min(cells, key=lambda c: (c.errors, c.unknown, -checked.index(c.vllm)))
    what = f"{best.errors} error(s)" + (f", {best.unknown} unknown" if best.unknown else "")
    if best.rules:
        what += f": {', '.join(best.rules)}"
    first = f"; the first: {best.first_error}" if best.first_error else ""
    return [f"errors per release: {', '.join(f'{c.vllm} {c.errors}' for c in cells)}",
            f"closest: {best.vllm} ({what}{first}); `driftcheck scan --vllm {best.vllm}` lists them"]


def _note_missing(report: RangeReport, matrix: Matrix, spec: str, missing: list[str]) -> None:
    for v in missing:
        report.notes.append(f"vLLM {v} could not be checked: {matrix.cell(v, spec).message}")
