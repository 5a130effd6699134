# vllm 0.32.0
from vllm.v1.request import Request


class LMCacheRequestTracker:
    """Tracks requests for the connector."""

    def _dummy_request(self, req_id, tokens, sp):
        req = Request(req_id, tokens, sp, None, eos_token_id=self.eos)
        return req
