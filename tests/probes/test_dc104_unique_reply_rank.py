"""DC104 unique-reply-rank: indexing the single reply of collective_rpc(unique_reply_rank=) (probes/unique_reply_rank.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

from conftest import source_line, vllm_sources
from behaviour import _by_rule, _client_line, pinned, rules, scan_files, seed


def test_dc104_and_dc105_follow_the_reply_through_a_variable(tmp_path):
    src = """
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def grab(executor: MultiprocExecutor):
            replies = executor.collective_rpc("get_kv_cache_spec", unique_reply_rank=0)
            first = replies[0]
            if not first:
                return None
            return first
    """
    result = scan_files(tmp_path, {"c.py": src}, only=["DC104", "DC105"])
    assert rules(result) == [("DC104", 6), ("DC105", 7)]


def test_dc104_off_without_unique_reply_rank(tmp_path):
    src = """
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def grab(executor: MultiprocExecutor):
            return executor.collective_rpc("get_kv_cache_spec")[0]
    """
    assert scan_files(tmp_path, {"c.py": src}, only=["DC104"]).findings == []


def test_dc104_reply_shape_present_on_016_at_the_index(seed):
    [f] = _by_rule(seed, "DC104")
    assert f.client.line == _client_line("aux_hidden_states = captured_states_list[0]")
    assert f.vllm.path == "vllm/v1/executor/multiproc_executor.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "return responses[0] if output_rank is not None else responses")


def test_dc104_absent_on_011_where_the_reply_is_a_list(pinned):
    assert _by_rule(pinned, "DC104") == []
