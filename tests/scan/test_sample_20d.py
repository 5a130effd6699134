"""Causes found by the random sample of 0.33.0 sweep errors (docs/triage/2026-12-04-sweep-0.33.0-sample-20d.md).

UA (DC008): a function assigned onto a vLLM runner class (`GPUModelRunner._prepare_inputs = _prepare_inputs`, index-tts)
calls `self.set_active_loras(...)`. The baseline's text scanner took the runner's own call line
`self.set_active_loras(self.input_batch, num_scheduled_tokens)` for a tuple target, so the runner "defined" the name
there; the target's runner only inherits it from LoRAModelRunnerMixin, and DC008 read the target class's own text
members without its bases: "no longer defined", an error, on a method every 0.33.0 GPUModelRunner has. A name the
target class still has through its MRO is not gone; a name no class of the MRO has stays an error.

UF (DC008): index-tts assigns its functions onto vLLM classes (`GPUModelRunner._prepare_inputs = ...`,
`ModelInputForGPUBuilder._compute_lens = ...`): `self` is typed there, and DC006 checks it against that class. DC008's
duck typing matched other classes instead: "3 of 3 vLLM classes that match this receiver (FlashAttentionMetadataBuilder,
FlashInferMetadataBuilder, EagleProposer) defined 'runner'", for a ModelInputForGPUBuilder, a class gone from 0.33.0
whose import fails first. DC008 now reads only receivers it cannot type (types.MethodType, a worker extension).

UB (DC008 message): "They define 'late_interaction_runner' instead (renamed)": with one affected class every member it
gained counts once, and the first of them was taken for the rename. A rename needs one new name ahead of the others.
"""

from __future__ import annotations

from scan.helpers import line_of, scan_trees, vllm_tree, write_tree

MIXIN = '''
class LoRAMixin:
    def set_active_loras(self, input_batch, num_scheduled_tokens, num_sampled=None):
        return None
'''

OLD_RUNNER = '''
from vllm.mixin import LoRAMixin


class Runner(LoRAMixin):
    def __init__(self):
        self.input_batch = []
        self.lora_config = None
        self.num_draft = 0

    def _prepare(self, n):
        if self.lora_config:
            self.set_active_loras(self.input_batch, n)
        return self.num_draft
'''

NEW_RUNNER = '''
from vllm.mixin import LoRAMixin


class Runner(LoRAMixin):
    def __init__(self):
        self.input_batch = []
        self.lora_config = None
        self.prev_draft = 0
        self.pooling_runner = None

    def _prepare(self, n):
        if self.lora_config:
            self.set_active_loras(
                self.input_batch, n, None
            )
        return self.prev_draft
'''

PATCH = '''
import types

import vllm


def _prepare(self, n):
    if self.lora_config:
        self.set_active_loras(self.input_batch, n)
    return self.{read}


def install(runner):
    runner._prepare = types.MethodType(_prepare, runner)
'''
ONTO_CLASS = '''
from vllm.runner import Runner


def _prepare(self, n):
    if self.lora_config:
        self.set_active_loras(self.input_batch, n)
    return self.{read}


Runner._prepare = _prepare
'''


def _dc008(tmp_path, read: str, patch: str = PATCH, rules: tuple = ("DC008",)) -> list:
    old = vllm_tree(tmp_path / "old", {"vllm/__init__.py": "", "vllm/mixin.py": MIXIN, "vllm/runner.py": OLD_RUNNER})
    write_tree(old, {"vllm/_version.py": '__version__ = "0.98.0"\n'})
    new = {"vllm/__init__.py": "", "vllm/mixin.py": MIXIN, "vllm/runner.py": NEW_RUNNER}
    result = scan_trees(tmp_path, new, {"w.py": patch.format(read=read)}, only=list(rules), client_vllm=str(old))
    return result.findings


def test_ua_a_method_the_target_class_inherits_is_not_gone(tmp_path):
    assert [f for f in _dc008(tmp_path, "lora_config") if "set_active_loras" in f.message] == []


def test_ua_twin_a_name_no_class_of_the_mro_has_stays_an_error(tmp_path):
    [f] = [f for f in _dc008(tmp_path, "num_draft") if "num_draft" in f.message]
    assert f.severity == "error"


def test_ub_twin_several_gained_members_name_no_rename(tmp_path):
    [f] = [f for f in _dc008(tmp_path, "num_draft") if "num_draft" in f.message]
    assert f.details.get("renamed_to") is None and "renamed" not in f.message


# ----------------------------------------------------------------------------------------- UC
PROCESSING = "def make_inputs(hf_data):\n    return {\"data\": hf_data}\n"
DISPATCH = """
import importlib

from packaging import version

vllm_version = version.parse(importlib.import_module("{package}").__version__)

if vllm_version {op} version.parse("0.7.3"):
    from tts.model_new import build
else:
    from tts.model_old import build
"""
MODEL_OLD = "from vllm.processing import make_inputs\n\n\ndef build(prompt):\n    return make_inputs(prompt=prompt)\n"
MODEL_NEW = "from vllm.processing import make_inputs\n\n\ndef build(prompt):\n    return make_inputs(prompt)\n"


def _old_model_severities(tmp_path, package: str = "vllm", op: str = ">") -> set[str]:
    client = {"tts/__init__.py": "", "tts/patch_vllm.py": DISPATCH.format(package=package, op=op),
              "tts/model_old.py": MODEL_OLD, "tts/model_new.py": MODEL_NEW}
    result = scan_trees(tmp_path, {"vllm/__init__.py": "", "vllm/processing.py": PROCESSING}, client)
    return {f.severity for f in result.findings if f.client.path == "tts/model_old.py" and f.rule == "DC003"}


def test_uc_a_file_imported_for_older_releases_through_import_module_is_a_warning(tmp_path):
    assert _old_model_severities(tmp_path) == {"warning"}


def test_uc_twin_the_branch_the_target_takes_stays_an_error(tmp_path):
    assert _old_model_severities(tmp_path, op="<=") == {"error"}


def test_uc_twin_another_package_version_stays_an_error(tmp_path):
    assert _old_model_severities(tmp_path, package="torch") == {"error"}


# ----------------------------------------------------------------------------------------- UE
REGISTER = """
from importlib import import_module

from packaging.version import Version


def register():
    import vllm

    current = Version(vllm.__version__)
    low, high = Version("0.8.5"), Version("0.10.0")
    {test}
        return import_module("plugin.vllm085").build
    raise RuntimeError(vllm.__version__)
"""
VLLM_UE = {"vllm/__init__.py": "__version__ = \"0.99.0\"\n", "vllm/processing.py": PROCESSING}


def _src_layout_severities(tmp_path, test: str = "if low <= current < high:", other: str = "") -> set[str]:
    client = {"src/plugin/__init__.py": REGISTER.format(test=test), "src/plugin/vllm085.py": MODEL_OLD}
    if other:
        client["src/plugin/other.py"] = other
    result = scan_trees(tmp_path, VLLM_UE, client)
    return {f.severity for f in result.findings if f.client.path == "src/plugin/vllm085.py" and f.rule == "DC003"}


def test_ue_a_src_layout_module_loaded_by_name_for_other_releases_is_a_warning(tmp_path):
    assert _src_layout_severities(tmp_path) == {"warning"}


def test_ue_twin_a_load_by_name_outside_a_version_check_stays_an_error(tmp_path):
    assert _src_layout_severities(tmp_path, test="if callable(import_module):") == {"error"}


def test_ue_twin_an_unconditional_import_of_the_file_stays_an_error(tmp_path):
    other = "import vllm\nfrom plugin.vllm085 import build\n"
    assert _src_layout_severities(tmp_path, other=other) == {"error"}


# ----------------------------------------------------------------------------------------- UD
GATED = """
import vllm
from packaging import version

if version.parse(vllm.__version__) > version.parse("0.7.3"):
    from tts.model_new import build
else:
    from tts.model_old import build
"""
PLAIN = "import vllm\nfrom tts.model_old import build\n"


def _copies(tmp_path, deploy_patch: str, deploy_copy: bool = True) -> dict[str, set[str]]:
    client = {"patch_vllm.py": GATED, "tts/__init__.py": "", "tts/model_old.py": MODEL_OLD, "tts/model_new.py": MODEL_NEW,
              "deploy/patch_vllm.py": deploy_patch}
    if deploy_copy:
        client.update({"deploy/tts/__init__.py": "", "deploy/tts/model_old.py": MODEL_OLD, "deploy/tts/model_new.py": MODEL_NEW})
    result = scan_trees(tmp_path, VLLM_UE, client)
    out: dict[str, set[str]] = {}
    for f in result.findings:
        if f.rule == "DC003":
            out.setdefault(f.client.path, set()).add(f.severity)
    return out


def test_ud_a_script_folder_gated_import_goes_to_its_own_copy(tmp_path):
    assert _copies(tmp_path, GATED) == {"tts/model_old.py": {"warning"}, "deploy/tts/model_old.py": {"warning"}}


def test_ud_twin_the_folder_importing_its_copy_unconditionally_stays_an_error(tmp_path):
    assert _copies(tmp_path, PLAIN) == {"tts/model_old.py": {"warning"}, "deploy/tts/model_old.py": {"error"}}


def test_ud_twin_a_folder_without_a_copy_imports_the_root_package(tmp_path):
    assert _copies(tmp_path, PLAIN, deploy_copy=False) == {"tts/model_old.py": {"error"}}


# ----------------------------------------------------------------------------------------- UF
def test_uf_a_function_assigned_onto_a_vllm_class_is_dc006s_not_dc008s(tmp_path):
    # index-tts: `GPUModelRunner._prepare_inputs = _prepare_inputs` types `self`; DC006 reports what the class lacks
    found = _dc008(tmp_path, "num_draft", patch=ONTO_CLASS, rules=("DC006", "DC008"))
    assert [(f.rule, f.severity) for f in found if "num_draft" in f.message] == [("DC006", "error")]


def test_uf_a_class_gone_from_the_target_is_no_evidence_for_dc008(tmp_path):
    # index-tts 1.0: `ModelInputForGPUBuilder._compute_lens = patched_compute_lens`, a class 0.33.0 no longer has: no
    # DC008 from other classes that had `runner` (the import of the class fails first, DC001/DC002)
    patch = ONTO_CLASS.replace("from vllm.runner import Runner", "from vllm.runner import Runner, OldBuilder").replace(
        "Runner._prepare = _prepare", "OldBuilder._prepare = _prepare")
    assert _dc008(tmp_path, "num_draft", patch=patch) == []


# ----------------------------------------------------------------------------------------- UH
SPEC = "class KVSpec:\n    def __init__(self):\n        self.block_size = 16\n"
ASSERTING = '''from vllm.spec import KVSpec


class Runner:
    def __init__(self):
        self.kv_cache_spec = KVSpec()

    def ratio(self):
        assert hasattr(self.kv_cache_spec, "compress_ratio")
        return self.kv_cache_spec.compress_ratio

    def ratio_if(self, flag):
        if flag:
            assert hasattr(self.kv_cache_spec, "compress_ratio")
        return self.kv_cache_spec.compress_ratio
'''


def _uh(tmp_path) -> dict[int, object]:
    result = scan_trees(tmp_path, {"vllm/__init__.py": "", "vllm/spec.py": SPEC}, {"w.py": ASSERTING}, only=["DC006"])
    return {f.client.line: f for f in result.findings}


def test_uh_an_assert_hasattr_before_the_read_is_what_fails(tmp_path):
    found = _uh(tmp_path)[line_of(ASSERTING, "return self.kv_cache_spec.compress_ratio")]
    assert found.severity == "error"  # still certain: the assert raises where the read would have
    assert "fails first (AssertionError" in found.message
    assert f"line {line_of(ASSERTING, 'assert hasattr')}" in found.message


def test_uh_twin_an_assert_in_a_branch_the_read_does_not_follow_is_not_named(tmp_path):
    found = _uh(tmp_path)[line_of(ASSERTING, "return self.kv_cache_spec.compress_ratio", nth=2)]
    assert found.severity == "error" and "AttributeError when this line runs" in found.message
    assert "AssertionError" not in found.message
