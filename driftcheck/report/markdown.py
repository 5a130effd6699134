"""Markdown: a PR comment or job summary, grouped by client file."""

from __future__ import annotations

from itertools import groupby


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(result, **_options) -> str:
    counts = result.to_json()["summary"]
    v = result.vllm
    out = [
        f"## driftcheck: {', '.join(c.name or c.location for c in result.clients)} against vLLM {v.version or '?'}",
        "",
        f"**{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info, {counts['unknown']} unknown**"
        f" — vLLM source: `{v.source}`",
        "",
    ]
    findings = result.visible()
    if not findings and not result.unknown:
        out.append("No drift found.")
    for path, group in groupby(findings, key=lambda f: (f.client_name, f.client.path if f.client else "")):
        out += [f"### `{path[1]}`" + (f" ({path[0]})" if path[0] else ""), "",
                "| Line | Rule | Severity | vLLM | Finding | Fix |", "|---:|---|---|---|---|---|"]
        for f in group:
            vloc = f"`{f.vllm.path}:{f.vllm.line}`" if f.vllm else ""
            out.append(f"| {f.client.line if f.client else ''} | {f.rule} {f.name} | {f.severity} | {vloc} | {_cell(f.message)} | {f.fix or ''} |")
        out.append("")
    if result.unknown:
        out += ["### Could not decide (unknown)", ""]
        out += [f"- **{u.rule}**: {_cell(u.message)}" for u in result.unknown]
        out.append("")
    return "\n".join(out) + "\n"
