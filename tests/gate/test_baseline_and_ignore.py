"""Baselines hide today's findings and nothing else, and stop hiding one whose vLLM side changed."""

from __future__ import annotations

import json
import zipfile

from conftest import client_sources, run_cli

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"


def scan_json(*args):
    proc = run_cli("scan", "-f", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout), proc.returncode


def test_baseline_hides_todays_findings_only(tmp_path):
    baseline = tmp_path / "baseline.json"
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--write-baseline", str(baseline))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(baseline.read_text())
    assert doc["vllm_version"] == "0.16.0" and len(doc["entries"]) >= 10
    hidden, rc = scan_json("--vllm", "0.16.0", "--client", "speculators==0.3.0", "--baseline", str(baseline))
    assert rc == 0 and hidden["findings"] == [] and hidden["summary"]["suppressed"] == len(doc["entries"])
    # speculators 0.4.0 against 0.32.0: its Request(eos_token_id=) error is new, so it is not hidden
    other, rc = scan_json("--vllm", "0.32.0", "--client", "speculators==0.4.0", "--baseline", str(baseline))
    assert rc == 1 and any(f["rule"] == "DC003" and "eos_token_id" in f["symbol"] for f in other["findings"])


def test_baseline_stops_hiding_when_the_vllm_side_changes(tmp_path):
    baseline = tmp_path / "baseline.json"
    run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--write-baseline", str(baseline))
    later, _ = scan_json("--vllm", "0.32.0", "--client", "speculators==0.3.0", "--baseline", str(baseline))
    by_rule = {f["rule"]: f for f in later["findings"]}
    # 0.32 fails DC101 with an IndexError instead of the assert: same client line, changed vLLM side
    assert by_rule["DC101"]["details"]["baseline_stale"].startswith("accepted for vLLM 0.16.0")
    # the kv_cache_specs drop is unchanged between 0.16 and 0.32: still hidden
    assert not any(f["rule"] == "DC003" and "kv_cache_specs" in f["symbol"] for f in later["findings"])
    assert any(f["rule"] == "DC003" and "kv_cache_specs" in f["symbol"] for f in later["suppressed"])


def test_baseline_survives_line_moves(tmp_path):
    folder = tmp_path / "client"
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(folder)
    baseline = tmp_path / "baseline.json"
    run_cli("scan", "--vllm", "0.16.0", "--client", str(folder), "--write-baseline", str(baseline))
    path = folder / GEN
    path.write_text("# a new header line\n# and another\n" + path.read_text())
    moved, rc = scan_json("--vllm", "0.16.0", "--client", str(folder), "--baseline", str(baseline))
    assert rc == 0 and moved["findings"] == []


def test_inline_ignore_hides_that_rule_on_that_line(tmp_path):
    folder = tmp_path / "client"
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(folder)
    path = folder / GEN
    text = path.read_text().replace("            kv_cache_specs=kv_cache_spec,\n",
                                    "            kv_cache_specs=kv_cache_spec,  # driftcheck: ignore[DC003] patched at runtime\n")
    path.write_text(text)
    result, _ = scan_json("--vllm", "0.16.0", "--client", str(folder))
    assert not any(f["rule"] == "DC003" for f in result["findings"])
    [hidden] = [f for f in result["suppressed"] if f["rule"] == "DC003"]
    assert hidden["suppressed"] == "inline ignore: patched at runtime"
    # a different rule on the same statement is not hidden
    assert any(f["rule"] == "DC005" for f in result["findings"])


def test_bad_baseline_file_is_a_usage_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--baseline", str(bad))
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
