"""A big client's scan says on a terminal which step runs and counts the files checked; a small one shows no bar."""

from __future__ import annotations

from contextlib import contextmanager

from driftcheck.report import progress
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.scan.units import MIN_FILES_FOR_POOL
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import vllm_tree, write_tree


class _Recorder:
    def __init__(self, description):
        self.steps = [description]
        self.advanced = 0

    def update(self, description=None, **fields):
        if description is not None:
            self.steps.append(description)

    def advance(self, step=1, **fields):
        self.advanced += step


def _scan_with_bars(tmp_path, monkeypatch, n_files: int, jobs: int) -> list[_Recorder]:
    bars: list[_Recorder] = []

    @contextmanager
    def recording_bar(description, total=None, unit="count"):
        bars.append(_Recorder(description))
        yield bars[-1]

    monkeypatch.setattr(progress, "bar", recording_bar)
    vllm_root = vllm_tree(tmp_path / "vllm-src", {"vllm/m.py": "class C:\n    def run(self):\n        pass\n"})
    client = write_tree(tmp_path / "client", {f"pkg/f{i}.py": "from vllm.m import C\n\nC().run()\n" for i in range(n_files)})
    cache = tmp_path / "cache"
    scan(resolve_vllm(str(vllm_root), cache), [resolve_client(str(client), cache)], ScanOptions(cache_dir=cache, jobs=jobs))
    return bars


def test_a_big_clients_steps_and_files_are_shown(tmp_path, monkeypatch):
    n = MIN_FILES_FOR_POOL
    for jobs in (2, 1):
        [bar] = _scan_with_bars(tmp_path / str(jobs), monkeypatch, n, jobs)
        assert bar.steps[0] == f"client: reading {n} files"
        assert bar.steps[1] == f"client: imports, classes and patches of {n} files"
        assert any(step.startswith("client: checking files") for step in bar.steps)
        assert bar.advanced == n  # every file's unit, counted once


def test_a_small_client_shows_no_bar(tmp_path, monkeypatch):
    assert _scan_with_bars(tmp_path, monkeypatch, MIN_FILES_FOR_POOL - 1, 2) == []
