"""GitHub workflow commands: one `::error file=...,line=...::` annotation per finding."""

from __future__ import annotations

LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render(result, client_root: str | None = None, **_options) -> str:
    lines = []
    for f in result.visible():
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
