"""Batch 29a (out-of-tree model implementations for vLLM at their stored GitHub HEAD,
docs/triage/2026-12-05-model-plugins-29a.md).

QA1: Kalorda (vlmOCR/Kalorda 4905f1a) ships its own DotsOCR and DeepSeek-OCR model classes for vLLM and imports them
only when vLLM's registry lacks the architecture (`if "DotsOCRForCausalLM" not in ModelRegistry.get_supported_archs():
from .modeling_dots_ocr_vllm import ...`, backend/src/kalorda/vllm_infer/dotsocr/modeling_dots_ocr_plugin.py:4-5). On
vLLM 0.13.0, whose registry lists both, those modules never load, yet their imports of names 0.13.0 dropped were nine
errors. The target's registry now answers the test (client_model/refusals.py `_registry_probes`); the twins: a registry
that does not list the architecture, the positive test (`in`), a table the registry is not built from, and the same
module also imported unguarded, stay errors.

QA2: ViLaVT (AntResearchNLP/ViLaVT e5d19bc) keeps vLLM 0.8.5's copy of its model beside the current one as
vllm_eval/vllm_vilavt/vllm_vilavt/qwen2_5_vl_vilavt_v0.8.5.py. No `import` can load a file whose name has dots, no
client file names it (only the egg-info's SOURCES.txt lists it), and run as a script its top level only imports,
defines and registers: the twelve errors in its methods at vLLM 0.11.0 are warnings now (client_model/dead_methods.py
`script_only_bodies`). Twins: a `__main__` block, a top level that builds one of its classes, another file that loads
it by path, and the same file under an importable name stay errors.

QA3: avater_voice (feb-co/avater_voice b5c9865, pin vllm==0.7.3, read also at 0.8.5) subclasses vLLM's V0
`LLMEngine` and calls `self.output_processor.process_prompt_logprob(...)` (infer/avatar_infer/worker/
avatar_llm_engine.py:242). vLLM 0.8.5 rebinds `LLMEngine = V1LLMEngine` only under `if envs.is_set("VLLM_USE_V1") and
envs.VLLM_USE_V1`; driftcheck read the attribute on the V1 class alone (an OutputProcessor, which lacks the method):
an error. The other class's attribute of that name is now what the value is otherwise (vllm_model/classes.py
`class_member`), as for a method; twins: the V0 attribute's class lacks the method too, or no rebinding.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

PLUGIN = "plug/plugin.py"
REGISTRY = "vllm/model_executor/models/registry.py"
MODEL = "plug/modeling_dots_ocr.py"
SHIPPED = '    "DotsOCRForCausalLM": ("dots_ocr", "DotsOCRForCausalLM"),\n'


def test_qa1_module_imported_only_when_the_registry_lacks_the_architecture_is_a_warning(tmp_path):
    vllm, client = plugin_shape("QA1")
    found = scan_trees(tmp_path, vllm, client, only=["DC002"]).findings
    assert [(f.severity, f.client.path, f.client.line) for f in found] == [("warning", MODEL, 2)]
    assert "plug/plugin.py:6" in found[0].message
    # the guard is the registry test, not a version check (29a's open wording)
    assert "only under a test of whether vLLM's model registry lists an architecture (plug/plugin.py:6)" in found[0].message
    assert "version check" not in found[0].message


TWINS = {  # name -> (edits of the fake vLLM's registry, edits of the plugin): each leaves the import running
    "registry_without_the_architecture": ([(SHIPPED, "")], []),
    "architecture_only_in_a_table_the_registry_is_not_built_from": (
        [(SHIPPED, ""), ('"0.9.2"}', '"0.9.2", "DotsOCRForCausalLM": "0.1"}')], []),
    "import_when_the_registry_has_the_architecture": ([], [('"DotsOCRForCausalLM" not in', '"DotsOCRForCausalLM" in')]),
    "module_also_imported_unguarded": ([], [("def register():\n", "from . import modeling_dots_ocr  # noqa\n\n\ndef register():\n")]),
    "registry_whose_list_is_not_its_table": ([("return self.models.keys()", 'return {"Qwen2ForCausalLM"}')], []),
}


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_qa1_twins_stay_errors(tmp_path, twin):
    vllm, client = plugin_shape("QA1")
    vllm_edits, client_edits = TWINS[twin]
    vllm = edited(vllm, REGISTRY, *vllm_edits) if vllm_edits else vllm
    client = edited(client, PLUGIN, *client_edits) if client_edits else client
    found = scan_trees(tmp_path, vllm, client, only=["DC002"]).findings
    assert [(f.severity, f.client.path, f.client.line) for f in found] == [("error", MODEL, 2)]


COPY = "plug/model_v0.8.5.py"


def _dc003(tmp_path, client: dict[str, str]) -> list[tuple[str, str, int]]:
    vllm, _ = plugin_shape("QA2")
    found = scan_trees(tmp_path, vllm, client, only=["DC003"]).findings
    return [(f.severity, f.client.path, f.client.line) for f in found]


def test_qa2_method_of_a_file_no_import_can_load_is_a_warning(tmp_path):
    vllm, client = plugin_shape("QA2")
    found = scan_trees(tmp_path, vllm, client, only=["DC003"]).findings
    assert [(f.severity, f.client.path, f.client.line) for f in found] == [("warning", COPY, 27)]
    assert "`model_v0.8.5.py` cannot be imported by name" in found[0].message


def test_qa2_says_method_for_a_method_and_function_for_a_top_level_function(tmp_path):
    # 29a's open wording: a top-level function of such a file was "in a method that never runs" too
    vllm, client = plugin_shape("QA2")
    client = {**client, COPY: client[COPY] + "\n\ndef build_backend():\n    return get_vit_attn_backend(support_fa=True)\n"}
    found = sorted(scan_trees(tmp_path, vllm, client, only=["DC003"]).findings, key=lambda f: f.client.line)
    assert [(f.severity, f.client.line) for f in found] == [("warning", 27), ("warning", 31)]
    assert "The use is in a method that never runs: `model_v0.8.5.py`" in found[0].message
    assert "The use is in a function that never runs: `model_v0.8.5.py`" in found[1].message


QA2_TWINS = {  # name -> the client as it is changed: each runs the method (or may)
    "main_block": lambda c: {**c, COPY: c[COPY] + '\n\nif __name__ == "__main__":\n    VisionModel()\n'},
    "top_level_builds_its_class": lambda c: {**c, COPY: c[COPY] + "\n\nDEFAULT = VisionModel()\n"},
    "loaded_by_path_elsewhere": lambda c: {**c, "plug/legacy.py": "import runpy\n\n"
                                           "runpy.run_path(__file__.replace('legacy.py', 'model_v0.8.5.py'))\n"},
    "importable_name": lambda c: {**{k: v for k, v in c.items() if k != COPY}, "plug/model_v085.py": c[COPY]},
    "run_by_a_shell_script": lambda c: {**c, "scripts/legacy.sh": "python plug/model_v0.8.5.py --serve\n"},
}


def test_qa2_a_data_file_that_spells_the_name_runs_nothing(tmp_path):
    # only files that may run a path are searched for the name: not a dataset, a weight or an image (a repository
    # may hold gigabytes of them); a file list in data names the script and runs nothing
    _, client = plugin_shape("QA2")
    client = {**client, "data/manifest.csv": "plug/model_v0.8.5.py,123\n"}
    assert [sev for sev, _path, line in _dc003(tmp_path, client)] == ["warning"]


@pytest.mark.parametrize("twin", sorted(QA2_TWINS))
def test_qa2_twins_stay_errors(tmp_path, twin):
    _, client = plugin_shape("QA2")
    client = QA2_TWINS[twin](client)
    assert [sev for sev, _path, line in _dc003(tmp_path, client)] == ["error"]


ENGINE_V0 = "vllm/engine/llm_engine.py"


def _dc006(tmp_path, vllm: dict[str, str]) -> list[str]:
    _, client = plugin_shape("QA3")
    return [f.severity for f in scan_trees(tmp_path, vllm, client, only=["DC006"]).findings if f.severity == "error"]


def test_qa3_attribute_of_an_engine_name_an_env_test_rebinds_is_no_error(tmp_path):
    vllm, _ = plugin_shape("QA3")
    assert _dc006(tmp_path, vllm) == []


QA3_TWINS = {  # name -> the fake vLLM as it is changed: the method is missing whichever engine runs
    "v0_attribute_lacks_it_too": lambda v: {**v, ENGINE_V0: v[ENGINE_V0].replace(
        "SequenceGroupOutputProcessor.create_output_processor(scheduler_config)", "OutputProcessor()").replace(
        "from vllm.engine.output_processor import SequenceGroupOutputProcessor",
        "from vllm.v1.engine.output_processor import OutputProcessor")},
    "no_rebinding": lambda v: {**v, ENGINE_V0: "from vllm.v1.engine.llm_engine import LLMEngine  # noqa: F401\n"},
}


@pytest.mark.parametrize("twin", sorted(QA3_TWINS))
def test_qa3_twins_stay_errors(tmp_path, twin):
    vllm, _ = plugin_shape("QA3")
    assert _dc006(tmp_path, QA3_TWINS[twin](vllm)) == ["error"]


QA4_VLLM = {
    "vllm/__init__.py": "",
    "vllm/processor.py": (
        "class OutputProcessor:\n    def process(self, group):\n        raise NotImplementedError\n\n\n"
        "class SingleStep(OutputProcessor):\n    def __init__(self, detokenizer):\n        self.detokenizer = detokenizer\n"),
}
QA4_CLIENT = {
    "plug/__init__.py": "",
    "plug/step.py": (
        "from vllm.processor import OutputProcessor\n\n\n"
        "def prompt_logprobs(proc: OutputProcessor, group):\n"
        "    assert hasattr(proc, 'detokenizer')\n"
        "    return proc.detokenizer\n\n\n"
        "class AvatarStep(OutputProcessor):\n    def __init__(self, detokenizer):\n        self.detokenizer = detokenizer\n"),
}


def test_qa4_member_a_client_subclass_and_a_vllm_subclass_define_names_both_and_the_assert(tmp_path):
    found = scan_trees(tmp_path, QA4_VLLM, QA4_CLIENT, only=["DC006"]).findings
    assert [(f.severity, f.client.line) for f in found] == [("warning", 6)]
    assert "plug.step.AvatarStep and 1 other subclass define it" in found[0].message
    assert "the `assert hasattr(proc, 'detokenizer')` on line 5 checks it first" in found[0].message


def test_qa4_twin_without_the_assert_or_a_vllm_subclass_says_only(tmp_path):
    vllm = {**QA4_VLLM, "vllm/processor.py": QA4_VLLM["vllm/processor.py"].split("\n\n\nclass SingleStep")[0] + "\n"}
    client = edited(QA4_CLIENT, "plug/step.py", ("    assert hasattr(proc, 'detokenizer')\n", ""))
    found = scan_trees(tmp_path, vllm, client, only=["DC006"]).findings
    assert [(f.severity, f.client.line) for f in found] == [("warning", 5)]
    assert "only plug.step.AvatarStep defines it, so this line fails with AttributeError" in found[0].message
