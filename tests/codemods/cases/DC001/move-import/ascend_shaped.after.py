# vllm 0.23.0
# vllm-ascend 0.23.0 (vllm_ascend/kv_offload/npu.py:10): vllm.v1.kv_offload.spec is gone. The module of that name,
# vllm.v1.kv_offload.cpu.spec, only imports OffloadingSpec; vllm.v1.kv_offload.base defines it: the import goes there.
from vllm.v1.kv_offload.base import OffloadingSpec


class NPUOffloadingSpec(OffloadingSpec):
    pass
