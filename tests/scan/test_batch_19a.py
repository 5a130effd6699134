"""Batch 19a (GitHub clients no batch had read: rdna4-vllm, dspark-vllm-gx10, DS4_SM120_Flash_VLLM_Experiment,
spark-vllm-mxfp4-docker; docs/triage/2026-12-06-unseen-github-19a.md): 21 false errors, three causes. The runnable
shapes are tests/fixtures/plugin_shapes/NG1_ to NG3_; here, their twins where the code really fails keep the error.

NG1 (14 errors, rdna4-vllm at 0.22.0): a folder named `vllm` below the client's root counted as laid over vLLM's package
only where one of its files replaces a release file; `zaya/overlay/vllm/` adds only new files at 0.22.0 (at 0.33.0 one
of them is a release file, and the errors went). Its files import each other by vLLM's names: they were written to run
as the package (overlay.py).
NG2 (3 errors): a Dockerfile's `RUN install -D .../het_tp.py /app/vllm/vllm/distributed/het_tp.py` puts a module into
vLLM's package folder; only shell scripts' copies below a variable bound to that folder were read (launcher_copies.py).
NG3 (1 error, DS4_SM120 at 0.33.0): a Python script that rewrites a vLLM file's text (`str.replace` + `write_text`) and
defines the name it inserts; the name exists where the script ran, which cannot be known (text_patchers.py): unknown.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

NG1_VLLM, NG1_CLIENT = plugin_shape("NG1")
NG2_VLLM, NG2_CLIENT = plugin_shape("NG2")
NG3_VLLM, NG3_CLIENT = plugin_shape("NG3")
OVERLAY = "zaya/overlay/vllm/model_executor/layers/quantization/"


def _found(tmp_path, vllm_files, client_files, only=("DC001", "DC002")):
    result = scan_trees(tmp_path, vllm_files, client_files, only=list(only))
    assert not result.internal_errors
    out = [(f.severity, f.rule, f.client.path, f.client.line) for f in result.findings]
    out += [("unknown", u.rule, u.client.path, u.client.line) for u in result.unknown]
    return sorted(out), result


# ----------------------------------------------------------------------------------------- NG1
def test_ng1_twin_the_overlay_without_the_module_its_file_imports_keeps_the_error(tmp_path):
    client = {k: v for k, v in NG1_CLIENT.items() if not k.endswith("rxf_kernels.py")}
    found, _ = _found(tmp_path, NG1_VLLM, client)
    assert ("error", "DC001", OVERLAY + "rxf.py", 3) in found


def test_ng1_twin_a_folder_inside_a_client_package_is_the_clients_own(tmp_path):
    # `zaya/overlay/__init__.py`: the folder is imported as `zaya.overlay.vllm`, never copied over vLLM
    client = {**NG1_CLIENT, "zaya/__init__.py": "", "zaya/overlay/__init__.py": ""}
    found, _ = _found(tmp_path, NG1_VLLM, client)
    assert ("error", "DC001", OVERLAY + "rxf.py", 3) in found


# ----------------------------------------------------------------------------------------- NG2
INSTALL = "install -D /tmp/hettp/het_tp.py /app/vllm/vllm/distributed/het_tp.py"


def test_ng2_the_dockerfile_install_is_a_warning_naming_the_line(tmp_path):
    found, result = _found(tmp_path, NG2_VLLM, NG2_CLIENT)
    assert found == [("warning", "DC002", "use_het.py", 2)]
    assert "(Dockerfile:6)" in result.findings[0].message


def test_ng2_a_literal_site_packages_path_and_a_dockerfile_copy_are_read(tmp_path):
    site = edited(NG2_CLIENT, "Dockerfile", (INSTALL, "cp /tmp/hettp/het_tp.py /usr/lib/python3/dist-packages/vllm/het_tp.py"))
    site = {**site, "use_het.py": "from vllm import het_tp\n"}
    assert _found(tmp_path / "site", NG2_VLLM, site)[0] == [("warning", "DC002", "use_het.py", 1)]
    copy = {**NG2_CLIENT, "Dockerfile": "FROM x\nCOPY patches/het_tp.py /opt/venv/lib/python3.12/site-packages/vllm/distributed/\n"
                                         "COPY patches/het_tp.py /opt/venv/lib/python3.12/site-packages/vllm/distributed/het_tp.py\n"}
    assert _found(tmp_path / "copy", NG2_VLLM, copy)[0] == [("warning", "DC002", "use_het.py", 2)]


@pytest.mark.parametrize("client", [
    # a folder of the checkout the release has no package for: not vLLM's package folder
    edited(NG2_CLIENT, "Dockerfile", (INSTALL, INSTALL.replace("/vllm/distributed/", "/vllm/nothere/"))),
    # no folder named like the package: a plugin folder of the image's
    edited(NG2_CLIENT, "Dockerfile", (INSTALL, "install -D /tmp/hettp/het_tp.py /opt/plugins/distributed/het_tp.py")),
    # the same lines in a document: nothing runs them
    {**{k: v for k, v in NG2_CLIENT.items() if k != "Dockerfile"}, "INSTALL.md": NG2_CLIENT["Dockerfile"]},
], ids=["no-such-package", "another-folder", "document"])
def test_ng2_twins_another_folder_or_a_document_keep_the_error(tmp_path, client):
    assert _found(tmp_path, NG2_VLLM, client)[0] == [("error", "DC002", "use_het.py", 2)]


# ----------------------------------------------------------------------------------------- NG3
PATCHER = "docker/patch_vllm.py"


def test_ng3_a_name_a_script_writes_into_the_module_is_unknown_naming_the_script(tmp_path):
    found, result = _found(tmp_path, NG3_VLLM, NG3_CLIENT)
    assert found == [("unknown", "DC002", "bench.py", 2)]
    assert "client's script (docker/patch_vllm.py:17) rewrites vllm/logger.py" in result.unknown[0].message


@pytest.mark.parametrize("edit", [
    ("    path.write_text(source)\n", "    print(source)\n"),  # reads the file, writes nothing back
    ('SITE / "vllm/logger.py"', 'SITE / "vllm/logging_utils.py"'),  # a file the release lacks
    ("fast_prefill_helper", "slow_prefill_helper"),  # the script never defines the name imported
], ids=["no-write", "other-file", "other-name"])
def test_ng3_twins_keep_the_error(tmp_path, edit):
    assert _found(tmp_path, NG3_VLLM, edited(NG3_CLIENT, PATCHER, edit))[0] == [("error", "DC002", "bench.py", 2)]
