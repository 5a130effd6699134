# vllm 0.16.0
from vllm.v1.core.sched.scheduler import Scheduler


class HiddenStatesEngine:
    def __init__(self, vllm_config, kv_cache_config, structured_output_manager):
        self.scheduler = Scheduler(
            vllm_config=vllm_config,
            kv_cache_config=kv_cache_config,
            structured_output_manager=structured_output_manager,
        )
