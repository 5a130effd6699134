"""DC110 vendored-copy-drift on real releases: hs-connectors 0.7.0's copy of vLLM's extract_from_kv_cache."""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR, client_sources, real_scan, source_line  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

CONNECTOR = "hs_connectors/mooncake_hidden_states_connector.py"
ORIGINAL = "vllm/distributed/kv_transfer/kv_connector/v1/example_hidden_states_connector.py"


def dc110(result):
    assert not result.internal_errors
    return [f for f in result.findings if f.rule == "DC110"]


def test_present_from_029_where_vllm_changed_its_helper():
    for version in ("0.29.0", "0.32.0"):
        [f] = dc110(real_scan(version, "hs-connectors==0.7.0", "0.28.0"))
        assert f.severity == "warning" and f.when == "silent"
        assert f.client.path == CONNECTOR
        assert f.client.line == source_line(client_sources("hs-connectors", "0.7.0"), CONNECTOR, "def extract_from_kv_cache(")
        assert f.vllm.path == ORIGINAL and f.vllm.code.startswith("def extract_from_kv_cache(")
        diff = f.details["original_diff"]
        assert "-    block_size = kv_cache.shape[1]" in diff and "+    block_size = kv_cache.shape[2]" in diff


def test_absent_while_the_original_is_unchanged():
    assert dc110(real_scan("0.28.0", "hs-connectors==0.7.0", "0.28.0")) == []


def test_a_renamed_copy_is_found_and_an_updated_copy_is_quiet(tmp_path):
    root = tmp_path / "client"
    root.mkdir()
    (root / "copies.py").write_text(textwrap.dedent('''
        import torch
        from vllm.config import VllmConfig


        def my_extract(cache: torch.Tensor, slots: torch.Tensor, n: int) -> torch.Tensor:
            bs = cache.shape[1]
            return cache[slots // bs, slots % bs][:n]


        def updated_extract(kv_cache, slot_mapping, num_tokens):
            block_size = kv_cache.shape[2]
            return kv_cache[slot_mapping // block_size, :, slot_mapping % block_size][:num_tokens]
    '''))
    result = scan(resolve_vllm("0.29.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC110"], client_vllm="0.28.0"))
    [f] = dc110(result)
    assert f.symbol.endswith(":extract_from_kv_cache") and "my_extract" in f.message


def test_quiet_without_the_clients_vllm(tmp_path):
    root = tmp_path / "client"
    root.mkdir()
    (root / "c.py").write_text("from vllm.config import VllmConfig\n\n\ndef f(kv_cache, s, n):\n"
                               "    b = kv_cache.shape[1]\n    return kv_cache[s // b, s % b][:n]\n")
    result = scan(resolve_vllm("0.29.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC110"]))
    assert dc110(result) == []


def test_the_index_shape_is_the_tokens_shape_on_real_release_files():
    """The release index hashes `shape(fn)` (an explicit stack, the first scan's hot path); a client's copy is matched
    through the same hash, so it must be exactly the pre-order `tokens(fn)` walks, on real code."""
    import ast

    from conftest import CACHE_DIR
    from driftcheck.probes.vendored_copy_drift import _functions, shape, tokens
    from driftcheck.sources.targets import resolve_vllm

    tree = resolve_vllm("0.16.0", CACHE_DIR).tree
    checked = 0
    for rel in ("vllm/v1/worker/gpu_model_runner.py", "vllm/v1/core/sched/scheduler.py", "vllm/config/vllm.py"):
        for _qual, fn in _functions(ast.parse(tree.read_text(rel))):
            assert shape(fn) == tokens(fn)[0]
            checked += 1
    assert checked > 100
