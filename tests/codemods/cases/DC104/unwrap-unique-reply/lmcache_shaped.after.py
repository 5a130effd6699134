# vllm 0.16.0
from vllm.v1.executor.multiproc_executor import MultiprocExecutor


class LMCacheWorkerProxy:
    def __init__(self, executor: MultiprocExecutor):
        self.executor = executor

    def stats(self):
        return self.executor.collective_rpc("lmcache_stats", unique_reply_rank=0)
