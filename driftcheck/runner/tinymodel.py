"""Build the smoke model: a tiny random Llama or DeepSeek V3 and a tokenizer trained here, saved as a HF folder.

Runs inside the vLLM environment (needs torch, transformers, tokenizers). Nothing comes from a hub:
the tokenizer is trained on an in-code corpus and the weights are seeded random numbers. The
DeepSeek model sets `topk_method="noaux_tc"` and `scoring_func="sigmoid"` on its config (DeepSeek
V3's own checkpoints do; transformers' DeepseekV3Config has no such fields, vLLM reads them and only
then loads `e_score_correction_bias`), and gives that bias random values so routing depends on it.
It can also carry `llama_4_scaling` (read by vLLM's DeepseekV2Model.forward; transformers' DeepSeek V3
ignores it, so the reference applies it: see reference.py).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from driftcheck.runner.spec import ModelSpec

# A small vocabulary of ML-infra words: enough variety for BPE merges and for prompts of any length.
_WORDS = (
    "the a of to and in is that for on with as by at from model layer token cache block prefix "
    "hidden state states tensor vllm engine worker scheduler request prompt batch kernel memory "
    "attention head heads query key value rotary norm residual embedding vocabulary logits sample "
    "decode prefill chunk chunked speculative draft eagle target verifier extract connector store "
    "load save shard rank world pipeline tensor parallel data generation training loss gradient "
    "optimizer learning rate warmup step epoch checkpoint weights bias float bfloat precision "
    "cpu gpu device stream event pinned page slot mapping offset length position sequence output "
    "input returns raises assert config field default flipped renamed removed added signature "
    "call keyword argument positional drift release version upgrade nightly wheel package import"
).split()


def _corpus(seed: int, n_lines: int = 400) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 24))) for _ in range(n_lines)]


def build_tokenizer(out_dir: Path, spec: ModelSpec):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=spec.vocab_size,
        special_tokens=["<unk>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(spec.seed), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
        model_max_length=spec.max_model_len,
    )
    fast.save_pretrained(out_dir)
    return fast


def build_prompts(tokenizer, spec: ModelSpec) -> list[list[int]]:
    """Token ids of the smoke prompts: fixed lengths so that some span several KV blocks."""
    rng = random.Random(spec.seed + 1)
    prompts = []
    for n in spec.prompt_lengths:
        ids: list[int] = []
        while len(ids) < n:
            ids += tokenizer.encode(" ".join(rng.choice(_WORDS) for _ in range(n)), add_special_tokens=False)
        prompts.append(ids[:n])
    return prompts


def build_model(out_dir: Path, spec: ModelSpec) -> dict:
    """Write model + tokenizer + prompts to out_dir (skipped when the same spec is already there)."""
    out_dir = Path(out_dir)
    stamp = out_dir / "driftcheck-model.json"
    want = spec.to_dict()
    if stamp.exists():
        have = json.loads(stamp.read_text())
        if have.get("spec") == want:
            return have
    import torch

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out_dir, spec)
    torch.manual_seed(spec.seed)
    model = (_deepseek if spec.arch == "deepseek" else _llama)(spec, tokenizer).to(getattr(torch, spec.dtype))
    model.save_pretrained(out_dir, safe_serialization=True)
    # transformers 5 spells it dtype, 4.x torch_dtype; vLLM's dtype="auto" reads either
    cfg = json.loads((out_dir / "config.json").read_text())
    cfg["torch_dtype"] = cfg["dtype"] = spec.dtype
    (out_dir / "config.json").write_text(json.dumps(cfg, indent=2))
    prompts = build_prompts(tokenizer, spec)
    info = {"spec": want, "prompts": prompts, "vocab_size": len(tokenizer),
            "eos_token_id": tokenizer.eos_token_id}
    tmp = stamp.with_suffix(".tmp")
    tmp.write_text(json.dumps(info))
    os.replace(tmp, stamp)
    return info


def _common(spec: ModelSpec, tokenizer) -> dict:
    return dict(
        vocab_size=len(tokenizer), hidden_size=spec.hidden_size, intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers, num_attention_heads=spec.heads, max_position_embeddings=spec.max_model_len,
        tie_word_embeddings=False, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        # layers must move the residual stream a lot, or input/output of a layer look alike and the
        # layer-numbering check could not tell the two conventions apart
        initializer_range=spec.init_std,
    )


def _llama(spec: ModelSpec, tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(**_common(spec, tokenizer), num_key_value_heads=spec.num_kv_heads, head_dim=spec.head_dim,
                         rms_norm_eps=1e-5)
    return LlamaForCausalLM(config)


def _deepseek(spec: ModelSpec, tokenizer):
    import inspect

    import torch
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    rope: dict = {}
    if spec.yarn_factor:
        yarn = {"factor": spec.yarn_factor, "original_max_position_embeddings": spec.yarn_original_max_position,
                "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}
        # transformers 5 calls it rope_parameters (with the theta), 4.x rope_scaling
        if "rope_parameters" in inspect.signature(DeepseekV3Config.__init__).parameters:
            rope = {"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, **yarn}}
        else:
            rope = {"rope_scaling": {"type": "yarn", **yarn}, "rope_theta": 10000.0}
    config = DeepseekV3Config(
        **_common(spec, tokenizer), num_key_value_heads=spec.heads, moe_intermediate_size=spec.moe_intermediate_size,
        q_lora_rank=spec.q_lora_rank, kv_lora_rank=spec.kv_lora_rank, qk_nope_head_dim=spec.qk_nope_head_dim,
        qk_rope_head_dim=spec.qk_rope_head_dim, v_head_dim=spec.v_head_dim, n_routed_experts=spec.n_routed_experts,
        num_experts_per_tok=spec.num_experts_per_tok, n_shared_experts=spec.n_shared_experts,
        first_k_dense_replace=spec.first_k_dense_replace, n_group=1, topk_group=1, norm_topk_prob=True,
        routed_scaling_factor=1.0, rms_norm_eps=1e-5, **rope,
    )
    config.topk_method, config.scoring_func = "noaux_tc", "sigmoid"
    if spec.llama_4_scaling_beta:
        config.llama_4_scaling = {"original_max_position_embeddings": spec.llama_4_scaling_original,
                                  "beta": spec.llama_4_scaling_beta}
    model = DeepseekV3ForCausalLM(config)
    with torch.no_grad():
        for name, buf in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                buf.copy_(torch.randn_like(buf) * 0.1)
    return model
