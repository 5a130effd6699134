# vllm 0.16.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm.config import CacheConfig
from vllm.v1.request import Request


def build(sp):
    cache = CacheConfig(block_size=16, enable_prefix_caching=False)
    return cache, Request(request_id="r", prompt_token_ids=[1, 2], sampling_params=sp, pooling_params=None,
                          eos_token_id=None)
