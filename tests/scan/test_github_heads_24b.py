"""Batch 24b (RL / post-training frameworks at their GitHub HEAD: NeMo-RL, ROLL, open-instruct, OpenRLHF, verl,
SkyRL, prime-rl, trl, AReaL; docs/triage/2026-12-05-rl-framework-heads-24b.md).

LB1: `worker_extension_cls=` given as a conditional expression of two class paths (NeMo-RL 7ea279a
`nemo_rl/models/generation/vllm/vllm_worker.py:586-592`: `"...VllmInternalWorkerExtensionWithCheckpointEngine" if
checkpoint_engine_config is not None else "...VllmInternalWorkerExtension"`) named no extension, so each of the 17
`collective_rpc("report_device_id")`-style calls to the extension's methods read as "no worker class defines it"
(DC007 error) on vLLM 0.25.1. Both branches (and each operand of an `or` / `and`) now name an extension. The twins: a
method neither branch defines stays an error; an extension class's mixin defined in the same module adds its methods
(it was followed only when imported), and a method neither the class nor that mixin defines stays an error.
"""

from __future__ import annotations

import pytest

from scan.helpers import by_rule, scan_trees

VLLM = {
    "vllm/__init__.py": "from vllm.entrypoints.llm import LLM\n",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/llm.py": (
        "class LLM:\n"
        "    def __init__(self, model, worker_extension_cls=''):\n"
        "        self.model = model\n\n"
        "    def collective_rpc(self, method, args=()):\n"
        "        return []\n"),
    "vllm/v1/__init__.py": "",
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/worker_base.py": "class WorkerBase:\n    def load_model(self):\n        return None\n",
    "vllm/v1/worker/gpu_worker.py": ("from vllm.v1.worker.worker_base import WorkerBase\n\n\n"
                                     "class Worker(WorkerBase):\n    def compile_or_warm_up_model(self):\n        return None\n"),
}

BACKEND = ("class Ext:\n    def report_device_id(self):\n        return 'cpu:0'\n\n\n"
           "class ExtWithEngine(Ext):\n    def update_from_engine(self):\n        return True\n")

WORKER = """from vllm import LLM


def build(engine_cfg=None, fallback=None):
    kwargs = dict(model="m", worker_extension_cls=EXT)
    llm = LLM(**kwargs)
    llm.collective_rpc("report_device_id")
    llm.collective_rpc("update_from_engine")
    return llm.collective_rpc(METHOD)
"""

IFEXP = '("pkg.backend.ExtWithEngine" if engine_cfg is not None else "pkg.backend.Ext")'
OR = '(fallback or "pkg.backend.ExtWithEngine")'


def _dc007(tmp_path, ext: str, method: str, backend: str = BACKEND):
    client = {"pkg/__init__.py": "", "pkg/backend.py": backend,
              "pkg/worker.py": WORKER.replace("EXT", ext).replace("METHOD", repr(method))}
    result = scan_trees(tmp_path, VLLM, client, only=["DC007"])
    return sorted((f.severity, f.client.line) for f in by_rule(result, "DC007")), result.unknown


@pytest.mark.parametrize("ext", [IFEXP, OR], ids=["conditional_expression", "or"])
def test_lb1_extension_named_by_a_conditional_expression_defines_its_methods(tmp_path, ext):
    found, unknown = _dc007(tmp_path, ext, "report_device_id")
    assert found == [] and unknown == [], (found, unknown)


@pytest.mark.parametrize("ext", [IFEXP, OR], ids=["conditional_expression", "or"])
def test_lb1_twin_a_method_no_branch_defines_stays_an_error(tmp_path, ext):
    found, _ = _dc007(tmp_path, ext, "missing_method")
    assert found == [("error", 9)], found


def test_lb1_twin_a_plain_string_still_names_only_its_class(tmp_path):
    # `update_from_engine` is the subclass's: naming only the base class leaves that rpc without a defining worker
    found, _ = _dc007(tmp_path, '"pkg.backend.Ext"', "report_device_id")
    assert found == [("error", 8)], found


MIXIN_HERE = ("class EngineMixin:\n    def update_from_engine(self):\n        return True\n\n\n"
              "class Ext:\n    def report_device_id(self):\n        return 'cpu:0'\n\n\n"
              "class ExtWithEngine(EngineMixin, Ext):\n    pass\n")


def test_lb1_a_mixin_defined_in_the_extensions_module_adds_its_methods(tmp_path):
    found, unknown = _dc007(tmp_path, '"pkg.backend.ExtWithEngine"', "report_device_id", MIXIN_HERE)
    assert found == [] and unknown == [], (found, unknown)


def test_lb1_twin_a_method_neither_the_extension_nor_its_mixin_defines_stays_an_error(tmp_path):
    found, _ = _dc007(tmp_path, '"pkg.backend.ExtWithEngine"', "missing_method", MIXIN_HERE)
    assert found == [("error", 9)], found


# LB2: ROLL (8eb27cc) imports and builds its V0 `AsyncLLMEngine` subclass, whose methods read `self.engine`, only
# under `else:` of `if not hasattr(envs, "VLLM_USE_V1") or envs.VLLM_USE_V1:`; vLLM 0.27.1's envs has no VLLM_USE_V1,
# so that branch never runs there. DC006 said error; `refusals.untaken_modules` now reads `hasattr` of a vLLM module
# from the target's sources (the shape in test_plugin_shapes.py passes). The twin: a vLLM whose envs has VLLM_USE_V1
# (false) takes that branch, and the error stays.
LB2 = "tests/fixtures/plugin_shapes/LB2_engine_subclass_built_only_where_a_vllm_module_attribute_the_target_lacks_exists"


def _lb2_files(sub: str) -> dict[str, str]:
    from pathlib import Path

    base = Path(__file__).resolve().parent.parent.parent / LB2 / sub
    return {str(p.relative_to(base)): p.read_text() for p in base.rglob("*.py")}


def test_lb2_twin_the_branch_the_target_takes_keeps_its_error(tmp_path):
    vllm = _lb2_files("vllm_src")
    vllm["vllm/envs.py"] = vllm["vllm/envs.py"].replace(
        'environment_variables = {\n', 'environment_variables = {\n    "VLLM_USE_V1": lambda: False,\n')
    result = scan_trees(tmp_path, vllm, _lb2_files("client"), only=["DC006"])
    found = sorted((f.severity, f.client.path, f.client.line) for f in by_rule(result, "DC006"))
    assert found == [("error", "pkg/async_llm_engine.py", 8)], found


# The unknown DC007 gives when the client's named extension cannot be read says why: ROLL (8eb27cc)
# tests/third_party/vllm/test_fp8.py:80 names `tests.third_party.vllm.worker.Fp8Worker`, a module its tree does not
# hold (it said "could not be read"); an extension bound by a star import is one driftcheck does not follow.
@pytest.mark.parametrize("backend, why", [
    (None, "is in a module the client's tree does not hold"),
    ("from pkg.impl import *\n", "is bound in a way driftcheck does not follow"),
], ids=["module_not_in_the_tree", "star_import"])
def test_unread_extension_says_why(tmp_path, backend, why):
    client = {"pkg/__init__.py": "", "pkg/impl.py": BACKEND,
              "pkg/worker.py": WORKER.replace("EXT", '"pkg.backend.Ext"').replace("METHOD", repr("missing_method"))}
    if backend is not None:
        client["pkg/backend.py"] = backend
    result = scan_trees(tmp_path, VLLM, client, only=["DC007"])
    assert by_rule(result, "DC007") == []
    messages = [u.message for u in result.unknown if u.rule == "DC007"]
    assert len(messages) == 3 and all(why in m and "pkg.backend.Ext" in m for m in messages), messages


def test_lb2_the_branch_the_target_does_not_take_is_a_warning(tmp_path):
    result = scan_trees(tmp_path, _lb2_files("vllm_src"), _lb2_files("client"), only=["DC006"])
    found = sorted((f.severity, f.client.path, f.client.line) for f in by_rule(result, "DC006"))
    assert found == [("warning", "pkg/async_llm_engine.py", 8)], found
