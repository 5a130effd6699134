# vllm 0.16.0
# no drift for this rule here: the fix must leave this file byte for byte as it is
from vllm.v1.executor.multiproc_executor import MultiprocExecutor


def step(executor: MultiprocExecutor, scheduler_output, grammar_output=None):
    output = executor.execute_model(scheduler_output)
    if output is None:
        output = executor.sample_tokens(grammar_output)
    return output
