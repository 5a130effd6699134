"""Root causes of false errors from the twelfth batch of untriaged plugins, names m-z
(docs/triage/2026-12-03-unseen-plugins-12b.md), one group each: the shape that runs (no error), and the same shape
where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


# ----------------------------------------------------------------------------------------- DW
OPS = {
    "vllm/_custom_ops.py": """
        def rms_norm(out, input, weight, epsilon):
            pass


        def fused_add_rms_norm(input, residual, weight, epsilon):
            pass
    """,
}


def _norm(chain: str, methods: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/layernorm.py": f"""
        import os

        from fastnorm import probe

        _use_fast = os.environ.get("FAST") == "1"
        _is_hip = True

{chain}


        class RMSNorm:
{methods}
    """}


def _block(text: str, indent: int) -> str:
    return "\n".join(" " * indent + line if line else line for line in text.strip("\n").splitlines())


FAST_FIRST = """
if _use_fast:
    from fastnorm import rmsnorm2d_fwd as rms_norm
elif _is_hip:
    try:
        from vllm._custom_ops import rms_norm

        _has_vllm_norm = True
    except ImportError:
        _has_vllm_norm = False
"""


def test_a_name_another_branch_binds_to_another_package_is_guarded(tmp_path):
    """sglang 0.5.1 srt/layers/layernorm.py:48-52, 102-119 (sgltmp 0.5.1.post4, sglang-usf 0.5.1.post6, sglang-kt
    0.7.2, power-sglang-cuda124 1.0.2, miles-rl 0.0.2): `if _use_aiter: from aiter import rmsnorm2d_fwd as rms_norm
    elif _is_hip: from vllm._custom_ops import rms_norm`; `forward_aiter` calls `rms_norm(x, w, eps)`, aiter's
    signature. Which function the name holds is the client's choice at import: a warning, not an error (both were
    errors: vLLM's last import won the name)."""
    methods = """
def forward_fast(self, x):
    return rms_norm(x, self.weight, self.eps)

def forward_flag(self, x):
    if _use_fast:
        return rms_norm(x, self.weight, self.eps)
    return x
"""
    found = _found(scan_trees(tmp_path, OPS, _norm(_block(FAST_FIRST, 8), _block(methods, 12))), "DC005")
    assert [f[1] for f in found] == ["warning", "warning"], found


def test_where_the_files_own_test_selects_vllms_binding_it_stays_an_error(tmp_path):
    """miles-rl 0.0.2 sglang/srt/layers/layernorm.py:538-562: `if _use_aiter: <aiter's call> else: <vLLM's call>`
    in the method, on the test whose module branch bound aiter's: the else holds vLLM's function (or none), and a
    wrong call to it fails; so does `if not _use_fast:`."""
    methods = """
def forward_else(self, x):
    if _use_fast:
        return rms_norm(x, self.weight, self.eps)
    else:
        return rms_norm(x, self.weight, self.eps)

def forward_not(self, x):
    if not _use_fast:
        return rms_norm(x, self.weight, self.eps)
    return x
"""
    found = _found(scan_trees(tmp_path, OPS, _norm(_block(FAST_FIRST, 8), _block(methods, 12))), "DC005")
    lines = {f[3]: f[1] for f in found}
    assert sorted(lines.values()) == ["error", "error", "warning"], found
    assert lines[min(lines)] == "warning"  # the body of `if _use_fast:`: fastnorm's function


def test_a_name_only_vllm_binds_is_not_guarded(tmp_path):
    """No other branch binds the name (the other binds another name): the use holds vLLM's function or fails with
    NameError; the wrong call stays an error, and so does a missing name in the chain's own import."""
    chain = """
if _use_fast:
    from fastnorm import rmsnorm2d_fwd as fast_norm
elif _is_hip:
    from vllm._custom_ops import rms_norm, gone_norm
"""
    methods = """
def forward_hip(self, x):
    return rms_norm(x, self.weight, self.eps)
"""
    found = _found(scan_trees(tmp_path, OPS, _norm(_block(chain, 8), _block(methods, 12))), "DC002", "DC005")
    assert [(f[0], f[1]) for f in found] == [("DC002", "error"), ("DC005", "error")], found


def test_the_chains_own_vllm_import_is_not_guarded(tmp_path):
    """The name is rebound by another branch, but the vLLM import itself is a use of vLLM in its branch."""
    chain = """
if _use_fast:
    from fastnorm import rmsnorm2d_fwd as gone_norm
else:
    from vllm._custom_ops import gone_norm
"""
    found = _found(scan_trees(tmp_path, OPS, _norm(_block(chain, 8), _block("pass", 12))), "DC002")
    assert [f[1] for f in found] == ["error"], found


# ----------------------------------------------------------------------------------------- DX
META = {
    "vllm/attention/__init__.py": """
        from vllm.attention.backends.abstract import AttentionMetadata
    """,
    "vllm/attention/backends/abstract.py": """
        from dataclasses import dataclass


        @dataclass
        class AttentionMetadata:
            num_prefills: int


        @dataclass
        class AttentionState:
            step: int
    """,
    "vllm/attention/backends/flash_attn.py": """
        from dataclasses import dataclass

        from vllm.attention.backends.abstract import AttentionMetadata


        @dataclass
        class FlashAttentionMetadata(AttentionMetadata):
            seq_lens: list
    """,
}


def _zip(imported: str, annotated: str = "AttentionMetadata", name: str = "attn_metadata") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/adaptor.py": f"""
        from npu_plugin.attention import {imported}
        from vllm.attention.backends.abstract import AttentionState


        def forward_prefill({name}: {imported}, state: AttentionState):
            return {name}
    """, "pkg/manager.py": f"""
        from vllm.attention.backends.abstract import AttentionMetadata, AttentionState


        def drop(attn_metadata: {annotated}):
            return attn_metadata.attn_score
    """}


def test_a_family_base_annotation_with_a_platform_class_of_its_kind_imported_is_unknown(tmp_path):
    """mindie-turbo 2.0rc1 multimodal/mmzip/manager.py:56-80 annotates `attn_metadata: AttentionMetadata` and reads
    `attn_score`, `vision_mask`, `all_seq_ids`; its adaptor/vllm/attention.py:36 imports vllm_ascend's
    `AscendMetadata`, the platform's metadata, from a package driftcheck does not read. The object may be that
    class: unknown, not an error."""
    result = scan_trees(tmp_path, META, _zip("NpuMetadata"))
    assert _found(result, "DC006") == []
    assert [(u.rule, u.client.line) for u in result.unknown if u.rule == "DC006"] == [("DC006", 5)]
    assert "npu_plugin.attention.NpuMetadata" in next(u.message for u in result.unknown if u.rule == "DC006")


def test_without_a_class_of_its_kind_or_a_family_it_stays_an_error(tmp_path):
    """An unread import of another kind (`NpuRunner`), or an annotation with a class nothing in vLLM derives from
    (`AttentionState`, with `NpuState` imported): the member is missing from every class that can be there."""
    for n, (imported, annotated) in enumerate((("NpuRunner", "AttentionMetadata"), ("NpuState", "AttentionState"))):
        found = _found(scan_trees(tmp_path / str(n), META, _zip(imported, annotated)), "DC006")
        assert found == [("DC006", "error", "pkg/manager.py", 5)], (imported, found)


def test_a_class_of_its_kind_the_client_only_builds_says_nothing(tmp_path):
    """vLLM 0.16.0's own tree builds flashinfer's `MnnvlConfig` (all2all.py) and triton_kernels' `PrecisionConfig`
    (mxfp4.py) for its own use; grok1.py's `quant_config.is_fp8` (under a hasattr) and voxtral.py's
    `quant_config.config_groups` are not about them. An unread class counts only where the client annotates values
    with it (it is handed such objects)."""
    files = _zip("NpuMetadata")
    files["pkg/adaptor.py"] = """
        from npu_plugin.attention import NpuMetadata
        from vllm.attention.backends.abstract import AttentionState


        def make(state: AttentionState):
            return NpuMetadata()
    """
    found = _found(scan_trees(tmp_path, META, files), "DC006")
    assert found == [("DC006", "error", "pkg/manager.py", 5)], found


def test_a_class_of_its_kind_annotating_another_role_says_nothing(tmp_path):
    """vLLM 0.16.0's own tree annotates `lmcache_config: LMCacheEngineConfig` (lmcache, unread) and reads
    `quant_config: QuantizationConfig` elsewhere: the same kind word, not the same value. The unread class counts only
    where it annotates a value of the name the read goes through."""
    found = _found(scan_trees(tmp_path, META, _zip("NpuMetadata", name="npu_meta")), "DC006")
    assert found == [("DC006", "error", "pkg/manager.py", 5)], found
