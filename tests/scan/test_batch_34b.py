"""Batch 34b (clients that register out-of-tree quantization methods, attention backends and custom ops,
docs/triage/2026-12-05-oot-kernels-quant-34b.md).

FB1: turboquant-vllm (the wkin-t fork, 40c51f2) ships two smoke scripts of an unmerged vLLM pull request
(`scripts/smoke_test_file_uploads.py`, `smoke_test_scope.py`) that start with
`sys.path.insert(0, str(Path("/var/home/Alberto-Codes/Projects/vllm")))` and only then, inside a function, import
`from vllm.config import FileUploadConfig` and `vllm.entrypoints.openai.files.*`. DC001/DC002 called the eight
imports certain failures at every release (0.19.0, 0.24.0, 0.34.0); wherever that folder exists, Python imports the
checkout there, which driftcheck does not read. Below such an insert (a module-level `sys.path.insert(0, ...)` of an
absolute path literal or an environment variable, above any module-level import of vLLM) a use is now a warning that
names the insert. The twins keep the error: a path built from `__file__` (the client's own tree, which is read), a
relative path, an append, an insert inside a function, and an insert below a module-level import of vLLM.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

FB1_VLLM, FB1_CLIENT = plugin_shape("FB1")
SMOKE = "scripts/smoke_upload.py"
INSERT = 'sys.path.insert(0, str(Path("/tmp/driftcheck-fb1-vllm-checkout")))'


def _dc002(tmp_path, client_files):
    result = scan_trees(tmp_path, FB1_VLLM, client_files, only=["DC002"])
    return [(f.severity, f.client.path, f.client.line, f.symbol, f.message) for f in result.findings]


def test_fb1_import_below_an_outside_checkout_insert_is_a_warning(tmp_path):
    found = _dc002(tmp_path, FB1_CLIENT)
    assert [x[:4] for x in found] == [("warning", SMOKE, 12, "vllm.config.FileUploadConfig")]
    assert "puts `/tmp/driftcheck-fb1-vllm-checkout` first on `sys.path`" in found[0][4]
    assert "below line 8" in found[0][4]


def test_fb1_an_environment_variable_is_a_folder_outside_the_client_too(tmp_path):
    client = edited(FB1_CLIENT, SMOKE, (INSERT, 'import os\nsys.path.insert(0, os.environ["VLLM_CHECKOUT"])'))
    assert [x[0] for x in _dc002(tmp_path, client)] == ["warning"]


@pytest.mark.parametrize("insert", [
    "sys.path.insert(0, str(Path(__file__).resolve().parent.parent))",  # the client's own tree, which is read
    'sys.path.insert(0, "vendor")',  # a relative path
    'sys.path.append("/tmp/driftcheck-fb1-vllm-checkout")',  # after site-packages: the installed vLLM comes first
    f"def hook():\n    {INSERT}",  # inside a function: when it runs is not known
    f"import vllm\n{INSERT}",  # the release is loaded by then: `vllm.config` comes from its own folder
], ids=["own-tree", "relative", "append", "in-a-function", "below-a-vllm-import"])
def test_fb1_twin_keeps_the_error(tmp_path, insert):
    client = edited(FB1_CLIENT, SMOKE, (INSERT, insert))
    assert [x[0] for x in _dc002(tmp_path, client)] == ["error"]


def test_fb1_twin_a_use_above_the_insert_keeps_the_error(tmp_path):
    client = edited(FB1_CLIENT, SMOKE, (INSERT, f"def early():\n    from vllm.config import FileUploadConfig\n"
                                                f"    return FileUploadConfig\n\n\n{INSERT}"))
    assert [x[0] for x in _dc002(tmp_path, client)] == ["error", "warning"]

