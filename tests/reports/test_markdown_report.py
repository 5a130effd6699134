"""Markdown (PR comment) and JSON renderers."""

from __future__ import annotations

import json

from driftcheck.report import render

from scan.helpers import sample_result, scan_client


def test_markdown_summary_tables_and_unknowns(tmp_path):
    result = sample_result(tmp_path)
    md = render("markdown", result)
    s = result.to_json()["summary"]
    assert f"**{s['error']} error(s), {s['warning']} warning(s), {s['info']} info, {s['unknown']} unknown**" in md
    assert "### `pkg/gen.py`" in md
    tables = md[md.index("### "):]  # the per-file tables (the counts by rule come first)
    rows = [ln for ln in tables.splitlines() if ln.startswith("| ") and not ln.startswith("| Line")]
    assert len(rows) == len(result.visible())
    for f in result.visible():
        assert any(row.startswith(f"| {f.client.line} | {f.rule} {f.name} | {f.severity} |") for row in rows)
        if f.vllm:
            assert f"`{f.vllm.path}:{f.vllm.line}`" in md
    # a newline inside a message must not break the table row
    assert any("100% informative: a, b second line" in row for row in rows)
    assert "### Could not decide (unknown)" in md and "**DC008**" in md


def test_markdown_clean(tmp_path):
    result = scan_client(tmp_path, {"ok.py": "from vllm.v1.request import Request\n"})
    assert "No drift found." in render("markdown", result)


def test_json_is_the_result_contract(tmp_path):
    result = sample_result(tmp_path)
    data = json.loads(render("json", result))
    assert data == json.loads(json.dumps(result.to_json()))
    assert [f["rule"] for f in data["findings"]] == [f.rule for f in result.visible()]
    assert data["summary"]["unknown"] == len(result.unknown) == len(data["unknown"])
    assert all(f["fingerprint"] for f in data["findings"])


def test_text_names_client_and_vllm_lines(tmp_path):
    result = sample_result(tmp_path)
    text = render("text", result, color=False, width=200)
    for f in result.visible():
        if f.vllm:
            assert f"{f.vllm.path}:{f.vllm.line}" in text
    assert "Could not decide" in text and "\x1b[" not in text


def test_text_says_each_severity_in_words(tmp_path):
    """Without colour (a CI log, a pipe) an error and a warning must still be told apart on their rows."""
    result = sample_result(tmp_path)
    text = render("text", result, color=False, width=200)
    severities = {f.severity for f in result.visible()}
    assert {"error", "warning"} <= severities
    for f in result.visible():
        assert f"{f.rule} {f.severity}" in text


def test_text_shows_no_comment_as_vllm_evidence(tmp_path):
    """A missing name points at its module's first line; a licence comment there is not shown as the vLLM code."""
    result = sample_result(tmp_path)
    f = next(f for f in result.visible() if f.vllm)
    f.vllm.code = "# SPDX-License-Identifier: Apache-2.0"
    text = render("text", result, color=False, width=200)
    assert f"{f.vllm.path}:{f.vllm.line}" in text and "SPDX" not in text


def test_text_ends_with_the_findings_by_rule(tmp_path):
    """A long report (a platform plugin's runs to thousands of lines) ends with where its findings concentrate."""
    result = sample_result(tmp_path)
    text = render("text", result, color=False, width=200)
    line = next(ln for ln in text.splitlines() if ln.startswith("by rule: "))
    for f in result.visible():
        n = sum(1 for g in result.visible() if (g.rule, g.severity) == (f.rule, f.severity))
        assert f"{n} {f.severity}{'s' if n > 1 else ''}" in line.split(f"{f.rule} {f.name}: ")[1].split(";")[0]


def test_markdown_counts_by_rule_come_first(tmp_path):
    result = sample_result(tmp_path)
    md = render("markdown", result)
    head = md[:md.index("### ")]
    for f in result.visible():
        per = [g for g in result.visible() if g.rule == f.rule]
        cells = [str(sum(1 for g in per if g.severity == s)) for s in ("error", "warning", "info")]
        assert f"| {f.rule} {f.name} | {' | '.join(cells)} |" in head


def test_markdown_over_a_comment_limit_keeps_errors_first_and_says_what_it_left_out(tmp_path):
    """A platform plugin's report runs past GitHub's 65,536-character comment limit: the rows that fit are kept,
    errors before warnings, and a last line says how many were left out and where every one is listed."""
    from driftcheck.report.markdown import _tables, render as render_md

    result = sample_result(tmp_path)
    findings = result.visible()
    full = render_md(result, limit=10**9)
    head = full[:full.index("### ")]
    errors = {i for i, f in enumerate(findings) if f.severity == "error"}
    assert errors and len(errors) < len(findings)
    # room for the head, the note and the errors' tables, not one row more
    limit = len(head) + 400 + sum(len(line) + 1 for line in _tables(findings, errors))
    md = render_md(result, limit=limit)
    assert len(md) <= limit
    rows = [ln for ln in md[md.index("### "):].splitlines() if ln.startswith("| ") and not ln.startswith("| Line")]
    assert len(rows) == len(errors) and all(" | error | " in ln for ln in rows)
    left = len(findings) - len(errors)
    assert f"Not shown here, to stay within a comment's {limit:,} characters: {left} finding(s) (0 error(s))" in md
    assert "the JSON, SARIF and text reports list every one" in md
    assert head in md  # the counts by rule are complete whatever is left out
    assert render_md(result, limit=len(full)) == full  # a report that fits is whole, with no note
