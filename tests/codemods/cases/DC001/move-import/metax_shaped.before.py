# vllm 0.12.0
# vllm-metax 0.12.0 (vllm_metax/models/deepseek.py:46): vllm.model_executor.layers.sampler is gone. SamplerOutput is
# in vllm.v1.sample.sampler (the module of that name), which imports it from vllm.v1.outputs, where it is defined; no
# module defines get_sampler: it stays where it was, and `fix` says so.
from vllm.model_executor.layers.sampler import SamplerOutput, get_sampler


def sample(logits) -> SamplerOutput:
    return get_sampler()(logits)
