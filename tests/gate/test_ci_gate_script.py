"""The GitHub Action's script, run as a plain script: reports written, annotations printed, summary appended."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import CACHE_DIR, REPO


def run_gate(tmp_path, *args):
    summary = tmp_path / "summary.md"
    env = dict(os.environ, DRIFTCHECK_CACHE_DIR=str(CACHE_DIR), GITHUB_STEP_SUMMARY=str(summary), NO_COLOR="1",
               PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    proc = subprocess.run(["bash", str(REPO / "scripts" / "ci_gate.sh"), *args], capture_output=True, text=True,
                          env=env, timeout=600)
    return proc, summary


def test_gate_fails_with_reports_annotations_and_summary(tmp_path):
    out = tmp_path / "reports"
    proc, summary = run_gate(tmp_path, "0.16.0", "speculators==0.3.0", str(out))
    assert proc.returncode == 1, proc.stderr
    data = json.loads((out / "driftcheck.json").read_text())
    assert data["summary"]["error"] >= 8
    sarif = json.loads((out / "driftcheck.sarif").read_text())
    assert sarif["version"] == "2.1.0" and len(sarif["runs"][0]["results"]) == len(data["findings"])
    suite = ET.parse(out / "driftcheck.junit.xml").getroot().find("testsuite")
    assert int(suite.get("failures")) == data["summary"]["error"]
    assert proc.stdout.count("::error file=") == data["summary"]["error"]
    assert "## driftcheck" in summary.read_text()


def test_gate_passes_on_a_compatible_pair(tmp_path):
    proc, _ = run_gate(tmp_path, "0.11.0", "speculators==0.3.0", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr + proc.stdout


def test_gate_passes_extra_scan_args(tmp_path):
    proc, _ = run_gate(tmp_path, "0.16.0", "speculators==0.3.0", str(tmp_path / "r"), "--", "--fail-on", "never")
    assert proc.returncode == 0, proc.stderr


def test_action_and_hook_files_name_the_script_and_command():
    action = (REPO / "action.yml").read_text()
    assert "scripts/ci_gate.sh" in action and "upload-sarif" in action and "wheels.vllm.ai/nightly" in action
    assert "actions/cache@" in action and "path: ~/.cache/driftcheck" in action  # later runs start warm
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert "id: driftcheck" in hooks and "entry: driftcheck scan" in hooks
