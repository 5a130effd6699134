"""What changed for me: findings new on a target compared with another vLLM, and the ones that went away.

`driftcheck scan --vllm nightly --since 0.28.0` (or `--since declared`: the vLLM each client declares,
the one it runs today) scans the client on both; findings also present on the `--since` side are
hidden (marked suppressed "also on vLLM X"), so every output format, the report files and the exit
code show only what is new, and `stats.since` in the JSON lists the new and gone ones.
`driftcheck compare OLD.json NEW.json` does the same from two saved JSON reports.
A finding's identity is its fingerprint (rule, vLLM symbol, client file, client code): it survives line
moves and vLLM line numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

from driftcheck.errors import DriftcheckError
from driftcheck.rules.findings import SEVERITY_RANK


def _key(f: dict) -> str:
    return f.get("fingerprint") or "\0".join(str(f.get(k)) for k in ("rule", "symbol", "message"))


def compare(before: list[dict], after: list[dict]) -> dict:
    """{"new": [...], "gone": [...], "unchanged": N} between two lists of finding JSON objects."""
    old = {_key(f): f for f in before}
    new = {_key(f): f for f in after}
    return {"new": [f for k, f in new.items() if k not in old], "gone": [f for k, f in old.items() if k not in new],
            "unchanged": sum(1 for k in new if k in old)}


def load_report(path: str) -> dict:
    p = Path(path).expanduser()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DriftcheckError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise DriftcheckError(f"{path} is a folder, not a JSON report") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DriftcheckError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    except ValueError:
        raise DriftcheckError(f"{path} is not JSON", "pass reports written by driftcheck scan -f json or --report-dir") from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list) or "vllm" not in data:
        raise DriftcheckError(f"{path} is not a driftcheck scan report", "pass reports written by driftcheck scan -f json or --report-dir")
    return data


def _label(report: dict) -> str:
    v = report.get("vllm") or {}
    return str(v.get("version") or v.get("source") or "?")


def compare_reports(old: dict, new: dict) -> dict:
    out = compare(old["findings"], new["findings"])
    return {"old_vllm": old.get("vllm"), "new_vllm": new.get("vllm"), **out}


def apply_since(result, since_result) -> dict:
    """Hide the target's findings that the --since scan also has; return the comparison (kept in stats)."""
    before = [f.to_json() for f in since_result.visible()]
    present = {_key(f) for f in before}
    for f in result.findings:
        if not f.suppressed and f.fingerprint() in present:
            f.suppressed = f"also on vLLM {since_result.vllm.version or since_result.vllm.source}"
    cmp = compare(before, [f.to_json() for f in result.findings if not f.suppressed or f.suppressed.startswith("also on vLLM")])
    out = {"vllm": since_result.vllm.to_json(), "new": cmp["new"], "gone": cmp["gone"], "unchanged": cmp["unchanged"]}
    result.stats["since"] = out
    return out


def render_text(cmp: dict, old_label: str, new_label: str) -> str:
    lines = [f"compared with vLLM {old_label}, vLLM {new_label} has {len(cmp['new'])} new finding(s), "
             f"{len(cmp['gone'])} went away, {cmp['unchanged']} unchanged"]
    for title, items in (("new", cmp["new"]), ("gone", cmp["gone"])):
        for f in sorted(items, key=lambda f: (-SEVERITY_RANK.get(f.get("severity"), 0), f.get("rule", ""))):
            c = f.get("client") or {}
            v = f.get("vllm") or {}
            lines.append(f"  {title:4} {f.get('rule')} {f.get('severity')} {c.get('path')}:{c.get('line')} {str(f.get('message'))[:150]}")
            if v.get("path"):
                lines.append(f"       vLLM {v.get('version') or ''} {v['path']}:{v.get('line')}  {v.get('code', '')}")
    return "".join(x + "\n" for x in lines)


def since_label(result) -> str:
    return str(result.vllm.version or result.vllm.source)


def report_label(report: dict) -> str:
    return _label(report)


def new_at_or_above(cmp: dict, fail_on: str) -> bool:
    if fail_on == "never":
        return False
    return any(SEVERITY_RANK.get(f.get("severity"), 0) >= SEVERITY_RANK[fail_on] for f in cmp["new"])
