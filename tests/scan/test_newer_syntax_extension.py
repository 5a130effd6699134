"""A worker extension named in a client file this Python cannot parse (GE: AReaL 0.5.3's cli_args.py has a PEP 695
function): its plain string default is read from the text, so an rpc to a method the extension defines is no error,
and one to a method it lacks still is."""

from __future__ import annotations

import shutil
from pathlib import Path

from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

CASE = Path(__file__).resolve().parent.parent / "fixtures" / "newer_syntax" / "GE_worker_extension_named_in_a_py312_file"


def _dc007(root: Path, tmp_path: Path) -> list[str]:
    result = scan(resolve_vllm(str(root / "vllm_src"), tmp_path), [resolve_client(str(root / "client"), tmp_path)],
                  ScanOptions(cache_dir=tmp_path, use_cache=False))
    return [f.severity for f in result.findings if f.rule == "DC007"]


def test_the_extension_named_in_an_unparsable_file_serves_its_methods(tmp_path):
    assert _dc007(CASE, tmp_path) == []


def test_a_method_the_extension_lacks_is_still_an_error(tmp_path):
    root = tmp_path / "case"
    shutil.copytree(CASE, root)
    server = root / "client" / "pkg" / "server.py"
    server.write_text(server.read_text().replace('"update_weights"', '"update_weights_v2"'))
    assert _dc007(root, tmp_path / "scan") == ["error"]
