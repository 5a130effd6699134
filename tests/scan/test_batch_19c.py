"""Batch 19c (libraries that use vLLM as a backend: Tevatron, DB-GPT, LiveCodeBench, HELMET, ZeroEval, VLM-R1, lmm-r1;
docs/triage/2026-12-06-backend-libraries-19c.md): 18 errors, all real; one missed error.

R1 (a missed error): VLM-R1 (om-ai-lab/VLM-R1 90052f4) builds its `LLM(...)` inside
`with patch("vllm.worker.worker.Worker._assert_memory_footprint_increased_during_profiling", return_value=None)`.
mock imports the path's modules when the patch starts; 0.33.0 has no `vllm.worker`, so the `with` raises
ModuleNotFoundError. A dotted patch path (`mock.patch`, `mocker.patch`, `monkeypatch.setattr`) that runs through a
module the target lacks is a DC001 error now; a path whose modules all exist is left to the name rules, and the
usual guards apply (an `except ModuleNotFoundError` around it makes it a warning).
"""

from __future__ import annotations

import pytest

from scan.helpers import scan_trees

_VLLM = {
    "vllm/__init__.py": "from vllm.entrypoints.llm import LLM\n",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model):\n        self.model = model\n",
    "vllm/v1/__init__.py": "",
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/gpu_worker.py": "class Worker:\n    def determine_available_memory(self):\n        return 0\n",
}
_TRAINER = '''from unittest.mock import patch

from vllm import LLM

profiling_patch = patch(
    "vllm.worker.worker.Worker._assert_memory_footprint_increased_during_profiling",
    return_value=None,
)
with profiling_patch:
    llm = LLM(model="m")
'''


def _dc001(tmp_path, files):
    result = scan_trees(tmp_path, _VLLM, files, only=["DC001"])
    assert not result.internal_errors
    return [(f.severity, f.client.path, f.client.line, f.symbol, f.message) for f in result.findings]


def test_r1_a_patch_path_through_a_missing_module_is_an_error(tmp_path):
    [(severity, path, line, symbol, message)] = _dc001(tmp_path, {"trainer.py": _TRAINER})
    assert (severity, path, line, symbol) == ("error", "trainer.py", 5, "vllm.worker")
    # (mock resolves the path with pkgutil.resolve_name: AttributeError on the missing part, Python 3.11; batch 27d N1)
    assert "the patch looks it up when it starts and raises AttributeError" in message
    monkey = {"tests/test_w.py": 'import vllm\n\n\ndef test_w(monkeypatch):\n    monkeypatch.setattr("vllm.worker.worker.Worker.f", None)\n'}
    found = _dc001(tmp_path / "monkey", monkey)
    assert [x[:4] for x in found] == [("error", "tests/test_w.py", 5, "vllm.worker")]
    assert "raises ImportError" in found[0][4]  # monkeypatch imports it


@pytest.mark.parametrize("edit", [
    # the path the target has: `Worker` in `vllm.v1.worker.gpu_worker`
    ("vllm.worker.worker.Worker._assert_memory_footprint_increased_during_profiling",
     "vllm.v1.worker.gpu_worker.Worker.determine_available_memory"),
    # a module that exists, and a member it lacks: the name rules' question, not a missing module
    ("vllm.worker.worker.Worker._assert_memory_footprint_increased_during_profiling", "vllm.entrypoints.llm.LLM.gone"),
], ids=["a-path-it-has", "a-missing-member"])
def test_r1_twins_are_not_dc001_errors(tmp_path, edit):
    assert _dc001(tmp_path, {"trainer.py": _TRAINER.replace(*edit)}) == []


def test_r1_twin_a_guarded_patch_is_a_warning(tmp_path):
    guarded = _TRAINER.replace("profiling_patch = patch(", "try:\n    profiling_patch = patch(").replace(
        "    return_value=None,\n)\n", "        return_value=None,\n    )\n    profiling_patch.start()\n"
                                      "except ModuleNotFoundError:\n    pass\n").replace(
        '    "vllm.worker', '        "vllm.worker')
    found = _dc001(tmp_path, {"trainer.py": guarded.replace("with profiling_patch:\n    llm", "llm")})
    assert [x[0] for x in found] == ["warning"]
