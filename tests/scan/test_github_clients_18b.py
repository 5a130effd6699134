"""Causes found by batch 18b (GitHub clients at the vLLM each declares, docs/triage/2026-12-04-github-clients-18b.md).

NA: a member missing on the declared class but defined by several of its subclasses. speculative_prefill (c1d6bd3,
`vllm==0.6.3.post1`) reads `attn_metadata.seq_lens_tensor` on an `AttentionMetadata`; in vLLM 0.6.3.post1 eight
backends' metadata classes have `seq_lens_tensor` (flash_attn, placeholder_attn, flashinfer and blocksparse_attn declare
it, xformers, rocm_flash_attn, torch_sdpa and ipex_attn also through PagedAttentionMetadata), and DC006's warning said
"only BlocksparseFlashAttentionMetadata defines it". The
finding stays a warning (the object may still be one that lacks it, e.g. PallasMetadata); its message now counts the
other subclasses. A member only one subclass defines keeps "only X", and a member no subclass defines stays an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees

BACKENDS = '''
class AttentionMetadata:
    num_prefills: int


class FlashMetadata(AttentionMetadata):
    seq_lens_tensor = None
    block_tables = None


class XFormersMetadata(AttentionMetadata):
    seq_lens_tensor = None


class PallasMetadata(AttentionMetadata):
    pass
'''
VLLM = {"vllm/__init__.py": "", "vllm/backends.py": BACKENDS}


def _findings(tmp_path, attr: str) -> list:
    client = {"plugin/__init__.py": "", "plugin/worker.py": "from vllm.backends import AttentionMetadata\n\n\n"
              f"def f(attn_metadata: AttentionMetadata):\n    return attn_metadata.{attr}\n"}
    result = scan_trees(tmp_path, VLLM, client)
    return [f for f in result.findings if f.rule == "DC006"]


def test_na_several_subclasses_define_it_message_counts_them(tmp_path):
    (f,) = _findings(tmp_path, "seq_lens_tensor")
    assert f.severity == "warning"
    assert "and 1 other subclass define it" in f.message and "only" not in f.message


def test_na_twin_one_subclass_keeps_only(tmp_path):
    (f,) = _findings(tmp_path, "block_tables")
    assert f.severity == "warning"
    assert "only vllm.backends.FlashMetadata defines it" in f.message


def test_na_twin_no_subclass_defines_it_stays_an_error(tmp_path):
    (f,) = _findings(tmp_path, "slot_mapping")
    assert f.severity == "error"

