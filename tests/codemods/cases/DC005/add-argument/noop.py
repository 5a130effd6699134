# vllm 0.16.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm.config import SchedulerConfig


def scheduler_config(max_len):
    return SchedulerConfig(max_num_batched_tokens=max_len, max_model_len=max_len, is_encoder_decoder=False)
