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


_UNTIL_EXIT = """
import gc, os
from driftcheck import gc_pause
gc_pause.until_exit()
with gc_pause.cyclic_gc_paused():
    pass
pid = os.fork()
if pid == 0:  # a forked child with the collector on (a process of its own) gets it back after a scan
    gc.enable()
    with gc_pause.cyclic_gc_paused():
        pass
    os._exit(0 if gc.isenabled() else 3)
_, status = os.waitpid(pid, 0)
print(gc.isenabled(), os.waitstatus_to_exitcode(status))
"""


def test_a_process_that_exits_after_its_scan_leaves_the_gc_off():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _UNTIL_EXIT], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "0"]


def test_the_scan_and_fix_commands_keep_it_off_and_others_do_not(monkeypatch):
    import driftcheck.cli.main as cli_main
    from driftcheck import gc_pause

    for argv, kept in ((["driftcheck", "scan", "--help"], True), (["driftcheck", "rules"], False)):
        monkeypatch.setattr(gc_pause, "_OFF_UNTIL_EXIT", None)
        monkeypatch.setattr(sys_module(), "argv", argv)
        monkeypatch.setattr(cli_main, "main", lambda: 0)
        monkeypatch.setattr(cli_main, "_exit_now", lambda code: None)
        cli_main.entry()
        assert (gc_pause._OFF_UNTIL_EXIT is not None) is kept, argv


def sys_module():
    import sys

    return sys
