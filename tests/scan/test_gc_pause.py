"""The scan pauses the cyclic GC (driftcheck/gc_pause.py) and gives the caller its state back, also on an error."""

from __future__ import annotations

import gc

import pytest

from driftcheck.gc_pause import cyclic_gc_paused
from scan.helpers import scan_client


def test_paused_inside_and_restored_after_even_on_an_error():
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with cyclic_gc_paused():
            assert not gc.isenabled()
            raise RuntimeError("a probe bug")
    assert gc.isenabled()


def test_a_caller_that_paused_the_gc_itself_keeps_it_paused():
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_scan_runs_paused_and_leaves_the_gc_on(tmp_path, monkeypatch):
    seen = []
    import driftcheck.scan.pipeline as pipeline

    real = pipeline._scan

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "_scan", spy)
    result = scan_client(tmp_path, {"c.py": "from vllm.config import SchedulerConfig\n"})
    assert seen == [False] and gc.isenabled()
    assert result.stats["client_files"] == 1
