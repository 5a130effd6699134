"""A function the client sets on vLLM's class (plugin shape GF): its `self` is any object of that class, so a member
only a vLLM subclass sets is a warning (the object may be that subclass), and one no class has stays an error."""

from __future__ import annotations

import shutil
from pathlib import Path

from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

CASE = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "GF_patched_function_reads_a_subclass_attribute"


def _findings(root: Path, tmp_path: Path) -> list[tuple[str, str, int]]:
    result = scan(resolve_vllm(str(root / "vllm_src"), tmp_path), [resolve_client(str(root / "client"), tmp_path)],
                  ScanOptions(cache_dir=tmp_path, use_cache=False))
    return [(f.severity, f.rule, f.client.line) for f in result.findings]


def test_a_member_only_a_subclass_sets_is_a_warning(tmp_path):
    found = _findings(CASE, tmp_path)
    assert [f for f in found if f[0] == "error"] == []
    assert ("warning", "DC006", 5) in found


def test_a_member_no_class_has_stays_an_error(tmp_path):
    root = tmp_path / "case"
    shutil.copytree(CASE, root)
    server = root / "client" / "pkg" / "server.py"
    server.write_text(server.read_text().replace("self.output_queue", "self.no_such_queue"))
    assert ("error", "DC006", 5) in _findings(root, tmp_path / "scan")
