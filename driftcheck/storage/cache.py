"""The on-disk cache: fetched sources and per-file summaries, safe under concurrent use.

Every write goes to a temporary file in the destination folder and is renamed into place, so a
reader sees either nothing or a whole entry, even when a writer is killed mid-write. A cache that
cannot be written (read-only, full) degrades to no cache; it never fails a scan. Entries are data
(JSON), never pickles: a cache folder shared with others cannot make driftcheck run code.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import time
from pathlib import Path

from driftcheck.storage.code_digest import code_digest
from driftcheck.storage.datacodec import Codec, CodecError
from driftcheck.vllm_model.module_summary import SCHEMA, ModuleInfo
from driftcheck.storage.safe_write import write_bytes


def default_cache_dir() -> Path:
    env = os.environ.get("DRIFTCHECK_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "driftcheck"


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True, mode: int | None = None) -> None:
    """Kept for callers of the old name: every write goes through `safe_write.write_bytes`."""
    write_bytes(path, data, durable=durable, mode=mode)


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
    """Module summaries keyed by (content hash, module name, schema, Python minor version).

    Entries are JSON written by `datacodec` (data only: reading one can never run code, unlike the
    pickles of earlier versions, which are never opened). An entry that does not decode into the
    summary's current shape (corrupt, foreign, another layout) is a miss, and the next put rewrites it."""

    def __init__(self, root: Path):
        # under the code that summarised (code_digest): a summariser that records more never reads an older one's entry
        self.root = root / "summaries" / f"s{SCHEMA}-{code_digest()[:16]}-py{sys.version_info[0]}{sys.version_info[1]}"
        self.enabled = True
        self.hits = 0
        self.misses = 0

    def _key(self, data: bytes, name: str, is_pkg: bool) -> Path:
        digest = hashlib.sha1(data + f"\0{name}\0{int(is_pkg)}".encode()).hexdigest()
        return self.root / digest[:2] / f"{digest}.json"

    def has(self, data: bytes, name: str, is_pkg: bool) -> bool:
        """Whether an entry is stored (not whether it decodes: `get` decides that)."""
        return self.enabled and self._key(data, name, is_pkg).is_file()

    def get(self, data: bytes, name: str, is_pkg: bool) -> ModuleInfo | None:
        if not self.enabled:
            return None
        key = self._key(data, name, is_pkg)
        known, stamp = _DECODED.get(key), _stamp(key)
        if known is not None and stamp is not None and known[0] == stamp:  # decoded here, and unchanged on disk since
            self.hits += 1
            return known[1]
        try:
            with open(key, "rb") as fh:
                raw = fh.read(MAX_ENTRY_BYTES + 1)
        except OSError:  # absent (or unreadable): a miss
            self.misses += 1
            return None
        try:
            if len(raw) > MAX_ENTRY_BYTES:
                raise CodecError("entry too large")
            info = _codec().loads(raw)
        except CodecError:  # corrupt, foreign or another layout: a miss, rebuilt by the caller's put
            self.misses += 1
            return None
        except TypeError:  # a summary field of a type the codec cannot store: run without the cache
            self.enabled = False
            return None
        if info.name != name or info.is_package != is_pkg:
            self.misses += 1
            return None
        self.hits += 1
        _DECODED[key] = (stamp, info)  # stamped before the read: a rewrite during it is read again next time
        return info

    def put(self, data: bytes, name: str, is_pkg: bool, info: ModuleInfo) -> None:
        if not self.enabled:
            return
        try:
            payload = _codec().dumps(info)
        except (CodecError, ValueError):  # a value that does not match its declared type: keep it in memory only
            return
        except TypeError:  # a field type the codec cannot store at all
            self.enabled = False
            return
        key = self._key(data, name, is_pkg)
        try:
            write_bytes(key, payload, durable=False)
            _DECODED[key] = (_stamp(key), info)
        except OSError:
            self.enabled = False  # read-only or full: keep scanning without a cache


# Summaries this process read or made, by their entry's path (which names their content, module and schema), with the
# entry file's stamp when it was read: a worker that scans release after release decodes an unchanged module once, and
# an entry rewritten since (by another scan, or planted) is read again. Shared between trees, so read-only (`ApiIndex`
# sets only `path`, which the key already fixes).
_DECODED: dict[Path, tuple[tuple[int, int, int] | None, ModuleInfo]] = {}


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size

MAX_ENTRY_BYTES = 64 * 1024 * 1024  # no real module's summary comes near this; a bigger entry is not ours


@functools.lru_cache(maxsize=1)
def _codec() -> Codec:
    return Codec(ModuleInfo)
