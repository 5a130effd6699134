# vllm 0.16.0
from vllm.v1.executor.multiproc_executor import MultiprocExecutor


def step(executor: MultiprocExecutor, scheduler_output):
    output = executor.execute_model(scheduler_output)
    return output
