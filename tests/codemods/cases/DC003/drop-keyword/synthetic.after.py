# vllm 0.16.0
from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups


def build(vllm_config, groups, specs):
    return get_kv_cache_config_from_groups(vllm_config, groups, available_memory=1 << 30)
