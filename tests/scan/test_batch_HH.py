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
