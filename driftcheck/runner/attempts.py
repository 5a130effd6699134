"""Run one step of a smoke run as a child process and turn what it left into an attempt result."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from driftcheck.runner import logtext, procs
from driftcheck.runner.spec import AttemptSpec


def run_child(python: str, args: list[str], out_json: Path, log: Path, env: dict, timeout: float) -> tuple[dict | None, procs.Outcome]:
    out_json.unlink(missing_ok=True)
    outcome = procs.run_isolated([python, "-m", "driftcheck.runner.child", *args, str(out_json)],
                                 env=env, timeout_s=timeout, log_path=log)
    data = json.loads(out_json.read_text()) if out_json.exists() else None
    return data, outcome


def explain(tracebacks: list[str]) -> list[dict] | None:
    """The explain engine's diagnoses (rule, name, message, fix) for each traceback, deduplicated;
    None when driftcheck.report.explain is not there."""
    try:
        from driftcheck.report.explain import explain_text
    except ImportError:
        return None
    hits: dict = {}
    for text in tracebacks:
        try:
            found = explain_text(text)
        except Exception as exc:  # advisory: its failure must not hide the finding
            if type(exc).__name__ == "NotATraceback":
                continue
            found = [{"rule": None, "name": "explain failed", "message": f"{type(exc).__name__}: {exc}", "fix": None}]
        for hit in found:
            hits.setdefault((hit.get("rule"), hit.get("message")), hit)
    return list(hits.values())


def root_cause(blocks: list[str]) -> str:
    """The exception line of the first logged traceback that is not a pointer to another one."""
    last_lines = [b.strip().splitlines()[-1] for b in blocks]
    return next((ln for ln in last_lines if "stack trace" not in ln), last_lines[0])


def run_attempt(python: str, spec: AttemptSpec, env: dict, timeout: float, keep: bool) -> dict:
    adir = Path(spec.out_dir)
    shutil.rmtree(adir, ignore_errors=True)
    adir.mkdir(parents=True)
    (adir / "spec.json").write_text(spec.to_json())
    data, outcome = run_child(python, ["attempt", str(adir / "spec.json")], adir / "result.json",
                              adir / "log.txt", env, timeout)
    log_text = (adir / "log.txt").read_text(errors="replace")
    if data is None:
        data = {"name": spec.name, "driver": spec.driver, "mode": spec.mode, "layers": spec.layers,
                "metrics": {}, "notes": {},
                "status": "timeout" if outcome.timed_out else "crashed",
                "error": {"type": "Timeout" if outcome.timed_out else "ChildDied",
                          "message": (f"no result within {timeout:.0f} s" if outcome.timed_out else
                                      f"the attempt process exited with {outcome.returncode} without a result")}}
    data.update(upstream_connector=spec.upstream_connector, gate=spec.mode == "careful" and not spec.upstream_connector,
                wall_s=outcome.wall_s, timeout_s=timeout, log=str(adir / "log.txt"), leftover_pids=outcome.leftovers)
    data["metrics"]["peak_rss_mb"] = outcome.peak_rss_mb
    if data["status"] == "timeout":
        # tracebacks logged after the kill are the shutdown's, not a cause: keep only the tail
        data["error"]["log_tail"] = logtext.tail(log_text)
    elif data["status"] == "crashed":
        err = data.setdefault("error", {})
        logged = logtext.tracebacks(log_text)
        err["logged_tracebacks"] = logged
        if logged:
            err["root_cause"] = root_cause(logged)
            client = (data.get("notes") or {}).get("client")
            # the client code that raised in an engine process (a worker extension, say)
            in_client = [f for b in logged for f in logtext.frames(b) if client and f["file"].startswith(client)]
            if in_client:
                err["client_frame"] = in_client[-1]
        err.setdefault("log_tail", logtext.tail(log_text))
        data["explain"] = explain(list(filter(None, [err.get("traceback"), *logged])) or [err["log_tail"]])
    if not keep:
        shutil.rmtree(adir / "hidden_states", ignore_errors=True)
    return data
