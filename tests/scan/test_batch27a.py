"""Batch 27a (hardware platform plugins and model-runner / attention-backend code at their stored GitHub HEAD,
docs/triage/2026-12-05-platform-runner-heads-27a.md).

MB2 (open since batch 25b; fixed on main by 16c2e22, client_model/dead_methods.py, while this batch ran): vllm-plugin-FL's
metax MLA backend (vllm_fl/dispatch/backends/vendor/metax/impl/attention/mla/common.py in the tonyh168 fork 38e7dbc,
lines 450, 1218-1223, 1394, 1431, 1437; the same in the xin2an fork 2136609) reads `self._workspace_buffer`, which
neither the client's MLACommonImpl nor vLLM's MLAAttentionImpl sets, in `_run_prefill_{new_tokens,context_chunk}_
trtllm_ragged`; the methods are only handed out as bound methods under `elif use_trtllm_ragged_deepseek_prefill():`,
a helper of the file that only returns False. This batch found the three false errors again on two newer forks; the
tests pin the warning and its reason, and the twins (a helper that may return true, the method also handed out or
called outside the branch) stay errors.

OA1: the same through a flag the file only sets false (`self.aot_schedule = False  # get_flash_attn_version() == 3`),
a bound method stored as the decode path and one appended to a callback list only under `if ... and self.aot_schedule`.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, plugin_shape, scan_trees

COMMON = "plug/common.py"
BUILDER = "plug/builder.py"


def _dc006(tmp_path: Path, vllm: dict[str, str], client: dict[str, str]) -> list[tuple[str, int]]:
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    return sorted((f.severity, f.client.line) for f in result.findings)


def test_mb2_read_in_a_bound_method_handed_out_only_under_a_false_helper_is_a_warning(tmp_path):
    vllm, client = plugin_shape("MB2")
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("warning", 21)]
    message = result.findings[0].message
    assert "`_run_prefill_new_tokens_trtllm_ragged` is named only in code that never runs" in message
    assert "calls `use_trtllm_ragged_deepseek_prefill()`, a function of this file that only ever returns a false " \
           "constant" in message


def test_mb2_twin_helper_that_may_return_true_stays_error(tmp_path):
    vllm, client = plugin_shape("MB2")
    client = edited(client, COMMON, ("    return False\n", "    return bool(__debug__)\n"))
    assert _dc006(tmp_path, vllm, client) == [("error", 21)]


def test_mb2_twin_method_also_handed_out_outside_the_branch_stays_error(tmp_path):
    vllm, client = plugin_shape("MB2")
    client = edited(client, COMMON, ("            self._run_prefill_new_tokens = self._run_prefill_new_tokens_fa\n",
                                     "            self._run_prefill_new_tokens = self._run_prefill_new_tokens_trtllm_ragged\n"))
    assert _dc006(tmp_path, vllm, client) == [("error", 21)]


def test_mb2_twin_method_also_called_outside_the_branch_stays_error(tmp_path):
    vllm, client = plugin_shape("MB2")
    client = {**client, COMMON: client[COMMON] + "\n    def prefill(self, q):\n"
                                                 "        return self._run_prefill_new_tokens_trtllm_ragged(q)\n"}
    assert _dc006(tmp_path, vllm, client) == [("error", 21)]


def test_oa1_bound_methods_handed_out_only_under_a_flag_only_ever_false_are_warnings(tmp_path):
    vllm, client = plugin_shape("OA1")
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("warning", 20), ("warning", 23)]
    assert "`_build_decode_aot` is named only in code that never runs (under `if` (line 8) that tests " \
           "`self.aot_schedule`" in result.findings[0].message
    assert "`_record_splits` is named only in code that never runs (under `if` (line 13)" in result.findings[1].message


def test_oa1_twin_flag_also_set_true_stays_error(tmp_path):
    vllm, client = plugin_shape("OA1")
    client = edited(client, BUILDER, ("        self.on_done = []\n",
                                      "        self.on_done = []\n        self.aot_schedule = device == 'cuda'\n"))
    assert _dc006(tmp_path, vllm, client) == [("error", 21), ("error", 24)]


def test_oa1_twin_data_member_of_the_same_name_read_unguarded_stays_error(tmp_path):
    # `self._record_splits` also read as a value outside the flag's branch: whoever holds it may call it
    vllm, client = plugin_shape("OA1")
    client = edited(client, BUILDER, ("        for callback in self.on_done:\n",
                                      "        self.last = self._record_splits\n        for callback in self.on_done:\n"))
    assert _dc006(tmp_path, vllm, client) == [("error", 23), ("warning", 20)]
