"""Session of 2026-12-06 (JC): misses left open by earlier batches.

JC1 (batch 34e's left-open item): tenstorrent/vllm-tt-plugin (e3fc849) at vLLM 0.34.0 merges a lane's cached request
data with `cached.resumed_req_ids |= lane_cached.resumed_req_ids`. An augmented assignment reads the member before it
stores it, so on 0.34.0's `CachedRequestData` (no `resumed_req_ids`) the line raises AttributeError; DC006 said "this
assignment creates a new attribute that vLLM never reads", a warning. Now `x.m += v` is a read of `m` (an error where
the class certainly lacks it, a warning under a hasattr guard) and creates no member the client's other reads could
be credited with. Twins: a member the client assigns first (`x.m = 0` then `x.m += 1`), one vLLM's class has, and a
client subclass's `self.m += 1` where the vLLM base sets `m` stay quiet.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees

JC1_VLLM, JC1_CLIENT = plugin_shape("JC1")
LANE = "tt_plug/lane_scheduler.py"


def _dc006(result):
    return [(f.severity, f.client.line, f.message) for f in result.findings if f.rule == "DC006"]


def test_jc1_augmented_assignment_of_a_missing_member_is_an_error(tmp_path):
    found = _dc006(scan_trees(tmp_path, JC1_VLLM, JC1_CLIENT))
    assert sorted((sev, line) for sev, line, _m in found) == [("error", 9), ("error", 21), ("warning", 14)]
    by_line = {line: (sev, message) for sev, line, message in found}
    assert "no attribute 'resumed_req_ids'" in by_line[9][1] and "AttributeError when this line runs" in by_line[9][1]
    assert "creates a new attribute" not in by_line[9][1]
    assert "no attribute 'num_lane_steps'" in by_line[21][1]
    # line 14 is the client's own plain store (`cached.num_merges = 0`): the `+=` after it (line 15) reads what it set
    assert by_line[14][0] == "warning" and "creates a new attribute" in by_line[14][1]
    assert 15 not in by_line
    # vLLM's own members read by `+=` (req_ids, num_scheduled_steps) are no finding
    assert {8, 20} & set(by_line) == set()


def test_jc1_guarded_augmented_assignment_is_a_warning(tmp_path):
    client = edited(JC1_CLIENT, LANE, ("    cached.resumed_req_ids |= set(lane_cached.req_ids)\n",
                                       "    if hasattr(cached, \"resumed_req_ids\"):\n"
                                       "        cached.resumed_req_ids |= set(lane_cached.req_ids)\n"))
    found = {line: sev for sev, line, _m in _dc006(scan_trees(tmp_path, JC1_VLLM, client))}
    assert found[10] == "warning"


def test_jc1_twin_the_release_has_the_member(tmp_path):
    vllm = edited(JC1_VLLM, "vllm/v1/core/sched/output.py",
                  ("    num_computed_tokens: list[int]\n", "    num_computed_tokens: list[int]\n    resumed_req_ids: set[str]\n"))
    found = {line for _sev, line, _m in _dc006(scan_trees(tmp_path, vllm, JC1_CLIENT))}
    assert 9 not in found and 21 in found


def test_jc1_twin_the_client_assigns_it_first(tmp_path):
    client = edited(JC1_CLIENT, LANE, ("    cached.req_ids += lane_cached.req_ids\n",
                                       "    cached.req_ids += lane_cached.req_ids\n    cached.resumed_req_ids = set()\n"),
                    ("        self.num_scheduled_steps += 1\n",
                     "        self.num_scheduled_steps += 1\n        self.num_lane_steps = 0\n"))
    found = {(sev, line) for sev, line, _m in _dc006(scan_trees(tmp_path, JC1_VLLM, client))}
    assert not any(sev == "error" for sev, _line in found), found
