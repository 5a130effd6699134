# vllm 0.20.0
# hcx (HyperCLOVAX) model code: get_rope lost base= / rotary_dim= / rope_scaling= because their values go into
# rope_parameters now (`base = rope_parameters.get("rope_theta", 10000)`): dropping them would run the rope with
# base 10000, so that call is left alone; a keyword that is just gone (kv_cache_specs=) is dropped.
from vllm.model_executor.layers.rotary_embedding import get_rope
from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups


def build_kv(vllm_config, groups, specs, memory):
    return get_kv_cache_config_from_groups(vllm_config, groups, available_memory=memory)


def build_rope(head_dim, max_position_embeddings, rope_theta, rope_scaling, is_neox_style):
    return get_rope(head_dim, rotary_dim=head_dim, max_position=max_position_embeddings, base=rope_theta,
                    rope_scaling=rope_scaling, is_neox_style=is_neox_style)
