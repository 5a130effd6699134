"""Batch 34d (clients written for the newest vLLM releases, 0.30.0-0.34.0: Model Runner V2 model states, KV-cache
managers and specs, attention backends; docs/triage/2026-12-05-newest-internals-34d.md).

FD1: the LoD-attention plugin (SmerkyG/KVM-paper, integrations/vllm_lod/vllm_lod_plugin/cache_ownership.py) installs,
from inside `_install_core_cache_sizing_hook()`, a nested `get_config` on vLLM's module in place of its function
(`utils.get_kv_cache_config_from_groups = get_config`, `utils` a function-local `import vllm.v1.core.kv_cache_utils as
utils`); the wrapper calls the saved original. DC108 said that call raises "KV cache layout has not been resolved yet"
because the client never calls `resolve_kv_cache_layout`. The wrapper only runs where vLLM calls it, and vLLM's engine
core resolves the layout first (0.30.0 core.py:289). A function the client stores, in the scope that defines it, on a
vLLM module or class, and reads nowhere else, is driven by vLLM like a method of a client subclass of a vLLM class.
The same wrapper that the client also calls itself, or stores on its own object, stays an error.
"""

from __future__ import annotations

from conftest import CACHE_DIR, vllm_sources  # noqa: F401
from scan.helpers import edited, line_of, plugin_shape, scan_trees

FD1_VLLM, FD1_CLIENT = plugin_shape("FD1")
HOOKS = "pkg/hooks.py"


def _dc108(tmp_path, client_files=FD1_CLIENT):
    """DC108's findings (severity, path, line) on the FD1 fake vLLM, in order."""
    result = scan_trees(tmp_path, FD1_VLLM, client_files, only=["DC108"])
    assert not result.internal_errors
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings)


def test_fd1_call_in_a_replacement_vllm_calls_is_no_error(tmp_path):
    assert not _dc108(tmp_path)


def test_fd1_twin_the_client_also_calls_the_replacement_itself(tmp_path):
    client = edited(FD1_CLIENT, HOOKS, ("    utils.get_kv_cache_config_from_groups = get_config\n",
                                        "    utils.get_kv_cache_config_from_groups = get_config\n"
                                        "    return get_config(None, [], 0)\n"))
    line = line_of(client[HOOKS], "config = original(vllm_config, physical, available_memory)")
    assert _dc108(tmp_path, client) == [("error", HOOKS, line)]


def test_fd1_twin_stored_on_the_clients_own_object(tmp_path):
    client = edited(FD1_CLIENT, HOOKS, ("    utils.get_kv_cache_config_from_groups = get_config\n",
                                        "    registry = object.__new__(type('Registry', (), {}))\n"
                                        "    registry.get_config = get_config\n"
                                        "    return registry\n"))
    line = line_of(client[HOOKS], "config = original(vllm_config, physical, available_memory)")
    assert _dc108(tmp_path, client) == [("error", HOOKS, line)]


def test_fd1_twin_the_same_call_outside_any_replacement(tmp_path):
    client = {**FD1_CLIENT, "pkg/sizing.py": (
        "import vllm.v1.core.kv_cache_utils as utils\n\n\n"
        "def size(vllm_config, groups):\n"
        "    return utils.get_kv_cache_config_from_groups(vllm_config, groups, 1024)\n")}
    findings = _dc108(tmp_path, client)
    assert ("error", "pkg/sizing.py", 5) in findings and all(path != HOOKS for _, path, _ in findings)
