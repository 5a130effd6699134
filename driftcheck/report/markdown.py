"""Markdown: a PR comment or job summary, grouped by client file.

A PR comment holds at most 65,536 characters (GitHub's limit): a report over it keeps every line it can, errors
first, and says what it left out and where to read it; the counts by rule above the tables are always complete."""

from __future__ import annotations

from itertools import groupby

from driftcheck.report import counts_by_rule
from driftcheck.rules.findings import SEVERITY_RANK

COMMENT_LIMIT = 65_536  # characters GitHub accepts in one issue or PR comment


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(f) -> str:
    vloc = f"`{f.vllm.path}:{f.vllm.line}`" if f.vllm else ""
    return f"| {f.client.line if f.client else ''} | {f.rule} {f.name} | {f.severity} | {vloc} | {_cell(f.message)} | {f.fix or ''} |"


def _file_key(f) -> tuple[str, str]:
    return f.client_name, f.client.path if f.client else ""


def _section_head(key: tuple[str, str]) -> list[str]:
    return [f"### `{key[1]}`" + (f" ({key[0]})" if key[0] else ""), "",
            "| Line | Rule | Severity | vLLM | Finding | Fix |", "|---:|---|---|---|---|---|"]


def _by_rule(findings) -> list[str]:
    counts = counts_by_rule(findings)
    if len(counts) < 2:
        return []
    return ["| Rule | Errors | Warnings | Info |", "|---|---:|---:|---:|",
            *(f"| {rule} {name} | {per.get('error', 0)} | {per.get('warning', 0)} | {per.get('info', 0)} |"
              for (rule, name), per in counts.items()), ""]


def _kept(findings, budget: int) -> set[int]:
    """The findings that fit in `budget` characters with their file's table head, errors first, then warnings, then
    info, each in report order."""
    kept: set[int] = set()
    opened: set[tuple[str, str]] = set()
    used = 0
    for i in sorted(range(len(findings)), key=lambda i: (-SEVERITY_RANK.get(findings[i].severity, 0), i)):
        f = findings[i]
        cost = len(_row(f)) + 1
        if _file_key(f) not in opened:
            cost += sum(len(line) + 1 for line in _section_head(_file_key(f))) + 1
        if used + cost > budget:
            continue
        used += cost
        kept.add(i)
        opened.add(_file_key(f))
    return kept


def render(result, limit: int = COMMENT_LIMIT, **_options) -> str:
    counts = result.to_json()["summary"]
    v = result.vllm
    findings = result.visible()
    head = [
        f"## driftcheck: {', '.join(c.name or c.location for c in result.clients)} against vLLM {v.version or '?'}",
        "",
        f"**{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info, {counts['unknown']} unknown**"
        f" — vLLM source: `{v.source}`",
        "",
        *_by_rule(findings),
    ]
    if not findings and not result.unknown:
        head.append("No drift found.")
    unknown = ["### Could not decide (unknown)", "", *(f"- **{u.rule}**: {_cell(u.message)}" for u in result.unknown), ""] \
        if result.unknown else []
    full = _tables(findings, set(range(len(findings))))
    if sum(len(line) + 1 for line in [*head, *full, *unknown]) <= limit:
        return "\n".join([*head, *full, *unknown]) + "\n"
    # over the limit: room for the head and a note, then the rows by severity, then the unknowns if they still fit
    room = limit - sum(len(line) + 1 for line in head) - 400
    kept = _kept(findings, room)
    tables = _tables(findings, kept)
    left = room - sum(len(line) + 1 for line in tables)
    shown_unknown = unknown if sum(len(line) + 1 for line in unknown) <= left else []
    dropped = [f for i, f in enumerate(findings) if i not in kept]
    note = (f"_Not shown here, to stay within a comment's {limit:,} characters: {len(dropped)} finding(s) "
            f"({sum(1 for f in dropped if f.severity == 'error')} error(s))"
            + (f" and {len(result.unknown)} unknown" if result.unknown and not shown_unknown else "")
            + "; the JSON, SARIF and text reports list every one._")
    return "\n".join([*head, *tables, *shown_unknown, note, ""]) + "\n"


def _tables(findings, kept: set[int]) -> list[str]:
    out: list[str] = []
    shown = [f for i, f in enumerate(findings) if i in kept]
    for key, group in groupby(shown, key=_file_key):
        out += _section_head(key)
        out += [_row(f) for f in group]
        out.append("")
    return out
