"""The native driver: vLLM's own `extract_hidden_states` speculative method with a hidden-states
KV connector (vLLM 0.17+). Runs inside the vLLM environment, in the attempt's process."""

from __future__ import annotations

import re
import time
from pathlib import Path

from driftcheck.runner import cpu_attention
from driftcheck.runner.checks import PromptResult
from driftcheck.runner.spec import AttemptSpec

CONNECTOR_MODULE = "driftcheck.runner.connector"

# Constraints a target states itself at config time, and the engine setting that satisfies each.
# Matched against the target's own error message, so no vLLM version is hard-coded here.
CONSTRAINTS = [
    (re.compile(r"chunked[ _-]?prefill", re.I), {"enable_chunked_prefill": False}),
]


def cuda_present() -> bool:
    """Whether this process sees a CUDA device, without initialising the CUDA driver here (vLLM forks its
    engine and worker processes after this; torch.cuda.is_available() calls cudaGetDeviceCount, i.e. cuInit).
    torch.cuda.device_count() asks NVML first; on a CPU build it is 0."""
    import torch

    return torch.cuda.device_count() > 0


def engine_kwargs(spec: AttemptSpec, cuda: bool = False) -> dict:
    # On CUDA the target's own connector runs as users run it; a CPU build needs ours (see connector.py).
    upstream_connector = spec.upstream_connector or cuda
    kv = {
        "kv_connector": "ExampleHiddenStatesConnector" if upstream_connector else "CpuHiddenStatesConnector",
        "kv_role": "kv_producer",
        "kv_connector_extra_config": {"shared_storage_path": str(Path(spec.out_dir) / "hidden_states")},
    }
    if not upstream_connector:
        kv["kv_connector_module_path"] = CONNECTOR_MODULE
    kw = {
        "model": spec.model_dir,
        "tokenizer": spec.model_dir,
        "dtype": spec.model.dtype,
        "max_model_len": spec.model.max_model_len,
        "seed": 0,
        "speculative_config": {
            "method": "extract_hidden_states",
            "num_speculative_tokens": 1,
            "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": list(spec.layers)}},
        },
        "kv_transfer_config": kv,
    }
    if not cuda:
        kw["enforce_eager"] = True  # torch.compile on 2 cores costs minutes and is not what is checked
    backend = cpu_attention.reference_mla_backend(spec.model.dtype, cuda)
    if backend is not None and _engine_accepts("attention_backend"):
        kw["attention_backend"] = backend
    if spec.mode == "careful":
        kw["enable_prefix_caching"] = False
    return kw


def _engine_accepts(name: str) -> bool:
    import dataclasses

    from vllm.engine.arg_utils import EngineArgs

    return any(f.name == name for f in dataclasses.fields(EngineArgs))


def _make_llm(kw: dict, notes: dict):
    from vllm import LLM

    while True:
        try:
            return LLM(**kw)
        except Exception as exc:  # a config-time refusal names what it needs
            fix = constraint_fix(str(exc), kw)
            if fix is None:
                raise
            notes.setdefault("constraints", []).append(
                {"message": str(exc).strip().splitlines()[-1][:300], "adapted": fix})
            kw.update(fix)


def constraint_fix(message: str, kw: dict) -> dict | None:
    """The engine setting that satisfies a constraint the target stated, unless already set."""
    for rx, fix in CONSTRAINTS:
        if rx.search(message) and any(kw.get(k) != v for k, v in fix.items()):
            return fix
    return None


def run(spec: AttemptSpec, prompts: list[list[int]], metrics: dict, notes: dict) -> list[list[PromptResult]]:
    from vllm import SamplingParams

    from driftcheck.runner import connector

    cuda = cuda_present()
    notes["device"] = "cuda" if cuda else "cpu"
    if not cuda:  # where the upstream connector cannot run: the calls that need CUDA
        notes["upstream_connector_cuda_calls"] = connector.upstream_cuda_calls()
    notes["connector"] = "ExampleHiddenStatesConnector (upstream)" if spec.upstream_connector or cuda else \
        f"{CONNECTOR_MODULE}.CpuHiddenStatesConnector"
    kw = engine_kwargs(spec, cuda)
    notes["enforce_eager"] = kw.get("enforce_eager", False)
    if "attention_backend" in kw:
        cpu_attention.note(notes, "LLM(attention_backend=...)")
    t0 = time.perf_counter()
    llm = _make_llm(kw, notes)
    metrics["load_s"] = time.perf_counter() - t0
    notes["engine"] = _engine_facts(llm)
    params = SamplingParams(max_tokens=1, temperature=0.0)
    passes = []
    t0 = time.perf_counter()
    for _ in range(spec.passes):
        outs = llm.generate([{"prompt_token_ids": ids} for ids in prompts], params, use_tqdm=False)
        # how much of each pass came from the prefix cache: the condition repeated prompts test
        notes.setdefault("cached_tokens_per_pass", []).append(sum(o.num_cached_tokens or 0 for o in outs))
        passes.append([_read(o, spec.layers) for o in outs])
    metrics["run_s"] = time.perf_counter() - t0
    return passes


def _read(out, layers: list[int]) -> PromptResult:
    from vllm.distributed.kv_transfer.kv_connector.v1.example_hidden_states_connector import (
        load_hidden_states,
    )

    params = out.kv_transfer_params or {}
    path = params.get("hidden_states_path")
    if not path:
        raise RuntimeError(f"request {out.request_id} returned no hidden_states_path (kv_transfer_params={params})")
    data = load_hidden_states(path)
    hs = data["hidden_states"].float()  # [tokens, layers, hidden]
    if hs.dim() != 3 or hs.shape[1] != len(layers):
        raise RuntimeError(f"hidden_states of shape {tuple(hs.shape)} for {len(layers)} layers")
    return PromptResult(
        token_ids=data["token_ids"].tolist(),
        layers={L: hs[:, j, :].tolist() for j, L in enumerate(layers)},
    )


def _engine_facts(llm) -> dict:
    """The settings that decide whether repeated prompts come back whole, as the engine resolved them."""
    try:
        cfg = llm.llm_engine.vllm_config
    except AttributeError:
        return {}
    return {
        "enable_prefix_caching": getattr(cfg.cache_config, "enable_prefix_caching", None),
        "block_size": getattr(cfg.cache_config, "block_size", None),
        "enable_chunked_prefill": getattr(cfg.scheduler_config, "enable_chunked_prefill", None),
        "async_scheduling": getattr(cfg.scheduler_config, "async_scheduling", None),
    }
