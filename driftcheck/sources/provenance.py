"""Where a report came from, read from package metadata and files (never by importing vLLM or torch)."""

from __future__ import annotations

import importlib.metadata as md
import platform
import sys

from driftcheck import __version__


def _version(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def provenance(vllm=None) -> dict:
    out = {
        "driftcheck": __version__,
        "python": platform.python_version(),
        "platform": f"{sys.platform}-{platform.machine()}",
        "torch": _version("torch"),  # of the environment driftcheck runs in
    }
    if vllm is not None:
        out["vllm"] = vllm.to_json()
        pins = [r for r in vllm.requires if r.replace(" ", "").lower().startswith("torch")]
        if pins:
            out["vllm_torch_requirement"] = pins[0]
    return out
