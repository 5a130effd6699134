"""The on-disk cache: fetched sources and per-file summaries, safe under concurrent use.

Every write goes to a temporary file in the destination folder and is renamed into place, so a
reader sees either nothing or a whole entry, even when a writer is killed mid-write. A cache that
cannot be written (read-only, full) degrades to no cache; it never fails a scan.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path

from .pysummary import SCHEMA, ModuleInfo


def default_cache_dir() -> Path:
    env = os.environ.get("DRIFTCHECK_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "driftcheck"


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True, mode: int | None = None) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never a part.

    `durable=False` skips the fsync: right for cache entries, which a crash may only turn into a
    miss (an unreadable entry is a miss), and an fsync per summary dominated cold scans. `mode`
    gives the new file those permission bits (a user's file keeps its own)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def sweep_stale_temp_files(folder: Path, older_than_s: float = 3600) -> None:
    """Remove temp files left by writers that were killed (they are never read)."""
    if not folder.is_dir():
        return
    now = time.time()
    for tmp in folder.rglob(".*.tmp"):
        try:
            if now - tmp.stat().st_mtime > older_than_s:
                tmp.unlink()
        except OSError:
            pass


class SummaryCache:
    """Module summaries keyed by (content hash, module name, schema, Python minor version)."""

    def __init__(self, root: Path):
        self.root = root / "summaries" / f"s{SCHEMA}-py{sys.version_info[0]}{sys.version_info[1]}"
        self.enabled = True
        self.hits = 0
        self.misses = 0

    def _key(self, data: bytes, name: str, is_pkg: bool) -> Path:
        digest = hashlib.sha1(data + f"\0{name}\0{int(is_pkg)}".encode()).hexdigest()
        return self.root / digest[:2] / f"{digest}.pkl"

    def get(self, data: bytes, name: str, is_pkg: bool) -> ModuleInfo | None:
        if not self.enabled:
            return None
        path = self._key(data, name, is_pkg)
        try:
            with open(path, "rb") as fh:
                info = pickle.load(fh)
        except FileNotFoundError:
            self.misses += 1
            return None
        except Exception:  # a corrupt or foreign entry is a miss, not an error
            self.misses += 1
            return None
        if not isinstance(info, ModuleInfo):
            return None
        self.hits += 1
        return info

    def put(self, data: bytes, name: str, is_pkg: bool, info: ModuleInfo) -> None:
        if not self.enabled:
            return
        try:
            atomic_write_bytes(self._key(data, name, is_pkg), pickle.dumps(info, protocol=pickle.HIGHEST_PROTOCOL), durable=False)
        except OSError:
            self.enabled = False  # read-only or full: keep scanning without a cache
