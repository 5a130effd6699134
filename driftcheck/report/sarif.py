"""SARIF 2.1.0 for GitHub code scanning: stable rule ids, one result per client call site.

Results are located in the client's files (relative to CLIENTROOT); the vLLM definition that
changed is a related location (relative to VLLMROOT). `partialFingerprints` carry driftcheck's
line-move-proof fingerprint so alerts are deduplicated across runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from driftcheck import __version__

LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/driftcheck/driftcheck"


def _rules():
    from driftcheck.rules.registry import entries

    out = []
    for e in entries():
        rule = e.rule
        doc = e.docs
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


def _uri(path: str) -> str:
    """A relative URI reference for a posix path: spaces, `#`, `%`, `?` and non-ASCII percent-encoded."""
    return quote(path, safe="/")


def _base_ids(result, client_root: str | None) -> tuple[dict, dict[str, str]]:
    """originalUriBaseIds with every id a result uses declared (a uri when the root is on disk, else a
    description), and client name -> its base id (one per client: their paths are relative to different roots)."""
    base_ids: dict[str, dict] = {}
    by_client: dict[str, str] = {}
    clients = result.clients or [None]
    for i, client in enumerate(clients):
        key = "CLIENTROOT" if i == 0 else f"CLIENTROOT{i + 1}"
        root = client_root if (client_root and i == 0) else (_uri_root(client.location) if client is not None else "")
        if root:
            base_ids[key] = {"uri": root if "://" in root else Path(root).resolve().as_uri() + "/"}
        else:
            base_ids[key] = {"description": {"text": client.source if client is not None else "the client"}}
        if client is not None:
            by_client[client.name or client.location] = key
    vroot = _uri_root(result.vllm.location.rsplit("/vllm", 1)[0]) if result.vllm.kind in ("installed", "folder") else ""
    base_ids["VLLMROOT"] = {"uri": vroot} if vroot else {"description": {"text": result.vllm.source}}
    return base_ids, by_client


def _uri_root(location: str) -> str:
    """A file:// URI for a folder target (or a file's folder); "" for fetched releases."""
    path = Path(location)
    if not path.exists():
        return ""
    return (path.parent if path.is_file() else path).resolve().as_uri() + "/"


def render(result, client_root: str | None = None, **_options) -> str:
    base_ids, by_client = _base_ids(result, client_root)
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
            base = by_client.get(f.client_name or "", "CLIENTROOT")
            res["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.client.path), "uriBaseId": base},
                                                      "region": region}}]
        if f.vllm:
            res["relatedLocations"] = [{
                "id": 1,
                "message": {"text": f"vLLM {f.vllm.version or ''} definition".replace("  ", " ")},
                "physicalLocation": {"artifactLocation": {"uri": _uri(f.vllm.path), "uriBaseId": "VLLMROOT"},
                                     "region": {"startLine": max(f.vllm.line, 1), "snippet": {"text": f.vllm.code}}},
            }]
        results.append(res)
    notifications = [{"level": "warning", "message": {"text": f"{u.rule} unknown: {u.message}"}} for u in result.unknown]
    notifications += [{"level": "error", "message": {"text": e}} for e in result.internal_errors]
    run = {
        "tool": {"driver": {"name": "driftcheck", "version": __version__, "informationUri": INFO_URI, "rules": rules}},
        "originalUriBaseIds": base_ids,
        "results": results,
        "invocations": [{"executionSuccessful": not result.internal_errors, "toolExecutionNotifications": notifications}],
        "properties": {"vllm": result.vllm.to_json(), "clients": [c.to_json() for c in result.clients]},
    }
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"
