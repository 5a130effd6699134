# vllm 0.33.0
from vllm.forward_context import BatchDescriptor
from vllm.v1.core.sched.output import SchedulerOutput


def descriptors(num_tokens, uniform_decode):
    # vllm-ascend 0.11.0's model_runner_v1.py: 0.33.0 calls this field `uniform`; dropping the keyword would make
    # every batch non-uniform, so it is left for a person (the message names `uniform`)
    graph = BatchDescriptor(num_tokens=num_tokens, uniform_decode=uniform_decode)
    # a keyword whose literal asks for nothing is dropped
    eager = BatchDescriptor(num_tokens=num_tokens, has_lora=False, is_draft=None)
    return graph, eager


def empty_output(cached):
    # vllm-ascend 0.11.0's core/scheduler.py: 0.33.0 has neither keyword. `grammar_bitmask=None` asks for nothing and
    # goes; the close name of `structured_output_request_ids` is `has_structured_output_requests: bool`, which a dict
    # is no value of: no rename and no drop is certain, so it stays for a person (batch 20h's Q2)
    return SchedulerOutput(scheduled_new_reqs=[], scheduled_cached_reqs=cached, num_scheduled_tokens={},
                           total_num_scheduled_tokens=0, scheduled_spec_decode_tokens={}, scheduled_encoder_inputs={},
                           finished_req_ids=set(), free_encoder_mm_hashes=[], structured_output_request_ids={},
                           grammar_bitmask=None)
