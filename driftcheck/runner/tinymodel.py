"""Build the smoke model: a tiny random Llama and a tokenizer trained here, saved as a HF folder.

Runs inside the vLLM environment (needs torch, transformers, tokenizers). Nothing comes from a hub:
the tokenizer is trained on an in-code corpus and the weights are seeded random numbers.
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
    from transformers import LlamaConfig, LlamaForCausalLM

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out_dir, spec)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.hidden_size // spec.head_dim,
        num_key_value_heads=spec.num_kv_heads,
        head_dim=spec.head_dim,
        max_position_embeddings=spec.max_model_len,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        # layers must move the residual stream a lot, or input/output of a layer look alike and the
        # layer-numbering check could not tell the two conventions apart
        initializer_range=spec.init_std,
    )
    torch.manual_seed(spec.seed)
    model = LlamaForCausalLM(config).to(getattr(torch, spec.dtype))
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
