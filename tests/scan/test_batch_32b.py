"""Batch 32b (platform, worker, model-runner and quantization plugins taken from GitHub,
docs/triage/2026-12-05-platform-worker-plugins-32b.md).

VB1: sophgo/vllm-tpu @ 9b474f2 (the Sophon TPU platform plugin, written for vLLM 0.11.0) reads
`attn_metadata.slot_mapping` and `.block_tables` in its attention impl's `forward(..., attn_metadata:
AttentionMetadata)` (`vllm_sophon/attention/attention.py:387`). vLLM 0.11.0's `AttentionMetadata` declares no members;
only `TorchSDPAMetadata` of vLLM's classes defines `slot_mapping`, so DC006 warned "only TorchSDPAMetadata defines it,
so this line fails with AttributeError when the object is not one of those". What vLLM hands the impl is what the
platform's own builder made, the client's `SophTPUMetadata` (same file, line 83), a class of the same kind that does
not derive from the marker and defines both fields. A member no class defines was already an unknown in that case
(`_sibling_defining`); a member only some subclasses define is now the same question, and the unknown names both the
client's class and vLLM's. Where the client's class lacks the member, the subclass warning stays.

VB2: belonghim/vllm-openvino @ 5465967 (an OpenVINO platform plugin pinned to vLLM 0.13.0) profiles memory through
`def model_profile_run():` nested in its worker's method, which calls `self.model_runner.execute_model(...)`
(`vllm_openvino/worker_v1/openvino_worker_v1.py:310`). The worker's `__init__` stores its own
`OpenVINOModelRunnerV1(...)` there, a class with no vLLM base, whose execute_model returns its output in one phase.
DC103 warned "The receiver's class is not known, and ... GPUModelRunner runs execute_model without that check": the
receiver is known. A call on `self.<attr>` in a class whose own body stores only the client's own single-phase runners
under that attribute, where no vLLM base declares it as a two-phase runner, is no longer a site
(`_own_runner_on_self`). A runner deriving from vLLM's two-phase runner stays an error; a class that also stores
something else there, or whose vLLM base declares a two-phase runner under the name, keeps the finding.

VB3 (a missed error, found reading the warnings): localweights/vllm-gguf-plugin @ f89d519 (a GGUF quantization
plugin, vLLM 0.25.0 in its README, `vllm` unpinned) installs its patches behind the client's own "already done" marker:
`if getattr(_spec.SpeculativeConfig, "_gguf_mtp_patched", False): return`, then, on the first run,
`from vllm.v1.spec_decode import llm_base_proposer` (`vllm_gguf_plugin/mtp_enable.py:21`, `:136`), and later
`SpeculativeConfig._gguf_mtp_patched = True`. The early return was read as a probe of vLLM's API whose rest imports
the other releases' spelling (`_fallback_imports`), so at 0.34.0, which lacks the module, DC002 said "under a
hasattr/getattr check (line 21), so the client handles it". A probe of names the same file sets to `True` and to
nothing but a bool (`_own_done_flags`) guards nothing now; a backport that stores the value it probed for (VB3's shape)
stays guarded.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"
VB1 = SHAPES / "VB1_member_only_a_vllm_subclass_defines_read_where_the_clients_own_class_of_that_kind_defines_it"


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}


def _dc006(result, attr: str) -> tuple[list, list]:
    found = [f for f in result.findings if f.rule == "DC006" and f.symbol and f.symbol.endswith("." + attr)]
    unknown = [u for u in result.unknown if u.rule == "DC006" and u.symbol and u.symbol.endswith("." + attr)]
    return found, unknown


# ----------------------------------------------------------------------------------------------------------- VB1
VB1_VLLM = _tree(VB1 / "vllm_src")
VB1_CLIENT = _tree(VB1 / "client")


def test_vb1_member_the_clients_own_metadata_defines_is_unknown_naming_both(tmp_path):
    found, unknown = _dc006(scan_trees(tmp_path, VB1_VLLM, VB1_CLIENT), "slot_mapping")
    assert found == []
    (u,) = unknown
    assert "plug.attention.TPUMetadata" in u.message and "does not derive from it" in u.message
    assert "vllm.v1.attention.backends.cpu_attn.TorchSDPAMetadata defines it too" in u.message


def _vb1_reading(tmp_path: Path, attr: str, vllm: dict[str, str] = VB1_VLLM, **renames: str):
    """The shape, its impl reading `attr` where the shape reads `block_tables`, `renames` applied to the client."""
    client = {rel: text.replace("attn_metadata.block_tables", f"attn_metadata.{attr}") for rel, text in VB1_CLIENT.items()}
    for old, new in renames.items():
        client = {rel: text.replace(old, new) for rel, text in client.items()}
    return _dc006(scan_trees(tmp_path, vllm, client), attr)


def test_vb1_twin_the_clients_metadata_lacks_the_member_the_subclass_warning_stays(tmp_path):
    (f,), unknown = _vb1_reading(tmp_path, "num_prefills")
    assert f.severity == "warning" and unknown == []
    assert "only vllm.v1.attention.backends.cpu_attn.TorchSDPAMetadata defines it" in f.message


def test_vb1_twin_a_client_class_of_another_kind_is_no_evidence(tmp_path):
    (f,), unknown = _vb1_reading(tmp_path, "slot_mapping", TPUMetadata="TPURecord")
    assert f.severity == "warning" and unknown == []


def test_vb1_twin_a_member_no_class_defines_on_a_non_marker_base_stays_an_error(tmp_path):
    vllm = {rel: text.replace(
        '    """A marker: the metadata classes of vLLM\'s own backends derive from it, and annotations name it."""',
        "    num_actual_tokens: int = 0") for rel, text in VB1_VLLM.items()}
    (f,), _ = _vb1_reading(tmp_path, "max_seq_len", vllm)
    assert f.severity == "error"


# ----------------------------------------------------------------------------------------------------------- VB2
VB2 = SHAPES / "VB2_runner_call_in_a_nested_function_of_the_class_that_stores_its_own_single_phase_runner_there"
VB2_VLLM = _tree(VB2 / "vllm_src")
VB2_WORKER = (VB2 / "client" / "plug" / "worker.py").read_text()


def _dc103(tmp_path: Path, worker: str = VB2_WORKER, vllm: dict[str, str] = VB2_VLLM) -> list:
    client = {"plug/__init__.py": "", "plug/worker.py": worker}
    return [f for f in scan_trees(tmp_path, vllm, client).findings if f.rule == "DC103"]


def test_vb2_the_class_stores_its_own_single_phase_runner_no_finding(tmp_path):
    assert _dc103(tmp_path) == []


def test_vb2_twin_its_runner_derives_from_vllms_two_phase_runner_stays_an_error(tmp_path):
    worker = "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n" + VB2_WORKER.replace(
        "class PlatformModelRunner:", "class PlatformModelRunner(GPUModelRunner):").replace(
        "    def execute_model(self, scheduler_output):\n        return (\"output\", scheduler_output)\n", "    pass\n")
    (f,) = _dc103(tmp_path, worker)
    assert f.severity == "error"


def test_vb2_twin_the_class_also_stores_vllms_runner_there_keeps_the_finding(tmp_path):
    worker = "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n" + VB2_WORKER.replace(
        "    def determine_available_memory(self, steps):",
        "    def use_vllm_runner(self):\n        self.model_runner = GPUModelRunner()\n\n"
        "    def determine_available_memory(self, steps):")
    assert len(_dc103(tmp_path, worker)) == 1


def test_vb2_twin_a_vllm_base_declares_a_two_phase_runner_under_the_name_keeps_the_finding(tmp_path):
    vllm = dict(VB2_VLLM)
    vllm["vllm/v1/worker/worker_base.py"] = vllm["vllm/v1/worker/worker_base.py"].replace(
        "self.model_runner: object | None = None", "self.model_runner: GPUModelRunner = GPUModelRunner()").replace(
        "class WorkerBase:", "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n\n\nclass WorkerBase:")
    assert len(_dc103(tmp_path, vllm=vllm)) == 1


# ----------------------------------------------------------------------------------------------------------- VB3
VB3 = SHAPES / "VB3_import_after_an_early_return_probe_of_the_name_a_backport_then_stores"
VB3_VLLM = _tree(VB3 / "vllm_src")
VB3_BACKPORT = (VB3 / "client" / "plug" / "backport.py").read_text()
DONE_FLAG = """\
from vllm.config.speculative import SpeculativeConfig


def install() -> None:
    if getattr(SpeculativeConfig, "_plug_patched", False):
        return  # installed already
    from vllm.spec_decode.dynamic_utils import uses_dynamic_speculative_decoding

    SpeculativeConfig.uses_dynamic_speculative_decoding = uses_dynamic_speculative_decoding
    {mark}
"""


def _dc001(tmp_path: Path, code: str) -> list:
    client = {"plug/__init__.py": "", "plug/backport.py": code}
    return [f for f in scan_trees(tmp_path, VB3_VLLM, client).findings if f.rule == "DC001"]


def test_vb3_backport_storing_the_probed_name_stays_guarded(tmp_path):
    (f,) = _dc001(tmp_path, VB3_BACKPORT)
    assert f.severity == "warning" and "hasattr/getattr check (line 5)" in f.message


def test_vb3_the_clients_own_done_flag_guards_nothing_the_import_is_an_error(tmp_path):
    (f,) = _dc001(tmp_path, DONE_FLAG.format(mark="SpeculativeConfig._plug_patched = True"))
    assert f.severity == "error"


def test_vb3_a_done_flag_set_through_setattr_guards_nothing_either(tmp_path):
    (f,) = _dc001(tmp_path, DONE_FLAG.format(mark='setattr(SpeculativeConfig, "_plug_patched", True)'))
    assert f.severity == "error"


def test_vb3_twin_a_flag_the_file_never_sets_is_still_read_as_a_probe(tmp_path):
    (f,) = _dc001(tmp_path, DONE_FLAG.format(mark="pass"))
    assert f.severity == "warning"


def test_vb3_twin_a_name_the_file_also_stores_a_value_under_is_no_marker(tmp_path):
    mark = "SpeculativeConfig._plug_patched = True\n    SpeculativeConfig._plug_patched = uses_dynamic_speculative_decoding"
    (f,) = _dc001(tmp_path, DONE_FLAG.format(mark=mark))
    assert f.severity == "warning"


def test_vb3_a_marker_an_uninstall_resets_to_false_is_still_a_marker(tmp_path):
    code = DONE_FLAG.format(mark="SpeculativeConfig._plug_patched = True") + \
        "\n\ndef uninstall() -> None:\n    SpeculativeConfig._plug_patched = False\n"
    (f,) = _dc001(tmp_path, code)
    assert f.severity == "error"
