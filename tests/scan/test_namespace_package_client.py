"""PA (triage batch 19a; fixed since, `targets._namespace_package`): a PEP 420 namespace package given as --client.

genlm-backend v0.1.0 ships `genlm/backend/...`: `genlm/` has no __init__.py (a namespace package), `genlm/backend/`
has one, and the checkout's pyproject.toml beside `genlm/` declares `vllm>=0.6.6,<1.0.0`. Given `genlm/` as the
client, driftcheck takes it for a plain folder (targets.py: a package is a folder with __init__.py), so it names the
modules `backend.llm.vllm` instead of `genlm.backend.llm.vllm` and reads no requirement from beside it: no baseline,
"genlm declares no vLLM requirement", and a DC107 unknown that the checkout root, scanned instead, does not have.
The open question is which folders count as namespace packages (a `src/` folder of a src-layout checkout has the
same look: no __init__.py, packages inside, a pyproject.toml beside it), so the cause is left open as a strict xfail.
The twins below (a regular package folder, a checkout root) already behave and must keep doing so.
"""

from __future__ import annotations

import pytest

from driftcheck.sources.targets import resolve_client
from scan.helpers import write_tree

CHECKOUT = {
    "pyproject.toml": """
        [project]
        name = "nspkg-backend"
        dependencies = ["vllm>=0.6.6,<1.0.0; sys_platform == 'linux'"]
    """,
    "nspkg/backend/__init__.py": "",
    "nspkg/backend/llm.py": """
        from vllm import SamplingParams
        from nspkg.backend import helpers

        def params():
            return SamplingParams(max_tokens=helpers.N)
    """,
    "nspkg/backend/helpers.py": "N = 1\n",
}


def test_pa_namespace_package_folder_reads_its_requirement_and_keeps_its_name(tmp_path):
    root = write_tree(tmp_path / "checkout", CHECKOUT)
    target = resolve_client(str(root / "nspkg"), tmp_path / "cache")
    assert target.requires == ["vllm>=0.6.6,<1.0.0; sys_platform == 'linux'"]
    assert target.prefixes == ["nspkg"]


def test_pa_twin_a_regular_package_folder_already_does(tmp_path):
    root = write_tree(tmp_path / "checkout", {**CHECKOUT, "nspkg/__init__.py": ""})
    target = resolve_client(str(root / "nspkg"), tmp_path / "cache")
    assert target.requires == ["vllm>=0.6.6,<1.0.0; sys_platform == 'linux'"]
    assert target.prefixes == ["nspkg"]


def test_pa_twin_the_checkout_root_reads_its_own_requirement(tmp_path):
    root = write_tree(tmp_path / "checkout", CHECKOUT)
    target = resolve_client(str(root), tmp_path / "cache")
    assert target.requires == ["vllm>=0.6.6,<1.0.0; sys_platform == 'linux'"]


@pytest.mark.parametrize("layout", ["src", "scripts"])
def test_pa_twin_a_src_folder_or_a_folder_of_scripts_stays_a_plain_folder(tmp_path, layout):
    """No project named after it (`src/`), or modules of its own (a folder of scripts): not a namespace package."""
    files = {("src/" + k[len("nspkg/"):] if k.startswith("nspkg/") else k): v for k, v in CHECKOUT.items()}
    if layout == "scripts":
        files = {**CHECKOUT, "nspkg/run.py": "print(1)\n"}
    root = write_tree(tmp_path / "checkout", files)
    target = resolve_client(str(root / ("src" if layout == "src" else "nspkg")), tmp_path / "cache")
    assert target.prefixes == []
