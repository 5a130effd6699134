"""Batch HH (RL / post-training frameworks that drive vLLM internals; docs/triage/2026-12-06-rl-rollout-internals-HH.md).

HH1: alibaba/ROLL before 29a7610e ("vllm 0.11.0 import"), at vLLM 0.11.0. Its `roll/third_party/vllm/__init__.py`
picks one copy per release with an `if` / `elif` chain: `elif Version("0.11.0") == Version(vllm.__version__): from
roll.third_party.vllm.vllm_0_11_0.llm import Llm0110`. The 0.11.0 copy's `ray_distributed_executor.py` imported
`SamplerOutput` from `vllm.model_executor.layers.sampler`, a module 0.11.0 no longer has (the client's own fix moved it
to `vllm.v1.outputs`). DC001 called it a warning, "loaded only under a vLLM version check, so the client handles it":
every branch naming releases counted as a guard, the one the target takes too. Now a release test the target
certainly passes, each earlier test of its `elif` chain certainly failing, is no guard: the copy it loads is the
target's own. Twins: the copy for another release stays a warning; at 0.10.2 the roles swap; an `elif` after a test
the target also passes, and a test with a part driftcheck cannot decide, keep the warning.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

HH1_VLLM, HH1_CLIENT = plugin_shape("HH1")
INIT = "rl/third/__init__.py"
COPY_0102 = "rl/third/v0102/executor.py"
COPY_0110 = "rl/third/v0110/executor.py"


GONE = ("from vllm.v1.outputs import SamplerOutput  # 0.11.0's home",
        "from vllm.model_executor.layers.sampler import SamplerOutput  # gone in 0.11.0")
BROKEN = edited(HH1_CLIENT, COPY_0110, GONE)  # ROLL before its fix: the copy for 0.11.0 fails on 0.11.0


def _dc001(tmp_path, client, vllm=HH1_VLLM, version="0.11.0"):
    result = scan_trees(tmp_path, vllm, client, version=version)
    return {f.client.path: f for f in result.findings if f.rule == "DC001"}


def _at_0102(vllm):
    vllm = edited(vllm, "vllm/__init__.py", ('"0.11.0"', '"0.10.2"'), ("(0, 11, 0)", "(0, 10, 2)"))
    return edited(vllm, "vllm/_version.py", ('"0.11.0"', '"0.10.2"'))


def test_hh1_code_that_runs_the_other_releases_copy_stays_a_warning(tmp_path):
    found = _dc001(tmp_path, HH1_CLIENT)
    assert sorted(found) == [COPY_0102]
    assert found[COPY_0102].severity == "warning" and f"{INIT}:6" in found[COPY_0102].message


def test_hh1_missed_error_the_copy_the_target_loads_is_checked(tmp_path):
    found = _dc001(tmp_path, BROKEN)
    assert found[COPY_0110].severity == "error"  # a warning before HH1: "so the client handles it"
    assert "does not exist in vLLM 0.11.0" in found[COPY_0110].message
    assert "handles it" not in found[COPY_0110].message
    assert found[COPY_0102].severity == "warning"


def test_hh1_twin_at_the_other_release_the_roles_swap(tmp_path):
    found = _dc001(tmp_path, BROKEN, _at_0102(HH1_VLLM), "0.10.2")
    assert {k: f.severity for k, f in found.items()} == {COPY_0102: "error", COPY_0110: "warning"}


@pytest.mark.parametrize("old, new", [
    # an earlier test of the chain the target passes too: the `elif` body never runs on it
    ('if Version("0.10.2") == Version(vllm.__version__):',
     'if Version(vllm.__version__) >= Version("0.10.2"):'),
    # a part beside the release that driftcheck cannot decide
    ('elif Version("0.11.0") == Version(vllm.__version__):',
     'elif Version("0.11.0") == Version(vllm.__version__) and USE_V0_EXECUTOR:'),
])
def test_hh1_twins_an_undecided_or_shadowed_branch_stays_a_warning(tmp_path, old, new):
    client = edited(BROKEN, INIT, (old, new))
    assert _dc001(tmp_path, client)[COPY_0110].severity == "warning"


# ----------------------------------------------------------------------------------------------------------- HH2
"""HH2 (a missed error, new rule DC119): PrimeIntellect-ai/prime-rl before b2b4f3f71 ("bump vLLM 0.23.0 -> 0.24.0"),
at vLLM 0.24.0. Its weight transfer finds the MoE layers with `if not isinstance(module, FusedMoE): continue`, `FusedMoE`
imported from `vllm.model_executor.layers.fused_moe.layer`. 0.24.0 made `FusedMoE` a factory function (`def FusedMoE(...)`,
layer.py:103, building a `MoERunner`); `isinstance` with a function raises TypeError whatever the object is. The
client's own fix says so ("vLLM 0.24 turned FusedMoE into a factory returning a MoERunner"). driftcheck said nothing:
no rule read a type test's second argument. DC119 does, for a name the file binds only through its vLLM import; the
isinstance guard the test's own `if` makes of its span does not demote the test itself. Twins: the class (the code
runs, no finding), a try that catches TypeError (a warning), a decorated factory and a name the file rebinds (no
finding)."""

HH2_VLLM, HH2_CLIENT = plugin_shape("HH2")
LAYER = "vllm/model_executor/layers/fused_moe/layer.py"
WEIGHTS = "plug/weights.py"
FACTORY = edited(HH2_VLLM, LAYER, ("class FusedMoE:", "class MoERunner:"), ("self.num_experts = num_experts\n", """\
self.num_experts = num_experts


def FusedMoE(num_experts: int) -> MoERunner:
    return MoERunner(num_experts)
"""))


def _dc119(tmp_path, vllm, client=HH2_CLIENT):
    result = scan_trees(tmp_path, vllm, client, version="0.24.0")
    return [(f.severity, f.client.path, f.client.line, f.message) for f in result.findings if f.rule == "DC119"]


def test_hh2_the_class_no_finding(tmp_path):
    assert _dc119(tmp_path, HH2_VLLM) == []


def test_hh2_missed_error_isinstance_against_a_factory_function(tmp_path):
    (found,) = _dc119(tmp_path, FACTORY)
    severity, path, line, message = found
    assert (severity, path, line) == ("error", WEIGHTS, 7)  # not demoted by its own `if not isinstance(...)`
    assert "`isinstance(module, FusedMoE)` raises TypeError" in message and "is a function in vLLM 0.24.0" in message


def test_hh2_a_tuple_of_types_holding_it_fails_too(tmp_path):
    client = edited(HH2_CLIENT, WEIGHTS, ("isinstance(module, FusedMoE)", "isinstance(module, (dict, FusedMoE))"))
    assert [f[:3] for f in _dc119(tmp_path, FACTORY, client)] == [("error", WEIGHTS, 7)]


def test_hh2_twin_a_try_that_catches_type_error_is_a_warning(tmp_path):
    client = edited(HH2_CLIENT, WEIGHTS, ("    found = {}\n    for", "    found = {}\n    try:\n      for"),
                    ("        if not", "          if not"), ("            continue", "              continue"),
                    ("        found[name]", "          found[name]"),
                    ("    return found", "    except TypeError:\n        pass\n    return found"))
    assert [f[:3] for f in _dc119(tmp_path, FACTORY, client)] == [("warning", WEIGHTS, 8)]


@pytest.mark.parametrize("vllm, client", [
    # a decorated factory: the decorator may hand back a class
    (edited(FACTORY, LAYER, ("def FusedMoE(", "@register\ndef FusedMoE("), ("class MoERunner:", "def register(f):\n    return f\n\n\nclass MoERunner:")), HH2_CLIENT),
    # the file binds the name another way too: what the test reaches is not certainly vLLM's function
    (FACTORY, edited(HH2_CLIENT, WEIGHTS, ("def build_expert_map", "FusedMoE = getattr(FusedMoE, \"cls\", FusedMoE)\n\n\ndef build_expert_map"))),
])
def test_hh2_twins_no_finding_where_the_test_may_reach_a_class(tmp_path, vllm, client):
    assert _dc119(tmp_path, vllm, client) == []


# ----------------------------------------------------------------------------------------------------------- HH3
"""HH3 (7 false DC007 errors): ROLL's tests at 29a7610e^ (vLLM 0.11.0) add rpc targets to the client class its
engine names as the worker's base by assignment (`WorkerHelper.load_weight_tensor = load_weight_tensor`,
tests/third_party/vllm/test_model_update.py:17; test_fp8.py:35, 93; test_sleep_level.py:17) and then send
`collective_rpc("load_weight_tensor", ...)`. DC007 read only the methods the class body defines: "no worker class
defines it". A name a client file with vLLM sets on a client class by name (`Cls.m = f`, `setattr(Cls, "m", f)`, the
class imported from its module or defined in that file) is now one of that class's methods. Twins keep the error: no
patch, and a patch onto another class."""

HH3_VLLM, HH3_CLIENT = plugin_shape("HH3")
UPDATE = "pkg/update.py"


def _dc007(tmp_path, client):
    result = scan_trees(tmp_path, HH3_VLLM, client, only=["DC007"])
    return [(f.severity, f.client.path, f.client.line) for f in result.findings]


def test_hh3_a_method_patched_onto_the_extension_is_served(tmp_path):
    assert _dc007(tmp_path, HH3_CLIENT) == []


def test_hh3_setattr_sets_it_too(tmp_path):
    client = edited(HH3_CLIENT, UPDATE, ("WorkerHelper.load_weight = load_weight", 'setattr(WorkerHelper, "load_weight", load_weight)'))
    assert _dc007(tmp_path, client) == []


@pytest.mark.parametrize("old, new", [
    # no patch: the extension lacks the method
    ("WorkerHelper.load_weight = load_weight", "pass"),
    # a patch onto another class of the client, which no worker derives from
    ("WorkerHelper.load_weight = load_weight", "class Other:\n    pass\n\n\nOther.load_weight = load_weight"),
])
def test_hh3_twins_keep_the_error(tmp_path, old, new):
    client = edited(HH3_CLIENT, UPDATE, (old, new))
    line = next(i for i, text in enumerate(client[UPDATE].splitlines(), 1) if 'collective_rpc("load_weight"' in text)
    assert _dc007(tmp_path, client) == [("error", UPDATE, line)]
