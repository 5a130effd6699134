# vllm 0.16.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm.v1.executor.multiproc_executor import MultiprocExecutor


def first_states(executor: MultiprocExecutor):
    states = executor.collective_rpc("get_states", unique_reply_rank=0)
    if states is None or len(states) == 0:
        return None
    return states
