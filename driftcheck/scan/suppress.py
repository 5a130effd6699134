"""Hide accepted findings: inline `# driftcheck: ignore[RULE] reason` comments and accepted-findings files.

An accepted-findings file is what users know as a baseline file (`--write-baseline FILE`, `--baseline FILE`,
its JSON says `driftcheck_baseline`); in the code it is "accepted findings", because a *baseline* in
driftcheck's code is the client's own vLLM (the one its requirement declares). An entry is keyed by the finding's fingerprint (rule + vLLM symbol + client file + the
client line's code, so it survives line moves) and records the vLLM version it was accepted for
and a digest of the vLLM side (the definition line and what the probe read there). When a later
vLLM changes that side again, the digest differs and the entry stops hiding the finding.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

from driftcheck import __version__
from driftcheck.errors import DriftcheckError
from driftcheck.rules.findings import Finding

INLINE = re.compile(r"#\s*driftcheck:\s*ignore\[([\w\s,-]+)\](.*)$")
CLIENT_SIDE_DETAILS = {"cache_config", "rpc_line", "capture"}
FORMAT = 1


def vllm_side_digest(f: Finding) -> str:
    details = {k: v for k, v in sorted(f.details.items()) if k not in CLIENT_SIDE_DETAILS}
    raw = json.dumps([f.rule, f.symbol, f.vllm.path if f.vllm else None, (f.vllm.code or "").strip() if f.vllm else None,
                      details], sort_keys=True, default=str)
    return hashlib.sha1(raw.encode()).hexdigest()[:20]


def apply_inline(findings: list[Finding], lines_by_file: dict[str, list[str]]) -> None:
    """`# driftcheck: ignore[DC003] why` on the line above the finding or on any line of its statement/call."""
    for f in findings:
        if f.client is None or f.suppressed:
            continue
        lines = lines_by_file.get(f.client.path)
        if not lines:
            continue
        last = max(f.client.end_line or f.client.line, f.client.line)
        span = range(f.client.line, min(last, f.client.line + 50) + 1)
        for line_no in [*span, f.client.line - 1]:
            if not 0 < line_no <= len(lines):
                continue
            m = INLINE.search(lines[line_no - 1])
            if m is None:
                continue
            if line_no == f.client.line - 1 and not lines[line_no - 1].strip().startswith("#"):
                continue  # a trailing comment on the previous statement is about that statement
            wanted = {w.strip() for w in m.group(1).split(",")}
            if f.rule in wanted or f.name in wanted or "all" in wanted:
                reason = m.group(2).strip() or "no reason given"
                f.suppressed = f"inline ignore: {reason}"
                break


def load_accepted(path: str) -> dict:
    try:
        data = json.loads(Path(path).expanduser().read_text())
    except FileNotFoundError:
        raise DriftcheckError(f"baseline {path} does not exist", "create it with --write-baseline") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DriftcheckError(f"cannot read baseline {path}: {exc}") from None
    except ValueError:
        raise DriftcheckError(f"baseline {path} is not valid JSON") from None
    if not isinstance(data, dict) or data.get("driftcheck_baseline") != FORMAT or not isinstance(data.get("entries"), list):
        raise DriftcheckError(f"{path} is not a driftcheck baseline file", "write one with driftcheck scan --write-baseline FILE")
    return data


def apply_accepted(findings: list[Finding], accepted: dict) -> None:
    entries = {e.get("fingerprint"): e for e in accepted["entries"] if isinstance(e, dict)}
    for f in findings:
        if f.suppressed:
            continue
        entry = entries.get(f.fingerprint())
        if entry is None:
            continue
        if entry.get("vllm_side") == vllm_side_digest(f):
            f.suppressed = f"baseline (accepted for vLLM {entry.get('vllm_version') or '?'})"
        else:
            f.details["baseline_stale"] = (f"accepted for vLLM {entry.get('vllm_version') or '?'}, but the vLLM side "
                                           "changed since: shown again")


def accepted_document(findings: list[Finding], vllm_version: str | None) -> dict:
    entries = []
    for f in findings:
        if f.suppressed and not f.suppressed.startswith("baseline"):
            continue
        entries.append({
            "fingerprint": f.fingerprint(), "rule": f.rule, "symbol": f.symbol,
            "client": f.client.path if f.client else None, "code": f.client.code if f.client else None,
            "vllm_version": vllm_version, "vllm_side": vllm_side_digest(f), "client_name": f.client_name,
        })
    return {"driftcheck_baseline": FORMAT, "driftcheck": __version__, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "vllm_version": vllm_version, "entries": entries}
