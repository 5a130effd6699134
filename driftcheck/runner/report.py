"""Write a smoke result: the JSON document and a JUnit XML file for CI gates (stdlib only).

Attempts in careful mode are the gate: a crash or a failed check is a <failure>. Attempts that only
inform (the target's defaults, the upstream connector) never fail the suite: what they found is in
<skipped> with the reason, so a gate agrees with the exit code of `driftcheck smoke`.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

JSON_NAME = "smoke.json"
JUNIT_NAME = "smoke-junit.xml"


def _atomic_write(path: Path, text: str) -> None:
    from driftcheck.storage.safe_write import write_text  # atomic for files; a link is written through, a device streamed

    write_text(path, text)


def write_json(result: dict, out_dir: Path) -> Path:
    path = Path(out_dir) / JSON_NAME
    _atomic_write(path, json.dumps(result, indent=2, default=str))
    return path


def _failure_text(attempt: dict) -> tuple[str, str, str]:
    """(type, message, body) for an attempt that did not pass as a whole."""
    err = attempt.get("error") or {}
    if attempt["status"] == "timeout":
        return "Timeout", f"no result within {attempt.get('timeout_s')} s", err.get("log_tail", "")
    lines = [err.get("traceback") or err.get("log_tail") or ""]
    for hit in attempt.get("explain") or []:
        lines.append(f"[{hit.get('rule')}] {hit.get('name')}: {hit.get('message')}\nfix: {hit.get('fix')}")
    return err.get("type", "Error"), f"{err.get('type', 'Error')}: {err.get('message', '')}"[:500], "\n".join(lines)


def junit_tree(result: dict) -> ET.ElementTree:
    suites = ET.Element("testsuites", name="driftcheck smoke")
    for attempt in result["attempts"]:
        gate = attempt["gate"]
        suite = ET.SubElement(suites, "testsuite", name=f"driftcheck.smoke.{attempt['name']}")
        props = ET.SubElement(suite, "properties")
        for key in ("driver", "mode", "status"):
            ET.SubElement(props, "property", name=key, value=str(attempt.get(key)))
        ET.SubElement(props, "property", name="gate", value=str(gate).lower())
        for key, value in (result.get("environment") or {}).items():
            if key in ("vllm", "torch", "transformers", "speculators", "python"):
                ET.SubElement(props, "property", name=key, value=str(value))
        cases = []
        classname = f"smoke.{attempt['name']}"
        if attempt["status"] in ("crashed", "timeout"):
            case = ET.SubElement(suite, "testcase", classname=classname, name="extraction",
                                 time=f"{attempt.get('wall_s', 0):.3f}")
            kind, message, body = _failure_text(attempt)
            if gate:
                ET.SubElement(case, "failure", type=kind, message=message).text = body
            else:
                ET.SubElement(case, "skipped", message=f"informational: {message}").text = body
            cases.append(case)
        for check in attempt.get("checks") or []:
            case = ET.SubElement(suite, "testcase", classname=classname, name=check["name"], time="0")
            if not check["ok"]:
                if gate:
                    ET.SubElement(case, "failure", type="CheckFailed", message=check["detail"][:500]).text = check["detail"]
                else:
                    ET.SubElement(case, "skipped", message=f"informational: {check['detail'][:480]}")
            cases.append(case)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("errors", "0")
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
        suite.set("time", f"{attempt.get('wall_s', 0):.3f}")
    return ET.ElementTree(suites)


def write_junit(result: dict, out_dir: Path) -> Path:
    path = Path(out_dir) / JUNIT_NAME
    tree = junit_tree(result)
    ET.indent(tree)
    _atomic_write(path, ET.tostring(tree.getroot(), encoding="unicode", xml_declaration=True) + "\n")
    return path
