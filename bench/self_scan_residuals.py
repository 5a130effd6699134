#!/usr/bin/env python
"""Write tests/scan/self_scan_expected.json: the errors a release's self-scan still reports, each with a verdict.

    python bench/self_scan_residuals.py 0.11.0=/tmp/self-0.11.0.json 0.16.0=... 0.32.0=...

Each input is a `driftcheck scan -f json` report of a release's own `vllm/` tree scanned against that release.
Every error there must be explained here, by reading both sides: VERDICTS maps a finding's symbol to
(verdict, evidence). `latent-bug`: the line fails whenever it runs (dead or rarely taken code that drifted
inside vLLM itself). `annotation-mismatch`: vLLM annotates the parameter with a class the caller does not
pass (the attribute exists on what is really passed); driftcheck trusts annotations, so these stay errors.
An error without a verdict makes this script fail: look at it before listing it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

VERDICTS = {
    "vllm.model_executor.layers.logits_processor.LogitsProcessor.include_gpu_probs_tensor": (
        "latent-bug", "LogitsProcessorWithLoRA.include_gpu_probs_tensor returns base_layer.include_gpu_probs_tensor; "
        "LogitsProcessor has no such attribute (no code sets it): the property raises AttributeError if read"),
    "vllm.model_executor.layers.logits_processor.LogitsProcessor.should_modify_greedy_probs_inplace": (
        "latent-bug", "same wrapper property, same missing attribute"),
    "vllm.model_executor.models.interfaces.HasInnerState.mamba_cache": (
        "latent-bug", "copy_inputs_before_cuda_graphs/get_seqlen_agnostic_capture_inputs read self.mamba_cache, which "
        "nothing assigns since the v1 mamba state moved to the KV cache: dead methods that fail if called"),
    "vllm.model_executor.layers.fused_moe.layer.FusedMoE.select_experts": (
        "latent-bug", "ZeroExpertFusedMoE calls self.select_experts, which FusedMoE no longer defines (routing moved to "
        "the router classes)"),
    "vllm._custom_ops.poly_norm": (
        "latent-bug", "layernorm.poly_norm calls ops.poly_norm; vllm/_custom_ops.py defines no poly_norm"),
    "vllm.model_executor.layers.fused_moe.layer.FusedMoE.num_local_experts": (
        "latent-bug", "FusedMoE names it local_num_experts; no code creates num_local_experts"),
    "vllm.config.lora.LoRAConfig.lora_extra_vocab_size": (
        "latent-bug", "LoRAConfig lost lora_extra_vocab_size (LoRA extra vocabulary removed); exaone_moe still reads it"),
    "vllm.config.lora.LoRAConfig.lora_vocab_padding_size": ("latent-bug", "removed from LoRAConfig with the extra vocabulary"),
    "vllm.model_executor.models.interfaces.SupportsMultiModal.embed_input_ids": (
        "latent-bug", "openpangu_vl's legacy get_input_embeddings passes 3 positional arguments to "
        "embed_input_ids(input_ids, multimodal_embeddings=None, *, is_multimodal=...): TypeError if called"),
    "vllm.model_executor.layers.linear.LinearBase.apply_router_weight_on_input": (
        "annotation-mismatch", "check_moe_marlin_supports_layer(layer: LinearBase, ...) is called with FusedMoE layers"),
    "vllm.distributed.device_communicators.base_device_communicator.All2AllManagerBase.prepare_workspace": (
        "latent-bug", "no class of the All2AllManagerBase hierarchy defines prepare_workspace in this release"),
    "start_profile": ("latent-bug", "v0 ExecutorBase.start_profile sends collective_rpc('start_profile'); the workers "
                                    "of this release define profile(is_start), not start_profile"),
    "stop_profile": ("latent-bug", "as start_profile"),
    "reinitialize_distributed": ("latent-bug", "RayDistributedExecutor.reinitialize_distributed sends "
                                 "collective_rpc('reinitialize_distributed'); no worker class of this release defines it "
                                 "(only EngineCore and the executors do)"),
}
for _name in ("physical_to_logical_map", "logical_replica_count"):
    VERDICTS[f"vllm.distributed.eplb.eplb_state.EplbState.{_name}"] = (
        "latent-bug", "Worker reads model_runner.eplb_state.<name>, which moved to EplbModelState; vLLM's own line carries "
        "`# type: ignore[attr-defined]`")
VERDICTS.update({  # found by the full sweep (bench/precision.py), each read on both sides
    "vllm.distributed.eplb.eplb_state.EplbState.rearrange(global_expert_load=)": (
        "latent-bug", "the elastic-EP scale-down path passes global_expert_load=; EplbState.rearrange takes "
        "global_expert_loads (0.11.1, 0.11.2): TypeError when scaling down"),
    "vllm.model_executor.layers.mla.MLAModules(indexer_rotary_emb=)": (
        "latent-bug", "MLAModules is a dataclass whose indexer_rotary_emb field has no default in 0.12.0 (0.13.0 added "
        "= None); kimi_linear / openpangu build it without: TypeError building their MLA attention"),
    "vllm.model_executor.layers.rotary_embedding.get_rope(rotary_dim=)": (
        "latent-bug", "jais2 (0.13.0) passes rotary_dim=, which get_rope(head_size, max_position, is_neox_style, "
        "rope_parameters, ...) no longer takes: TypeError building the model"),
    "vllm.model_executor.layers.fused_moe.layer.FusedMoE.make_expert_params_mapping(model=)": (
        "latent-bug", "glm4_moe_lite.get_expert_mapping (0.15.x) calls SharedFusedMoE.make_expert_params_mapping "
        "without its required first argument `model`: TypeError when the expert mapping is built"),
})
for _owner in ("layer.FusedMoE", "routed_experts.RoutedExperts"):
    VERDICTS[f"vllm.model_executor.layers.fused_moe.{_owner}.humming_metas"] = (
        "false-positive", "the third-party `humming` library creates it on the layer "
        "(`HummingMethod.prepare_layer_meta(layer, ...)` in the humming quant method); driftcheck does not read it")
VERDICTS.update({  # triaged by reading both sides (docs/triage/2026-12-01-self-scans-0.14-0.33.md)
    "vllm.sequence.IntermediateTensors.get": (
        "latent-bug", "gemma4 calls intermediate_tensors.get(...); IntermediateTensors (a dataclass with __getitem__) "
        "has no get: AttributeError on every pipeline rank but the first (fixed by 0.29: intermediate_tensors[...])"),
    "reinitialize_distributed": (
        "latent-bug", "RayDistributedExecutor.reinitialize_distributed sends collective_rpc('reinitialize_distributed'); "
        "no worker defines it after the elastic-EP refactor, and nothing calls the executor method any more"),
    "vllm.third_party.tml_fa4.pipeline.CooperativeGroup": (
        "latent-bug", "tml_fa4/pipeline.py imports only PipelineState, PipelineUserType, NamedBarrier and the Pipeline* "
        "classes from cutlass.pipeline: no CooperativeGroup/Agent (branch taken only with use_combine_semaphore=True)"),
    "vllm.third_party.tml_fa4.pipeline.Agent": ("latent-bug", "as CooperativeGroup"),
    "vllm._xpu_ops.xpu_ops.top_k_per_row_prefill": (
        "latent-bug", "0.30.0's sparse_attn_indexer_kpool calls it under `if current_platform.is_xpu():`; the plain class "
        "`xpu_ops` (_xpu_ops.py) defines no such member and nothing sets it: AttributeError on XPU (29d M1, 31b X1)"),
    "vllm._xpu_ops.xpu_ops.top_k_per_row_decode": ("latent-bug", "as top_k_per_row_prefill, on the decode path"),
    "vllm.third_party.tml_fa4.seqlen_info.SeqlenInfoQK(padded_offset_q_unscaled=)": (
        "latent-bug", "SeqlenInfoQK is a frozen dataclass whose field padded_offset_q_unscaled has no default; mask.py "
        "builds it without that field (SM100 head-dim-256 kernels)"),
})
ANNOTATED_AS_MODEL_CONFIG = ("annotation-mismatch", "step3 / kda layers annotate `config: ModelConfig` but receive the "
                             "Hugging Face model config, which has these fields")


def verdict(symbol: str) -> tuple[str, str] | None:
    if symbol in VERDICTS:
        return VERDICTS[symbol]
    if symbol.startswith("vllm.config.model.ModelConfig."):
        return ANNOTATED_AS_MODEL_CONFIG
    return None


def main() -> None:
    out_path = Path(__file__).resolve().parent.parent / "tests" / "scan" / "self_scan_expected.json"
    expected = json.loads(out_path.read_text()) if out_path.exists() else {}
    unexplained = []
    for arg in sys.argv[1:]:
        version, _, report = arg.partition("=")
        doc = json.loads(Path(report).read_text())
        rows = {}
        for f in doc["findings"]:
            if f["severity"] != "error":
                continue
            v = verdict(f["symbol"])
            if v is None:
                unexplained.append(f"{version} {f['rule']} {f['symbol']} {f['client']['path']}:{f['client']['line']}")
                continue
            key = (f["rule"], f["symbol"], f["client"]["path"])
            rows.setdefault(key, {"rule": f["rule"], "symbol": f["symbol"], "path": f["client"]["path"],
                                  "lines": [], "verdict": v[0], "evidence": v[1]})["lines"].append(f["client"]["line"])
        expected[version] = sorted(rows.values(), key=lambda r: (r["path"], r["symbol"]))
    if unexplained:
        sys.exit("errors without a verdict:\n  " + "\n  ".join(unexplained))
    out_path.write_text(json.dumps(expected, indent=1) + "\n")
    for version, rows in sorted(expected.items()):
        counts = {}
        for r in rows:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + len(r["lines"])
        print(f"{version}: {sum(counts.values())} error lines: {counts}")


if __name__ == "__main__":
    main()
