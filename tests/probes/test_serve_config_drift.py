"""DC111 serve-config-drift: `vllm serve` flags, JSON config keys, speculative methods and KV connector names
checked against a real release's parser, config classes and connector registry.

Real pairs: hs-connectors 0.7.0 and speculators 0.7.0 build a kv_transfer_config dict naming vLLM's
`ExampleHiddenStatesConnector`, which vLLM registers from 0.17.0 on (absent from 0.16.0). The synthetic
clients below are small files written for these tests (shell, YAML, Dockerfile, Python), scanned against
the real 0.16.0 / 0.17.0 / 0.32.0 / 0.11.0 sources.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from conftest import CACHE_DIR, client_sources, real_scan, run_cli, source_line, vllm_sources
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

FACTORY = "vllm/distributed/kv_transfer/kv_connector/factory.py"


def dc111(result):
    assert not result.internal_errors
    return [f for f in result.findings if f.rule == "DC111"]


def dc111_unknown(result):
    return [u for u in result.unknown if u.rule == "DC111"]


def scan_files(tmp_path, version: str, files: dict[str, str]):
    root = tmp_path / "client"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                ScanOptions(cache_dir=CACHE_DIR, only=["DC111"]))


# ------------------------------------------------------------------------------------------ real releases
@pytest.mark.parametrize("spec,rel", [("hs-connectors==0.7.0", "hs_connectors/transfer.py"),
                                      ("speculators==0.7.0", "speculators/_vendor/hs_connectors/transfer.py")])
def test_connector_unregistered_on_016_present(spec, rel):
    [f] = dc111(real_scan("0.16.0", spec))
    name, version = spec.split("==")
    assert f.severity == "error" and f.symbol == "kv_connector=ExampleHiddenStatesConnector"
    assert f.client.path == rel
    assert f.client.line == source_line(client_sources(name, version), rel, '"kv_connector": "ExampleHiddenStatesConnector"')
    assert f.vllm.path == FACTORY and f.vllm.version == "0.16.0"
    assert "Unsupported connector type" in f.message


@pytest.mark.parametrize("spec", ["hs-connectors==0.7.0", "speculators==0.7.0"])
def test_connector_registered_from_017_absent(spec):
    result = real_scan("0.17.0", spec)
    assert dc111(result) == [] and dc111_unknown(result) == []
    # the Mooncake backend names its own class with kv_connector_module_path: never checked against the registry
    assert source_line(vllm_sources("0.17.0"), FACTORY, '"ExampleHiddenStatesConnector"')


LAUNCHER = '''
import json
import os
import sys


def main(model, layers, extra):
    speculative_config = {
        "method": "extract_hidden_states",
        "num_speculative_tokens": 1,
        "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": layers}},
    }
    kv_transfer_config = {
        "kv_connector": "ExampleHiddenStatesConnector",
        "kv_role": "kv_producer",
        "kv_connector_extra_config": {"shared_storage_path": "/tmp/hs"},
    }
    cmd = [
        sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", model,
        "--speculative_config", json.dumps(speculative_config),
        "--kv_transfer_config", json.dumps(kv_transfer_config),
        *extra,
    ]
    flag = "--no-enable-chunked-prefill"
    cmd.append(flag)
    os.execvp(cmd[0], cmd)
'''


def test_launcher_method_and_connector_missing_on_016(tmp_path):
    found = dc111(scan_files(tmp_path, "0.16.0", {"scripts/launch.py": LAUNCHER}))
    by_symbol = {f.symbol: f for f in found}
    assert set(by_symbol) == {"vllm.config.speculative.SpeculativeConfig.method=extract_hidden_states",
                              "kv_connector=ExampleHiddenStatesConnector"}
    method = by_symbol["vllm.config.speculative.SpeculativeConfig.method=extract_hidden_states"]
    assert method.severity == "error" and method.client.code == '"method": "extract_hidden_states",'
    assert method.vllm.path == "vllm/config/speculative.py" and method.vllm.code.startswith("method:")
    # --speculative_config is read as --speculative-config, and --no-enable-chunked-prefill exists (a bool field)


def test_launcher_fits_017(tmp_path):
    result = scan_files(tmp_path, "0.17.0", {"scripts/launch.py": LAUNCHER})
    assert dc111(result) == [] and dc111_unknown(result) == []


def test_a_launcher_that_imports_no_vllm_is_something_to_check(tmp_path):
    root = tmp_path / "client"
    root.mkdir()
    (root / "launch.py").write_text(LAUNCHER)
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(root), "--select", "DC111", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert {f["rule"] for f in report["findings"]} == {"DC111"}
    [coverage] = report["stats"]["coverage"].values()
    assert coverage["launchers"] == 1 and coverage["importing_vllm"] == 0


# -------------------------------------------------------------------------------- synthetic command lines
def test_python_list_and_subprocess_string_unknown_flags(tmp_path):
    found = dc111(scan_files(tmp_path, "0.32.0", {"run.py": '''
        import subprocess

        def start(model, port, extra):
            cmd = ["vllm", "serve", model, "--port", str(port), "--enable-prefix-cachingg", *extra, "--max-model-len", "4096"]
            subprocess.run(cmd, check=True)
            subprocess.run(f"vllm serve {model} --bogus-flag 1 --tensor-parallel-size 2", shell=True)
    '''}))
    assert sorted((f.client.line, f.symbol) for f in found) == [(4, "vllm serve --enable-prefix-cachingg"),
                                                                (6, "vllm serve --bogus-flag")]
    first = found[0] if found[0].client.line == 4 else found[1]
    assert first.severity == "error" and "--enable-prefix-caching" in first.message  # the near match
    assert first.vllm.path == "vllm/entrypoints/cli/serve.py" and first.vllm.code.startswith("def subparser_init")


# The client installs its own `vllm` command (vllm-omni, be81443c: `[project.scripts] vllm =
# "vllm_omni.entrypoints.cli.main:main"`, whose parser takes `--omni` and hands the rest to vLLM's): an unknown flag of
# `vllm serve` in its own scripts may be its parser's, so it is unknown. Twins: no such script (an error), and the
# module run by path (`python -m vllm.entrypoints.cli.main serve`), which is vLLM's parser whatever the client installs.
OWN_VLLM = {
    "pyproject.toml": """
        [project]
        name = "omni-like"
        [project.scripts]
        vllm = "omni_like.cli:main"
    """,
    "setup.cfg": """
        [options.entry_points]
        console_scripts =
            vllm = omni_like.cli:main
    """,
    "setup.py": """
        from setuptools import setup
        setup(name="omni-like", entry_points={"console_scripts": ["vllm = omni_like.cli:main"]})
    """,
    "omni_like-0.1.dist-info/entry_points.txt": """
        [console_scripts]
        vllm = omni_like.cli:main
    """,
}


@pytest.mark.parametrize("packaging", sorted(OWN_VLLM))
def test_unknown_flag_of_a_vllm_command_the_client_installs_is_unknown(tmp_path, packaging):
    result = scan_files(tmp_path, "0.32.0", {packaging: OWN_VLLM[packaging], "run_server.sh": """
        vllm serve "$MODEL" --omni --port 8091
    """})
    assert dc111(result) == []
    [unknown] = dc111_unknown(result)
    assert unknown.symbol == "vllm serve --omni" and "installs its own `vllm` command" in unknown.message
    assert packaging.rsplit("/", 1)[-1] in unknown.message


def test_twins_no_vllm_script_or_the_module_run_by_path_keep_the_error(tmp_path):
    other = {"pyproject.toml": '[project]\nname = "x"\n[project.scripts]\nomni-serve = "x.cli:main"\n'}
    found = dc111(scan_files(tmp_path / "a", "0.32.0", {**other, "run_server.sh": 'vllm serve "$MODEL" --omni\n'}))
    assert [(f.severity, f.symbol) for f in found] == [("error", "vllm serve --omni")]
    by_module = {"pyproject.toml": OWN_VLLM["pyproject.toml"],
                 "run_server.sh": 'python -m vllm.entrypoints.cli.main serve "$MODEL" --omni\n'}
    found = dc111(scan_files(tmp_path / "b", "0.32.0", by_module))
    assert [(f.severity, f.symbol) for f in found] == [("error", "vllm serve --omni")]


def test_shell_script_flags_json_keys_and_connectors(tmp_path):
    result = scan_files(tmp_path, "0.32.0", {"serve.sh": '''
        #!/bin/bash
        # vllm serve --commented-out-flag
        vllm serve "$MODEL" \\
            --port "$PORT" \\
            --speculative-config '{"method": "eagle3", "num_spec_tokens": 3, "model": "x"}' \\
            --kv-transfer-config '{"kv_connector": "MyConnector", "kv_role": "kv_both"}' \\
            --frobnicate &
        vllm serve m --kv-transfer-config '{"kv_connector": "MyConnector", "kv_connector_module_path": "pkg.conn", "kv_role": "kv_both"}'
        python3 -m vllm.entrypoints.openai.api_server --model m --speculative-config '{"method": "eagle9"}' "$@"
    '''})
    found = {(f.client.line, f.symbol): f for f in dc111(result)}
    assert set(found) == {(5, "vllm.config.speculative.SpeculativeConfig.num_spec_tokens"),
                          (6, "kv_connector=MyConnector"),
                          (7, "vllm serve --frobnicate"),
                          (9, "vllm.config.speculative.SpeculativeConfig.method=eagle9")}
    key = found[(5, "vllm.config.speculative.SpeculativeConfig.num_spec_tokens")]
    assert key.severity == "error" and "num_speculative_tokens" in key.message and "forbidden" in key.message
    assert "passing it (--speculative-config) is a ValidationError when vLLM starts: pydantic refuses it" in key.message
    assert key.vllm.path == "vllm/config/speculative.py" and key.vllm.code.startswith("class SpeculativeConfig")
    assert found[(6, "kv_connector=MyConnector")].vllm.path == FACTORY
    assert all(f.client.path == "serve.sh" for f in found.values())


def test_yaml_and_dockerfile_commands_in_every_report_format(tmp_path):
    root = tmp_path / "client"
    (root / "deploy").mkdir(parents=True)
    (root / "deploy" / "k8s.yaml").write_text(textwrap.dedent('''
        spec:
          containers:
            - name: vllm
              command: ["vllm", "serve", "m", "--max-num-seqz", "8"]
            - name: other
              args:
                - |
                  vllm serve m
                  --gpu-memory-utilisation 0.9
    ''').lstrip())
    (root / "Dockerfile").write_text('FROM vllm/vllm-openai\nENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server", "--no-such-flag"]\n')
    proc = run_cli("scan", "--vllm", "0.32.0", "--client", str(root), "--select", "DC111", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    assert sorted((f["client"]["path"], f["client"]["line"], f["symbol"]) for f in findings) == [
        ("Dockerfile", 2, "python -m vllm.entrypoints.openai.api_server --no-such-flag"),
        ("deploy/k8s.yaml", 4, "vllm serve --max-num-seqz"),
        ("deploy/k8s.yaml", 9, "vllm serve --gpu-memory-utilisation"),
    ]
    sarif = json.loads(run_cli("scan", "--vllm", "0.32.0", "--client", str(root), "--select", "DC111", "-f", "sarif").stdout)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert {"Dockerfile", "deploy/k8s.yaml"} <= {u.rsplit("client/", 1)[-1] for u in uris}
    assert "DC111" in {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    text = run_cli("scan", "--vllm", "0.32.0", "--client", str(root), "--select", "DC111").stdout
    assert "k8s.yaml" in text and "--max-num-seqz" in text


def test_no_finding_for_commands_the_release_accepts(tmp_path):
    result = scan_files(tmp_path, "0.32.0", {
        "ok.sh": '''
            vllm serve m --no-enable-prefix-caching --max_model_len 4096 --speculative-config.method eagle3 \\
                --kv-transfer-config '{"kv_connector": "ExampleHiddenStatesConnector", "kv_role": "kv_producer"}' \\
                --gpu-memory-util 0.8 -tp 2 --served-model-name x "$EXTRA"
            echo "Deploy with: vllm serve $DIR --bogus"
        ''',
        "ok.py": '''
            import subprocess
            args = ["--port", "8000", "--enable-chunked-prefill"]
            subprocess.Popen(["vllm", "serve", "m", *args, "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}'])
            cfg = {"kv_connector": "NixlConnector", "kv_role": "kv_both", "kv_buffer_device": "cpu"}
            stats = {"kv_connector": "x", "dtype": "bf16", "block_size": 16, "enforce_eager": True}
        ''',
    })
    assert dc111(result) == [] and dc111_unknown(result) == []


def test_unknown_key_is_a_silent_warning_where_pydantic_drops_it(tmp_path):
    # 0.11.0's SpeculativeConfig is a pydantic dataclass without extra="forbid": the key is dropped, not refused
    [f] = dc111(scan_files(tmp_path, "0.11.0", {"serve.sh": '''
        vllm serve m --speculative-config '{"method": "eagle", "num_spec_tokens": 3}'
    '''}))
    assert f.severity == "warning" and f.when == "silent" and f.symbol.endswith(".num_spec_tokens")


def test_llm_keywords_not_taken_by_llm_or_engine_args(tmp_path):
    found = dc111(scan_files(tmp_path, "0.32.0", {"offline.py": '''
        from vllm import LLM

        llm = LLM(model="m", enable_prefix_caching=False, max_model_len=1024, tensor_paralel_size=2)
    '''}))
    [f] = found
    assert f.symbol == "vllm.LLM.tensor_paralel_size" and f.severity == "error" and "tensor_parallel_size" in f.message
    assert f.vllm.path == "vllm/entrypoints/llm.py" and "EngineArgs(" in f.vllm.code


def test_rule_is_listed_and_documented():
    proc = run_cli("rules", "DC111")
    assert proc.returncode == 0 and "serve-config-drift" in proc.stdout and "kv_connector_module_path" in proc.stdout
    assert "DC111" in run_cli("rules").stdout


# ------------------------------------------------------------------- a test's dicts (AF_, QD2_ plugin shapes)
TEST_DICT = """
    from types import SimpleNamespace

    from vllm import LLM
    from vllm.config import KVTransferConfig

    CFG = {"kv_connector": "MyConnector", "kv_role": "kv_both"}


    def test_it():
        engine_cfg = SimpleNamespace(kv_transfer_config=SimpleNamespace(**CFG))
        USE
"""


@pytest.mark.parametrize("use,severity", [
    ("assert engine_cfg.kv_transfer_config.kv_role == 'kv_both'", "warning"),  # only a stand-in receives it
    ("LLM('m', kv_transfer_config=CFG)", "error"),  # the dict reaches vLLM in the test
    ("KVTransferConfig(**CFG)", "error"),
    ("runner(kv_transfer_config=CFG)", "error"),  # a test helper of that keyword forwards it to vLLM (VllmRunner)
    ("runner(SimpleNamespace(kv_transfer_config=CFG))", "warning"),  # a stand-in of the standard library's
])
def test_a_test_files_config_dict_is_certain_only_where_it_reaches_vllm(tmp_path, use, severity):
    """ai-dynamo's tests (AF) build "kv_connector" dicts for stand-ins (`SimpleNamespace`, a client helper that wraps
    one) that never reach vLLM: a test's dict is an error only where driftcheck sees it handed on to vLLM (an argument
    of a vLLM call, or the `kv_transfer_config=` of a call that is no standard-library stand-in); otherwise a warning
    that says why."""
    text = TEST_DICT.replace("USE", use)
    [f] = dc111(scan_files(tmp_path, "0.16.0", {"tests/test_cfg.py": text}))
    assert (f.severity, f.symbol, f.client.path) == (severity, "kv_connector=MyConnector", "tests/test_cfg.py")
    assert ("driftcheck does not see it handed to vLLM" in f.message) == (severity == "warning")


def test_twin_the_packages_config_dict_stays_an_error_wherever_it_goes(tmp_path):
    text = TEST_DICT.replace("USE", "return engine_cfg").replace("def test_it", "def engine_config")
    [f] = dc111(scan_files(tmp_path, "0.16.0", {"pkg/engine.py": text}))
    assert (f.severity, f.symbol) == ("error", "kv_connector=MyConnector")
