"""DC106 forward-replay-drift: a replaced forward calls decoder layers with fewer arguments (probes/forward_replay_drift.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

from conftest import real_scan, source_line, vllm_sources
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


def test_dc106_absent_where_the_baseline_already_passed_the_argument():
    """Able to fail (unlike the pinned case, where baseline == target returns early): with vLLM 0.12.0 as the
    client's baseline, DeepseekV2's layers already got llama_4_scaling there, so it is no drift on 0.16.0."""
    result = real_scan("0.16.0", "speculators==0.3.0", client_vllm="0.12.0")
    assert [f for f in _by_rule(result, "DC106") if f.details.get("argument") == "llama_4_scaling"] == []
    assert result.internal_errors == [] and [u for u in result.unknown if u.rule == "DC106"] == []


def test_dc106_reads_the_layer_call_whatever_vllm_names_its_loop_variable():
    from driftcheck.probes.forward_replay_drift import target_layer_call

    for var in ("layer", "decoder_layer", "blk"):
        text = (
            "class M:\n"
            "    def forward(self, positions, hidden_states):\n"
            "        residual = None\n"
            f"        for i, {var} in enumerate(islice(self.layers, self.start_layer, self.end_layer)):\n"
            f"            hidden_states, residual = {var}(positions, hidden_states, residual, scale=self.scale)\n"
            "        return hidden_states\n"
        )
        found = target_layer_call(text, 2, 6)
        assert found is not None, var
        positional, keywords, line = found
        assert positional == ["positions", "hidden_states", "residual"] and keywords == {"scale": "self.scale"} and line == 5


def test_the_word_test_for_layer_class_names_answers_as_the_regex_did():
    """`_names_word` replaced `re.search(rf"\\b{name}\\b", model_text)` (a regex compiled per class name); on texts
    mixing the names, word characters (ASCII and not), separators and line ends, both give the same answer."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from driftcheck.probes.forward_replay_drift import _names_word

    words = ["Foo", "FooLayer", "_x", "a1", "Ünï", "Layer_2"]
    pieces = st.sampled_from(["Foo", "Layer", "_", "x", " ", "(", "1", "a", "Ü", "ï", "n", "\n", ".", "2", "é", "٣"])

    @settings(max_examples=3000, deadline=None)
    @given(st.lists(pieces, max_size=14).map("".join), st.sampled_from(words))
    def same(text, word):
        assert _names_word(text, word) == bool(re.search(rf"\b{re.escape(word)}\b", text))

    same()
    assert _names_word("x = FooLayer(1)", "FooLayer") and not _names_word("x = FooLayers(1)", "FooLayer")
