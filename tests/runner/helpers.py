"""Helpers for the smoke-runner tests.

Real-vLLM tests find their environments under $DRIFTCHECK_ENVS (built by `bash .ci/smoke_envs.sh`):
vllm-0.32.0/ and vllm-0.16.0/, each with a .complete marker. Without the variable they skip; with it
set (as in CI) a missing or half-built environment is an error, not a skip, so that CI never passes
by not looking.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def vllm_env(version: str) -> Path:
    root = os.environ.get("DRIFTCHECK_ENVS")
    if not root:
        pytest.skip("DRIFTCHECK_ENVS is not set: build the envs with `bash .ci/smoke_envs.sh` "
                    "and export DRIFTCHECK_ENVS=~/.cache/driftcheck/envs")
    env = Path(root) / f"vllm-{version}"
    if not (env / ".complete").is_file():
        pytest.fail(f"{env} is missing or half-built (no .complete marker): run `bash .ci/smoke_envs.sh {version}`")
    return env


def site_packages(env: Path) -> Path:
    return next((env / "lib").glob("python3*/site-packages"))


def smoke(args: list[str], out: Path, timeout: float = 900) -> tuple[int, dict | None, str]:
    """Run `python -m driftcheck.runner ... --json` from the test interpreter; (rc, result, stderr)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-m", "driftcheck.runner", *args, "--out", str(out), "--json"],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    try:
        result = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        result = None
    return proc.returncode, result, proc.stderr

