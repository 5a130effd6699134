"""Batch 26b (quantization, speculative-decoding and model-optimisation projects at their stored GitHub HEAD,
docs/triage/2026-12-05-quant-spec-heads-26b.md).

NB1: auto-round's vLLM extension (intel/auto-round b9f3d00, auto_round_extension/vllm_ext/envs_ext.py:22-40) adds its
own variables to `vllm.envs` with `for name, value_fn in extra_environment_variables.items(): setattr(envs, name,
value_fn())` over a dict literal, and its other files read them as `envs.VLLM_MXFP4_PRE_UNPACK_WEIGHTS` and so on
(moe_impl_mxfp4.py, linear_impl_mxfp4.py:89, vllm_oot_patches.py:29 at import time, after `apply()` imported
envs_ext). The patch phase took only a literal second argument of setattr, so DC002 called 19 reads errors at vLLM
0.33.0 / 0.27.1. The names a loop over literal names gives the setattr are now set on that module. The twins: a name
the dict does not hold, a loop over something that is not a literal, and a setattr on another object stay errors.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees, shape_trees

NB1_VLLM, NB1_CLIENT = shape_trees("NB1_")
EXT = "plug/envs_ext.py"


def _dc002(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, str, int]]:
    result = scan_trees(tmp_path, NB1_VLLM, client, only=["DC002"])
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings)


def _with(path: str, old: str, new: str) -> dict[str, str]:
    assert old in NB1_CLIENT[path]
    return {**NB1_CLIENT, path: NB1_CLIENT[path].replace(old, new)}


def test_nb1_names_set_by_a_setattr_loop_over_a_literal_dict_are_no_error(tmp_path):
    assert _dc002(tmp_path, NB1_CLIENT) == []


def test_nb1_loop_over_a_literal_tuple_of_names_is_no_error(tmp_path):
    client = _with(EXT, "for name, value_fn in extra_environment_variables.items():\n    setattr(envs, name, value_fn())",
                   'for name in ("VLLM_PLUG_PRE_UNPACK", "VLLM_PLUG_WORKSPACE_SIZE"):\n    setattr(envs, name, 0)')
    assert _dc002(tmp_path, client) == []


def test_nb1_twin_name_the_dict_does_not_hold_stays_error(tmp_path):
    client = _with("plug/moe.py", "envs.VLLM_PLUG_PRE_UNPACK", "envs.VLLM_PLUG_CT_EMULATIONS")
    assert _dc002(tmp_path, client) == [("error", "plug/moe.py", 7)]


def test_nb1_twin_loop_over_names_that_are_not_literal_stays_error(tmp_path):
    client = _with(EXT, "extra_environment_variables.items():", "os.environ.items():")
    assert [s for s, _, _ in _dc002(tmp_path, client)] == ["error", "error"]


def test_nb1_twin_setattr_on_another_object_stays_error(tmp_path):
    client = _with(EXT, "setattr(envs, name, value_fn())", "setattr(os, name, value_fn())")
    assert [s for s, _, _ in _dc002(tmp_path, client)] == ["error", "error"]
