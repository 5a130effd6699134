"""Issue 13 items 3 and 4: a typo or an empty client must not make the gate pass.

`--select` / `fix --only` words that name no rule or fix are exit 2 with the known ids (ids and names match in
any case, `_` for `-`); a client with nothing that imports vLLM is exit 2 unless `--allow-empty`, and what was
skipped (too large, a FIFO) is said, with why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_cli

SCAN = ("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-f", "json")


def _last(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else ""


@pytest.mark.parametrize("word", ["DC999", "", "unknown keyword", "dc03"])
def test_unknown_select_is_exit_2_with_the_known_ids(word):
    proc = run_cli(*SCAN, "--select", word)
    assert proc.returncode == 2, proc.stderr
    line = _last(proc)
    assert line.startswith("driftcheck: error:") and "no rule named" in line and "DC001" in line and "DC108" in line
    assert proc.stdout == "" and "Traceback" not in proc.stderr


@pytest.mark.parametrize("word", ["dc003", "DC003", "unknown-keyword", "Unknown-Keyword", "unknown_keyword"])
def test_select_matches_ids_and_names_in_any_case(word):
    proc = run_cli(*SCAN, "--select", word)
    assert proc.returncode == 1, proc.stderr
    rules = {f["rule"] for f in json.loads(proc.stdout)["findings"]}
    assert rules == {"DC003"}


def test_select_takes_a_comma_separated_list_as_ruff_does():
    proc = run_cli(*SCAN, "--select", "dc003,Unknown-Keyword,DC104")
    assert proc.returncode == 1, proc.stderr
    assert {f["rule"] for f in json.loads(proc.stdout)["findings"]} == {"DC003", "DC104"}
    assert run_cli(*SCAN, "--select", "DC003,DC999").returncode == 2


@pytest.mark.parametrize("word", ["DC999", "drop_keywrd", ""])
def test_unknown_fix_only_is_exit_2_with_rules_and_fixes(tmp_path, word):
    (tmp_path / "c.py").write_text("from vllm import LLM\n")
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(tmp_path), "--only", word)
    assert proc.returncode == 2, proc.stderr
    line = _last(proc)
    assert "no rule or fix named" in line and "DC003" in line and "drop-keyword" in line


def test_fix_only_matches_rule_names_and_fix_ids_in_any_case(tmp_path):
    from driftcheck.rules.selection import resolve_only

    assert resolve_only(["dc003", "Drop_Keyword", "prefix-caching-hidden-states"]) == (["DC003", "DC102"], ["drop-keyword"])


def _empty(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    return d


def _no_vllm(tmp_path):
    d = tmp_path / "http-client"
    d.mkdir()
    (d / "drive.py").write_text("import requests\nrequests.post('http://localhost:8000/v1/completions', json={})\n")
    return d


def _too_large(tmp_path):
    d = tmp_path / "big"
    d.mkdir()
    (d / "huge.py").write_bytes(b"import vllm\n" + b"#" * (9 * 1024 * 1024))
    return d


def _fifo_only(tmp_path):
    d = tmp_path / "fifo"
    d.mkdir()
    os.mkfifo(d / "pipe.py")
    return d


@pytest.mark.parametrize("make, said", [
    (_empty, "none of its 0 .py file(s) imports vLLM"),
    (_no_vllm, "none of its 1 .py file(s) imports vLLM"),
    (_too_large, "huge.py: is 9 MB, too large"),
    (_fifo_only, "pipe.py: is not a regular file"),
])
def test_nothing_checked_is_exit_2_and_says_why(tmp_path, make, said):
    client = make(tmp_path)
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(client), timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr
    assert _last(proc).startswith("driftcheck: error: nothing to check")
    allowed = run_cli("scan", "--vllm", "0.16.0", "--client", str(client), "--allow-empty", "-f", "json", timeout=120)
    assert allowed.returncode == 0, allowed.stderr
    assert said in allowed.stderr  # still said, even when accepted


def test_an_installed_package_without_vllm_is_nothing_checked():
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", "rich")
    assert proc.returncode == 2 and "rich: none of its" in proc.stderr, proc.stderr


def test_skipped_files_are_named_next_to_a_real_scan(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "ok.py").write_text("from vllm import LLM\nLLM(model='m')\n")
    os.mkfifo(d / "pipe.py")
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(d), "-f", "json", timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert "skipped" in proc.stderr and "pipe.py: is not a regular file" in proc.stderr
    coverage = json.loads(proc.stdout)["stats"]["coverage"]
    (entry,) = coverage.values()
    assert entry["importing_vllm"] == 1 and entry["skipped"][0]["why"] == "is not a regular file"


@pytest.mark.parametrize("verb", ["scan", "fix", "range"])
def test_empty_client_argument_is_an_error_at_once(verb):
    proc = run_cli(verb, "--vllm", "0.16.0", "--client", "")
    assert proc.returncode == 2 and _last(proc).startswith("driftcheck: error: --client is empty"), proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_fifo_or_device_as_client_is_one_clear_line(tmp_path, kind):
    client = Path("/dev/zero")
    if kind == "fifo":
        client = tmp_path / "p"
        os.mkfifo(client)
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(client), timeout=60)
    assert proc.returncode == 2, proc.stderr
    line = _last(proc)
    assert line.startswith("driftcheck: error: --client") and ("FIFO" in line or "device" in line)
    assert "internal error" not in proc.stderr
