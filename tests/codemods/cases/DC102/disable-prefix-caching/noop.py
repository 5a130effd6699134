# vllm 0.16.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm import LLM


def extractor(model):
    return LLM(
        model=model,
        speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1},
        enable_prefix_caching=False,
    )
