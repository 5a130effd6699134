"""Which attention backend a float32 smoke model needs on a CPU build of vLLM.

A release that has both `AMX_MLA` and `CPU_MLA` prefers AMX for MLA models (DeepSeek) whenever the CPU has
AMX tiles (vllm/platforms/cpu.py `get_attn_backend_cls`), and AMX MLA packs its weights with a kernel that
accepts only bf16, fp16, int8 or fp8 (`convert_weight_packed`: "expect weight to be bfloat16, ..."). The
DeepSeek smoke model runs in float32, so on such a machine the engine fails while loading the weights.
The reference `CPU_MLA` backend takes float32: the runner asks for it by name, which the platform honours
("unless CPU_MLA was explicitly requested"). Runs inside the vLLM environment.
"""

from __future__ import annotations

REFERENCE_MLA = "CPU_MLA"
_AMX_ONLY = "AMX_MLA"


def reference_mla_backend(dtype: str, cuda: bool):
    """The `AttentionBackendEnum` member to request, or None where the release's own choice stands: on CUDA,
    for a bf16 model, or in a release without the AMX preference (no AMX_MLA member)."""
    if cuda or dtype != "float32":
        return None
    try:
        from vllm.v1.attention.backends.registry import AttentionBackendEnum
    except ImportError:  # releases before the registry have no AMX MLA backend
        return None
    members = AttentionBackendEnum.__members__
    if _AMX_ONLY not in members or REFERENCE_MLA not in members:
        return None
    return members[REFERENCE_MLA]


def note(notes: dict, where: str) -> None:
    notes.setdefault("overrides", []).append(
        f"{where}: attention backend {REFERENCE_MLA} (the AMX MLA backend this release prefers on AMX CPUs takes no "
        f"float32 weights)")
