import json
import xml.etree.ElementTree as ET

from driftcheck.runner import report


def attempt(name, mode, status, checks=(), gate=None, **extra):
    return {"name": name, "driver": name.split("-")[0], "mode": mode, "status": status, "wall_s": 1.5,
            "gate": mode == "careful" if gate is None else gate, "checks": list(checks), **extra}


OK = {"name": "rows", "ok": True, "detail": "fine"}
BAD = {"name": "rows", "ok": False, "detail": "pass 2 prompt 1: 35 rows for 45 tokens"}


def test_junit_gate_failures_and_informational_skips(tmp_path):
    result = {"environment": {"vllm": "0.16.0"}, "attempts": [
        attempt("generator-careful", "careful", "crashed",
                error={"type": "ValidationError", "message": "is_encoder_decoder Field required",
                       "traceback": "Traceback ...\nValidationError"},
                explain=[{"rule": "missing-argument", "name": "Missing argument", "message": "m", "fix": "f"}]),
        attempt("generator-defaults", "defaults", "failed", [OK | {"name": "layers"}, BAD]),
        attempt("native-careful", "careful", "passed", [OK]),
    ]}
    path = report.write_junit(result, tmp_path)
    root = ET.parse(path).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    crashed = suites["driftcheck.smoke.generator-careful"]
    assert crashed.get("failures") == "1"
    failure = crashed.find("testcase/failure")
    assert failure.get("type") == "ValidationError" and "missing-argument" in failure.text and "fix: f" in failure.text
    informational = suites["driftcheck.smoke.generator-defaults"]
    assert informational.get("failures") == "0" and informational.get("skipped") == "1"
    assert "35 rows" in informational.find("testcase/skipped").get("message")
    assert suites["driftcheck.smoke.native-careful"].get("failures") == "0"
    assert root.find(".//property[@name='vllm']").get("value") == "0.16.0"


def test_json_is_written_atomically(tmp_path):
    path = report.write_json({"ok": True, "attempts": []}, tmp_path / "sub")
    assert json.loads(path.read_text()) == {"ok": True, "attempts": []}
    assert [p.name for p in path.parent.iterdir()] == [report.JSON_NAME]
