"""Scanned code is never run: trap wheels and folders whose modules would write a marker, exit or hang on import.

scan, matrix, fix (dry run) and explain --vllm all finish, and the marker never appears. Fetching
uses `--no-deps --only-binary=:all:`, so no build script of a fetched release runs either.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from conftest import run_cli

TRAP = """
import os, sys, time
open({marker!r}, "w").write("imported " + __name__)
{action}
"""
ACTIONS = {"marker": "", "exit": "sys.exit(3)", "hang": "while True: time.sleep(1)"}


def trap_tree(root: Path, marker: Path, action: str) -> dict[str, str]:
    body = TRAP.format(marker=str(marker), action=ACTIONS[action])
    files = {
        "vllm/__init__.py": body,
        "vllm/config/__init__.py": body + "\nfrom vllm.config.scheduler import SchedulerConfig\n",
        "vllm/config/scheduler.py": body + "\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass SchedulerConfig:\n    max_model_len: int\n",
        "vllm/_version.py": '__version__ = "9.9.9"\n',
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return files


def client(root: Path, marker: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "use.py").write_text(TRAP.format(marker=str(marker), action="sys.exit(4)") +
                                 "from vllm.config import SchedulerConfig\nSchedulerConfig()\n")
    return root


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_trap_folder(tmp_path, action):
    marker = tmp_path / "marker"
    trap_tree(tmp_path / "vllm-src", marker, action)
    c = client(tmp_path / "client", marker)
    # the client's own `sys.exit(4)` comes first, so the missing max_model_len is a warning ("this code never runs")
    proc = run_cli("scan", "--vllm", str(tmp_path / "vllm-src"), "--client", str(c), "-f", "json", "--fail-on", "warning",
                   timeout=60)
    assert proc.returncode == 1, proc.stderr  # the missing max_model_len is found...
    assert '"DC005"' in proc.stdout
    assert not marker.exists()  # ...and nothing was imported


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_trap_wheel(tmp_path, action):
    marker = tmp_path / "marker"
    files = trap_tree(tmp_path / "unused", marker, action)
    wheel = tmp_path / "vllm-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for rel, text in files.items():
            z.writestr(rel, text)
        z.writestr("vllm-9.9.9.dist-info/METADATA", "Metadata-Version: 2.1\nName: vllm\nVersion: 9.9.9\n")
    c = client(tmp_path / "client", marker)
    for args in (["scan", "--vllm", str(wheel), "--client", str(c)],
                 ["fix", "--vllm", str(wheel), "--client", str(c)],
                 ["matrix", "--vllm", str(wheel), "--client", str(c), "--out", str(tmp_path / "m"), "-j", "1"]):
        proc = run_cli(*args, timeout=120)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert not marker.exists(), args
    proc = run_cli("explain", "--vllm", str(wheel), str(_traceback(tmp_path)), timeout=60)
    assert proc.returncode in (0, 1) and not marker.exists()


def _traceback(tmp_path: Path) -> Path:
    path = tmp_path / "tb.txt"
    path.write_text('Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n    SchedulerConfig()\n'
                    "TypeError: SchedulerConfig.__init__() missing 1 required positional argument: 'max_model_len'\n")
    return path


def test_fetch_never_builds_from_source():
    """The fetch command line asks for wheels only and no dependencies."""
    import inspect

    from driftcheck.sources import fetch

    source = inspect.getsource(fetch._pip_download)
    assert '"--no-deps"' in source and '"--only-binary=:all:"' in source
