# vllm 0.33.0
from vllm.forward_context import BatchDescriptor


def descriptors(num_tokens, uniform_decode):
    # vllm-ascend 0.11.0's model_runner_v1.py: 0.33.0 calls this field `uniform`; dropping the keyword would make
    # every batch non-uniform, so it is left for a person (the message names `uniform`)
    graph = BatchDescriptor(num_tokens=num_tokens, uniform_decode=uniform_decode)
    # a keyword whose literal asks for nothing is dropped
    eager = BatchDescriptor(num_tokens=num_tokens, has_lora=False, is_draft=None)
    return graph, eager
