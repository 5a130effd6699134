"""Where a report came from, read from package metadata and files (never by importing vLLM or torch)."""

from __future__ import annotations

import os
import sys

from driftcheck import __version__
from driftcheck.sources.fetch import normalise_name


def _version(dist: str) -> str | None:
    """The version of an installed distribution, from its `NAME-VERSION.dist-info` (or `.egg-info`) folder name on
    sys.path: what importlib.metadata finds first, without importing it (email and friends, on every CLI start)."""
    want = normalise_name(dist)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip on sys.path, or a missing folder
            continue
        for name in names:
            stem, dot, kind = name.rpartition(".")
            if kind in ("dist-info", "egg-info") and dot:
                project, _, version = stem.partition("-")
                if normalise_name(project) == want and version:
                    return version.split("-")[0]
    return None


def _python_version() -> str:
    """platform.python_version() without importing platform (its module-level regexes, on every CLI start)."""
    major, minor, micro, level, serial = sys.version_info
    return f"{major}.{minor}.{micro}" + ("" if level == "final" else f"{level[0] if level != 'candidate' else 'rc'}{serial}")


def _machine() -> str:
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform  # Windows

    return platform.machine()




def provenance(vllm=None) -> dict:
    out = {
        "driftcheck": __version__,
        "python": _python_version(),
        "platform": f"{sys.platform}-{_machine()}",
        "torch": _version("torch"),  # of the environment driftcheck runs in
    }
    if vllm is not None:
        out["vllm"] = vllm.to_json()
        pins = [r for r in vllm.requires if r.replace(" ", "").lower().startswith("torch")]
        if pins:
            out["vllm_torch_requirement"] = pins[0]
    return out
