"""Root causes of false errors from batch 16a (real vLLM clients taken from GitHub,
docs/triage/2026-12-04-github-clients-16a.md): the shape that runs (no error), and the same shape where the code
really fails on the target, which must stay an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import line_of, scan_trees

# ----------------------------------------------------------------------------------------- HA
# vllm-metax v0.14.0 (MetaX-MACA/vLLM-metax @ v0.14.0, "aligned with vLLM v0.14.0"):
# vllm_metax/patch/transformers_utils/configs/config.py:18-19 reads and extends `configs_module.__all__`, which vLLM
# 0.14.0's vllm/transformers_utils/configs/__init__.py:58 assigns (beside a closed module `__getattr__`). The summary
# kept a module's `__all__` only as the names `from m import *` takes, never as a binding of the module.
LAZY = """
import importlib

_CLASS_TO_MODULE = {"EAGLEConfig": "vllm.configs.eagle"}
{all}

def __getattr__(name):
    if name in _CLASS_TO_MODULE:
        return getattr(importlib.import_module(_CLASS_TO_MODULE[name]), name)
    raise AttributeError(name)
"""
CLIENT = {"pkg/__init__.py": "", "pkg/config.py": """
import vllm.configs as configs_module


def patch():
    if "Mine" not in configs_module.__all__:
        configs_module.__all__.append("Mine")
"""}


def _vllm(all_line: str) -> dict[str, str]:
    return {"vllm/configs/__init__.py": LAZY.replace("{all}", all_line),
            "vllm/configs/eagle.py": "class EAGLEConfig:\n    pass\n"}


def _dc002(result) -> list[tuple[int, str]]:
    return sorted((f.client.line, f.severity) for f in result.findings if f.rule == "DC002")


def test_ha_a_literal_all_is_a_module_attribute(tmp_path):
    assert _dc002(scan_trees(tmp_path, _vllm('__all__ = ["EAGLEConfig"]'), CLIENT)) == []


def test_ha_an_all_built_from_other_names_is_a_module_attribute_too(tmp_path):
    # no string list to read (`from m import *` falls back to the public names), but the module has `__all__`
    assert _dc002(scan_trees(tmp_path, _vllm("__all__ = sorted(_CLASS_TO_MODULE)"), CLIENT)) == []


def test_ha_a_module_without_all_still_fails(tmp_path):
    # the same client against a release whose module never assigns `__all__`: its closed __getattr__ raises
    text = CLIENT["pkg/config.py"].lstrip("\n")
    lines = [line_of(text, "not in configs_module.__all__"), line_of(text, "__all__.append")]
    assert _dc002(scan_trees(tmp_path, _vllm(""), CLIENT)) == [(n, "error") for n in lines]


def test_ha_all_of_a_star_import_still_takes_only_its_names(tmp_path):
    # binding `__all__` does not make it (or anything else) an exported name of `from m import *`
    vllm = {"vllm/a.py": '__all__ = ["x"]\nx = 1\ny = 2\n', "vllm/b.py": "from vllm.a import *\n"}
    client = {"pkg/__init__.py": "", "pkg/use.py": "from vllm.b import x\nfrom vllm.b import y\n"}
    assert _dc002(scan_trees(tmp_path, vllm, client)) == [(2, "error")]


# ----------------------------------------------------------------------------------------- HB
# tt-vllm-plugin (dmadicTT/tt-vllm-plugin @ 13d3f67, pyproject `vllm==0.10.1.1`): TTWorker(WorkerBase) stores
# `self.model_config.override_tt_config = {}` and `self.device_config.num_devices = ...`
# (tt_vllm_plugin/v1/worker/tt_worker.py:52, :72); tt_loader.py:63 and worker/tt_worker.py:34-39 read them through a
# parameter `model_config: ModelConfig` and a local `model_config = vllm_config.model_config`. vLLM 0.10.1.1's
# WorkerBase binds `self.model_config = vllm_config.model_config` (vllm/worker/worker_base.py:44) with `vllm_config:
# VllmConfig`: the attribute had no type, so the store was on no class and the typed reads were errors.
SHAPE = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / \
    "HB_store_through_a_base_attribute_bound_from_a_parameter" / "vllm_src"
CONFIGS = {
    "vllm/config.py": (SHAPE / "vllm" / "config.py").read_text(),  # ModelConfig, DeviceConfig, VllmConfig dataclasses
    "vllm/worker_base.py": """
        from vllm.config import VllmConfig


        class WorkerBase:
            def __init__(self, vllm_config: {annotation}) -> None:
                self.model_config = vllm_config.model_config
    """,
}
READER = """
from vllm.config import ModelConfig


def load_model(model_config: ModelConfig):
    return model_config.override_tt_config
"""


def _worker(body: str) -> str:
    return f"""
from vllm.config import VllmConfig
from vllm.worker_base import WorkerBase


class TTWorker(WorkerBase):
    def __init__(self, vllm_config: VllmConfig) -> None:
        super().__init__(vllm_config)
        {body}
"""


def _configs(annotation: str = "VllmConfig") -> dict[str, str]:
    return {**CONFIGS, "vllm/worker_base.py": CONFIGS["vllm/worker_base.py"].replace("{annotation}", annotation)}


def _dc006(result) -> list[tuple[str, int, str]]:
    return sorted((f.client.path, f.client.line, f.severity) for f in result.findings if f.rule == "DC006")


def test_hb_a_member_stored_through_the_inherited_config_attribute_is_the_clients(tmp_path):
    client = {"pkg/__init__.py": "", "pkg/worker.py": _worker("self.model_config.override_tt_config = {}"),
              "pkg/loader.py": READER}
    # the store itself is a warning (a new attribute vLLM never reads); the typed read elsewhere is no error
    assert [f for f in _dc006(scan_trees(tmp_path, _configs(), client)) if f[2] == "error"] == []


def test_hb_the_read_without_any_store_still_fails(tmp_path):
    client = {"pkg/__init__.py": "", "pkg/worker.py": _worker("pass"), "pkg/loader.py": READER}
    line = line_of(READER.lstrip("\n"), "return model_config.override_tt_config")
    assert _dc006(scan_trees(tmp_path, _configs(), client)) == [("pkg/loader.py", line, "error")]


def test_hb_the_inherited_attribute_now_has_its_class_a_missing_member_read_on_it_fails(tmp_path):
    # tt-vllm-plugin's v1/ascend_scheduler.py:502 `self.scheduler_config.is_multi_step` (gone in 0.10.1.1): the same
    # typing makes a read through the subclass's `self` a checked one
    worker = _worker("self.ready = self.model_config.is_multi_step")
    client = {"pkg/__init__.py": "", "pkg/worker.py": worker}
    line = line_of(worker.lstrip("\n"), "self.model_config.is_multi_step")
    assert _dc006(scan_trees(tmp_path, _configs(), client)) == [("pkg/worker.py", line, "error")]


def test_hb_a_parameter_annotated_with_a_union_gives_no_class(tmp_path):
    # `vllm_config: VllmConfig | None`: no one class to read the attribute's type from, as before
    worker = _worker("self.ready = self.model_config.is_multi_step")
    client = {"pkg/__init__.py": "", "pkg/worker.py": worker}
    assert _dc006(scan_trees(tmp_path, _configs("VllmConfig | None"), client)) == []


# ----------------------------------------------------------------------------------------- HC
# ChatLearn v1.0.3 (alibaba/ChatLearn @ v1.0.3, docker/torch/Dockerfile.torch2.5.1.vllm066 `vllm==0.6.6`, requirements.txt
# `vllm==0.5.1`): chatlearn/models/vllm/hooks/__init__.py (a file that imports no vLLM) loads one copy per release with
# `if CURRENT_VLLM_VERSION == VLLMVersion.v_0_6_3: from chatlearn.models.vllm.hooks.vllm_0_6_3 import *`, where
# `VLLMVersion` is a str Enum of chatlearn/utils/constant.py whose members hold releases (`v_0_6_3 = "0.6.3"`). The test
# named no release to driftcheck (only string literals, parsed releases and names bound to one counted), and the file
# spells no quoted release, so it was not even read.
HC_VLLM = {"vllm/__init__.py": "__version__ = '0.6.6'\n", "vllm/core.py": "def present():\n    return 1\n"}
HC_SHAPE = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "HC_release_enum_member_dispatch"
# vLLM's version and `class VLLMVersion(str, Enum)` as ChatLearn spells them, and a str Enum that holds no release
HC_CONSTANT = (HC_SHAPE / "client" / "pkg" / "constant.py").read_text() + """

class Mode(str, Enum):
    FAST = "fast"
"""


def _hooks(test: str, names: str = "CURRENT_VLLM_VERSION, VLLMVersion") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/constant.py": HC_CONSTANT,
            "pkg/hooks/__init__.py": f"from pkg.constant import {names}\n\nif {test}:\n    from pkg.hooks.copy import *\n",
            "pkg/hooks/copy.py": "from vllm.core import gone\n"}


def _copy_severity(result) -> list[str]:
    return [f.severity for f in result.findings if f.client.path == "pkg/hooks/copy.py" and f.rule in ("DC001", "DC002")]


def test_hc_an_enum_member_holding_a_release_names_it(tmp_path):
    assert _copy_severity(scan_trees(tmp_path, HC_VLLM, _hooks("CURRENT_VLLM_VERSION == VLLMVersion.v_0_6_3"))) == [
        "warning"]


def test_hc_an_aliased_import_of_the_class_and_a_tuple_of_members(tmp_path):
    test = "CURRENT_VLLM_VERSION in (V.v_0_6_3, V.v_0_6_6)"
    client = _hooks(test, names="CURRENT_VLLM_VERSION, VLLMVersion as V")
    assert _copy_severity(scan_trees(tmp_path, HC_VLLM, client)) == ["warning"]


def test_hc_an_ordering_against_the_member_loads_the_copy_on_every_newer_release(tmp_path):
    assert _copy_severity(scan_trees(tmp_path, HC_VLLM, _hooks("CURRENT_VLLM_VERSION >= VLLMVersion.v_0_6_3"))) == [
        "error"]


def test_hc_a_member_that_holds_no_release_names_none(tmp_path):
    assert _copy_severity(scan_trees(tmp_path, HC_VLLM, _hooks("CURRENT_VLLM_VERSION == Mode.FAST",
                                                               names="CURRENT_VLLM_VERSION, Mode"))) == ["error"]
