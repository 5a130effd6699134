"""Batch 32b (platform, worker, model-runner and quantization plugins taken from GitHub,
docs/triage/2026-12-05-platform-worker-plugins-32b.md).

VB1: sophgo/vllm-tpu @ 9b474f2 (the Sophon TPU platform plugin, written for vLLM 0.11.0) reads
`attn_metadata.slot_mapping` and `.block_tables` in its attention impl's `forward(..., attn_metadata:
AttentionMetadata)` (`vllm_sophon/attention/attention.py:387`). vLLM 0.11.0's `AttentionMetadata` declares no members;
only `TorchSDPAMetadata` of vLLM's classes defines `slot_mapping`, so DC006 warned "only TorchSDPAMetadata defines it,
so this line fails with AttributeError when the object is not one of those". What vLLM hands the impl is what the
platform's own builder made, the client's `SophTPUMetadata` (same file, line 83), a class of the same kind that does
not derive from the marker and defines both fields. A member no class defines was already an unknown in that case
(`_sibling_defining`); a member only some subclasses define is now the same question, and the unknown names both the
client's class and vLLM's. Where the client's class lacks the member, the subclass warning stays.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"
VB1 = SHAPES / "VB1_member_only_a_vllm_subclass_defines_read_where_the_clients_own_class_of_that_kind_defines_it"


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}


def _dc006(result, attr: str) -> tuple[list, list]:
    found = [f for f in result.findings if f.rule == "DC006" and f.symbol and f.symbol.endswith("." + attr)]
    unknown = [u for u in result.unknown if u.rule == "DC006" and u.symbol and u.symbol.endswith("." + attr)]
    return found, unknown


# ----------------------------------------------------------------------------------------------------------- VB1
VB1_VLLM = _tree(VB1 / "vllm_src")
VB1_CLIENT = _tree(VB1 / "client")


def test_vb1_member_the_clients_own_metadata_defines_is_unknown_naming_both(tmp_path):
    found, unknown = _dc006(scan_trees(tmp_path, VB1_VLLM, VB1_CLIENT), "slot_mapping")
    assert found == []
    (u,) = unknown
    assert "plug.attention.TPUMetadata" in u.message and "does not derive from it" in u.message
    assert "vllm.v1.attention.backends.cpu_attn.TorchSDPAMetadata defines it too" in u.message


def _vb1_reading(tmp_path: Path, attr: str, vllm: dict[str, str] = VB1_VLLM, **renames: str):
    """The shape, its impl reading `attr` where the shape reads `block_tables`, `renames` applied to the client."""
    client = {rel: text.replace("attn_metadata.block_tables", f"attn_metadata.{attr}") for rel, text in VB1_CLIENT.items()}
    for old, new in renames.items():
        client = {rel: text.replace(old, new) for rel, text in client.items()}
    return _dc006(scan_trees(tmp_path, vllm, client), attr)


def test_vb1_twin_the_clients_metadata_lacks_the_member_the_subclass_warning_stays(tmp_path):
    (f,), unknown = _vb1_reading(tmp_path, "num_prefills")
    assert f.severity == "warning" and unknown == []
    assert "only vllm.v1.attention.backends.cpu_attn.TorchSDPAMetadata defines it" in f.message


def test_vb1_twin_a_client_class_of_another_kind_is_no_evidence(tmp_path):
    (f,), unknown = _vb1_reading(tmp_path, "slot_mapping", TPUMetadata="TPURecord")
    assert f.severity == "warning" and unknown == []


def test_vb1_twin_a_member_no_class_defines_on_a_non_marker_base_stays_an_error(tmp_path):
    vllm = {rel: text.replace(
        '    """A marker: the metadata classes of vLLM\'s own backends derive from it, and annotations name it."""',
        "    num_actual_tokens: int = 0") for rel, text in VB1_VLLM.items()}
    (f,), _ = _vb1_reading(tmp_path, "max_seq_len", vllm)
    assert f.severity == "error"
