"""An exclusive advisory lock (fcntl.flock) on a lock file, for writers that must not interleave.

`fix --apply` holds one per client folder while it re-checks and writes, so two runs on one tree cannot
both read the old file and each write a version that lacks the other's fix. The lock lives in the cache
folder, named after the folder it guards; when that is not writable, the guarded folder itself is locked
(flock works on a directory's descriptor). The kernel drops the lock when the process dies, so a killed
run never leaves it held.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Iterator

from driftcheck.errors import DriftcheckError


@contextlib.contextmanager
def folder_lock(folder: Path, lock_dir: Path | None, what: str, timeout_s: float = 600.0) -> Iterator[None]:
    """Hold the lock for `folder` (resolved, so two spellings of one folder share it)."""
    real = Path(os.path.realpath(folder))
    fd = _open_lock(real, lock_dir)
    try:
        _acquire(fd, real, what, timeout_s)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _open_lock(real: Path, lock_dir: Path | None) -> int:
    if lock_dir is not None:
        try:
            lock_dir.mkdir(parents=True, exist_ok=True)
            key = hashlib.sha1(str(real).encode()).hexdigest()[:20]
            return os.open(lock_dir / f"fix-{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            pass  # a read-only cache: lock the folder itself
    try:
        return os.open(real, os.O_RDONLY)
    except OSError as exc:
        raise DriftcheckError(f"cannot lock {real}: {exc.strerror or exc}") from None


def _acquire(fd: int, real: Path, what: str, timeout_s: float) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        sys.stderr.write(f"driftcheck: waiting for another {what} on {real} to finish\n")
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise DriftcheckError(f"another {what} has held {real} for {timeout_s:.0f} s", "nothing was written; try again") from None
            time.sleep(0.05)


@contextlib.contextmanager
def merge_lock(path: Path) -> Iterator[bool]:
    """Hold `path + ".lock"` while a cache file is read, merged and rewritten, so two processes saving at once
    (a scan's workers, two scans sharing a cache) never write over each other's answers. Yields False when the
    lock cannot be made (a read-only cache): the caller then saves unlocked, as a cache may lose answers but
    never break."""
    try:
        fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)
