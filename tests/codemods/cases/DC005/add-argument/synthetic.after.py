# vllm 0.16.0
from vllm.config import SchedulerConfig


def scheduler_config(max_len):
    return SchedulerConfig(max_num_batched_tokens=max_len, max_model_len=max_len, is_encoder_decoder=False)
