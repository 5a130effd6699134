"""SIGTERM handled like Ctrl-C: what a CI runner sends when it cancels a job.

In the driftcheck process a SIGTERM raises `Terminated`, which unwinds like KeyboardInterrupt: every
`finally` runs, so a running `pip download` has its process group stopped, the download folder is
removed and locks are released; `terminate_cleanly()` (around the CLI's main) then prints one line and
exits 128 + 15 = 143. A second signal during that cleanup is ignored, so the cleanup is not cut short.

Matrix workers (`worker_init`) turn SIGTERM and SIGINT into the same exception while they run a task
(`task()`), and exit at once, with the same status, when they are idle between tasks. A scan's forked helpers
(`fork_helper`: the text reader, the summariser) leave Ctrl-C to the scan and die at once on SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager

_in_worker = False
_task_depth = 0


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM (not an Exception: `except Exception` must not swallow it)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _handler(signum, _frame) -> None:
    signal.signal(signum, signal.SIG_IGN)  # the cleanup that follows is not interrupted by a repeat
    if _in_worker and not _task_depth:
        os._exit(128 + signum)  # idle worker: nothing to clean up
    raise Terminated(signum)


@contextmanager
def terminate_cleanly():
    """Around the CLI: SIGTERM ends the command with one line on stderr and exit 143."""
    previous = signal.signal(signal.SIGTERM, _handler)
    try:
        yield
    except Terminated as exc:
        name = signal.Signals(exc.signum).name
        sys.stderr.write(f"driftcheck: terminated by {name}; child processes stopped, partial downloads removed\n")
        sys.stderr.flush()
        raise SystemExit(exc.exit_code) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


def fork_helper(work) -> int:
    """Fork a process that runs `work()` and exits (0 when it returned, 1 when it raised), never returning into the
    caller's code; the parent gets its pid, to kill and reap. Ctrl-C is the parent's to handle."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            from driftcheck.report import progress

            progress.in_forked_child()
            work()
            code = 0
        finally:
            os._exit(code)
    return pid


def worker_init() -> None:
    """In a pool worker: SIGTERM/SIGINT stop the current task cleanly, then the worker exits."""
    global _in_worker
    _in_worker = True
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _handler)


@contextmanager
def task():
    """A unit of work in a worker: on a signal, unwind it (children stopped, temp files gone), then exit."""
    global _task_depth
    _task_depth += 1
    try:
        yield
    except Terminated as exc:
        if not _in_worker:
            raise
        os._exit(exc.exit_code)
    finally:
        _task_depth -= 1
