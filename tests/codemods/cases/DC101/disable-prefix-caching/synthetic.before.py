# vllm 0.16.0
from vllm.config import CacheConfig
from vllm.v1.request import Request


def build(sp):
    cache = CacheConfig(block_size=16)
    return cache, Request(request_id="r", prompt_token_ids=[1, 2], sampling_params=sp, pooling_params=None,
                          eos_token_id=None)
