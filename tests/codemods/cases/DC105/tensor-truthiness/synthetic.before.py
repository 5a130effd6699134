# vllm 0.16.0
from vllm.v1.executor.multiproc_executor import MultiprocExecutor


def first_states(executor: MultiprocExecutor):
    replies = executor.collective_rpc("get_states", unique_reply_rank=0)
    states = replies[0]
    if not states:
        return None
    return states
