"""The self-scan oracle: a release's own `vllm/` tree, scanned as a client against that release.

That code runs, so every error is false unless it is a real latent bug in vLLM (code that fails if
it ever runs) or a place where vLLM's own annotation names a class the value is not. Each such error
is listed, with the evidence, in self_scan_expected.json; any other error fails this test, and so
does a crash, an internal error, or unknowns for 1 in 100 of the uses checked or more.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from conftest import vllm_sources
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

EXPECTED = json.loads((Path(__file__).parent / "self_scan_expected.json").read_text())


def _tree_of(version: str, root: Path) -> Path:
    with zipfile.ZipFile(vllm_sources(version)) as zf:
        for name in zf.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                zf.extract(name, root)
    return root


@pytest.mark.network
@pytest.mark.parametrize("version", ["0.8.5", "0.9.0", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.16.0",
                                     "0.32.0"])
def test_self_scan_has_only_the_listed_errors(version, tmp_path, cache_dir):
    client_root = _tree_of(version, tmp_path / "client")
    result = scan(resolve_vllm(version, cache_dir), [resolve_client(str(client_root), cache_dir)],
                  ScanOptions(cache_dir=cache_dir))
    assert result.internal_errors == []
    errors = {(f.rule, f.symbol, f.client.path) for f in result.findings if f.severity == "error" and not f.suppressed}
    expected = {(e["rule"], e["symbol"], e["path"]) for e in EXPECTED[version]}
    assert errors - expected == set(), "new false errors (or new latent bugs: list them with evidence)"
    assert expected - errors == set(), "listed errors no longer reported: remove them from self_scan_expected.json"
    uses = result.stats["uses_checked"]
    assert uses > 10_000
    assert len(result.unknown) < uses / 100
