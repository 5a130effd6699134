"""Progress on stderr for long work (fetching a release, a matrix) and the one-line notes around it.

Bars are drawn only when stderr is a terminal, never with `--quiet` (`configure(quiet=True)`), and
never in matrix workers. One rich `Progress` is shared by nested work (a matrix fetching a client
shows both bars), so only one live display ever exists. `info()` lines (what was fetched, how
long it took) are silenced by --quiet; `warn()` lines (a release that could not be had) never are.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

_quiet = False
_progress = None  # the shared rich Progress while some work shows a bar
_users = 0


def configure(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def enabled() -> bool:
    return not _quiet and sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


def info(message: str) -> None:
    """A line about what driftcheck did (fetched X in N s); silenced by --quiet."""
    if not _quiet:
        _line(message)


def warn(message: str) -> None:
    """A line the user must see (a release that could not be had), --quiet or not."""
    _line(message)


def _line(message: str) -> None:
    text = f"driftcheck: {message}"
    if _progress is not None:  # print above the live bars instead of through them
        _progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
    else:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


class _NoBar:
    def update(self, **fields) -> None:
        pass

    def advance(self, step: float = 1, **fields) -> None:
        pass


NO_BAR = _NoBar()  # for work that takes a bar and was given none


def in_forked_child() -> None:
    """In a forked worker: never draw, and never touch the parent's live display (its refresh thread did not come
    along, and a lock it held at the fork stays held here)."""
    global _progress, _users, _quiet
    _progress, _users, _quiet = None, 0, True


class _Bar:
    def __init__(self, progress, task_id):
        self._progress, self._id = progress, task_id

    def update(self, **fields) -> None:
        self._progress.update(self._id, **fields)

    def advance(self, step: float = 1, **fields) -> None:
        self._progress.update(self._id, advance=step, refresh=True, **fields)  # each step shows, even a fast one


def _make_progress():
    from rich import filesize
    from rich.console import Console
    from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class Amount(ProgressColumn):
        def render(self, task):
            if task.fields.get("unit") == "bytes":
                total = f"/{filesize.decimal(int(task.total))}" if task.total else ""
                speed = f" {filesize.decimal(int(task.speed))}/s" if task.speed else ""
                return Text(f"{filesize.decimal(int(task.completed))}{total}{speed}")
            return Text(f"{int(task.completed)}/{int(task.total)}" if task.total else f"{int(task.completed)}")

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), Amount(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True)


@contextmanager
def bar(description: str, total: float | None = None, unit: str = "count"):
    """A progress bar for the duration of the block (a no-op object when bars are off)."""
    global _progress, _users
    if not enabled():
        yield _NoBar()
        return
    if _progress is None:
        _progress = _make_progress()
        _progress.start()
    _users += 1
    task_id = _progress.add_task(description, total=total, unit=unit)
    try:
        yield _Bar(_progress, task_id)
    finally:
        _progress.remove_task(task_id)
        _users -= 1
        if _users == 0:
            _progress.stop()
            _progress = None


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


@contextmanager
def download(description: str, folder: Path):
    """A byte counter for a download that lands under `folder` (polled: pip reports nothing we can read)."""
    with bar(description, unit="bytes") as b:
        if isinstance(b, _NoBar):
            yield b
            return
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(0.25):
                b.update(completed=folder_bytes(folder))

        watcher = threading.Thread(target=poll, name="driftcheck-download-progress", daemon=True)
        watcher.start()
        try:
            yield b
        finally:
            stop.set()
            watcher.join()
