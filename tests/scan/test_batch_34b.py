"""Batch 34b (clients that register out-of-tree quantization methods, attention backends and custom ops,
docs/triage/2026-12-05-oot-kernels-quant-34b.md): FB1 here, FB2 and FB3 below.

FB1: turboquant-vllm (the wkin-t fork, 40c51f2) ships two smoke scripts of an unmerged vLLM pull request
(`scripts/smoke_test_file_uploads.py`, `smoke_test_scope.py`) that start with
`sys.path.insert(0, str(Path("/var/home/Alberto-Codes/Projects/vllm")))` and only then, inside a function, import
`from vllm.config import FileUploadConfig` and `vllm.entrypoints.openai.files.*`. DC001/DC002 called the eight
imports certain failures at every release (0.19.0, 0.24.0, 0.34.0); wherever that folder exists, Python imports the
checkout there, which driftcheck does not read. Below such an insert (a module-level `sys.path.insert(0, ...)` of an
absolute path literal or an environment variable that names vLLM, above any module-level import of vLLM) a use is now a
warning that names the insert. The twins keep the error: a path built from `__file__` (the client's own tree, which
is read), a relative path, a folder that does not name vLLM, an append, an insert inside a function, and an insert
below a module-level import of vLLM.
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
    'sys.path.insert(0, "/workspace/myproject")',  # a folder that does not name vLLM: a script's own project
    'sys.path.append("/tmp/driftcheck-fb1-vllm-checkout")',  # after site-packages: the installed vLLM comes first
    f"def hook():\n    {INSERT}",  # inside a function: when it runs is not known
    f"import vllm\n{INSERT}",  # the release is loaded by then: `vllm.config` comes from its own folder
], ids=["own-tree", "relative", "not-a-vllm-folder", "append", "in-a-function", "below-a-vllm-import"])
def test_fb1_twin_keeps_the_error(tmp_path, insert):
    client = edited(FB1_CLIENT, SMOKE, (INSERT, insert))
    assert [x[0] for x in _dc002(tmp_path, client)] == ["error"]


def test_fb1_twin_a_use_above_the_insert_keeps_the_error(tmp_path):
    client = edited(FB1_CLIENT, SMOKE, (INSERT, f"def early():\n    from vllm.config import FileUploadConfig\n"
                                                f"    return FileUploadConfig\n\n\n{INSERT}"))
    assert [x[0] for x in _dc002(tmp_path, client)] == ["error", "warning"]


# ----------------------------------------------------------------------------------------- FB2
# tilelang-turboquant (Sasopsy/turboquant-vllm cbef9b2) at vLLM 0.20.0, 0.24.0 and 0.34.0: `kv_cache_method.py:156`
# `self.quant_config.variant_name` in its `BaseKVCacheMethod` subclass was an unknown saying the client's
# `TileLangTQ3BitConfig` is "a class of the same kind that does not derive from" `QuantizationConfig`, and "of vLLM's
# classes, ...TileLangTQQuantizationConfig defines it too". Both are the client's, and both derive from
# `QuantizationConfig` (the 3-bit config through the client's own base). The sibling check compared `cls` with the
# client bases only (the table keeps no vLLM base), so no client class ever derived from a vLLM class for it. Now a
# client class deriving from it, directly, through its client bases or through a vLLM subclass, is no sibling: the
# member is one a subclass defines (the DC006 warning). Twin: a client class of the same kind that does not derive
# from it keeps the unknown.

FB2_VLLM, FB2_CLIENT = plugin_shape("FB2")
CONFIG = "plug/quant_config.py"


def _dc006(tmp_path, client_files):
    result = scan_trees(tmp_path, FB2_VLLM, client_files, only=["DC006"])
    return [(f.severity, f.client.path, f.client.line) for f in result.findings], \
        [u.message for u in result.unknown if u.rule == "DC006"]


def test_fb2_member_of_a_subclass_through_the_clients_own_base_is_no_siblings_question(tmp_path):
    findings, unknown = _dc006(tmp_path, FB2_CLIENT)
    assert findings == [("warning", "plug/kv_cache_method.py", 8)]
    assert unknown == []


def test_fb2_a_direct_subclass_is_no_sibling_either(tmp_path):
    client = edited(FB2_CLIENT, CONFIG, ("class Plug3BitQuantizationConfig(PlugQuantizationConfig):",
                                         "class Plug3BitQuantizationConfig(QuantizationConfig):"),
                    ("    variant_name = \"tq_3bit\"", "    variant_name = \"tq_3bit\"\n\n"
                                                       "    def get_quant_method(self, layer, prefix: str):\n"
                                                       "        return PlugKVCacheMethod(self)"))
    findings, unknown = _dc006(tmp_path, client)
    assert [f[0] for f in findings] == ["warning"] and unknown == []


def test_fb2_twin_a_class_of_the_same_kind_outside_the_family_keeps_the_unknown(tmp_path):
    client = {**FB2_CLIENT, "plug/plain.py": "import vllm\n\n\nclass PlainQuantizationConfig:\n"
                                             "    variant_name = \"plain\"\n"}
    findings, unknown = _dc006(tmp_path, client)
    assert findings == []
    assert len(unknown) == 1 and "`plug.plain.PlainQuantizationConfig`, a class of the same kind that does not " \
                                 "derive from it" in unknown[0]


# ----------------------------------------------------------------------------------------- FB3
# vllm-fp8kv (nickus/vllm-fp8kv 6746463) at vLLM 0.25.0 and 0.28.0: `vllm_fp8kv/backend_patch.py:162` `from
# vllm.v1.attention.backends.mla import triton_mla_sparse`, `verify/engine_boot.py:120` (the same) and
# `verify/rebench.py:31` `from vllm.v1.attention.ops.triton_mla_sparse_kernel import ...` were DC002/DC001 errors. Its
# `setup.sh` binds `SITE` to the installed vLLM folder (`vllm.__file__`) and copies those files, from a clone of vLLM
# at an unmerged pull request, into it (`for f in ...; do cp "vllm-src/vllm/$f" "$SITE/$f"; done`): the modules
# exist wherever that step ran. They are now warnings that name the copy line (launcher_copies.py). Twins: a copy to
# another folder, a variable that is not the package's folder, a loop that does not list the module, and the same
# commands in a document rather than a shell script keep the errors.

FB3_VLLM, FB3_CLIENT = plugin_shape("FB3")
SETUP = "setup.sh"


def _missing(tmp_path, client_files):
    result = scan_trees(tmp_path, FB3_VLLM, client_files, only=["DC001", "DC002"])
    return sorted((f.severity, f.rule, f.client.path, f.client.line, f.message) for f in result.findings)


def test_fb3_modules_the_setup_copies_into_the_vllm_folder_are_warnings(tmp_path):
    found = _missing(tmp_path, FB3_CLIENT)
    assert [x[:4] for x in found] == [("warning", "DC001", "fp8kv/rebench.py", 1),
                                      ("warning", "DC001", "main.py", 5),
                                      ("warning", "DC002", "fp8kv/backend_patch.py", 3)]
    assert all("the client's setup copies a file to" in x[4] and "(setup.sh:12)" in x[4] for x in found)


@pytest.mark.parametrize("edit", [
    ('cp "../pr_checkout/vllm/$f" "$SITE/$f"', 'cp "../pr_checkout/vllm/$f" "$HOME/plugins/$f"'),
    ("SITE=$(python3 -c 'import vllm, os; print(os.path.dirname(vllm.__file__))')", "SITE=/opt/plugins"),
], ids=["another-folder", "not-the-package-folder"])
def test_fb3_twin_a_copy_elsewhere_keeps_the_errors(tmp_path, edit):
    found = _missing(tmp_path, edited(FB3_CLIENT, SETUP, edit))
    assert [x[:2] for x in found] == [("error", "DC001"), ("error", "DC001"), ("error", "DC002")]


def test_fb3_twin_a_module_the_loop_does_not_list_keeps_the_error(tmp_path):
    client = edited(FB3_CLIENT, SETUP, ("    v1/attention/backends/mla/triton_mla_sparse.py \\\n", ""))
    assert [x[:2] for x in _missing(tmp_path, client)] == [("error", "DC001"), ("error", "DC002"), ("warning", "DC001")]


def test_fb3_twin_the_commands_in_a_document_keep_the_errors(tmp_path):
    client = {**{k: v for k, v in FB3_CLIENT.items() if k != SETUP}, "SETUP.md": FB3_CLIENT[SETUP]}
    assert [x[0] for x in _missing(tmp_path, client)] == ["error", "error", "error"]
