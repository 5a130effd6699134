"""Batch 30d (a sample of 86 errors of the vLLM 0.34.0 sweep of 90 known clients,
docs/triage/2026-12-05-sweep-0.34.0-sample-30d.md).

SD1: ArcticInference (snowflakedb/ArcticInference, /tmp/h24c-src) keeps a copy of vLLM's `FlashAttentionBackend`
beside its forest-cascade impl (arctic_inference/vllm/attention/flash_attn_forest_cascade.py:67) with
`supports_combination(cls, head_size, dtype, kv_cache_dtype, block_size, use_mla, has_sink, use_sparse,
device_capability)`; vLLM 0.34.0's `AttentionBackend.validate_configuration` calls `cls.supports_combination(...)`
with nine arguments (vllm/v1/attention/backend.py:359). The client never hands that class to vLLM (its registered
backend derives from vLLM's own), and vllm-plugin-FL's `AttentionFLBackend` is returned by FL's own platform, whose
`get_attn_backend_cls` never validates. DC109 said error: it counted the call because its receiver is `cls`, but
`validate_configuration` is a classmethod that vLLM calls only on a class its selectors pick (`backend_class`,
vllm/platforms/cuda.py:442), never on `cls`/`self` of a class the client's derives from. Such a call is now a warning
that says so. The shape: that client runs. The twins: the same override, when vLLM's base itself goes on to the
classmethod through `cls` (a classmethod of the base the client calls), or when the client calls the classmethod
itself, stays an error.

DC115 and a call the target rejects: vllm-gcu's benchmarks/kernels/benchmark_marlin.py:67 unpacks
`gptq_quantize_weights(b, quant_type, group_size, act_order)` into five names; 0.34.0's function takes three
parameters and returns three values. DC004 reports the TypeError (4 arguments for 3); DC115 also said
"ValueError: not enough values to unpack", which cannot happen: the call raises before it returns. DC115 now passes
over a call the target's signature rejects. The twin: the same unpacking of a call that binds stays a DC115 error.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees, vllm_tree, write_tree

SD1_VLLM, SD1_CLIENT = plugin_shape("SD1")
BACKEND = "vllm/attention/backend.py"
NEW_CALL = "reason = cls.supports_combination(head_size, dtype, False)"
OLD_CALL = "reason = cls.supports_combination(head_size, dtype)"
NEW_DEF = "def supports_combination(cls, head_size: int, dtype: str, use_mm_prefix: bool) -> str | None:"
OLD_DEF = "def supports_combination(cls, head_size: int, dtype: str) -> str | None:"


def _old_release(tmp_path, vllm_files=SD1_VLLM) -> str:
    """The client's own vLLM: the same tree whose validate_configuration passed two arguments."""
    old = edited(vllm_files, BACKEND, (NEW_CALL, OLD_CALL), (NEW_DEF, OLD_DEF))
    root = vllm_tree(tmp_path / "old-vllm", old)
    write_tree(root, {"vllm/_version.py": '__version__ = "0.98.0"\n'})
    return str(root)


def _dc109(tmp_path, vllm_files=SD1_VLLM, client_files=SD1_CLIENT, baseline=True):
    client_vllm = _old_release(tmp_path, vllm_files) if baseline else None
    found = scan_trees(tmp_path, vllm_files, client_files, only=["DC109"], client_vllm=client_vllm).findings
    return [(f.severity, f.client.path, f.client.line, f.message) for f in found]


def test_sd1_override_reached_only_from_a_classmethod_vllm_calls_on_picked_classes_is_a_warning(tmp_path):
    [(severity, path, line, message)] = _dc109(tmp_path)
    assert (severity, path, line) == ("warning", "plug/forest.py", 12)
    assert "classmethod `validate_configuration`" in message and "picks, as at vllm/platforms/cuda.py:12, never" in message
    assert "new since vLLM 0.98.0" in message


def test_sd1_twin_vllm_goes_on_through_cls_stays_an_error(tmp_path):
    chained = edited(SD1_VLLM, BACKEND, ("class FlashAttentionBackend(AttentionBackend):",
                                         "    @classmethod\n"
                                         "    def is_usable(cls, head_size: int, dtype: str) -> bool:\n"
                                         "        return not cls.validate_configuration(head_size, dtype)\n\n\n"
                                         "class FlashAttentionBackend(AttentionBackend):"))
    [(severity, path, line, message)] = _dc109(tmp_path, chained)
    assert (severity, path, line) == ("error", "plug/forest.py", 12)
    assert "raises TypeError when vLLM reaches that line" in message


def test_sd1_twin_the_client_calls_the_classmethod_itself_stays_an_error(tmp_path):
    client = edited(SD1_CLIENT, "plug/forest.py", ("        return FlashAttentionBackend.get_fp8_dtype()",
                                                   "        assert not FlashAttentionBackend.validate_configuration(64, 'bf16')\n"
                                                   "        return FlashAttentionBackend.get_fp8_dtype()"))
    [(severity, _path, line, _message)] = _dc109(tmp_path, client_files=client)
    assert (severity, line) == ("error", 12)


def test_sd1_without_the_clients_vllm_it_stays_a_warning_for_the_pick(tmp_path):
    [(severity, _path, _line, message)] = _dc109(tmp_path, baseline=False)
    assert severity == "warning" and "classmethod `validate_configuration`" in message


QUANT = {
    "vllm/quant_utils.py": """
        def gptq_quantize_weights(w, quant_type, group_size):
            if group_size < 0:
                return w, w, None
            return w, quant_type, group_size
    """,
}


def _unpack(tmp_path, call: str) -> list[tuple[str, str, int]]:
    client = {"bench.py": f"from vllm.quant_utils import gptq_quantize_weights\n\n\ndef run(b, t, g, act):\n"
                          f"    w_ref, q_w, s, g_idx, perm = {call}\n    return w_ref\n"}
    found = scan_trees(tmp_path, QUANT, client, only=["DC115", "DC004"]).findings
    return sorted((f.rule, f.severity, f.client.line) for f in found)


def test_dc115_passes_over_a_call_the_target_rejects(tmp_path):
    assert _unpack(tmp_path, "gptq_quantize_weights(b, t, g, act)") == [("DC004", "error", 5)]


def test_dc115_twin_a_call_that_binds_stays_an_unpack_error(tmp_path):
    assert _unpack(tmp_path, "gptq_quantize_weights(b, t, g)") == [("DC115", "error", 5)]
