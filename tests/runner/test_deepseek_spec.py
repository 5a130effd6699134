"""The DeepSeek smoke model's spec and CLI options, without vLLM (any environment)."""

from __future__ import annotations

import pytest

from driftcheck.runner.cli import main
from driftcheck.runner.spec import MODELS, ModelSpec, model_spec


def test_deepseek_spec_is_the_measured_shape():
    s = model_spec("deepseek")
    assert (s.arch, s.architecture, s.num_layers, s.hidden_size, s.heads) == ("deepseek", "DeepseekV3ForCausalLM", 3, 256, 2)
    assert (s.q_lora_rank, s.kv_lora_rank, s.qk_nope_head_dim, s.qk_rope_head_dim, s.v_head_dim) == (64, 512, 128, 64, 128)
    assert (s.n_routed_experts, s.num_experts_per_tok, s.n_shared_experts, s.first_k_dense_replace) == (4, 2, 1, 1)
    assert s.dtype == "float32" and model_spec("deepseek", "bfloat16").dtype == "bfloat16"
    assert "DeepSeek V3" in s.describe() and "llama_4_scaling" in s.describe()
    assert ModelSpec.from_dict(s.to_dict()) == s


def test_llama_spec_is_unchanged():
    s = model_spec("llama")
    assert s == MODELS["llama"] == ModelSpec()
    assert (s.num_layers, s.heads, s.head_dim, s.dtype) == (4, 4, 64, "bfloat16")
    assert s.describe().startswith("Llama, 4 layers")


@pytest.mark.parametrize("argv, words", [
    (["--model", "deepseek", "--layers", "3"], "the smoke model has layers 0..2"),
    (["--model", "llama", "--layers", "4"], "the smoke model has layers 0..3"),
    (["--model", "mamba"], "invalid choice"),
])
def test_model_option_errors(argv, words, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
