"""SARIF 2.1.0 for GitHub code scanning: stable rule ids, one result per client call site.

Results are located in the client's files (relative to CLIENTROOT); the vLLM definition that
changed is a related location (relative to VLLMROOT). `partialFingerprints` carry driftcheck's
line-move-proof fingerprint so alerts are deduplicated across runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from driftcheck import __version__

LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/driftcheck/driftcheck"


def _rules():
    from driftcheck.probes import load_probes

    out = []
    for module in load_probes():
        rule = module.RULE
        doc = (module.__doc__ or rule.title).strip()
        out.append({
            "id": rule.id,
            "name": rule.name,
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": doc.split("\n\n", 1)[-1].replace("\n", " ") if "\n\n" in doc else doc},
            "help": {"text": doc, "markdown": doc},
            "defaultConfiguration": {"level": LEVEL[rule.severity]},
            "properties": {"tags": ["vllm", "api-drift", rule.kind], "fix": rule.fix},
        })
    return out


def _uri_root(location: str) -> str:
    """A file:// URI for a folder target (or a file's folder); "" for fetched releases."""
    path = Path(location)
    if not path.exists():
        return ""
    return (path.parent if path.is_file() else path).resolve().as_uri() + "/"


def render(result, client_root: str | None = None, **_options) -> str:
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in result.visible():
        res = {
            "ruleId": f.rule,
            "ruleIndex": index.get(f.rule, 0),
            "level": LEVEL[f.severity],
            "message": {"text": f.message},
            "partialFingerprints": {"driftcheckFingerprint/v1": f.fingerprint()},
            "properties": {"symbol": f.symbol, "fix": f.fix, "when": f.when, "client": f.client_name},
        }
        if f.client:
            region = {"startLine": f.client.line, "snippet": {"text": f.client.code}}
            if f.client.col:
                region["startColumn"] = f.client.col
            if f.client.end_line and f.client.end_line == f.client.line and f.client.end_col:
                region["endColumn"] = f.client.end_col
            res["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": f.client.path, "uriBaseId": "CLIENTROOT"},
                                                      "region": region}}]
        if f.vllm:
            res["relatedLocations"] = [{
                "id": 1,
                "message": {"text": f"vLLM {f.vllm.version or ''} definition".replace("  ", " ")},
                "physicalLocation": {"artifactLocation": {"uri": f.vllm.path, "uriBaseId": "VLLMROOT"},
                                     "region": {"startLine": max(f.vllm.line, 1), "snippet": {"text": f.vllm.code}}},
            }]
        results.append(res)
    notifications = [{"level": "warning", "message": {"text": f"{u.rule} unknown: {u.message}"}} for u in result.unknown]
    notifications += [{"level": "error", "message": {"text": e}} for e in result.internal_errors]
    base_ids = {}
    if client_root or result.clients:
        root = client_root or _uri_root(result.clients[0].location)
        if root:
            base_ids["CLIENTROOT"] = {"uri": root if "://" in root else Path(root).resolve().as_uri() + "/"}
    vroot = _uri_root(result.vllm.location.rsplit("/vllm", 1)[0]) if result.vllm.kind in ("installed", "folder") else ""
    base_ids["VLLMROOT"] = {"uri": vroot} if vroot else {"description": {"text": result.vllm.source}}
    run = {
        "tool": {"driver": {"name": "driftcheck", "version": __version__, "informationUri": INFO_URI, "rules": rules}},
        "originalUriBaseIds": base_ids,
        "results": results,
        "invocations": [{"executionSuccessful": not result.internal_errors, "toolExecutionNotifications": notifications}],
        "properties": {"vllm": result.vllm.to_json(), "clients": [c.to_json() for c in result.clients]},
    }
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
