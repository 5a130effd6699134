"""Batch 32a (KV connectors, offloading specs and KV-cache patches at their stored GitHub heads,
docs/triage/2026-12-05-kv-connectors-32a.md).

VA1: exo's KV extraction script (exo-explore/exo, refs/pull/2006 and the leo/prefill-decode-really branch,
scripts/disaggregated/test_kv_extract.py) starts vLLM with `kv_transfer_config={"kv_connector":
"capture_connector:CaptureConnector", ...}`, a name vLLM's factory does not register, and no
`kv_connector_module_path`. Before it does, its `_patch_vllm_for_connector()` rebinds
`factory.KVConnectorFactory._get_connector_class_with_compat` to a classmethod that returns its own `CaptureConnector`
for that name, the very method vLLM 0.13.0-0.20.1 looks the name up in (and raises `Unsupported connector type`
from). DC111 said the engine fails to start. A rebinding, in the config's file (or anywhere in a client that registers
a vLLM plugin), of one of the release's factory methods the name passes through on its way to the lookup
(`ServeModel.factory_path`: the lookup and the methods of the class that call it) now makes the name `unknown`,
naming the replacement. Where the release's factory no longer has that method (0.22.0 looks names up in
`get_connector_class`), the rebinding creates a method nothing calls and the name stays an error; so does a rebinding
of a method off that path (`register_connector`), and one in another module the config's file never loads. The
error then says when the config's file rebinds a factory method the release does not have (nothing calls it). The
last two VA1 tests run the script's patch against the real 0.16.0 (unknown) and 0.22.0 (error) factories.

VA2: vllm-omni's PD branch (ahengljh/vllm-omni feat/pd-disaggregation bcfad32, `omni_llm.py`'s
`_flush_kv_connector_sends`) builds `so = SchedulerOutput.make_empty()`, sets its `kv_connector_metadata` and calls
`model_executor.execute_model(so)` so that the worker sends pending KV. DC103 said execute_model() "returns None and
keeps its state", so the next call raises without a sample_tokens(). For an output that schedules no tokens the
runner returns before it keeps any state (0.16.0 gpu_model_runner.py:3351-3367, `if not num_scheduled_tokens: ...
return self.kv_connector_no_forward(...)`). Where the target's runner does so and its `SchedulerOutput.make_empty()`
schedules nothing (`facts.empty_output_returns_early`), a call handed that output, directly or through a name the
function binds only to it and sets no token count on, is not a site. A name given a token count, or a runner that
keeps its state before that return, stays a finding.
"""

from __future__ import annotations

from conftest import CACHE_DIR, vllm_sources  # noqa: F401
from scan.helpers import edited, line_of, plugin_shape, scan_trees

VA1_VLLM, VA1_CLIENT = plugin_shape("VA1")
VA2_VLLM, VA2_CLIENT = plugin_shape("VA2")
RUNNER = "vllm/v1/worker/gpu_model_runner.py"
FLUSH = "omni/omni_llm.py"
FACTORY = "vllm/distributed/kv_transfer/kv_connector/factory.py"
SCRIPT = "extract_kv.py"


def _dc111(tmp_path, vllm_files=VA1_VLLM, client_files=VA1_CLIENT, messages=None):
    result = scan_trees(tmp_path, vllm_files, client_files, only=["DC111"])
    assert not result.internal_errors
    if messages is not None:
        messages.extend(f.message for f in result.findings if f.rule == "DC111")
    return ([(f.severity, f.client.path, f.client.line) for f in result.findings if f.rule == "DC111"],
            [u for u in result.unknown if u.rule == "DC111"])


def test_va1_connector_name_the_replaced_lookup_answers_for_is_unknown(tmp_path):
    findings, unknown = _dc111(tmp_path)
    assert findings == []
    line = line_of(VA1_CLIENT[SCRIPT], '"kv_connector": "capture_connector:CaptureConnector"')
    assert [(u.client.path, u.client.line) for u in unknown] == [(SCRIPT, line)]
    assert "replaces `KVConnectorFactory._get_connector_class_with_compat`" in unknown[0].message
    assert f"{SCRIPT}:{line_of(VA1_CLIENT[SCRIPT], 'factory.KVConnectorFactory._get_connector_class_with_compat = ')}" \
        in unknown[0].message


def test_va1_twin_a_release_that_looks_the_name_up_elsewhere_keeps_the_error(tmp_path):
    # vLLM 0.22.0: `create_connector` calls `get_connector_class`, which raises; the client's rebinding of
    # `_get_connector_class_with_compat` adds a method nothing calls
    vllm = edited(VA1_VLLM, FACTORY, ("cls._get_connector_class_with_compat(config)", "cls.get_connector_class(config)"),
                  ("def _get_connector_class_with_compat(", "def get_connector_class("))
    messages: list[str] = []
    findings, unknown = _dc111(tmp_path, vllm_files=vllm, messages=messages)
    line = line_of(VA1_CLIENT[SCRIPT], '"kv_connector": "capture_connector:CaptureConnector"')
    assert findings == [("error", SCRIPT, line)] and unknown == []
    assert "rebinding of `KVConnectorFactory._get_connector_class_with_compat`" in messages[0]
    assert "does not have: nothing calls it" in messages[0]


def test_va1_twin_a_rebound_method_the_lookup_never_passes_through_keeps_the_error(tmp_path):
    client = edited(VA1_CLIENT, SCRIPT,
                    ("original_get = factory.KVConnectorFactory._get_connector_class_with_compat",
                     "original_get = factory.KVConnectorFactory.register_connector"),
                    ("factory.KVConnectorFactory._get_connector_class_with_compat = patched_get",
                     "factory.KVConnectorFactory.register_connector = patched_get"))
    messages: list[str] = []
    findings, unknown = _dc111(tmp_path, client_files=client, messages=messages)
    line = line_of(VA1_CLIENT[SCRIPT], '"kv_connector": "capture_connector:CaptureConnector"')
    assert findings == [("error", SCRIPT, line)] and unknown == []
    assert "nothing calls it" not in messages[0]  # `register_connector` is a method the release has


def _patch_elsewhere(client: dict[str, str]) -> dict[str, str]:
    """The patching function moved to a module of its own, which the script does not import."""
    text = client[SCRIPT]
    start, end = text.index("def _patch_vllm_for_connector():"), text.index("def main():")
    patch = text[start:end]
    script = text[:start] + text[end:]
    script = script.replace("    _patch_vllm_for_connector()\n", "")
    return {**client, SCRIPT: script, "patches.py": patch}


def test_va1_twin_a_replacement_in_a_module_the_script_never_loads_keeps_the_error(tmp_path):
    client = _patch_elsewhere(VA1_CLIENT)
    findings, unknown = _dc111(tmp_path, client_files=client)
    line = line_of(client[SCRIPT], '"kv_connector": "capture_connector:CaptureConnector"')
    assert findings == [("error", SCRIPT, line)] and unknown == []


def test_va1_a_plugin_replacing_the_lookup_in_its_own_module_makes_the_name_unknown(tmp_path):
    # a vLLM plugin's entry point runs in every vLLM process: its rebinding is in effect wherever the engine starts
    client = {**_patch_elsewhere(VA1_CLIENT), "pyproject.toml": (
        '[project]\nname = "capture"\nversion = "0.1"\n\n'
        '[project.entry-points."vllm.general_plugins"]\ncapture = "patches:_patch_vllm_for_connector"\n')}
    findings, unknown = _dc111(tmp_path, client_files=client)
    assert findings == []
    assert len(unknown) == 1 and "patches.py:" in unknown[0].message


# ------------------------------------------------------------------------------------------ real releases
def _exo_script() -> str:
    """The shape's patch function (exo's, reduced) in a script that starts the real engine with the real EngineArgs."""
    text = VA1_CLIENT[SCRIPT]
    patch = text[text.index("def _patch_vllm_for_connector():"):text.index("def main():")]
    return ("from vllm.engine.arg_utils import EngineArgs\nfrom vllm.v1.engine.llm_engine import LLMEngine\n\n\n" + patch
            + "def main(model):\n    _patch_vllm_for_connector()\n    engine_args = EngineArgs(\n        model=model,\n"
            '        kv_transfer_config={"kv_connector": "capture_connector:CaptureConnector", "kv_role": "kv_both"},\n'
            "    )\n    return LLMEngine.from_engine_args(engine_args)\n")


def _real(tmp_path, version: str):
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    root = tmp_path / "client"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "kv_extract.py").write_text(_exo_script())
    (root / "scripts" / "capture_connector.py").write_text("class CaptureConnector:\n    pass\n")
    vllm_sources(version)
    result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC111"]))
    assert not result.internal_errors
    return ([f for f in result.findings if f.rule == "DC111"], [u for u in result.unknown if u.rule == "DC111"])


def test_va1_real_016_the_script_answers_for_its_name_in_the_lookup_it_rebinds(tmp_path):
    findings, unknown = _real(tmp_path, "0.16.0")
    assert findings == []
    assert len(unknown) == 1 and "replaces `KVConnectorFactory._get_connector_class_with_compat`" in unknown[0].message


def test_va1_real_022_twin_the_rebound_method_is_gone_and_the_name_stays_an_error(tmp_path):
    findings, unknown = _real(tmp_path, "0.22.0")
    assert unknown == [] and [f.severity for f in findings] == ["error"]
    assert "sets a method vLLM 0.22.0's factory does not have: nothing calls it" in findings[0].message


# ------------------------------------------------------------------------------------------ VA2
def _dc103(tmp_path, vllm_files=VA2_VLLM, client_files=VA2_CLIENT):
    result = scan_trees(tmp_path, vllm_files, client_files, only=["DC103"])
    assert not result.internal_errors
    return [(f.severity, f.client.path, f.client.line) for f in result.findings if f.rule == "DC103"]


def test_va2_an_empty_scheduler_output_owes_no_sample_tokens(tmp_path):
    assert _dc103(tmp_path) == []


def test_va2_twin_an_output_given_a_token_count_stays_a_finding(tmp_path):
    client = edited(VA2_CLIENT, FLUSH, ('        so.kv_connector_metadata = {"send": sorted(pending)}\n',
                                        '        so.kv_connector_metadata = {"send": sorted(pending)}\n'
                                        "        so.total_num_scheduled_tokens = len(pending)\n"))
    line = line_of(client[FLUSH], "model_executor.execute_model(so)")
    assert _dc103(tmp_path, client_files=client) == [("error", FLUSH, line)]


def test_va2_twin_an_output_built_otherwise_stays_a_finding(tmp_path):
    client = edited(VA2_CLIENT, FLUSH, ("so = SchedulerOutput.make_empty()",
                                        "so = SchedulerOutput({}, 0) if not pending else SchedulerOutput.make_empty()"))
    line = line_of(client[FLUSH], "model_executor.execute_model(so)")
    assert _dc103(tmp_path, client_files=client) == [("error", FLUSH, line)]


def test_va2_twin_a_runner_that_keeps_its_state_before_the_early_return_stays_a_finding(tmp_path):
    vllm = edited(VA2_VLLM, RUNNER, (
        "        num_scheduled_tokens = scheduler_output.total_num_scheduled_tokens\n",
        "        self.execute_model_state = (\"prepared\", None)\n"
        "        num_scheduled_tokens = scheduler_output.total_num_scheduled_tokens\n"))
    line = line_of(VA2_CLIENT[FLUSH], "model_executor.execute_model(so)")
    assert _dc103(tmp_path, vllm_files=vllm) == [("error", FLUSH, line)]


def test_va2_twin_make_empty_that_schedules_tokens_stays_a_finding(tmp_path):
    vllm = edited(VA2_VLLM, "vllm/v1/core/sched/output.py", ("total_num_scheduled_tokens=0", "total_num_scheduled_tokens=1"))
    line = line_of(VA2_CLIENT[FLUSH], "model_executor.execute_model(so)")
    assert _dc103(tmp_path, vllm_files=vllm) == [("error", FLUSH, line)]


def _real_dc103(tmp_path, version: str, flush: str):
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    root = tmp_path / "client"
    (root / "omni").mkdir(parents=True)
    (root / "omni" / "__init__.py").write_text("")
    (root / "omni" / "omni_llm.py").write_text(flush)
    vllm_sources(version)
    result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC103"]))
    assert not result.internal_errors
    return [f for f in result.findings if f.rule == "DC103"]


def test_va2_real_016_the_flush_step_is_no_site_and_a_counted_output_is(tmp_path):
    assert _real_dc103(tmp_path / "a", "0.16.0", VA2_CLIENT[FLUSH]) == []
    counted = VA2_CLIENT[FLUSH].replace('        so.kv_connector_metadata = {"send": sorted(pending)}\n',
                                        '        so.kv_connector_metadata = {"send": sorted(pending)}\n'
                                        "        so.total_num_scheduled_tokens = len(pending)\n")
    assert [f.client.line for f in _real_dc103(tmp_path / "b", "0.16.0", counted)] == \
        [line_of(counted, "model_executor.execute_model(so)")]
