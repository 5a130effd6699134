"""Where a client's modules get their names: Python's names, whatever the client is given as. A worker extension
path (`pkg.ext.Ext`) and the client's own package (read, not "code driftcheck does not read") depend on it.
Seen in triage batch 7: a package folder given as --client (`verl/`, `vllm_ascend/`) lost its package prefix, and
openrlhf's wheels, which ship the package in `<dist>.data/purelib/`, gained that folder as a prefix."""

from __future__ import annotations

import zipfile

from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import MINIVLLM, write_tree

EXT = {
    "pkg/__init__.py": "",
    "pkg/ext.py": "class Ext:\n    def hello(self):\n        return 1\n",
    "pkg/run.py": """
        from vllm import LLM

        def go():
            llm = LLM(model="m", worker_extension_cls="pkg.ext.Ext")
            llm.collective_rpc("hello")
            llm.collective_rpc("missing_method")
    """,
}


def _scan(spec: str, tmp_path):
    cache = tmp_path / "cache"
    client = resolve_client(spec, cache)
    result = scan(resolve_vllm(str(MINIVLLM), cache), [client], ScanOptions(cache_dir=cache, use_cache=False, only=["DC007"]))
    return client, result


def _rpc_verdicts(result):
    return sorted((f.symbol, f.severity) for f in result.findings), [u.message for u in result.unknown]


def test_a_package_folder_keeps_its_package_name(tmp_path):
    root = write_tree(tmp_path / "checkout", EXT)
    whole, r_whole = _scan(str(root), tmp_path / "a")
    package, r_package = _scan(str(root / "pkg"), tmp_path / "b")
    assert package.prefixes == ["pkg"]
    assert sorted({f.client.path for f in r_package.findings}) == ["pkg/run.py"]
    assert _rpc_verdicts(r_package) == _rpc_verdicts(r_whole)
    findings, unknown = _rpc_verdicts(r_package)
    assert unknown == [] and len(findings) == 1 and "missing_method" in (findings[0][0] or "")


def test_a_package_folder_reads_its_requirement_from_beside_it(tmp_path):
    root = write_tree(tmp_path / "site", {
        **EXT,
        "pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\nRequires-Dist: vllm==0.16.0\n",
        "pkg-1.0.dist-info/top_level.txt": "pkg\n",
        "other-2.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: other\nVersion: 2.0\nRequires-Dist: vllm==0.9.0\n",
    })
    target = resolve_client(str(root / "pkg"), tmp_path / "cache")
    assert (target.name, target.version, target.requires) == ("pkg", "1.0", ["vllm==0.16.0"])
    lone = write_tree(tmp_path / "lone", {"mine/__init__.py": "", "mine/a.py": "import vllm\n",
                                          "other-2.0.dist-info/METADATA": "Name: other\nVersion: 2.0\nRequires-Dist: vllm==0.9.0\n"})
    assert resolve_client(str(lone / "mine"), tmp_path / "cache").requires == []  # never another distribution's


def test_a_wheel_that_ships_its_code_in_data_purelib_is_read_as_installed(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for rel, text in EXT.items():
            import textwrap

            zf.writestr(f"pkg-1.0.data/purelib/{rel}", textwrap.dedent(text).lstrip("\n"))
        zf.writestr("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    target, result = _scan(str(wheel), tmp_path)
    assert target.prefixes == ["pkg"]
    assert sorted({f.client.path for f in result.findings}) == ["pkg/run.py"]
    findings, unknown = _rpc_verdicts(result)
    assert unknown == [] and len(findings) == 1
