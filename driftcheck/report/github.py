"""GitHub workflow commands: one `::error file=...,line=...::` annotation per finding.

GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (50 per job), in the order they are
printed: errors come first, and a report over those counts starts with a notice that says so and where every
finding is listed."""

from __future__ import annotations

from driftcheck.rules.findings import SEVERITY_RANK

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
SHOWN_PER_KIND = 10  # annotations of one kind GitHub shows per step (actions/toolkit docs/problem-matchers.md)


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render(result, client_root: str | None = None, **_options) -> str:
    lines = []
    findings = sorted(result.visible(), key=lambda f: -SEVERITY_RANK.get(f.severity, 0))  # stable: file order within a kind
    kinds = {kind: sum(1 for f in findings if LEVEL[f.severity] == kind) for kind in ("error", "warning", "notice")}
    kinds["warning"] += len(result.unknown)
    if any(n > SHOWN_PER_KIND for n in kinds.values()):
        lines.append(f"::notice title=driftcheck::{kinds['error']} error, {kinds['warning']} warning and "
                     f"{kinds['notice']} notice annotations follow; GitHub shows {SHOWN_PER_KIND} of each kind per step, "
                     "errors first: the job summary and the JSON, SARIF and JUnit reports list every finding")
    for f in findings:
        props = []
        if f.client:
            path = f"{client_root.rstrip('/')}/{f.client.path}" if client_root else f.client.path
            props.append(f"file={_escape(path, True)}")
            props.append(f"line={f.client.line}")
            if f.client.col:
                props.append(f"col={f.client.col}")
        props.append(f"title={_escape(f'{f.rule} {f.name}', True)}")
        where = f" [vLLM {f.vllm.version or ''} {f.vllm.path}:{f.vllm.line}]" if f.vllm else ""
        lines.append(f"::{LEVEL[f.severity]} {','.join(props)}::{_escape(f.message + where)}")
    for u in result.unknown:
        where = ""
        if u.client:  # annotate the client line the probe could not decide about
            path = f"{client_root.rstrip('/')}/{u.client.path}" if client_root else u.client.path
            where = f"file={_escape(path, True)},line={u.client.line},"
        lines.append(f"::warning {where}title={_escape(u.rule + ' unknown', True)}::{_escape(u.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
