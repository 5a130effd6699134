"""JUnit XML: parses with xml.etree; one testcase per finding; counts match the elements."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from driftcheck.report import render

from scan.helpers import sample_result, scan_client


def test_counts_match_failures_and_testcases(tmp_path):
    result = sample_result(tmp_path)
    root = ET.fromstring(render("junit", result))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    failures = [c for c in cases if c.find("failure") is not None]
    errors = [f for f in result.visible() if f.severity == "error"]
    assert int(suite.get("tests")) == len(cases) == len(result.visible()) + len(result.unknown)
    # error findings and unknowns both fail the scan, and both are <failure> elements
    assert int(suite.get("failures")) == len(failures) == len(errors) + len(result.unknown)
    assert suite.get("errors") == "0"


def test_testcases_carry_rule_file_and_line(tmp_path):
    result = sample_result(tmp_path)
    cases = ET.fromstring(render("junit", result)).find("testsuite").findall("testcase")
    for case, f in zip(cases, result.visible()):
        assert case.get("classname") == f"driftcheck.{f.rule}.{f.name}"
        assert (case.get("file"), case.get("line")) == (f.client.path, str(f.client.line))
        failure = case.find("failure")
        assert (failure is not None) == (f.severity == "error")
        if failure is not None and f.vllm:
            assert f"{f.vllm.path}:{f.vllm.line}" in failure.text
    props = {p.get("name"): p.get("value") for p in ET.fromstring(render("junit", result)).iter("property")}
    assert props["vllm.version"] == "0.99.0"


def test_clean_scan_has_one_passing_testcase(tmp_path):
    result = scan_client(tmp_path, {"ok.py": "from vllm.v1.request import Request\n"})
    suite = ET.fromstring(render("junit", result)).find("testsuite")
    [case] = suite.findall("testcase")
    assert case.find("failure") is None and suite.get("failures") == "0"
