"""The human-readable lines `driftcheck smoke` prints for an attempt."""

from __future__ import annotations


def describe(a: dict) -> list[str]:
    m = a.get("metrics") or {}
    head = f"{a['name']:<34} {a['status'].upper():8}"
    tail = []
    if "differences" in a:
        diffs = [d["what"] for d in a["differences"]]
        tail = [f"    vs careful: {'differs in ' + ', '.join(diffs) if diffs else 'same outcome'}"]
    cached = (a.get("notes") or {}).get("cached_tokens_per_pass")
    if cached:
        tail.append(f"    prefix-cache hits per pass (tokens): {cached}")
    if a["status"] in ("passed", "failed"):
        lines = [f"{head} load {m.get('load_s', 0):.1f} s, {m.get('tokens_per_s', 0):.0f} tokens/s, "
                 f"peak RSS {m.get('peak_rss_mb', 0) / 1024:.2f} GiB (process group), wall {a['wall_s']:.1f} s"]
        lines += [f"    {c['name']}: {'ok' if c['ok'] else 'FAILED'} - {c['detail']}" for c in a["checks"]
                  if not c["ok"] or c["name"] in ("reference", "convention")]
        return lines + tail
    err = a.get("error") or {}
    lines = [f"{head} {err.get('type')}: {_one_line(err.get('message'))}"]
    if a["status"] == "timeout":
        return lines + [f"    last line: {_one_line(''.join((err.get('log_tail') or '').splitlines()[-1:]))}", f"    log: {a['log']}"] + tail
    if err.get("root_cause") and err.get("root_cause") not in (err.get("message") or ""):
        lines.append(f"    root cause (logged by an engine process): {_one_line(err['root_cause'])}")
    frame = err.get("client_frame") or err.get("frame")
    if frame:
        lines.append(f"    at {frame['file']}:{frame['line']} in {frame['function']}: {frame['code']}")
    hits = a.get("explain")
    if hits:
        for h in hits:
            lines.append(f"    rule {h.get('rule')} ({h.get('name')}): {_one_line(h.get('message'))}")
            lines.append(f"    fix: {_one_line(h.get('fix'))}")
    elif hits is None:
        lines.append("    (driftcheck.explain is not available: no rule named)")
    else:
        lines.append("    explain: no rule matches this traceback")
    lines.append(f"    log: {a['log']}")
    return lines + tail


def _one_line(text) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= 300 else text[:297] + "..."
