"""Root causes of false errors from batch 16a (real vLLM clients taken from GitHub,
docs/triage/2026-12-04-github-clients-16a.md): the shape that runs (no error), and the same shape where the code
really fails on the target, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import line_of, scan_trees

# ----------------------------------------------------------------------------------------- HA
# vllm-metax v0.14.0 (MetaX-MACA/vLLM-metax @ v0.14.0, "aligned with vLLM v0.14.0"):
# vllm_metax/patch/transformers_utils/configs/config.py:18-19 reads and extends `configs_module.__all__`, which vLLM
# 0.14.0's vllm/transformers_utils/configs/__init__.py:58 assigns (beside a closed module `__getattr__`). The summary
# kept a module's `__all__` only as the names `from m import *` takes, never as a binding of the module.
LAZY = """
import importlib

_CLASS_TO_MODULE = {"EAGLEConfig": "vllm.configs.eagle"}
{all}

def __getattr__(name):
    if name in _CLASS_TO_MODULE:
        return getattr(importlib.import_module(_CLASS_TO_MODULE[name]), name)
    raise AttributeError(name)
"""
CLIENT = {"pkg/__init__.py": "", "pkg/config.py": """
import vllm.configs as configs_module


def patch():
    if "Mine" not in configs_module.__all__:
        configs_module.__all__.append("Mine")
"""}


def _vllm(all_line: str) -> dict[str, str]:
    return {"vllm/configs/__init__.py": LAZY.replace("{all}", all_line),
            "vllm/configs/eagle.py": "class EAGLEConfig:\n    pass\n"}


def _dc002(result) -> list[tuple[int, str]]:
    return sorted((f.client.line, f.severity) for f in result.findings if f.rule == "DC002")


def test_ha_a_literal_all_is_a_module_attribute(tmp_path):
    assert _dc002(scan_trees(tmp_path, _vllm('__all__ = ["EAGLEConfig"]'), CLIENT)) == []


def test_ha_an_all_built_from_other_names_is_a_module_attribute_too(tmp_path):
    # no string list to read (`from m import *` falls back to the public names), but the module has `__all__`
    assert _dc002(scan_trees(tmp_path, _vllm("__all__ = sorted(_CLASS_TO_MODULE)"), CLIENT)) == []


def test_ha_a_module_without_all_still_fails(tmp_path):
    # the same client against a release whose module never assigns `__all__`: its closed __getattr__ raises
    text = CLIENT["pkg/config.py"].lstrip("\n")
    lines = [line_of(text, "not in configs_module.__all__"), line_of(text, "__all__.append")]
    assert _dc002(scan_trees(tmp_path, _vllm(""), CLIENT)) == [(n, "error") for n in lines]


def test_ha_all_of_a_star_import_still_takes_only_its_names(tmp_path):
    # binding `__all__` does not make it (or anything else) an exported name of `from m import *`
    vllm = {"vllm/a.py": '__all__ = ["x"]\nx = 1\ny = 2\n', "vllm/b.py": "from vllm.a import *\n"}
    client = {"pkg/__init__.py": "", "pkg/use.py": "from vllm.b import x\nfrom vllm.b import y\n"}
    assert _dc002(scan_trees(tmp_path, vllm, client)) == [(2, "error")]
