"""The built wheel holds every package of the source tree (an editable install hides a missing one).

Builds the wheel as a user's `pip install .` would (an isolated build), from a copy of the files git
would ship, and compares its packages with the folders that have an __init__.py.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.network  # the isolated build fetches setuptools from the package index


def source_packages() -> set[str]:
    out = set()
    for top, installed_as in (("driftcheck", "driftcheck"), ("probes", "driftcheck.probes"), ("fixes", "driftcheck.fixes")):
        for init in (REPO / top).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / top).parts
            out.add(".".join((installed_as, *rel)))
    return out


def test_wheel_has_every_package_and_no_stray_top_level(tmp_path):
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    src = tmp_path / "src"
    for rel in files:
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            (src / rel).write_bytes((REPO / rel).read_bytes())
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    [wheel] = (tmp_path / "dist").glob("driftcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    packaged = {str(Path(n).parent).replace("/", ".") for n in names if n.endswith("/__init__.py")}
    assert source_packages() <= packaged, f"missing from the wheel: {sorted(source_packages() - packaged)}"
    assert "driftcheck.runner" in packaged
    tops = {n.split("/")[0] for n in names}
    assert tops == {"driftcheck", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}, tops
    py = {n for n in names if n.endswith(".py")}
    for rel in files:
        if rel.endswith(".py") and rel.split("/")[0] in ("driftcheck", "probes", "fixes"):
            installed = rel if rel.startswith("driftcheck/") else "driftcheck/" + rel
            assert installed in py, f"{rel} is not in the wheel"
