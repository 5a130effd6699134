"""Root causes of false errors from the fifteenth batch (real vLLM clients taken from GitHub,
docs/triage/2026-12-03-github-clients-15.md): the shape that runs (a warning at most), and the same shape where the
code really runs on the target, which must stay an error.
"""

from __future__ import annotations

import textwrap

from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- GA
# vllm-gcu 0.9.2 (EnflameTechnology/vllm-gcu @ v0.9.2, `vllm==0.9.2`): vllm_gcu/patch/__init__.py loads its per-release
# patch packages with `if is_vllm_equal("0.8.0"): from vllm_gcu.patch import patch_0_8_0`, where `is_vllm_equal` is a
# helper of vllm_gcu/utils.py comparing vLLM's base version with its argument for equality
VLLM = {"vllm/__init__.py": "__version__ = '0.99.0'\n", "vllm/core.py": "def present():\n    return 1\n"}
COPY = "from vllm.core import gone\n"  # the patch for an old release imports a name this vLLM lacks


def _utils(compare: str) -> str:
    return textwrap.dedent(f"""
        from packaging import version


        def is_vllm_equal(target: str) -> bool:
            try:
                import vllm
                vllm_base_version = version.parse(str(vllm.__version__)).base_version
                target_base_version = version.parse(target).base_version
                return vllm_base_version {compare} target_base_version
            except Exception:
                return False
    """)


def _client(compare: str = "==", test: str = 'is_vllm_equal("0.8.0")', own: bool = False) -> dict[str, str]:
    helper = _utils(compare) if own else ""
    imports = "" if own else "from pkg.utils import is_vllm_equal\n"
    return {"pkg/__init__.py": "", "pkg/utils.py": _utils(compare), "pkg/patch_0_8_0/__init__.py": "import pkg.patch_0_8_0.fc\n",
            "pkg/patch_0_8_0/fc.py": COPY,
            "pkg/patch/__init__.py": f"{imports}{helper}\nif {test}:\n    from pkg import patch_0_8_0  # noqa\n"}


def _severities(result) -> dict[str, str]:
    return {f.client.path: f.severity for f in result.findings if f.rule in ("DC001", "DC002")}


def test_ga_a_release_equality_helper_of_another_file_dispatches_the_patch(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _client())) == {"pkg/patch_0_8_0/fc.py": "warning"}


def test_ga_the_helper_defined_in_the_same_file_and_an_or_of_releases(tmp_path):
    test = 'is_vllm_equal("0.8.0") or is_vllm_equal("0.8.1")'
    assert _severities(scan_trees(tmp_path, VLLM, _client(test=test, own=True))) == {"pkg/patch_0_8_0/fc.py": "warning"}


def test_ga_an_ordering_helper_loads_the_patch_on_every_newer_release(tmp_path):
    # `return base >= target`: "at least 0.8.0" holds on the target too, so the patch runs there
    assert _severities(scan_trees(tmp_path, VLLM, _client(compare=">="))) == {"pkg/patch_0_8_0/fc.py": "error"}


def test_ga_a_negated_helper_call_loads_the_patch_everywhere_else(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _client(test='not is_vllm_equal("0.8.0")'))) == {
        "pkg/patch_0_8_0/fc.py": "error"}
