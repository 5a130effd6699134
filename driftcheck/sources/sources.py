"""Read-only views of Python source trees: a folder on disk or a wheel/zip read in place.

Nothing here imports or executes the files. Zip members are read straight from the archive and
never extracted, so hostile member names (`../x`, absolute paths, links) cannot write anywhere;
oversized or bomb-like members are refused.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import Iterator

from driftcheck.errors import SourceError, TargetError

# A real vLLM source file is at most a few hundred KB; anything this big is not source we parse.
MAX_SOURCE_BYTES = 8 * 1024 * 1024
# A wheel member that inflates more than this ratio and beyond 1 MB is treated as a zip bomb.
MAX_COMPRESSION_RATIO = 100
MAX_ARCHIVE_MEMBERS = 200_000


class SourceTree:
    """Files of a tree addressed by posix paths relative to its root."""

    label: str

    def iter_files(self, prefix: str = "", suffix: str = ".py") -> Iterator[str]:
        raise NotImplementedError

    def is_file(self, rel: str) -> bool:
        raise NotImplementedError

    def is_dir(self, rel: str) -> bool:
        raise NotImplementedError

    def read_bytes(self, rel: str) -> bytes:
        raise NotImplementedError

    def read_many(self, rels: list[str]) -> dict[str, bytes]:
        """The bytes of each readable file of `rels` (one that `read_bytes` refuses is left out)."""
        out: dict[str, bytes] = {}
        for rel in rels:
            try:
                out[rel] = self.read_bytes(rel)
            except SourceError:
                continue
        return out

    def fingerprint(self) -> str:
        """A cheap identity of the whole tree, for caches keyed per tree."""
        raise NotImplementedError

    def read_text(self, rel: str) -> str:
        """Decode like Python does (BOM, coding cookie), replacing what does not decode."""
        data = self.read_bytes(rel)
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            encoding = "utf-8"
        try:
            return data.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            return data.decode("utf-8", errors="replace")

    def display_path(self, rel: str) -> str:
        """Where a user finds the file (a real path for folders, archive!member for zips)."""
        return rel


def module_name_for(rel: str) -> str:
    """The dotted module a tree's path is imported as (`pkg/x.py` -> `pkg.x`, `pkg/__init__.py` -> `pkg`)."""
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _safe_rel(name: str) -> str | None:
    """Normalise an archive member name; None for anything that could escape the root."""
    if not name or "\\" in name or name.startswith("/") or "\x00" in name:
        return None
    # PurePosixPath(name).parts, by string operations: every member of every archive opened passes here (1,300-2,600
    # per vLLM release, 40 ms of a warm scan through pathlib)
    parts = [p for p in name.split("/") if p and p != "."]
    if ".." in parts or (parts and ":" in parts[0]):
        return None
    return "/".join(parts)


class FolderTree(SourceTree):
    def __init__(self, root: Path, label: str | None = None):
        self.root = Path(root)
        self.label = label or str(self.root)

    def _path(self, rel: str) -> Path:
        return self.root / rel if rel else self.root

    def iter_files(self, prefix: str = "", suffix: str = ".py") -> Iterator[str]:
        base = self._path(prefix)
        if base.is_file():
            if base.name.endswith(suffix):
                yield prefix
            return
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
            rel_dir = Path(dirpath).relative_to(self.root).as_posix()
            for name in sorted(filenames):
                if name.endswith(suffix):
                    yield name if rel_dir == "." else f"{rel_dir}/{name}"

    def is_file(self, rel: str) -> bool:
        return self._path(rel).is_file()

    def is_dir(self, rel: str) -> bool:
        return self._path(rel).is_dir()

    def read_bytes(self, rel: str) -> bytes:
        path = self._path(rel)
        try:
            st = path.stat()
            if not stat.S_ISREG(st.st_mode):
                raise SourceError(f"{path} is not a regular file")
            if st.st_size > MAX_SOURCE_BYTES:
                raise SourceError(
                    f"{path} is {st.st_size // (1024 * 1024)} MB, too large to be a source file",
                    "exclude it or pass a smaller tree",
                )
            return path.read_bytes()
        except PermissionError:
            raise SourceError(f"cannot read {path}: permission denied", "check its permissions") from None
        except FileNotFoundError:
            raise SourceError(f"{path} does not exist") from None
        except OSError as exc:
            raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None

    def fingerprint(self) -> str:
        h = hashlib.sha1(str(self.root.resolve()).encode())
        for rel in self.iter_files():
            try:
                st = self._path(rel).stat()
            except OSError:
                continue
            h.update(f"{rel}:{st.st_size}:{st.st_mtime_ns}".encode())
        return h.hexdigest()

    def display_path(self, rel: str) -> str:
        return str(self._path(rel))


class ZipTree(SourceTree):
    """A wheel (or any zip) read in place; optionally rooted at a folder inside it."""

    def __init__(self, path: Path, label: str | None = None):
        self.path = Path(path)
        self.label = label or str(self.path)
        try:
            self._zip = zipfile.ZipFile(self.path)
            self._pid = os.getpid()
            infos = self._zip.infolist()
        except FileNotFoundError:
            raise TargetError(f"{self.path} does not exist") from None
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise TargetError(
                f"{self.path} is not a readable wheel/zip ({exc})", "re-download it or pass another target"
            ) from None
        if len(infos) > MAX_ARCHIVE_MEMBERS:
            raise TargetError(f"{self.path} has {len(infos)} members, too many for a wheel")
        self._members: dict[str, zipfile.ZipInfo] = {}
        self._dirs: set[str] = {""}
        for info in infos:
            rel = _safe_rel(info.filename.rstrip("/"))
            if rel is None or info.is_dir():
                continue
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                continue  # links are never followed
            self._members[rel] = info
            parts = rel.split("/")
            for i in range(1, len(parts)):
                self._dirs.add("/".join(parts[:i]))

    def iter_files(self, prefix: str = "", suffix: str = ".py") -> Iterator[str]:
        if prefix in self._members:
            if prefix.endswith(suffix):
                yield prefix
            return
        start = f"{prefix}/" if prefix else ""
        for rel in sorted(self._members):
            if rel.startswith(start) and rel.endswith(suffix) and "/__pycache__/" not in rel:
                yield rel

    def is_file(self, rel: str) -> bool:
        return rel in self._members

    def is_dir(self, rel: str) -> bool:
        return rel in self._dirs

    def names(self) -> list[str]:
        return sorted(self._members)

    def _checked(self, rel: str) -> zipfile.ZipInfo:
        """The member `rel` names, refused when it is absent, too big to be source, or bomb-like."""
        info = self._members.get(rel)
        if info is None:
            raise SourceError(f"{self.path}!{rel} does not exist")
        if info.file_size > MAX_SOURCE_BYTES:
            raise SourceError(f"{self.path}!{rel} is {info.file_size} bytes, too large to be a source file")
        if info.file_size > 1024 * 1024 and info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1):
            raise SourceError(f"{self.path}!{rel} inflates {info.file_size // max(info.compress_size, 1)}x: refused as a zip bomb")
        return info

    def member_size(self, rel: str) -> int:
        """The size `rel` inflates to, as the archive declares it (0 for a member that is not there); `read_bytes`
        never returns more."""
        info = self._members.get(rel)
        return info.file_size if info is not None else 0

    def read_many(self, rels: list[str]) -> dict[str, bytes]:
        """Many members at once, from a few large reads of the archive instead of one `ZipFile.open` each (a whole
        release's text is read this way: the per-member open was a third of inflating it). Each member is checked
        as `read_bytes` checks it (size, ratio, length and CRC after inflating); one this fast path does not know
        (encrypted, another compression, an odd local header) goes through `read_bytes`."""
        infos: list[tuple[str, zipfile.ZipInfo]] = []
        out: dict[str, bytes] = {}
        for rel in rels:
            try:
                infos.append((rel, self._checked(rel)))
            except SourceError:
                continue
        infos.sort(key=lambda item: item[1].header_offset)
        slow: list[str] = []
        try:
            with open(self.path, "rb") as fh:
                for span in _spans(infos):
                    start = span[0][1].header_offset
                    last = span[-1][1]
                    fh.seek(start)
                    buf = fh.read(last.header_offset - start + _LOCAL_HEADER + len(last.orig_filename.encode()) * 2
                                  + 0x10000 + last.compress_size)  # room for the last local header's name and extra
                    for rel, info in span:
                        data = _member_bytes(buf, info.header_offset - start, info)
                        if data is None:
                            slow.append(rel)
                        else:
                            out[rel] = data
        except OSError:
            slow = [rel for rel, _ in infos if rel not in out]
        for rel in slow:
            try:
                out[rel] = self.read_bytes(rel)
            except SourceError:
                continue
        return {rel: out[rel] for rel in rels if rel in out}  # in the order asked

    def read_bytes(self, rel: str) -> bytes:
        info = self._checked(rel)
        if self._pid != os.getpid():  # a forked worker: its own file handle (a shared offset garbles reads)
            self._zip, self._pid = zipfile.ZipFile(self.path), os.getpid()
        try:
            with self._zip.open(info) as fh:
                data = fh.read(MAX_SOURCE_BYTES + 1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
            raise SourceError(
                f"{self.path} is damaged: cannot read {rel} ({exc})", "re-download the wheel"
            ) from None
        if len(data) > MAX_SOURCE_BYTES:
            raise SourceError(f"{self.path}!{rel} inflates beyond its declared size: refused")
        return data

    def fingerprint(self) -> str:
        st = self.path.stat()
        return hashlib.sha1(f"{self.path.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()

    def display_path(self, rel: str) -> str:
        return f"{self.path}!{rel}"


_LOCAL_HEADER = 30  # a zip local file header's fixed part; its name and extra lengths are at offsets 26 and 28
_SPAN_GAP = 1024 * 1024  # members closer than this are read in one go (a wheel's binaries lie between sources)


def _spans(infos: list[tuple[str, zipfile.ZipInfo]]) -> list[list[tuple[str, zipfile.ZipInfo]]]:
    """Members (sorted by offset) grouped into runs that one read covers without reading large unrelated members."""
    spans: list[list[tuple[str, zipfile.ZipInfo]]] = []
    end = -1
    for item in infos:
        info = item[1]
        if not spans or info.header_offset - end > _SPAN_GAP:
            spans.append([])
        spans[-1].append(item)
        end = info.header_offset + _LOCAL_HEADER + len(info.orig_filename.encode()) + info.compress_size
    return spans


def _member_bytes(buf: bytes, at: int, info: zipfile.ZipInfo) -> bytes | None:
    """One member's bytes from `buf` (its local header starts at `at`), checked against the central directory;
    None when only `ZipFile.open` can say what is wrong (it raises the error `read_bytes` reports)."""
    if buf[at:at + 4] != b"PK\x03\x04" or info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return None
    begin = at + _LOCAL_HEADER + int.from_bytes(buf[at + 26:at + 28], "little") + int.from_bytes(buf[at + 28:at + 30], "little")
    raw = buf[begin:begin + info.compress_size]
    if len(raw) != info.compress_size:
        return None
    if info.compress_type == zipfile.ZIP_STORED:
        data = raw
    else:
        try:
            inflater = zlib.decompressobj(-15)
            data = inflater.decompress(raw, MAX_SOURCE_BYTES + 1)
        except zlib.error:
            return None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        return None
    return data


class SubTree(SourceTree):
    """The part of a tree under one folder, addressed from that folder: a wheel that ships its package in
    `<dist>.data/purelib/` is read as if the package stood at the top, so module names are the ones Python imports."""

    def __init__(self, base: SourceTree, root: str):
        self.base, self.root = base, root.strip("/")
        self.label = base.label

    def _full(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def iter_files(self, prefix: str = "", suffix: str = ".py") -> Iterator[str]:
        cut = len(self.root) + 1
        for rel in self.base.iter_files(self._full(prefix), suffix):
            yield rel[cut:]

    def is_file(self, rel: str) -> bool:
        return self.base.is_file(self._full(rel))

    def is_dir(self, rel: str) -> bool:
        return self.base.is_dir(self._full(rel))

    def read_bytes(self, rel: str) -> bytes:
        return self.base.read_bytes(self._full(rel))

    def read_many(self, rels: list[str]) -> dict[str, bytes]:
        cut = len(self.root) + 1
        return {rel[cut:]: data for rel, data in self.base.read_many([self._full(r) for r in rels]).items()}

    def fingerprint(self) -> str:
        return f"{self.base.fingerprint()}@{self.root}"

    def display_path(self, rel: str) -> str:
        return self.base.display_path(self._full(rel))
