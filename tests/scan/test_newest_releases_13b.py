"""Root causes of false errors from batch 13b, real plugins scanned at the newest vLLM releases (0.33.0 and 0.31.0;
docs/triage/2026-12-03-newest-releases-13b.md): the shape that runs (no error), and the same shape where the code
really fails, which must stay an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


# ----------------------------------------------------------------------------------------- EN
SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"
# the fake vLLM of the EN shape: a KVCacheManager that caches full blocks only with enable_caching, a coordinator
# whose module builds a BlockPool, a Request whose block_hashes come from its block_hasher, CacheConfig's default on
EN_VLLM = SHAPES / "EN_dc101_caching_off_manager_client_replaces" / "vllm_src"
VLLM = {str(p.relative_to(EN_VLLM)): p.read_text() for p in EN_VLLM.rglob("*.py")}


HYBRID = """
    from vllm.v1.core.kv_cache_manager import KVCacheManager


    class ClientKVCacheManager(KVCacheManager):
        pass


    def install():
        import vllm.v1.core.kv_cache_manager as mgr_mod
        mgr_mod.KVCacheManager = ClientKVCacheManager
"""

OTHER = """
    from vllm.config import CacheConfig
    from vllm.v1.core.kv_cache_coordinator import KVCacheCoordinator


    def caching_pool():
        CacheConfig(block_size=16)
        return KVCacheCoordinator(num_blocks=8)
"""


def _client(build: str, replaced: bool = True) -> dict[str, str]:
    files = {"pkg/__init__.py": "", "pkg/other.py": OTHER, "pkg/pool_test.py": f"""
        from vllm.v1.core.kv_cache_manager import KVCacheManager as Manager
        from vllm.v1.request import Request


        def check_pool():
            manager = {build}
            req = Request(request_id="r0", prompt_token_ids=list(range(16)))
            return manager.allocate_slots(req, num_full_blocks=1)
    """}
    if replaced:
        files["pkg/hybrid.py"] = HYBRID
    return files


def test_en_caching_off_build_of_a_class_the_client_replaces_is_a_warning(tmp_path):
    # tpu-inference 0.32.0 @ 0.33.0: tests/core/test_runner_slot_mamba.py:213 builds KVCacheManager(...,
    # enable_caching=False) beside its Requests; core/hybrid_coordinator.py:765 puts TPUKVCacheManager in its place
    result = scan_trees(tmp_path, VLLM, _client("Manager(num_blocks=4, enable_caching=False)"), only=["DC101"])
    assert _found(result, "DC101") == [("DC101", "warning", "pkg/pool_test.py", 7)]


def test_en_caching_on_build_of_a_class_the_client_replaces_stays_an_error(tmp_path):
    result = scan_trees(tmp_path, VLLM, _client("Manager(num_blocks=4)"), only=["DC101"])
    assert _found(result, "DC101") == [("DC101", "error", "pkg/pool_test.py", 7)]


def test_en_not_replaced_is_as_before(tmp_path):
    off = scan_trees(tmp_path / "off", VLLM, _client("Manager(num_blocks=4, enable_caching=False)", replaced=False),
                     only=["DC101"])
    on = scan_trees(tmp_path / "on", VLLM, _client("Manager(num_blocks=4)", replaced=False), only=["DC101"])
    assert _found(off, "DC101") == [("DC101", "warning", "pkg/pool_test.py", 7)]
    assert _found(on, "DC101") == [("DC101", "error", "pkg/pool_test.py", 7)]
