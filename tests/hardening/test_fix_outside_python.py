"""Issue 13 item 13: `fix` on what is not Python code, and fixes that no finding offers.

A DC102 finding in a shell script used to crash `fix` (the codemod parsed serve.sh as Python). Now a `vllm
serve` line gets `--no-enable-prefix-caching`, a Python list of command-line arguments gets it too (not a
keyword on `json.dumps(...)` or `subprocess.run(...)`), and anything else is "no codemod for this file"/"this
command". A single .py given as --client is the whole client. Every rule's declared fix is one its findings
can offer (DC006 declared rename-method, which none of its findings ever offered)."""

from __future__ import annotations

import json

from conftest import run_cli

SERVE = """#!/bin/bash
# hidden states for training a drafter
vllm serve meta-llama/Llama-3.1-8B \\
  --speculative-config '{"method": "extract_hidden_states", "num_speculative_tokens": 1}' \\
  --port 8000 > server.log 2>&1 &
python tools/other.py --connector ExampleHiddenStatesConnector
"""

LAUNCH = '''import json
import subprocess

from vllm import LLM
from vllm.config import KVTransferConfig


def serve(model):
    cmd = [
        "vllm", "serve", model,
        "--kv-transfer-config", json.dumps({"kv_connector": "ExampleHiddenStatesConnector", "kv_role": "kv_producer"}),
    ]
    return subprocess.Popen(cmd)


def engine(model):
    return LLM(model=model, kv_transfer_config=KVTransferConfig(kv_connector="ExampleHiddenStatesConnector", kv_role="kv_producer"))
'''


def _client(tmp_path, **files):
    root = tmp_path / "client"
    root.mkdir()
    for name, text in files.items():
        (root / name.replace("__", ".")).write_text(text)
    return root


def test_dc102_in_a_shell_script_is_fixed_on_its_vllm_serve_line(tmp_path):
    root = _client(tmp_path, serve__sh=SERVE, launch__py=LAUNCH)
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(root), "--only", "disable-prefix-caching", "--apply", "--no-backup")
    assert proc.returncode in (0, 1), proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert (root / "serve.sh").read_text() == SERVE.replace("--port 8000 >", "--port 8000 --no-enable-prefix-caching >")
    assert "serve.sh:6: no codemod for this command: it is not `vllm serve`" in proc.stderr
    launch = (root / "launch.py").read_text()
    # the argument list gets the flag; the call that builds the engine gets the keyword; json.dumps and
    # KVTransferConfig are left alone (a keyword there is a TypeError at run time)
    assert '"kv_role": "kv_producer"}), "--no-enable-prefix-caching",\n    ]' in launch
    assert 'kv_role="kv_producer"), enable_prefix_caching=False)' in launch
    assert "json.dumps({\"kv_connector\": \"ExampleHiddenStatesConnector\", \"kv_role\": \"kv_producer\"})," in launch
    after = run_cli("scan", "--vllm", "0.16.0", "--client", str(root), "--select", "DC102", "-f", "json")
    left = [(f["client"]["path"], f["client"]["line"]) for f in json.loads(after.stdout)["findings"]]
    assert left == [("serve.sh", 6)]  # only the command that is not vLLM's


def test_dc102_in_yaml_says_no_codemod_for_this_file(tmp_path):
    yaml = "args:\n  - --speculative-config\n  - '{\"method\": \"extract_hidden_states\"}'\n"
    root = _client(tmp_path, deploy__yaml=yaml, launch__py="import vllm\n")
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(root), "--apply", "--no-backup", "--only", "DC102")
    assert "no codemod for this file" in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert (root / "deploy.yaml").read_text() == yaml


def test_a_warning_is_fixed_only_when_only_names_it(tmp_path):
    """DC102 is a warning (results change silently where prompts repeat; nothing fails): `fix` rewrites errors only,
    lists the warning as left alone, and applies its fix when `--only` names the rule or the fix."""
    script = "vllm serve m --speculative-config '{\"method\": \"extract_hidden_states\"}'\n"
    root = _client(tmp_path, serve__sh=script, launch__py="import vllm\n")
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(root), "--apply", "--no-backup")
    assert proc.returncode in (0, 1) and "internal error" not in proc.stderr, proc.stderr  # 1: DC111's error is left
    assert "left alone: 1 warning(s) with a fix" in proc.stderr and "--only DC102" in proc.stderr, proc.stderr
    assert (root / "serve.sh").read_text() == script
    for asked in (["--only", "DC102"], ["--only", "disable-prefix-caching"], ["--warnings"]):
        (root / "serve.sh").write_text(script)
        proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(root), "--apply", "--no-backup", *asked)
        assert "--no-enable-prefix-caching" in (root / "serve.sh").read_text(), proc.stderr


def test_a_single_py_client_is_the_whole_client(tmp_path):
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    (folder / "unrelated.sh").write_text("vllm serve m --speculative-config '{\"method\": \"extract_hidden_states\"}'\n")
    (folder / "tool").mkdir()
    (folder / "tool" / "run.yaml").write_text("connector: ExampleHiddenStatesConnector\n")
    (folder / "mine.py").write_text("from vllm import LLM\n\nLLM(model='m')\n")
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(folder / "mine.py"), "--select", "DC102", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["findings"] == []  # the folder's other files are not the client's


def test_every_declared_fix_is_one_the_rules_findings_can_offer():
    from driftcheck.rules.registry import entries, entry, fix_modules

    fixes = {m.FIX.id: m for m in fix_modules()}
    for e in entries():
        rule = e.rule
        if rule.fix:
            assert rule.fix in fixes and rule.id in fixes[rule.fix].FIX.rules, rule.id
            assert rule.fix in e.fix_ids, rule.id  # the registry offers the rule's own fix
    dc006 = entry("DC006").rule
    assert dc006.fix is None  # its findings pass fix=False: a similar name is a hint, not a proven rename
    assert "DC006" not in fixes["rename-method"].FIX.rules
    rules = run_cli("rules")
    assert any(line.split()[:5] == ["DC006", "missing-attribute", "error", "generic", "-"] for line in rules.stdout.splitlines())
