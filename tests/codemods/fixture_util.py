"""Run one codemod on a fixture file against a real vLLM release, the way `driftcheck fix` does."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import CACHE_DIR
from driftcheck.engine import ScanOptions
from driftcheck.fixer import FixOptions, plan_fixes
from driftcheck.targets import resolve_client, resolve_vllm

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_fix(tmp_path: Path, source: str, fix_id: str, vllm: str, name: str = "client.py", guard: bool = False,
            unsafe: bool = False, client_vllm: str = "0.11.0") -> str:
    """The file's new text after `driftcheck fix --only FIX_ID` (dry run) against vLLM `vllm`."""
    folder = tmp_path / "client"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    (folder / name).write_text(source)
    target = resolve_vllm(vllm, CACHE_DIR)
    client = resolve_client(str(folder), CACHE_DIR)
    plan = plan_fixes(target, client, ScanOptions(cache_dir=CACHE_DIR, client_vllm=client_vllm),
                      FixOptions(only=[fix_id], unsafe=unsafe, guard=guard))
    changed = {c.rel: c.new for c in plan.changes}
    return changed.get(name, source)


def fixture(fix_id: str, name: str) -> str:
    return (FIXTURES / fix_id / name).read_text()
