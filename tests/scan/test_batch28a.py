"""Batch 28a (vLLM plugins at their newest PyPI release, scanned at the vLLM each declares and at 0.33.0,
docs/triage/2026-12-05-pypi-newest-28a.md).

PA1: arctic-inference 0.3.0 (sdist) at vLLM 0.33.0. Its general plugin `arctic_inference_plugin()` raises
`if not envs.ARCTIC_INFERENCE_SKIP_VERSION_CHECK and not plugin_version_compatible()`, and only after that imports
`.patches` (which imports the model runner, the attention patches, the LM-head patch, SwiftKV). The predicate lives
in another module (`utils.py`): `want = get_compatible_vllm_version()` (a function returning the module constant
`VLLM_PATCH_VERSION = "0.26.0"`), `return want is not None and vllm.__version__ == want`. On any release but 0.26.0
what the patches import runs only if the user sets the bypass variable: a use under a version check, a warning at
most. On 0.26.0 itself the check passes and the findings stay errors (the twins).
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, plugin_shape, scan_trees

UTILS = "plug/utils.py"
PLUGIN = "plug/plugin.py"


def _dc002(tmp_path: Path, vllm: dict[str, str], client: dict[str, str]) -> list[tuple[str, str, int]]:
    result = scan_trees(tmp_path, vllm, client, only=["DC002"])
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings)


def test_pa1_patches_past_an_entry_point_refusing_other_releases_are_warnings(tmp_path):
    vllm, client = plugin_shape("PA1")
    result = scan_trees(tmp_path, vllm, client, only=["DC002"])
    assert [(f.severity, f.client.path, f.client.line) for f in result.findings] == [("warning", "plug/runner.py", 1)]
    assert "loaded only under a vLLM version check (plug/plugin.py:12)" in result.findings[0].message


def test_pa1_twin_pinned_release_is_the_target_stays_error(tmp_path):
    # on the release the patches target the check passes: the patches run and the missing name fails
    vllm, client = plugin_shape("PA1")
    client = edited(client, UTILS, ('PATCH_VERSION = "0.98.0"', 'PATCH_VERSION = "0.99.0"'))
    assert _dc002(tmp_path, vllm, client) == [("error", "plug/runner.py", 1)]


def test_pa1_twin_check_that_only_warns_stays_error(tmp_path):
    vllm, client = plugin_shape("PA1")
    client = edited(client, PLUGIN, ('        raise RuntimeError(f"plug needs', '        print(f"plug needs'))
    assert _dc002(tmp_path, vllm, client) == [("error", "plug/runner.py", 1)]


def test_pa1_twin_predicate_the_target_does_not_decide_stays_error(tmp_path):
    # the pin is read from the environment: nothing says the target is refused
    vllm, client = plugin_shape("PA1")
    client = edited(client, UTILS, ('    return PATCH_VERSION\n',
                                    '    import os\n\n    return os.environ.get("PLUG_VLLM", PATCH_VERSION)\n'))
    assert _dc002(tmp_path, vllm, client) == [("error", "plug/runner.py", 1)]


def test_pa1_twin_pin_rebound_elsewhere_stays_error(tmp_path):
    vllm, client = plugin_shape("PA1")
    client = edited(client, UTILS, ('def get_compatible_version():\n',
                                    'def set_compatible_version(v):\n    global PATCH_VERSION\n    PATCH_VERSION = v\n\n\n'
                                    'def get_compatible_version():\n'))
    assert _dc002(tmp_path, vllm, client) == [("error", "plug/runner.py", 1)]


def test_pa1_twin_patches_also_imported_unguarded_stays_error(tmp_path):
    vllm, client = plugin_shape("PA1")
    client = {**client, "plug/server.py": "import vllm\n\nfrom plug.runner import execute_model\n"}
    assert _dc002(tmp_path, vllm, client) == [("error", "plug/runner.py", 1)]


def test_pa1_twin_predicate_inverted_stays_error(tmp_path):
    # `if ... and version_compatible(): raise`: the target (not the pin) passes the check, the patches run
    vllm, client = plugin_shape("PA1")
    client = edited(client, PLUGIN, ("and not version_compatible():", "and version_compatible():"))
    assert _dc002(tmp_path, vllm, client) == [("error", "plug/runner.py", 1)]
