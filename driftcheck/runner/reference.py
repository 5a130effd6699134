"""The reference: transformers' own forward pass on the same weights, in fp32.

ref[k] for k < num_layers is transformers `hidden_states[k]` (the input of layer k); ref[num_layers]
is the output of the last layer *before* the final norm. LlamaModel applies the norm to the last entry
of `hidden_states`, while both vLLM conventions capture the residual stream un-normed, so that one
entry comes from a hook on the norm's input instead.

A DeepSeek V3 config with `llama_4_scaling` (what vLLM's DeepseekV2Model.forward reads and passes to
its layers) is something transformers' DeepSeek V3 ignores; transformers implements that scaling for
its Mistral 4 model (the same MLA attention): `get_llama_4_attn_scale`, which multiplies the query.
The reference applies transformers' own function to the DeepSeek query (a hook on the query
projection: the rotary embedding is linear, so scaling before it equals scaling after it). Where the
installed transformers has no such function the reference says so in its notes and goes without.
"""

from __future__ import annotations

from pathlib import Path


def reference_hidden_states(model_dir: Path, prompts: list[list[int]]) -> tuple[list, dict]:
    """Per prompt, a float32 tensor [num_layers + 1, seq_len, hidden]; plus notes on what was seen.
    Computed on the GPU where there is one (TF32 off: a true fp32 reference), else on the CPU."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32) \
        if _accepts_dtype_kw() else AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # this process starts no vLLM: no fork to spoil
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        model.to(device)
    model.eval()
    captured: list = []
    hooks = [model.model.norm.register_forward_pre_hook(lambda _m, args: captured.append(args[0].detach()))]
    notes = {}
    scaling = getattr(model.config, "llama_4_scaling", None)
    if scaling:
        applied = _llama_4_scaling_hooks(model, scaling)
        hooks += applied if isinstance(applied, list) else []
        notes["llama_4_scaling"] = f"applied to {len(applied)} query projections" if isinstance(applied, list) else applied
    n = model.config.num_hidden_layers
    out = []
    last_entry_normed = None
    try:
        with torch.no_grad():
            for ids in prompts:
                captured.clear()
                res = model(input_ids=torch.tensor([ids], device=device), output_hidden_states=True)
                hs = res.hidden_states
                if len(hs) != n + 1:
                    raise RuntimeError(f"transformers returned {len(hs)} hidden states for {n} layers")
                pre_norm = captured[-1][0]
                if last_entry_normed is None:
                    last_entry_normed = not torch.allclose(hs[n][0], pre_norm)
                out.append(torch.stack([h[0] for h in hs[:n]] + [pre_norm]).float().cpu())
    finally:
        for h in hooks:
            h.remove()
    return out, {"hidden_states_last_entry_normed": bool(last_entry_normed), "reference_device": device, **notes}


def _llama_4_scaling_hooks(model, scaling: dict):
    """Forward hooks scaling each layer's query as transformers' get_llama_4_attn_scale says, or why not."""
    import importlib

    import torch

    fn = None
    for mod in ("transformers.models.mistral4.modeling_mistral4", "transformers.models.ministral3.modeling_ministral3"):
        try:
            fn = getattr(importlib.import_module(mod), "get_llama_4_attn_scale", None)
        except ImportError:
            continue
        if fn is not None:
            break
    if fn is None:
        import transformers

        return f"not applied: transformers {transformers.__version__} has no get_llama_4_attn_scale"

    def hook(_module, _args, out):
        positions = torch.arange(out.shape[1], device=out.device)[None, :]  # one prompt per forward, from 0
        scale = fn(positions, scaling["beta"], scaling["original_max_position_embeddings"])  # [1, 1, seq, 1]
        return out * scale[:, 0].to(out.dtype)

    hooks = []
    for layer in model.model.layers:
        proj = getattr(layer.self_attn, "q_b_proj", None) or getattr(layer.self_attn, "q_proj", None)
        if proj is None:
            return "not applied: the attention has no q_b_proj / q_proj"
        hooks.append(proj.register_forward_hook(hook))
    return hooks


def _accepts_dtype_kw() -> bool:
    import transformers

    return int(transformers.__version__.split(".")[0]) >= 5
