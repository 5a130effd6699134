"""Run one codemod on a fixture file against a real vLLM release, the way `driftcheck fix` does."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import CACHE_DIR
from driftcheck.scan.pipeline import ScanOptions
from driftcheck.fix.fixer import FixOptions, plan_fixes
from driftcheck.sources.targets import resolve_client, resolve_vllm

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CASES_DIR = Path(__file__).resolve().parent / "cases"  # small before/after cases by rule id: cases/<DCxxx>/<fix>/
# The seed client's files (speculators 0.3.0), kept once: every end-to-end fixture pair starts from one of them.
SEED = FIXTURES / "seed"
SEED_BEFORE = {"rename-method": "custom_worker.py", "replay-layer-arguments": "custom_worker.py"}


def run_fix(tmp_path: Path, source: str, fix_id: str, vllm: str, name: str = "client.py", guard: bool = False,
            unsafe: bool = False, client_vllm: str = "0.11.0", only: list[str] | None = None) -> str:
    """The file's new text after `driftcheck fix --only FIX_ID` (dry run) against vLLM `vllm` (`only`: other words)."""
    folder = tmp_path / "client"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    (folder / name).write_text(source)
    target = resolve_vllm(vllm, CACHE_DIR)
    client = resolve_client(str(folder), CACHE_DIR)
    plan = plan_fixes(target, client, ScanOptions(cache_dir=CACHE_DIR, client_vllm=client_vllm),
                      FixOptions(only=only or [fix_id], unsafe=unsafe, guard=guard))
    changed = {c.rel: c.new for c in plan.changes}
    return changed.get(name, source)


def fixture(fix_id: str, name: str) -> str:
    """A fixture file of one fix; `before.py` is the seed file the fix starts from unless the fix has its own."""
    path = FIXTURES / fix_id / name
    if name == "before.py" and not path.is_file():
        path = SEED / SEED_BEFORE.get(fix_id, "vllm_hidden_states_generator.py")
    return path.read_text()
