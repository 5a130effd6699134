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

from driftcheck.runner import clientpkg, cpu_attention
from driftcheck.runner.checks import PromptResult
from driftcheck.runner.spec import AttemptSpec


def _cpu_mem_get_info_shim(notes: dict) -> None:
    """speculators 0.3.0 sizes its KV cache from torch.cuda.mem_get_info(); give it the CPU KV space."""
    import torch

    # device_count() asks NVML first: the CUDA driver is not initialised here before vLLM forks its workers
    if torch.cuda.device_count() > 0:
        notes["device"] = "cuda"
        return
    notes["device"] = "cpu"
    space = int(float(os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1")) * (1 << 30))
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    torch.cuda.mem_get_info = lambda device=None: (space, total)
    notes.setdefault("shims", []).append(f"torch.cuda.mem_get_info -> ({space}, {total}) (no CUDA device)")


def _cpu_block_size_shim(module, notes: dict) -> None:
    """vLLM's CPU attention may need block sizes that are multiples of N (0.32: 32); speculators hard-codes
    VLLM_BLOCK_SIZE = 16 for GPUs. Read N from the target's CPU backend source and round the client's
    constant up, here in the runner (on a GPU the client's value stands)."""
    import importlib.util
    import re

    import torch

    if torch.cuda.is_available() or not isinstance(getattr(module, "VLLM_BLOCK_SIZE", None), int):
        return
    spec = importlib.util.find_spec("vllm")
    backend = Path(spec.origin).parent / "v1" / "attention" / "backends" / "cpu_attn.py" if spec and spec.origin else None
    if backend is None or not backend.is_file():
        return
    m = re.search(r"MultipleOf\((\d+)\)", backend.read_text(errors="replace"))
    if not m:
        return
    multiple, size = int(m.group(1)), module.VLLM_BLOCK_SIZE
    if size % multiple:
        module.VLLM_BLOCK_SIZE = (size // multiple + 1) * multiple
        notes.setdefault("shims", []).append(
            f"{module.__name__}.VLLM_BLOCK_SIZE {size} -> {module.VLLM_BLOCK_SIZE} (this vLLM's CPU attention needs "
            f"multiples of {multiple}; vllm/v1/attention/backends/cpu_attn.py)")


def _model_dtype(module, dtype: str, notes: dict) -> None:
    """speculators passes ModelConfig(dtype="auto"), which vLLM turns into bfloat16 for a float32 checkpoint:
    run the model in the dtype the smoke model was built in (the native driver passes it too)."""
    real = module.ModelConfig

    def model_config(*args, **kwargs):
        if kwargs.get("dtype", "auto") == "auto":
            kwargs["dtype"] = dtype
        return real(*args, **kwargs)

    module.ModelConfig = model_config
    notes.setdefault("overrides", []).append(f"{module.__name__}.ModelConfig(dtype={dtype!r}) where it passes 'auto'")


def _reference_mla(module, backend, notes: dict) -> None:
    """The generator builds its own VllmConfig: give it the attention backend a float32 MLA model needs here
    (cpu_attention.py), unless it sets one itself."""
    from vllm.config import AttentionConfig

    real = module.VllmConfig

    def vllm_config(*args, **kwargs):
        kwargs.setdefault("attention_config", AttentionConfig(backend=backend))
        return real(*args, **kwargs)

    module.VllmConfig = vllm_config
    cpu_attention.note(notes, f"{module.__name__}.VllmConfig")


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
    _cpu_block_size_shim(module, notes)
    if spec.model.dtype != "bfloat16":
        _model_dtype(module, spec.model.dtype, notes)
    backend = cpu_attention.reference_mla_backend(spec.model.dtype, notes["device"] == "cuda")
    if backend is not None and hasattr(module, "VllmConfig"):
        _reference_mla(module, backend, notes)
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
