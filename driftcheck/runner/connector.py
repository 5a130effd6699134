"""A CPU-capable hidden-states KV connector for vLLM's `extract_hidden_states` method.

vLLM imports this module by name (kv_transfer_config.kv_connector_module_path) in the scheduler and in
the worker process; it is never imported by the driftcheck CLI. It subclasses the target's own
ExampleHiddenStatesConnector, so the scheduler side (which blocks a request keeps, which path it
reports) stays vLLM's code under test; only the worker-side copy is replaced where the upstream one
uses CUDA streams, events and pinned host memory, which do not exist on a CPU build.
"""

from __future__ import annotations

import os

import torch
from vllm.distributed.kv_transfer.kv_connector.v1 import example_hidden_states_connector as upstream

UPSTREAM = upstream.ExampleHiddenStatesConnector


class _Done:
    """Stands in for the CUDA event the upstream polls: the CPU copy below is synchronous."""

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass


class CpuHiddenStatesConnector(UPSTREAM):
    if hasattr(UPSTREAM, "_submit_async_write"):
        # Upstream design with an async device-to-host copy (vLLM 0.2x+): do the copy in place, then
        # write and release the request's lock file as upstream's writer thread would.
        def _submit_async_write(self, pending) -> None:
            if not self._is_tp_rank_zero:
                return
            block_size = self._block_size
            block_ids = torch.tensor(pending.block_ids, dtype=torch.long)
            slots = (torch.arange(block_size).reshape(1, -1) + block_ids.reshape(-1, 1) * block_size).flatten()
            num_tokens = pending.token_ids.shape[0]
            hidden = upstream.extract_from_kv_cache(self._kv_cache, slots, num_tokens).clone()
            os.makedirs(os.path.dirname(pending.filename) or ".", exist_ok=True)
            lock_fd = self._lock_fds.pop(pending.req_id, None)
            try:
                upstream.save_file({"hidden_states": hidden.contiguous(),
                                    "token_ids": pending.token_ids.clone()}, pending.filename)
            finally:
                if lock_fd is not None:
                    os.close(lock_fd)
            self._req_copy_events[pending.req_id] = _Done()


# Attributes of torch.cuda the upstream connector calls; with pin_memory=True, these need a CUDA device.
CUDA_ONLY = ("Stream", "Event", "stream", "current_stream", "synchronize")


def upstream_cuda_calls() -> list[dict]:
    """Where the target's ExampleHiddenStatesConnector calls CUDA-only APIs (file, line, call)."""
    import ast
    import inspect

    path = inspect.getsourcefile(UPSTREAM)
    tree = ast.parse(open(path, encoding="utf-8").read())
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        pinned = any(k.arg == "pin_memory" and isinstance(k.value, ast.Constant) and k.value.value is True
                     for k in node.keywords)
        if pinned or (name.startswith("torch.cuda.") and name.rsplit(".", 1)[1] in CUDA_ONLY):
            found.append({"path": path, "line": node.lineno, "call": name + ("(..., pin_memory=True)" if pinned else "()")})
    return sorted(found, key=lambda f: f["line"])
