# vllm 0.16.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm.v1.executor.multiproc_executor import MultiprocExecutor


def every_rank(executor: MultiprocExecutor):
    replies = executor.collective_rpc("get_states")  # one reply per worker: a list, indexing it is right
    return replies[0]
