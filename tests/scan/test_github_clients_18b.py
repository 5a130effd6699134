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


# ----------------------------------------------------------------------------------------- NB
# MInference v0.1.5.post1 (README `vllm>=0.4.1` -> 0.5.4) and v0.1.6 (README `vllm>=0.9.0` -> 0.9.1),
# minference/modules/minference_forward.py: `minference_vllm_forward(pattern_config, vllm_version="0.4.1")` defines
# `forward` (vLLM 0.4.1), `forward_vllm_042` and `forward_vllm_043` and returns `forward` if `vllm_version in
# "0.4.1"`, `forward_vllm_042` if `== "0.4.2"`, `forward_vllm_043` if `>= "0.4.3"`; minference/patch.py calls it
# with `vllm.__version__`. On 0.5.4 / 0.9.1 only forward_vllm_043 is returned, but the old forwards' calls of
# PagedAttention.write_to_paged_cache / forward_prefix / forward_decode without the newer scales were DC005 errors.
NB = "NB_nested_function_returned_under_version_dispatch"


def _nb(tmp_path, replace: tuple[str, str] | None = None, version: str = "0.5.4") -> list[tuple[int, str]]:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / NB
    vllm = {str(p.relative_to(root / "vllm_src")): p.read_text() for p in (root / "vllm_src").rglob("*.py")}
    vllm["vllm/_version.py"] = f'__version__ = "{version}"\n'
    client = {str(p.relative_to(root / "client")): p.read_text() for p in (root / "client").rglob("*.py")}
    if replace:
        assert replace[0] in client["pkg/forward.py"]
        client["pkg/forward.py"] = client["pkg/forward.py"].replace(*replace)
    result = scan_trees(tmp_path, vllm, client)
    return [(f.client.line, f.severity) for f in result.findings if f.rule == "DC005"]


def test_nb_the_forward_for_other_releases_is_under_a_version_check(tmp_path):
    assert _nb(tmp_path) == [(9, "warning"), (9, "warning")]


def test_nb_twin_the_forward_returned_for_the_target_still_errors(tmp_path):
    # the function the factory returns on 0.5.4 drops the scales: it runs there
    broken = ('"auto", 1.0, 1.0)', '"auto")')
    assert sorted(_nb(tmp_path, broken)) == [(9, "warning"), (9, "warning"), (12, "error"), (12, "error")]


def test_nb_twin_on_a_release_the_old_test_selects_the_old_forward_errors(tmp_path):
    # "0.4.1" in "0.4.1": the old forward is the one returned, and the fake vLLM wants the scales
    assert _nb(tmp_path, version="0.4.1") == [(9, "error"), (9, "error")]


def test_nb_twin_a_nested_function_also_used_otherwise_still_errors(tmp_path):
    # the old forward is also handed out unconditionally (a table of forwards): it may run on any release
    extra = ('    assert False, "Only support', '    TABLE = {"old": forward}\n    assert False, "Only support')
    assert _nb(tmp_path, extra) == [(9, "error"), (9, "error")]


def test_nb_twin_a_test_of_something_else_guards_nothing(tmp_path):
    # a test of a parameter not named for a version is no version dispatch
    renamed = ("vllm_version", "mode")
    assert _nb(tmp_path, renamed) == [(9, "error"), (9, "error")]
