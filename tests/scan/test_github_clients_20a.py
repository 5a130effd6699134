"""Root causes of false errors from batch 20a (vLLM plugins taken from GitHub, docs/triage/2026-12-04-github-clients-20a.md):
the shape that runs (no error), and the same shape where the code really reaches vLLM, which must stay an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- RA
# afd-plugin (vllm-project/afd-plugin @ 2e4378f pins `vllm==0.26.0`; v0.19.1rc1 pins 0.19.1), scanned at 0.33.0:
# compat/patches/async_dp_engine.py defines `launch_core_engines` (a `@contextmanager`) and `add_request_async` and
# installs them on vLLM only under `if _is_target_vllm_compatible():`, a no-argument helper returning
# `version_text.startswith(TARGET_VLLM_VERSION)`. The helper was no version check (a prefix test, not a comparison) and
# the functions were taken as reachable from elsewhere (the patch's own `engine_utils.launch_core_engines = ...` store
# counted as a read of that name; a decorated function was never followed): 3 + 2 errors on code that never runs there.
SHAPE = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "RA_patch_installed_under_a_version_predicate"
VLLM = {"vllm/__init__.py": "__version__ = '0.33.0'\n", "vllm/v1/__init__.py": "", "vllm/v1/engine/__init__.py": "",
        "vllm/v1/engine/utils.py": (SHAPE / "vllm_src/vllm/v1/engine/utils.py").read_text()}
PREDICATE = "version_text.startswith(TARGET_VLLM_VERSION)"
GUARDED = "if _is_target_vllm_compatible():\n    engine_utils_module.launch_core_engines = launch_core_engines\n"


def _findings(tmp_path, predicate=PREDICATE, install=GUARDED):
    # the shape's module (a `@contextmanager` patch installed under the predicate), its predicate or install swapped
    patch = (SHAPE / "client/pkg/async_dp_engine.py").read_text()
    assert PREDICATE in patch and GUARDED in patch
    client = {"pkg/__init__.py": "", "pkg/patch.py": patch.replace(PREDICATE, predicate).replace(GUARDED, install),
              "main.py": "import pkg.patch  # noqa: F401\n"}
    result = scan_trees(tmp_path, VLLM, client)
    return [(f.rule, f.severity) for f in result.findings if f.symbol.endswith("get_open_port")]


def test_ra_a_patch_installed_only_under_a_version_prefix_predicate_is_a_warning(tmp_path):
    assert _findings(tmp_path) == [("DC002", "warning")]


def test_ra_a_release_prefix_is_a_version_predicate_too(tmp_path):
    assert _findings(tmp_path, predicate='version_text.startswith("0.26")') == [("DC002", "warning")]


def test_ra_the_same_patch_installed_unconditionally_stays_an_error(tmp_path):
    install = "engine_utils_module.launch_core_engines = launch_core_engines\n"
    assert _findings(tmp_path, install=install) == [("DC002", "error")]


def test_ra_a_predicate_that_is_no_version_check_stays_an_error(tmp_path):
    # a prefix test of something that is not a version: the patch may well be installed on this release
    assert _findings(tmp_path, predicate='str(__name__).startswith("pkg")') == [("DC002", "error")]


def test_ra_a_function_also_called_outside_the_guard_stays_an_error(tmp_path):
    install = GUARDED + "\n\nwith launch_core_engines(1):\n    pass\n"
    assert _findings(tmp_path, install=install) == [("DC002", "error")]


# ----------------------------------------------------------------------------------------- RB
# vllm-ascend v0.25.1rc1 @ 0.25.1: AscendSpecDecodeBaseProposer (spec_decode/llm_base_proposer.py) reads
# `self._per_group_query_slot_mapping_buffers` and `self._dflash_num_context` on its dspark / dflash paths; only
# AscendDSparkProposer / AscendDflashProposer set them, two and three classes below it in other files. Members of a
# client subclass in another file counted for its direct base only (2 errors).
RB_VLLM = {
    "vllm/__init__.py": "__version__ = '0.25.1'\n",
    "vllm/v1/__init__.py": "",
    "vllm/v1/spec_decode/__init__.py": "",
    "vllm/v1/spec_decode/proposer.py": "class BaseProposer:\n    def __init__(self, method):\n        self.method = method\n\n\n"
                                       "class EagleProposer(BaseProposer):\n    pass\n",
}


def _rb_client(sets: str) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/base.py": "from vllm.v1.spec_decode.proposer import BaseProposer\n\n\nclass MyBase(BaseProposer):\n"
                       "    def slots(self):\n        return self._per_group_slots\n",
        "pkg/eagle.py": "from vllm.v1.spec_decode.proposer import EagleProposer\n\nfrom pkg.base import MyBase\n\n\n"
                        "class MyEagle(EagleProposer, MyBase):\n    pass\n",
        "pkg/dflash.py": "import vllm  # noqa: F401\n\nfrom pkg.eagle import MyEagle\n\n\nclass MyDflash(MyEagle):\n    pass\n",
        "pkg/dspark.py": "import vllm  # noqa: F401\n\nfrom pkg.dflash import MyDflash\n\n\nclass MyDSpark(MyDflash):\n"
                         f"    def __init__(self):\n        super().__init__('dspark')\n        self.{sets} = {{}}\n",
    }


def _rb_findings(tmp_path, sets):
    result = scan_trees(tmp_path, RB_VLLM, _rb_client(sets))
    return [(f.rule, f.severity) for f in result.findings if f.symbol.endswith("_per_group_slots")]


def test_rb_a_member_a_grandchild_in_another_file_sets_is_the_grandchilds(tmp_path):
    assert _rb_findings(tmp_path, "_per_group_slots") == []


def test_rb_a_member_no_class_below_sets_stays_an_error(tmp_path):
    assert _rb_findings(tmp_path, "_other_slots") == [("DC006", "error")]


# ----------------------------------------------------------------------------------------- RC
# vllm-ascend v0.25.1rc1 @ 0.25.1: patch/platform/patch_pp_mtp.py binds `model_runner_output_cls =
# outputs_mod.ModelRunnerOutput` (after `from vllm.v1 import outputs as outputs_mod` in the function) and sets
# `model_runner_output_cls.__init__` to a nested `@wraps(original_init)` wrapper taking `spec_token_ids=` and handing
# `*args, **kwargs` on to the original; the patch through the local name was not seen, so `ModelRunnerOutput(...,
# spec_token_ids=...)` was bound against the dataclass's fields alone (1 error). The wrapper is read now: what it names
# itself is accepted, what it hands on must suit the original (`routed_experts=` on 0.33.0 stays an error).
RC_VLLM = {
    "vllm/__init__.py": "__version__ = '0.25.1'\n",
    "vllm/v1/__init__.py": "",
    "vllm/v1/outputs.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass ModelRunnerOutput:\n    req_ids: list\n",
}
RC_PATCH = '''from functools import wraps


def _patch():
    from vllm.v1 import outputs as outputs_mod

    {alias}
    original_init = cls.__init__

    @wraps(original_init)
    def _patched_init(self, *args, spec_token_ids=None, **kwargs):
        original_init(self, *args, **kwargs)

    {target}.__init__ = _patched_init


_patch()
'''


def _rc_findings(tmp_path, alias="cls = outputs_mod.ModelRunnerOutput", target="cls", keyword="spec_token_ids"):
    client = {"pkg/__init__.py": "", "pkg/patch.py": RC_PATCH.format(alias=alias, target=target),
              "pkg/runner.py": "from vllm.v1.outputs import ModelRunnerOutput\n\n\n"
                               f"def run():\n    return ModelRunnerOutput(req_ids=[], {keyword}=[])\n"}
    result = scan_trees(tmp_path, RC_VLLM, client)
    return [(f.rule, f.severity) for f in result.findings if f.rule == "DC003"]


def test_rc_a_constructor_patched_through_a_local_alias_takes_the_wrappers_keyword(tmp_path):
    assert _rc_findings(tmp_path) == []


def test_rc_a_keyword_the_wrapper_hands_on_to_the_original_stays_an_error(tmp_path):
    assert _rc_findings(tmp_path, keyword="routed_experts") == [("DC003", "error")]


def test_rc_an_alias_to_something_else_patches_nothing_of_vllms(tmp_path):
    # the local name holds the client's own class: vLLM's constructor is untouched
    alias = "class Own:\n        pass\n    cls = Own"
    assert _rc_findings(tmp_path, alias=alias) == [("DC003", "error")]


def test_rc_a_name_bound_twice_is_no_alias(tmp_path):
    alias = "cls = outputs_mod.ModelRunnerOutput\n    if outputs_mod:\n        cls = dict"
    assert _rc_findings(tmp_path, alias=alias) == [("DC003", "error")]


# ----------------------------------------------------------------------------------------- RD
# vllm-ascend v0.25.1rc1 @ 0.25.1: patch/worker/__init__.py imports patch_v2.patch_eagle_speculator (and through it
# worker/v2/spec_decode/eagle/aclgraph.py, written for vLLM main) only under `if not vllm_version_is("0.25.1"):`, the
# plugin's release-equality helper. A branch a test of that helper decides against the target was not decided (1 error).
RD_VLLM = {
    "vllm/__init__.py": "__version__ = '0.25.1'\n",
    "vllm/v1/__init__.py": "",
    "vllm/v1/cudagraph_utils.py": "class CudaGraphManager:\n    pass\n",
}
RD_HELPER = '''import functools


@functools.cache
def vllm_version_is(target_vllm_version: str):
    import vllm

    return vllm.__version__ == target_vllm_version
'''


def _rd_findings(tmp_path, test, elsewhere=""):
    client = {"pkg/__init__.py": "", "pkg/utils.py": RD_HELPER,
              "pkg/patches.py": f"import vllm  # noqa: F401\n\nfrom pkg.utils import vllm_version_is\n\nif {test}:\n"
                                f"    import pkg.main_only  # noqa: F401\n{elsewhere}",
              "pkg/main_only.py": "from vllm.v1.cudagraph_utils import SpeculatorCudaGraphManager  # noqa: F401\n"}
    result = scan_trees(tmp_path, RD_VLLM, client, version="0.25.1")
    return [(f.rule, f.severity) for f in result.findings if f.rule == "DC002"]


def test_rd_a_module_loaded_unless_the_helper_names_the_target_is_a_warning(tmp_path):
    assert _rd_findings(tmp_path, 'not vllm_version_is("0.25.1")') == [("DC002", "warning")]


def test_rd_a_module_also_loaded_outside_the_test_stays_an_error(tmp_path):
    elsewhere = "\nimport pkg.main_only  # noqa: E402,F401\n"
    assert _rd_findings(tmp_path, 'not vllm_version_is("0.25.1")', elsewhere) == [("DC002", "error")]


def test_rd_a_module_loaded_unless_another_release_stays_an_error(tmp_path):
    assert _rd_findings(tmp_path, 'not vllm_version_is("0.24.0")') == [("DC002", "error")]
