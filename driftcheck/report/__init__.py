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
