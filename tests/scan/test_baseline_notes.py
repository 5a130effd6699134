"""Which vLLM a client was written for, and what the probes say when it cannot be had (triage batch 8: vllm-rbln
pins `vllm==0.22.0+cpu`, exvllm requires `vllm` with no version; both were told "declares no vLLM requirement")."""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import Requirement

from driftcheck.rules.context import ScanContext
from driftcheck.scan.pipeline import ScanOptions, ScanResult, _baseline_loader
from driftcheck.sources.package_metadata import declared_vllm_version
from driftcheck.sources.sources import FolderTree
from driftcheck.sources.targets import Target


def test_a_pin_with_a_local_build_label_names_the_release():
    assert declared_vllm_version(Requirement("vllm==0.22.0+cpu")) == "0.22.0"
    assert declared_vllm_version(Requirement("vllm===0.10.1.1+cu128")) == "0.10.1.1"
    assert declared_vllm_version(Requirement("vllm==0.16.*")) == "0.16"
    assert declared_vllm_version(Requirement("vllm<=0.8.5,>=0.7.3")) == "0.8.5"


def _client(tmp_path: Path, requires: list[str]) -> Target:
    return Target(FolderTree(tmp_path), "folder", str(tmp_path), "plugin", "1.0", requires=requires)


def test_a_requirement_without_a_version_is_said_so(tmp_path):
    loader, note = _baseline_loader(_client(tmp_path, ["vllm", "torch"]), None, ScanOptions(cache_dir=tmp_path),
                                    ScanResult(None, []))
    assert loader is None and note == ("plugin requires 'vllm' without a version; give the vLLM it was written for "
                                          "with --client-vllm VERSION")
    loader, note = _baseline_loader(_client(tmp_path, ["torch"]), None, ScanOptions(cache_dir=tmp_path), ScanResult(None, []))
    assert loader is None and note == ("plugin declares no vLLM requirement; give the vLLM it was written for with "
                                          "--client-vllm VERSION")


def test_a_declared_vllm_that_cannot_be_read_gives_the_reason(tmp_path):
    missing = tmp_path / "no-such-vllm"
    result = ScanResult(None, [])
    loader, note = _baseline_loader(_client(tmp_path, ["vllm==0.22.0"]), None,
                                    ScanOptions(cache_dir=tmp_path, client_vllm=str(missing)), result)
    assert note is None
    ctx = ScanContext(None, None, None, "plugin", "0.99.0", baseline_loader=loader)
    assert ctx.baseline() is None
    assert ctx.baseline_note.startswith(f"vLLM {missing}, which the client declares, could not be read: ")
    assert result.baselines["plugin"].startswith("unavailable: ")


def test_a_scan_whose_declared_vllm_cannot_be_read_runs_every_rule(tmp_path):
    """The whole scan, every rule (some compare with the baseline, and the text of both is read ahead): an unreadable
    declared vLLM is a note, never a crash (fp4local-abliterated 0.1.0 declares `vllm>=0.32.1rc0`, no such release)."""
    from scan.helpers import scan_trees

    vllm = {"vllm/config.py": "class ModelConfig:\n    pass\n"}
    client = {"pkg/__init__.py": "", "pkg/m.py": "from vllm.config import ModelConfig\n\n\ndef f(c: ModelConfig):\n"
                                               "    return c.model\n"}
    result = scan_trees(tmp_path, vllm, client, client_vllm=str(tmp_path / "no-such-vllm"))
    assert result.internal_errors == []
    assert [(f.rule, f.severity) for f in result.findings] == [("DC006", "error")]
    assert result.baselines["client"].startswith("unavailable: ")
