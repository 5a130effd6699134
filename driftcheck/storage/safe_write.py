"""The one way driftcheck writes a file: reports (`-o`, `--report-dir`), `fix --apply`, caches, smoke results.

What the path names decides how it is written, so that writing never destroys what the user pointed at:
- a regular file (or nothing yet): a temp file in the same folder, fsync, rename over it; readers see the
  old file or the new one, never a part; an existing file keeps its permission bits;
- a symlink: the same, on the file it points to (the link stays a link; a dangling link gets its target);
- a FIFO or a character/block device (`-o /dev/stdout`, `/dev/null`, a pipe): opened and written as a
  stream, never renamed over or truncated by rename;
- anything else (a folder, a socket): refused with `OSError`, nothing written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

_MAX_LINKS = 40  # as the kernel's ELOOP limit


def resolve_links(path: Path) -> Path:
    """The path a write should land on: `path`, or the end of the chain of symlinks it starts."""
    path = Path(path)
    for _ in range(_MAX_LINKS):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return path
        if not stat.S_ISLNK(st.st_mode):
            return path
        link = Path(os.readlink(path))
        path = link if link.is_absolute() else path.parent / link
    raise OSError(errno.ELOOP, "too many levels of symbolic links", str(path))


def write_bytes(path: Path | str, data: bytes, *, durable: bool = True, mode: int | None = None,
                make_parents: bool = True) -> Path:
    """Write `data` to `path` as described above; returns the path written (a link's target).

    `durable=False` skips the fsyncs (cache entries: a crash may only turn one into a miss). `mode` gives a
    newly written regular file those permission bits; by default an existing file keeps its own and a new
    one gets 0666 minus the umask, as `open()` would."""
    path = Path(path)
    try:
        st = os.stat(path)  # follows links, /proc/self/fd/N ones too (whose text is "pipe:[...]", not a path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
            _stream(path, data)
            return path
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise OSError(errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL, f"{kind}, not written", str(path))
    target = resolve_links(path)  # a regular file or nothing yet: write where the link chain ends
    if mode is None:
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:  # killed or failed mid-write: no temp file left behind, the target untouched
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(target.parent)
    return target


def write_text(path: Path | str, text: str, **kwargs) -> Path:
    return write_bytes(path, text.encode("utf-8"), **kwargs)


def _stream(target: Path, data: bytes) -> None:
    # No O_CREAT (it exists), no O_TRUNC (meaningless for a stream); a FIFO blocks until a reader opens it.
    fd = os.open(target, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every filesystem lets a folder be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    # os.umask can only be read by setting it; do it once (writers run in the main thread).
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return _UMASK


_UMASK: int | None = None
