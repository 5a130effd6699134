# vllm 0.16.0
from vllm import LLM


def extractor(model):
    return LLM(
        model=model,
        speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1},
        enable_prefix_caching=False,
    )
