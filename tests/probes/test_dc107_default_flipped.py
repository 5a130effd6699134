"""DC107 default-flipped: a config default the client relies on changed (probes/default_flipped.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

from conftest import real_scan
from behaviour import _by_rule, pinned, scan_files, seed


def test_dc107_without_a_baseline_is_unknown_not_a_pass(tmp_path):
    src = """
        from vllm.config import SchedulerConfig


        def make():
            return SchedulerConfig(max_model_len=1, is_encoder_decoder=False)
    """
    result = scan_files(tmp_path, {"c.py": src}, only=["DC107"])
    assert result.findings == [] and [u.rule for u in result.unknown] == ["DC107"]
    with_baseline = scan_files(tmp_path, {"c.py": src}, only=["DC107"], client_vllm="0.11.0")
    assert with_baseline.unknown == []
    assert {f.symbol.rsplit(".", 1)[-1] for f in with_baseline.findings} >= {"async_scheduling", "enable_chunked_prefill"}



def test_dc107_async_scheduling_default_flip_shown_with_both_defaults(seed):
    flips = {f.symbol.rsplit(".", 1)[-1]: f for f in _by_rule(seed, "DC107")}
    f = flips["async_scheduling"]
    assert f.severity == "warning"
    assert (f.details["old_default"], f.details["new_default"]) == ("False", "None")
    assert f.details["baseline"]["version"] == "0.11.0"
    assert flips["enable_prefix_caching"].details["old_default"] == "None"
    assert flips["enable_prefix_caching"].details["new_default"] == "True"


def test_dc107_absent_against_the_pinned_release(pinned):
    assert _by_rule(pinned, "DC107") == []


def test_dc107_absent_for_a_default_the_baseline_already_had():
    """Able to fail (unlike the pinned case, where baseline == target returns early): enable_prefix_caching is
    True in both 0.12.0 and 0.16.0, so with 0.12.0 as the baseline it is not reported; async_scheduling still is."""
    flips = {f.symbol.rsplit(".", 1)[-1] for f in _by_rule(real_scan("0.16.0", "speculators==0.3.0", client_vllm="0.12.0"), "DC107")}
    assert "enable_prefix_caching" not in flips
    assert "async_scheduling" in flips
