"""DC120 patch-anchor-gone: a client's patch script that checks for text in a vLLM file and raises without it.

The shape is DS4_SM120_Flash_VLLM_Experiment's `docker/patch_vllm_deepseekv4.py` (phaelon74 70b612d, batch 19a),
reduced: on vLLM 0.33.0 its `platforms/cuda.py` check finds neither the line it replaces nor the patched line.
"""

from __future__ import annotations

import pytest

from scan.helpers import scan_trees

CUDA = "vllm/platforms/cuda.py"
_OLD_CUDA = ("class CudaPlatform:\n    @classmethod\n    def supports_deep_gemm(cls):\n"
             "        return cls.is_device_capability(90) or cls.is_device_capability_family(100)\n")
_NEW_CUDA = ("class CudaPlatform:\n    @classmethod\n    def supports_deep_gemm(cls):\n"
             "        return cls.has_device_capability(90)\n")
_SCRIPT = '''from pathlib import Path


def patch_cuda_platform_deep_gemm_sm120() -> None:
    path = Path("/usr/local/lib/python3.12/dist-packages/vllm/platforms/cuda.py")
    source = path.read_text()
    old = "        return cls.is_device_capability(90) or cls.is_device_capability_family(100)\\n"
    new = "        return cls.is_device_capability(90) or cls.is_device_capability(120)\\n"
    if old not in source:
        if "cls.is_device_capability(120)" in source:
            return
        raise RuntimeError(f"Could not patch DeepGEMM SM120 support in {path}")
    path.write_text(source.replace(old, new, 1))


patch_cuda_platform_deep_gemm_sm120()
'''
PATCHER = "docker/patch_vllm.py"


def _dc120(tmp_path, cuda_text: str, script: str):
    vllm = {"vllm/__init__.py": "", "vllm/platforms/__init__.py": "", CUDA: cuda_text}
    result = scan_trees(tmp_path, vllm, {PATCHER: script, "bench.py": "import vllm\n"}, only=["DC120"])
    assert not result.internal_errors
    return [(f.severity, f.client.path, f.client.line, f.details.get("test_line"), f.symbol) for f in result.findings]


def test_a_gone_anchor_is_an_error_at_the_raise(tmp_path):
    assert _dc120(tmp_path, _NEW_CUDA, _SCRIPT) == [("error", PATCHER, 12, 9, CUDA)]


def test_the_release_the_script_was_written_for_is_quiet(tmp_path):
    assert _dc120(tmp_path, _OLD_CUDA, _SCRIPT) == []


def test_a_file_already_patched_returns_before_the_raise(tmp_path):
    patched = _NEW_CUDA.replace("cls.has_device_capability(90)", "cls.is_device_capability(120)")
    assert _dc120(tmp_path, patched, _SCRIPT) == []


def test_main_under_the_name_test_runs_the_patch(tmp_path):
    script = _SCRIPT.replace("\n\npatch_cuda_platform_deep_gemm_sm120()\n",
                             "\n\ndef main():\n    patch_cuda_platform_deep_gemm_sm120()\n\n\n"
                             "if __name__ == \"__main__\":\n    main()\n")
    assert _dc120(tmp_path, _NEW_CUDA, script) == [("error", PATCHER, 12, 9, CUDA)]


def test_an_elif_chain_is_followed(tmp_path):
    script = _SCRIPT.replace('''    if old not in source:
        if "cls.is_device_capability(120)" in source:
            return
        raise''', '''    if old in source and "is_device_capability(120)" not in source:
        source = source.replace(old, new, 1)
    elif "is_device_capability(120)" not in source:
        raise''')
    assert _dc120(tmp_path, _NEW_CUDA, script) == [("error", PATCHER, 12, 9, CUDA)]


@pytest.mark.parametrize("edit", [
    ("\n\npatch_cuda_platform_deep_gemm_sm120()\n", "\n"),  # never called
    ("    if old not in source:", "    source = source.replace('a', 'b')\n    if old not in source:"),  # the text changed
    ("    if old not in source:", "    if old not in source and check(source):"),  # a test driftcheck cannot decide
    ("vllm/platforms/cuda.py", "vllm/platforms/rocm.py"),  # a file the release lacks: another question
    ("    source = path.read_text()\n", "    source = path.read_text()\n    for _ in range(2):\n        pass\n"),  # a loop
], ids=["not-called", "source-rebound", "undecided-test", "no-such-file", "a-loop-first"])
def test_what_driftcheck_cannot_follow_is_no_finding(tmp_path, edit):
    assert _dc120(tmp_path, _NEW_CUDA, _SCRIPT.replace(*edit)) == []


def test_an_anchor_another_patch_of_the_client_may_have_put_there_is_no_evidence(tmp_path):
    # stella's hotpatch_*.py look for the call their patch_scheduler.py inserts ("run AFTER patch_scheduler.py")
    first = ('from pathlib import Path\n\n\ndef patch_first():\n    path = Path("/site/vllm/platforms/cuda.py")\n'
             '    source = path.read_text()\n    path.write_text(source + "        return cls.is_device_capability(90) or '
             'cls.is_device_capability_family(100)\\n")\n\n\npatch_first()\n')
    vllm = {"vllm/__init__.py": "", "vllm/platforms/__init__.py": "", CUDA: _NEW_CUDA}
    result = scan_trees(tmp_path, vllm, {PATCHER: _SCRIPT, "docker/first.py": first, "bench.py": "import vllm\n"},
                        only=["DC120"])
    assert result.findings == []
    diff = ("--- a/vllm/platforms/cuda.py\n+++ b/vllm/platforms/cuda.py\n@@ -1,1 +1,2 @@\n class CudaPlatform:\n"
            "+        return cls.is_device_capability(90) or cls.is_device_capability_family(100)\n")
    result = scan_trees(tmp_path / "diff", vllm, {PATCHER: _SCRIPT, "patches/sm120.patch": diff, "bench.py": "import vllm\n"},
                        only=["DC120"])
    assert result.findings == []
