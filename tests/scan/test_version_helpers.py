"""A version check behind a helper (`cross_file_guards.imported_version_aliases`, `version_checks.version_aliases`):
oumi 0.9 computes `_VLLM_V0_12 = is_vllm_v0_12_or_later()` from a helper of another file that compares
`importlib.metadata.version("vllm")` with "0.12.0" (batch 12b's C; shape DZ). A test on such a name asks which vLLM
runs, so what its branch uses is a warning at most; a helper that compares no release keeps its branch checked."""

from __future__ import annotations

import pytest

from scan.helpers import scan_trees

VLLM = {"vllm/__init__.py": "", "vllm/entrypoints/__init__.py": "",
        "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model):\n        self.model = model\n"}

HELPER = '''
import importlib.metadata
from packaging import version


def get_vllm_version():
    return importlib.metadata.version("vllm")


def is_vllm_v0_12_or_later() -> bool:
    vllm_version = get_vllm_version()
    return version.parse(vllm_version) >= version.parse("0.12.0")


def is_fast_mode() -> bool:
    return get_mode() == "fast"
'''


def _engine(imported: str, flag: str) -> str:
    return f'''
from vllm.entrypoints.llm import LLM
{imported}

_FLAG = {flag}()


def build(model, tokenizer):
    llm = LLM(model)
    if not _FLAG:
        llm.set_tokenizer(tokenizer)
    return llm
'''


def _severity(tmp_path, files) -> str:
    result = scan_trees(tmp_path, VLLM, {"pkg/__init__.py": "", **files}, version="0.23.0")
    [finding] = [f for f in result.findings if f.client.path == "pkg/engine.py"]
    return finding.severity


@pytest.mark.parametrize("imported, flag", [
    ("from pkg.utils.packaging import is_vllm_v0_12_or_later", "is_vllm_v0_12_or_later"),
    ("from .utils.packaging import is_vllm_v0_12_or_later as newer", "newer"),
])
def test_a_helper_of_a_file_without_vllm_that_compares_the_version(tmp_path, imported, flag):
    files = {"pkg/utils/__init__.py": "", "pkg/utils/packaging.py": HELPER, "pkg/engine.py": _engine(imported, flag)}
    assert _severity(tmp_path, files) == "warning"


def test_the_helper_in_the_same_file(tmp_path):
    assert _severity(tmp_path, {"pkg/engine.py": HELPER + _engine("", "is_vllm_v0_12_or_later")}) == "warning"


def test_a_helper_that_compares_no_release_keeps_the_branch_checked(tmp_path):
    files = {"pkg/utils/__init__.py": "", "pkg/utils/packaging.py": HELPER,
             "pkg/engine.py": _engine("from pkg.utils.packaging import is_fast_mode", "is_fast_mode")}
    assert _severity(tmp_path, files) == "error"
