"""DC125 fallback-taken: a getattr / hasattr probe of a name the client's own vLLM had and the target lacks.

Before / after shapes from two clients: kunpeng-affinity-plugin's `getattr(numa_utils, "_can_set_mempolicy", None)`
(29a, gone in vLLM 0.34.0), and a patch library's `if hasattr(Scheduler, "_update_after_schedule"): ...` guard.
"""

from __future__ import annotations

from scan.helpers import scan_against_own, scan_trees

_OWN = {
    "vllm/__init__.py": "",
    "vllm/numa_utils.py": "def _can_set_mempolicy():\n    return True\n\n\nFLAG = 1\n",
    "vllm/sched.py": "class Scheduler:\n    def _update_after_schedule(self, out):\n        return out\n",
}
_TARGET = {
    "vllm/__init__.py": "",
    "vllm/numa_utils.py": "FLAG = 1\n\n\ndef new_helper():\n    return 1\n",
    "vllm/sched.py": "class Scheduler:\n    def update(self, out):\n        return out\n",
}
_CLIENT = {"plugin.py": """\
    from vllm import numa_utils
    from vllm.sched import Scheduler


    def numa() -> bool:
        fn = getattr(numa_utils, "_can_set_mempolicy", None)
        return callable(fn) and fn()


    def patch(wrapper) -> None:
        if hasattr(Scheduler, "_update_after_schedule"):
            Scheduler._update_after_schedule = wrapper


    def unchanged():
        return getattr(numa_utils, "FLAG", 0), getattr(numa_utils, "new_helper", None), hasattr(Scheduler, "later")
"""}


def test_dc125_a_probe_of_a_name_the_target_dropped_is_a_silent_warning(tmp_path):
    result = scan_against_own(tmp_path, _OWN, "0.9.0", _TARGET, _CLIENT, only=["DC125"], version="0.10.0")
    assert [(f.client.line, f.severity, f.when, f.symbol) for f in result.findings] == [
        (6, "warning", "silent", "vllm.numa_utils._can_set_mempolicy"),
        (11, "warning", "silent", "vllm.sched.Scheduler._update_after_schedule")]
    first, second = result.findings
    assert "is in vLLM 0.9.0, the client's vLLM (vllm/numa_utils.py:1), and gone in vLLM 0.10.0" in first.message
    assert "returns its default every time" in first.message and "is False every time" in second.message


def test_dc125_absent_without_the_clients_own_vllm(tmp_path):
    # a name the target lacks may be one the client probes for ahead of a release: only its own vLLM can tell
    assert scan_trees(tmp_path, _TARGET, _CLIENT, only=["DC125"]).findings == []


def test_dc125_absent_for_the_clients_own_getattr(tmp_path):
    own_getattr = {"plugin.py": "from vllm import numa_utils\n\n\ndef getattr(obj, name, default):\n    return default\n\n\n"
                                "FN = getattr(numa_utils, '_can_set_mempolicy', None)\n"}
    result = scan_against_own(tmp_path, _OWN, "0.9.0", _TARGET, own_getattr, only=["DC125"], version="0.10.0")
    assert result.findings == []


def test_dc125_on_a_real_release_kunpengs_numa_probe(tmp_path):
    """29a (kunpeng-affinity-plugin): `numa_utils._can_set_mempolicy` is in vLLM 0.33.0 and gone in 0.34.0; the line
    and the baseline's definition are read from the releases' sources."""
    from conftest import source_line, vllm_sources
    from scan.helpers import scan_at_release

    client = {"plugin.py": """\
        def numa_ok() -> bool:
            from vllm.utils import numa_utils

            fn = getattr(numa_utils, "_can_set_mempolicy", None)
            return callable(fn) and fn()
    """}
    result = scan_at_release(tmp_path, client, "0.34.0", ["DC125"], client_vllm="0.33.0")
    assert not result.internal_errors
    [f] = result.findings
    assert (f.client.line, f.severity, f.symbol) == (4, "warning", "vllm.utils.numa_utils._can_set_mempolicy")
    defined = source_line(vllm_sources("0.33.0"), "vllm/utils/numa_utils.py", "def _can_set_mempolicy")
    assert f"(vllm/utils/numa_utils.py:{defined})" in f.message
    assert scan_at_release(tmp_path / "same", client, "0.33.0", ["DC125"], client_vllm="0.33.0").findings == []
