"""Client files a launcher copies or mounts over vLLM's own files (genesis-vllm-patches v12.0.0's overlays, batch 16c's
JB: `-v ${OVL}/kv_cache_interface.py:/usr/.../vllm/v1/kv_cache_interface.py:ro` in its loader's docstring). An overlay
importing a name its sibling overlay adds to that module cannot be told an error: the mounted copy may define it
(`overlay.mounted_copies`, DC002 says unknown). Only the shape of a copy or a mount counts: a line naming the file, a
separator, then the release's path to a file of the same name; prose naming both, a document's relative link, and a
mounted copy that does not define the name leave the error as it is."""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/kv_cache_interface.py": "class FullAttentionSpec:\n    block_size = 16\n",
}
OVERLAY = {
    "pkg/__init__.py": "",
    "pkg/overlays/__init__.py": "",
    "pkg/overlays/kv_cache_interface.py": "class FullAttentionSpec:\n    block_size = 16\n\n\n"
                                          "class HiddenStateCacheSpec(FullAttentionSpec):\n    block_size = 32\n",
    "pkg/overlays/kv_cache_utils.py": "from vllm.v1.kv_cache_interface import FullAttentionSpec, HiddenStateCacheSpec\n",
}


def _dc002(result) -> list[str]:
    return sorted(f"{f.severity} {f.client.path}:{f.client.line}" for f in result.findings if f.rule == "DC002")


def _with(placing: str, **more) -> dict[str, str]:
    return {**OVERLAY, "pkg/launcher.py": placing, **more}


def test_a_docker_mount_in_a_docstring_makes_the_sibling_import_unknown(tmp_path):
    launcher = ('"""docker run \\\n  -v ${OVL}/kv_cache_interface.py:/usr/local/lib/python3.12/dist-packages/vllm/v1/'
                'kv_cache_interface.py:ro \\\n"""\n')
    result = scan_trees(tmp_path, VLLM, _with(launcher), only=["DC002"])
    assert _dc002(result) == []
    [unknown] = [u for u in result.unknown if u.rule == "DC002"]
    assert "pkg/overlays/kv_cache_interface.py" in unknown.message and "pkg/launcher.py:2" in unknown.message


def test_a_mount_table_and_a_copy_command_count_too(tmp_path):
    table = 'MOUNTS = {\n    "kv_cache_interface.py": "vllm/v1/kv_cache_interface.py",\n}\n'
    assert _dc002(scan_trees(tmp_path / "a", VLLM, _with(table), only=["DC002"])) == []
    script = "cp overlays/kv_cache_interface.py $SITE/vllm/v1/kv_cache_interface.py\n"
    assert _dc002(scan_trees(tmp_path / "b", VLLM, _with("", **{"pkg/install.sh": script}), only=["DC002"])) == []


def test_prose_a_relative_link_or_no_mount_leave_the_error(tmp_path):
    error = ["error pkg/overlays/kv_cache_utils.py:1"]
    prose = "# kv_cache_interface.py: adapted from vllm/v1/kv_cache_interface.py\n"
    assert _dc002(scan_trees(tmp_path / "a", VLLM, _with(prose), only=["DC002"])) == error
    link = "# see [kv_cache_interface.py](../vllm/v1/kv_cache_interface.py)\n"
    assert _dc002(scan_trees(tmp_path / "b", VLLM, _with(link), only=["DC002"])) == error
    assert _dc002(scan_trees(tmp_path / "c", VLLM, _with(""), only=["DC002"])) == error


def test_a_mounted_copy_that_lacks_the_name_leaves_the_error(tmp_path):
    launcher = '"""-v ${OVL}/kv_cache_interface.py:/site/vllm/v1/kv_cache_interface.py:ro"""\n'
    plain = {**OVERLAY, "pkg/overlays/kv_cache_interface.py": "class FullAttentionSpec:\n    block_size = 8\n"}
    result = scan_trees(tmp_path, VLLM, {**plain, "pkg/launcher.py": launcher}, only=["DC002"])
    assert _dc002(result) == ["error pkg/overlays/kv_cache_utils.py:1"]
