"""Batch 25b (out-of-tree model plugins and general vLLM plugins at their stored GitHub HEAD,
docs/triage/2026-12-05-plugin-heads-25b.md).

MB1: an attribute read under `if self.use_full_cuda_graph and self.aot_schedule:` where the file only ever sets
`self.aot_schedule = False` (`# get_flash_attn_version() == 3`): vllm-plugin-FL's flaggems and sunrise attention
backends (physics31415926/vllm-plugin-FL d1653d9, vllm_fl/dispatch/backends/{flaggems,vendor/sunrise}/impl/attention.py
lines 251, 272, 282) read `self.attention_config`, which vLLM 0.20.2's AttentionMetadataBuilder does not set, only in
that branch. DC006 called both errors; the branch never runs. The twins: a file that also sets the flag to True, to a
value that is not a constant, or that calls setattr, or a read outside the branch, stay errors.

MB2 (fixed in the fourth session of 2026-12-05: client_model/dead_methods.py): the same plugin's metax MLA backend
(vllm_fl/dispatch/backends/vendor/metax/impl/attention/mla/common.py:450, 1218, 1394, 1431, 1437) reads
`self._workspace_buffer` (set only on its metadata builder, not on the impl) in `_run_prefill_*_trtllm_ragged`, methods
bound only under `elif use_trtllm_ragged_deepseek_prefill():`, a module function of the file that returns False. DC006
calls the three reads errors; following a method to the one branch that binds it, and a helper to its constant
result, is left open. The test below pins the error of today, which the fix must also keep for the twin (a helper that
can return True). The guard half is done (2026-12-05, fourth session): code under `if helper():` where the file's
undecorated helper only returns false constants is a warning; a read in a method bound there still is not.

MB3 (open, a strict xfail): the xmhubj fork (b7d291b, vllm_fl/ops/fused_moe/layer.py:98-238) keeps
`FusedMoEFL.select_experts`, which reads `self.zero_expert_num` / `self.zero_expert_type`; vLLM 0.19.0's FusedMoE has
neither that method nor those members (routing goes through `self.router.select_experts`, default_moe_runner.py:498)
and the client calls it nowhere. DC006 calls the four reads errors; the method never runs. Left open: telling that no
code calls a method needs every caller by name, getattr included. The test below pins the twin (the client's own
forward calls it) as an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import plugin_shape, scan_trees

VLLM, CLIENT = plugin_shape("MB1")
ATTN = "plug/attention.py"


def _dc006(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, int]]:
    result = scan_trees(tmp_path, VLLM, client, only=["DC006"])
    return sorted((f.severity, f.client.line) for f in result.findings)


def _with(old: str, new: str) -> dict[str, str]:
    assert old in CLIENT[ATTN]
    return {**CLIENT, ATTN: CLIENT[ATTN].replace(old, new)}


def test_mb1_read_under_a_flag_only_ever_false_is_no_error(tmp_path):
    assert [s for s, _ in _dc006(tmp_path, CLIENT)] == ["warning"]


def test_mb1_the_warning_says_why_it_never_runs(tmp_path):
    result = scan_trees(tmp_path, VLLM, CLIENT, only=["DC006"])
    assert "only ever sets to a false constant" in result.findings[0].message


def test_mb1_twin_flag_also_set_true_stays_error(tmp_path):
    client = _with("            self.aot_schedule = False\n        return", "            self.aot_schedule = True\n        return")
    assert _dc006(tmp_path, client) == [("error", 11)]


def test_mb1_twin_flag_set_from_a_call_stays_error(tmp_path):
    client = _with("self.aot_schedule = False  #", "self.aot_schedule = device == 'cuda'  #")
    assert _dc006(tmp_path, client) == [("error", 11)]


def test_mb1_twin_file_that_calls_setattr_stays_error(tmp_path):
    client = _with("        return self.max_num_splits", "        setattr(self, 'x', 1)\n        return self.max_num_splits")
    assert _dc006(tmp_path, client) == [("error", 11)]


def test_mb1_twin_read_outside_the_branch_stays_error(tmp_path):
    client = _with("        assert self.max_num_splits == 0\n",
                   "        assert self.max_num_splits == 0\n        self.n = self.attention_config\n")
    assert ("error", 13) in _dc006(tmp_path, client)


def test_mb2_a_method_named_only_in_a_branch_that_never_runs_is_a_warning(tmp_path):
    vllm, client = plugin_shape("MB2")
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("warning", 21)]
    assert "in a method that never runs: `_run_prefill_new_tokens_trtllm_ragged` is named only in code that never runs" \
        in result.findings[0].message


def test_mb2_twins_another_file_or_vllm_names_the_method_stays_error(tmp_path):
    vllm, client = plugin_shape("MB2")
    elsewhere = {**client, "plug/other.py": "def pick(impl):\n    return impl._run_prefill_new_tokens_trtllm_ragged\n"}
    result = scan_trees(tmp_path / "client", vllm, elsewhere, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 21)]
    # vLLM's base calls it on its own `self`: the client's object is one
    calls = {**vllm, "vllm/mla.py": vllm["vllm/mla.py"] + "\n    def run(self, q):\n"
                                                          "        return self._run_prefill_new_tokens_trtllm_ragged(q)\n"}
    result = scan_trees(tmp_path / "vllm", calls, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 21)]
    # vLLM names it on another receiver: it may be the client's object
    other = {**vllm, "vllm/runner.py": "def run(impl, q):\n    return impl._run_prefill_new_tokens_trtllm_ragged(q)\n"}
    result = scan_trees(tmp_path / "other", other, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 21)]
    # only `self.` in a vLLM class the client's class does not derive from: not the client's object
    unrelated = {**vllm, "vllm/cuda_mla.py": "class CudaMLAImpl:\n    def run(self, q):\n"
                                             "        return self._run_prefill_new_tokens_trtllm_ragged(q)\n"}
    result = scan_trees(tmp_path / "unrelated", unrelated, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("warning", 21)]


def test_mb2_twin_helper_that_can_return_true_stays_error(tmp_path):
    vllm, client = plugin_shape("MB2")
    client["plug/common.py"] = client["plug/common.py"].replace("    return False\n", "    return bool(__debug__)\n")
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 21)]


def test_mb3_twin_method_the_client_calls_stays_error(tmp_path):
    vllm, client = plugin_shape("MB3")
    client["plug/layer.py"] += "\n    def forward(self, logits):\n        return self.select_experts(logits)\n"
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 7)]


HELPER_VLLM = {"vllm/backend.py": "class Builder:\n    def __init__(self):\n        self.device = 'cpu'\n"}
HELPER_CLIENT = """
from vllm.backend import Builder


def use_ragged_prefill() -> bool:
    print("ragged prefill is not supported on this device")
    return False


class MyBuilder(Builder):
    def build(self):
        if self.device == "cpu" and use_ragged_prefill():
            return self.workspace_buffer
        elif use_ragged_prefill():
            return self.workspace_buffer
        return None
"""


def test_a_branch_under_a_helper_that_only_returns_false_is_a_warning(tmp_path):
    # the guard half of MB2: the plugin's `use_trtllm_ragged_deepseek_prefill()` is `logger.info_once(...); return False`
    result = scan_trees(tmp_path, HELPER_VLLM, {"plug.py": HELPER_CLIENT}, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("warning", 12), ("warning", 14)]
    assert "calls `use_ragged_prefill()`, a function of this file that only ever returns a false constant" in \
        result.findings[0].message


def test_twins_a_helper_that_may_return_true_or_that_the_file_rebinds_stay_errors(tmp_path):
    for i, twin in enumerate([HELPER_CLIENT.replace("    return False", "    return bool(print)"),
                              HELPER_CLIENT + "\nuse_ragged_prefill = lambda: True\n",
                              HELPER_CLIENT.replace("def use_ragged_prefill", "@staticmethod\ndef use_ragged_prefill")]):
        result = scan_trees(tmp_path / str(i), HELPER_VLLM, {"plug.py": twin}, only=["DC006"])
        assert {f.severity for f in result.findings} == {"error"}, i


def test_mb2_a_call_added_in_another_file_is_seen_through_the_unit_cache(tmp_path):
    # the dead-method guard is a cross-file fact: it goes into the units' digest, so the unchanged file's cached unit
    # is not reused once another file names the method
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm
    from scan.helpers import vllm_tree, write_tree

    vllm_files, client = plugin_shape("MB2")
    vroot = vllm_tree(tmp_path / "vllm-src", {**vllm_files, "vllm/_version.py": '__version__ = "0.99.0"\n'})
    cache = tmp_path / "cache"

    def severities(files):
        croot = write_tree(tmp_path / "client", files)
        result = scan(resolve_vllm(str(vroot), cache), [resolve_client(str(croot), cache)],
                      ScanOptions(cache_dir=cache, only=["DC006"], jobs=1))
        return [(f.severity, f.client.line) for f in result.findings]

    assert severities(client) == [("warning", 21)]
    other = {**client, "plug/other.py": "from plug.common import MLACommonImpl\n\n\n"
                                        "def pick(impl: MLACommonImpl):\n    return impl._run_prefill_new_tokens_trtllm_ragged\n"}
    assert severities(other) == [("error", 21)]
