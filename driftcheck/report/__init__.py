"""Report formats: one module per format, each with `render(result: ScanResult) -> str`."""

from __future__ import annotations

import importlib

FORMATS = {
    "text": "text",
    "json": "json_report",
    "sarif": "sarif",
    "junit": "junit",
    "markdown": "markdown",
    "github": "github",
}


def render(fmt: str, result, **options) -> str:
    module = importlib.import_module(f"{__name__}.{FORMATS[fmt]}")
    return module.render(result, **options)


def counts_by_rule(findings) -> dict[tuple[str, str], dict[str, int]]:
    """(rule id, rule name) -> severity -> how many findings, in rule order: where a long report's findings concentrate
    (the text and Markdown reports print it)."""
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for f in findings:
        per = counts.setdefault((f.rule, f.name), {})
        per[f.severity] = per.get(f.severity, 0) + 1
    return dict(sorted(counts.items()))
