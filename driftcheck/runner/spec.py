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


@dataclass(frozen=True)
class ModelSpec:
    num_layers: int = 4
    hidden_size: int = 256
    head_dim: int = 64
    num_kv_heads: int = 2
    intermediate_size: int = 512
    vocab_size: int = 512
    max_model_len: int = 512
    dtype: str = "bfloat16"
    init_std: float = 0.05
    seed: int = 1234
    # several prompts longer than one KV block (CPU default block size is 128): a prefix-cache hit
    # on the second pass then covers whole blocks, which is where repeated prompts went wrong
    prompt_lengths: tuple[int, ...] = (7, 45, 130, 200, 300)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["prompt_lengths"] = list(self.prompt_lengths)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ModelSpec":
        d = dict(d)
        d["prompt_lengths"] = tuple(d["prompt_lengths"])
        return cls(**d)


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
