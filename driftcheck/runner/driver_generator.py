"""The generator driver: the client's in-process `VllmHiddenStatesGenerator` (speculators 0.3.0/0.4.x).

Runs inside the vLLM environment, in the attempt's process. The client's code runs unmodified; the
runner only supplies what a CPU machine lacks (`torch.cuda.mem_get_info`) and, in careful mode, turns
prefix caching off in the CacheConfig the generator builds.
"""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path

from driftcheck.runner import clientpkg
from driftcheck.runner.checks import PromptResult
from driftcheck.runner.spec import AttemptSpec


def _cpu_mem_get_info_shim(notes: dict) -> None:
    """speculators 0.3.0 sizes its KV cache from torch.cuda.mem_get_info(); give it the CPU KV space."""
    import torch

    if torch.cuda.is_available():
        return
    space = int(float(os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1")) * (1 << 30))
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    torch.cuda.mem_get_info = lambda device=None: (space, total)
    notes.setdefault("shims", []).append(f"torch.cuda.mem_get_info -> ({space}, {total}) (no CUDA device)")


def _careful_cache_config(module, notes: dict) -> None:
    """Wrap the CacheConfig the generator module builds so that prefix caching is off."""
    real = module.CacheConfig

    def cache_config(*args, **kwargs):
        kwargs["enable_prefix_caching"] = False
        return real(*args, **kwargs)

    module.CacheConfig = cache_config
    notes.setdefault("overrides", []).append(f"{module.__name__}.CacheConfig(enable_prefix_caching=False)")


def run(spec: AttemptSpec, prompts: list[list[int]], metrics: dict, notes: dict) -> list[list[PromptResult]]:
    pkg = clientpkg.package_dir(spec.client)
    clientpkg.install_shim(pkg, Path(spec.out_dir) / "shim")
    notes["client"] = str(pkg)
    notes["client_import"] = clientpkg.SHIM_NOTE
    _cpu_mem_get_info_shim(notes)
    module = importlib.import_module(clientpkg.GENERATOR_MODULE)
    if spec.mode == "careful":
        _careful_cache_config(module, notes)

    t0 = time.perf_counter()
    gen = module.VllmHiddenStatesGenerator(
        model_path=spec.model_dir, layer_ids=list(spec.layers), max_model_len=spec.model.max_model_len,
    )
    metrics["load_s"] = time.perf_counter() - t0
    notes["engine"] = _engine_facts(gen)
    try:
        passes = []
        t0 = time.perf_counter()
        for _ in range(spec.passes):
            passes.append([_result(r, spec.layers) for r in gen.generate([list(p) for p in prompts])])
        metrics["run_s"] = time.perf_counter() - t0
    finally:
        _shutdown(gen)
    return passes


def _result(r: dict, layers: list[int]) -> PromptResult:
    hs = r["hidden_states"]
    if len(hs) != len(layers):
        raise RuntimeError(f"generator returned {len(hs)} layers for {len(layers)} requested")
    return PromptResult(
        token_ids=[int(t) for t in r["input_ids"].tolist()],
        layers={L: h.float().tolist() for L, h in zip(layers, hs)},
    )


def _engine_facts(gen) -> dict:
    cfg = getattr(gen, "vllm_config", None)
    if cfg is None:
        return {}
    return {
        "enable_prefix_caching": getattr(cfg.cache_config, "enable_prefix_caching", None),
        "block_size": getattr(cfg.cache_config, "block_size", None),
        "enable_chunked_prefill": getattr(cfg.scheduler_config, "enable_chunked_prefill", None),
        "async_scheduling": getattr(cfg.scheduler_config, "async_scheduling", None),
    }


def _shutdown(gen) -> None:
    # the generator relies on __del__ for this; shut down explicitly so workers exit with us
    executor = getattr(gen, "executor", None)
    if executor is not None:
        executor.shutdown()
