# vllm 0.12.0
# vllm-metax 0.12.0 (vllm_metax/models/deepseek.py:46): vllm.model_executor.layers.sampler is gone. SamplerOutput is
# importable from vllm.v1.sample.sampler (the module of that name); no module defines get_sampler: it stays where it
# was, and `fix` says so.
from vllm.model_executor.layers.sampler import get_sampler
from vllm.v1.sample.sampler import SamplerOutput


def sample(logits) -> SamplerOutput:
    return get_sampler()(logits)
