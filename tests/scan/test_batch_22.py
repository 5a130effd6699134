"""Eighteenth session (batch 22): readings that real clients not tuned for showed wrong.

R1 (22a, AlphaApollo at vLLM 0.8.5): `from vllm.utils import is_hip` then `is_hip()`. 0.8.5 has no `vllm.utils.is_hip`;
DC002 named `vllm.attention.backends.mla.common` as its new home, where `is_hip = current_platform.is_rocm()` is a
flag, and move-import pointed the import there: the call then raised `TypeError: 'bool' object is not callable`. A
module-level value is a new home for a name the file calls only when vLLM's own code calls it too.
"""

from __future__ import annotations

from conftest import run_cli
from scan.helpers import scan_trees, vllm_tree, write_tree

_R1_VLLM = {"vllm/__init__.py": "", "vllm/utils.py": "def cdiv(a, b):\n    return -(a // -b)\n",
            "vllm/platforms.py": "class _P:\n    def is_rocm(self) -> bool:\n        return False\n\n\ncurrent_platform = _P()\n",
            "vllm/mla.py": "from vllm.platforms import current_platform\n\nis_hip = current_platform.is_rocm()\n\n\n"
                           "def block():\n    return 8 if is_hip else 64\n"}
_R1_CLIENT = {"plug/__init__.py": "",
              "plug/config.py": "from vllm.utils import is_hip\n\n\ndef fits(fmt):\n    return not is_hip() or fmt != 'bnb'\n"}


def _r1_scan(tmp_path, vllm_files):
    result = scan_trees(tmp_path, vllm_files, _R1_CLIENT, only=["DC002"])
    assert not result.internal_errors
    [finding] = result.findings
    return finding


def test_r1_a_flag_of_the_same_name_is_no_new_home_for_a_called_function(tmp_path):
    finding = _r1_scan(tmp_path, _R1_VLLM)
    assert finding.severity == "error"
    assert "defined in `vllm.mla` now" not in finding.message
    assert "`vllm.mla` has a `is_hip` too, but as a value (`is_hip = current_platform.is_rocm()`, line 3) that " \
           "vLLM's own code never calls, while this file calls the name (line 5)" in finding.message
    # and move-import leaves the import where it is
    vroot, croot = vllm_tree(tmp_path / "v", _R1_VLLM), write_tree(tmp_path / "c", _R1_CLIENT)
    proc = run_cli("fix", "--vllm", str(vroot), "--client", str(croot), "--apply")
    assert (croot / "plug/config.py").read_text() == _R1_CLIENT["plug/config.py"], proc.stdout + proc.stderr


def test_r1_twin_a_value_vllm_calls_is_a_callable_and_still_the_new_home(tmp_path):
    # `is_hip = lru_cache(maxsize=None)(_probe)`: vLLM's own code calls it, so it is a function-like value
    vllm_files = dict(_R1_VLLM, **{"vllm/mla.py": "from functools import lru_cache\n\nis_hip = lru_cache(maxsize=None)(bool)\n\n\n"
                                                  "def block():\n    return 8 if is_hip() else 64\n"})
    finding = _r1_scan(tmp_path, vllm_files)
    assert "It is defined in `vllm.mla` now." in finding.message
