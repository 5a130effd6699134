"""GitHub workflow commands: `::error file=...,line=...::message`, one per finding, escaped."""

from __future__ import annotations

import re

from driftcheck.report import render

from scan.helpers import sample_result

COMMAND = re.compile(r"^::(error|warning|notice) (?P<props>[^:]*)::(?P<msg>.*)$")
LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _props(text: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in text.split(","))


def test_one_annotation_per_finding_with_file_and_line(tmp_path):
    result = sample_result(tmp_path)
    lines = render("github", result).splitlines()
    findings = result.visible()
    assert len(lines) == len(findings) + len(result.unknown)
    for line, f in zip(lines, findings):
        m = COMMAND.match(line)
        assert m, line
        assert m.group(1) == LEVEL[f.severity]
        props = _props(m.group("props"))
        assert (props["file"], props["line"]) == (f.client.path, str(f.client.line))
        assert props["title"] == f"{f.rule} {f.name}"
        assert "\n" not in m.group("msg")


def test_unknowns_are_warnings_on_their_client_line(tmp_path):
    result = sample_result(tmp_path)
    last = render("github", result).splitlines()[-1]
    [u] = result.unknown
    m = COMMAND.match(last)
    assert m.group(1) == "warning"
    assert _props(m.group("props"))["file"] == u.client.path and _props(m.group("props"))["line"] == str(u.client.line)


def test_escaping_and_client_root(tmp_path):
    result = sample_result(tmp_path)
    out = render("github", result, client_root="src/")
    [info] = [ln for ln in out.splitlines() if ln.startswith("::notice")]
    # % and newlines in messages are escaped (%25, %0A); file paths get the client root
    assert info.endswith("::100%25 informative: a, b%0Asecond line")
    assert "file=src/pkg/gen.py," in info
