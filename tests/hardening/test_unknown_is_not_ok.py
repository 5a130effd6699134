"""Unknown is not ok: when what a probe looks for is gone from a real vLLM tree, the result says so
and the gate fails, unless told to accept unknowns."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from conftest import run_cli, vllm_sources


@pytest.fixture(scope="module")
def tree016(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("vllm016")
    with zipfile.ZipFile(vllm_sources("0.16.0")) as z:
        z.extractall(root)
    return root


def mutated(tree: Path, tmp_path: Path, edit) -> Path:
    copy = tmp_path / "vllm-tree"
    shutil.copytree(tree, copy)
    edit(copy)
    return copy


def scan(tree: Path, *extra: str):
    proc = run_cli("scan", "--vllm", str(tree), "--client", "speculators==0.3.0", "-f", "json", *extra)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None, proc.stderr


def test_block_pool_deleted_makes_dc101_unknown(tree016, tmp_path):
    tree = mutated(tree016, tmp_path, lambda t: (t / "vllm/v1/core/block_pool.py").unlink())
    rc, data, _ = scan(tree)
    assert rc == 1
    assert any(u["rule"] == "DC101" and "cache_full_blocks" in u["message"] for u in data["unknown"])
    assert not any(f["rule"] == "DC101" for f in data["findings"])


def test_block_pool_class_renamed_makes_dc101_unknown(tree016, tmp_path):
    def rename(t: Path):
        p = t / "vllm/v1/core/block_pool.py"
        p.write_text(re.sub(r"\bclass BlockPool\b", "class BlockPoolV2", p.read_text()))

    rc, data, _ = scan(mutated(tree016, tmp_path, rename))
    assert rc == 1 and any(u["rule"] == "DC101" for u in data["unknown"])


def test_accepting_unknowns_is_explicit(tree016, tmp_path):
    tree = mutated(tree016, tmp_path, lambda t: (t / "vllm/v1/core/block_pool.py").unlink())
    rc, data, _ = scan(tree, "--fail-on", "never")
    assert rc == 0  # never means never
    rc, data, _ = scan(tree, "--select", "DC101")
    assert rc == 1 and data["findings"] == [] and data["unknown"]  # no finding, still not ok
    rc, _, _ = scan(tree, "--select", "DC101", "--accept-unknown")
    assert rc == 0


def test_moved_module_is_a_finding_not_a_silent_pass(tree016, tmp_path):
    def move(t: Path):
        (t / "vllm/v1/executor/multiproc_executor.py").rename(t / "vllm/v1/executor/mp_executor.py")

    rc, data, _ = scan(mutated(tree016, tmp_path, move))
    assert rc == 1
    [f] = [f for f in data["findings"] if f["rule"] == "DC001"]
    assert f["symbol"] == "vllm.v1.executor.multiproc_executor"


def test_unparseable_vllm_module_is_unknown(tree016, tmp_path):
    def break_it(t: Path):
        p = t / "vllm/v1/request.py"
        p.write_text(p.read_text() + "\ndef broken(:\n")

    rc, data, _ = scan(mutated(tree016, tmp_path, break_it))
    assert rc == 1
    assert any("could not be parsed" in u["message"] for u in data["unknown"])
