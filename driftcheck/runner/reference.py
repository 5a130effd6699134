"""The reference: transformers' own forward pass on the same weights, in fp32.

ref[k] for k < num_layers is transformers `hidden_states[k]` (the input of layer k); ref[num_layers]
is the output of the last layer *before* the final norm. LlamaModel applies the norm to the last entry
of `hidden_states`, while both vLLM conventions capture the residual stream un-normed, so that one
entry comes from a hook on the norm's input instead.
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
    hook = model.model.norm.register_forward_pre_hook(lambda _m, args: captured.append(args[0].detach()))
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
        hook.remove()
    return out, {"hidden_states_last_entry_normed": bool(last_entry_normed), "reference_device": device}


def _accepts_dtype_kw() -> bool:
    import transformers

    return int(transformers.__version__.split(".")[0]) >= 5
