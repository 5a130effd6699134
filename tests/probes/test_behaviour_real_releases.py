"""Behaviour probes (DC101-DC107) on real releases: present where the drift is, absent where not.

speculators 0.3.0 was written for vLLM 0.11.0; on 0.16.0 (the seed's pair) every runtime drift of
the seed must be found at the client line that crashes, with the vLLM line that makes it crash.
speculators 0.4.0 is the maintainers' port to 0.12-0.16 and must be clean of the runtime errors.
"""

from __future__ import annotations

import pytest

from conftest import client_sources, real_scan, source_line, vllm_sources

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
WORKER = "speculators/data_generation/custom_worker.py"


def _by_rule(result, rule):
    return [f for f in result.findings if f.rule == rule]


def _client_line(needle, rel=GEN, version="0.3.0", nth=1):
    return source_line(client_sources("speculators", version), rel, needle, nth)


@pytest.fixture(scope="module")
def seed():
    return real_scan("0.16.0", "speculators==0.3.0")


@pytest.fixture(scope="module")
def pinned():
    return real_scan("0.11.0", "speculators==0.3.0")


def test_dc101_block_hasher_present_on_016_at_request_and_assert(seed):
    [f] = _by_rule(seed, "DC101")
    assert f.client.path == GEN and f.client.line == _client_line("req = Request(")
    assert f.vllm.path == "vllm/v1/core/block_pool.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "assert len(request.block_hashes) >= num_full_blocks")
    assert f.details["failure"] == "assert" and f.details["prefix_caching"] == "on"
    assert "message-less AssertionError" in f.message


def test_dc101_on_032_is_an_index_error_without_assert():
    result = real_scan("0.32.0", "speculators==0.3.0")
    [f] = _by_rule(result, "DC101")
    assert f.details["failure"] == "index" and "IndexError" in f.message
    assert "assert len(request.block_hashes)" not in (f.vllm.code or "")


def test_dc101_absent_on_011_where_prefix_caching_defaults_off(pinned):
    assert _by_rule(pinned, "DC101") == []


def test_dc101_absent_when_client_disables_prefix_caching():
    # speculators 0.4.0 passes enable_prefix_caching=False (and a block_hasher)
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC101") == []


def test_dc102_prefix_caching_warning_present_on_016(seed):
    [f] = _by_rule(seed, "DC102")
    assert f.severity == "warning" and f.when == "silent"
    assert f.client.line == _client_line("cache_config = CacheConfig(")
    assert f.vllm.path == "vllm/config/cache.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "enable_prefix_caching: bool = True")


def test_dc102_absent_when_prefix_caching_off():
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC102") == []
    assert _by_rule(real_scan("0.11.0", "speculators==0.3.0"), "DC102") == []


def test_dc103_two_phase_present_on_016(seed):
    [f] = _by_rule(seed, "DC103")
    assert f.client.line == _client_line("self.executor.execute_model(scheduler_output)")
    assert f.vllm.path == "vllm/v1/worker/gpu_model_runner.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "State error: sample_tokens() must be called")


def test_dc103_absent_on_011_and_when_client_calls_sample_tokens(pinned):
    assert _by_rule(pinned, "DC103") == []
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC103") == []


def test_dc104_reply_shape_present_on_016_at_the_index(seed):
    [f] = _by_rule(seed, "DC104")
    assert f.client.line == _client_line("aux_hidden_states = captured_states_list[0]")
    assert f.vllm.path == "vllm/v1/executor/multiproc_executor.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "return responses[0] if output_rank is not None else responses")


def test_dc104_absent_on_011_where_the_reply_is_a_list(pinned):
    assert _by_rule(pinned, "DC104") == []


def test_dc105_tensor_truthiness_present_on_016(seed):
    [f] = _by_rule(seed, "DC105")
    assert f.client.line == _client_line("if not aux_hidden_states:")
    assert "Boolean value of Tensor" in f.message


def test_dc105_absent_on_011_and_for_040(pinned):
    assert _by_rule(pinned, "DC105") == []
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC105") == []


def test_dc106_deepseek_llama_4_scaling_present_on_016(seed):
    hits = [f for f in _by_rule(seed, "DC106") if f.details.get("argument") == "llama_4_scaling"]
    assert len(hits) == 1
    f = hits[0]
    assert f.client.path == WORKER and f.client.line == _client_line("hidden_states, residual = layer(", WORKER)
    assert "DeepseekV2Model" in f.details["architectures"]
    assert f.vllm.path == "vllm/model_executor/models/deepseek_v2.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "hidden_states, residual = layer(")
    # DeepseekV2DecoderLayer.forward gives llama_4_scaling a default: it runs, but computes something else
    assert f.severity == "warning"


def test_dc106_absent_against_the_pinned_release(pinned):
    assert _by_rule(pinned, "DC106") == []


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


def test_no_unknowns_and_no_internal_errors_on_the_seed_pair(seed, pinned):
    assert seed.unknown == [] and seed.internal_errors == []
    assert pinned.unknown == [] and pinned.internal_errors == []
