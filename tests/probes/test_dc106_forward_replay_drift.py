"""DC106 forward-replay-drift: a replaced forward calls decoder layers with fewer arguments (probes/forward_replay_drift.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

from conftest import source_line, vllm_sources
from behaviour import _by_rule, _client_line, pinned, seed, WORKER


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
