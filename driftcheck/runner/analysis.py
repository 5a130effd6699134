"""From attempt results to what a user should read: differences between modes, and findings."""

from __future__ import annotations


def differences(careful: dict, defaults: dict) -> list[dict]:
    """Checks (and the attempt status) whose outcome differs between careful mode and the defaults."""
    diffs = []
    if careful["status"] != defaults["status"]:
        diffs.append({"what": "status", "careful": careful["status"], "defaults": defaults["status"]})
    by_name = {c["name"]: c for c in defaults.get("checks") or []}
    for c in careful.get("checks") or []:
        d = by_name.get(c["name"])
        if d is not None and c["ok"] != d["ok"]:
            diffs.append({"what": c["name"], "careful": c["detail"], "defaults": d["detail"]})
    return diffs


def _settings_changed(careful: dict, defaults: dict) -> dict:
    a = (careful.get("notes") or {}).get("engine") or {}
    b = (defaults.get("notes") or {}).get("engine") or {}
    return {k: {"careful": a.get(k), "defaults": b.get(k)} for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def findings(attempts: list[dict]) -> list[dict]:
    out = []
    by = {(a["driver"], a["mode"], a.get("upstream_connector", False)): a for a in attempts}
    for (driver, mode, upstream), a in by.items():
        notes = a.get("notes") or {}
        for c in notes.get("constraints") or []:
            out.append({"id": "smoke.target-constraint", "severity": "info", "attempt": a["name"],
                        "message": f"the target refused a setting at config time and the runner adapted "
                                   f"{c['adapted']}: {c['message']}"})
        conv = next((c for c in a.get("checks") or [] if c["name"] == "convention"), None)
        if conv is not None and mode == "careful" and not upstream:
            out.append({"id": "smoke.layer-convention", "severity": "info" if conv["ok"] else "error",
                        "attempt": a["name"], "message": f"{driver}: {conv['detail']}"})
        if driver == "native" and mode == "careful" and not upstream and notes.get("upstream_connector_cuda_calls"):
            calls = notes["upstream_connector_cuda_calls"]
            pinned = [c for c in calls if "pin_memory" in c["call"]] or calls
            first = pinned[0]
            out.append({
                "id": "smoke.upstream-connector-needs-cuda", "severity": "warning", "attempt": a["name"],
                "message": ("vLLM's ExampleHiddenStatesConnector cannot run on a CPU build: it calls "
                            f"{first['call']} ({first['path']}:{first['line']}); the runner used its own "
                            "CPU connector (driftcheck.runner.connector.CpuHiddenStatesConnector)"),
                "calls": calls,
            })
        if upstream and a["status"] != "passed":
            err = a.get("error") or {}
            out.append({"id": "smoke.upstream-connector-needs-cuda", "severity": "warning", "attempt": a["name"],
                        "message": f"run with the upstream connector: {err.get('root_cause') or err.get('message')}"})
        if mode == "defaults":
            careful = by.get((driver, "careful", upstream))
            if careful is None:
                continue
            diffs = a.get("differences")
            if diffs is None:
                diffs = a["differences"] = differences(careful, a)
            if diffs:
                out.append({
                    "id": "smoke.defaults-differ", "severity": "warning", "attempt": a["name"],
                    "message": (f"{driver}: with the target's defaults the extraction "
                                f"{'crashed' if a['status'] == 'crashed' else 'returned different data'} "
                                f"({', '.join(d['what'] for d in diffs)}); settings that differ: "
                                f"{_settings_changed(careful, a) or 'none recorded'}"),
                    "differences": diffs,
                })
    return out
