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
    findings = sorted(result.visible(), key=lambda f: ["error", "warning", "info"].index(f.severity))  # errors first
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


def test_over_what_github_shows_errors_come_first_after_a_notice(tmp_path):
    """GitHub shows 10 annotations of each kind per step, in print order: with more, the first line is a notice that
    says so, and every error is printed before any warning."""
    import copy

    result = sample_result(tmp_path)
    error = next(f for f in result.visible() if f.severity == "error")
    for i in range(12):
        extra = copy.deepcopy(error)
        extra.client.line += 100 + i
        result.findings.append(extra)
    result.findings.sort(key=lambda f: f.sort_key())
    lines = render("github", result).splitlines()
    assert lines[0].startswith("::notice title=driftcheck::") and "GitHub shows 10 of each kind per step" in lines[0]
    kinds = [COMMAND.match(ln).group(1) for ln in lines[1:]]
    n_errors = sum(1 for f in result.visible() if f.severity == "error")
    assert kinds[:n_errors] == ["error"] * n_errors and "error" not in kinds[n_errors:]
    assert f"{n_errors} error" in lines[0]
    assert not render("github", sample_result(tmp_path / "small")).startswith("::notice title=driftcheck")
