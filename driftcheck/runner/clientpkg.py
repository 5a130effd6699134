"""Make the client's `speculators.data_generation` importable without running `speculators/__init__.py`.

speculators 0.3.0's top-level `__init__` imports its training stack (config and model registries, run at
import time); on transformers 5 it fails (`PydanticUndefinedAnnotation: name 'torch' is not defined`).
The generator and its worker extension need none of it. A shim package named `speculators` whose
`__path__` is the client's package folder makes `import speculators.data_generation.custom_worker` load
the client's files as they are, without that `__init__`; it is used on every target, so that all load
the client the same way. The shim lives in a folder put first on sys.path *and* PYTHONPATH, because
vLLM's CPU workers are spawned and import the worker extension by its dotted name.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

GENERATOR_MODULE = "speculators.data_generation.vllm_hidden_states_generator"
SHIM_NOTE = ("loaded speculators.data_generation through a shim package: the client's own files, without "
             "speculators/__init__.py (it imports the training stack and fails on transformers 5)")


def package_dir(client: str | os.PathLike) -> Path:
    """The `speculators` package folder, given it or the folder holding it (site-packages, a copy)."""
    p = Path(client).resolve()
    for cand in (p, p / "speculators", p / "src" / "speculators"):
        if (cand / "data_generation" / "vllm_hidden_states_generator.py").is_file():
            return cand
    raise FileNotFoundError(f"no speculators/data_generation/vllm_hidden_states_generator.py under {p}")


def install_shim(pkg: Path, shim_root: Path) -> Path:
    shim = shim_root / "speculators"
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "__init__.py").write_text(
        "# written by driftcheck smoke: see driftcheck/runner/clientpkg.py\n"
        f"__path__ = [{str(pkg)!r}]\n"
    )
    for name in [m for m in sys.modules if m == "speculators" or m.startswith("speculators.")]:
        del sys.modules[name]
    sys.path.insert(0, str(shim_root))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shim_root), os.environ.get("PYTHONPATH")]))
    return shim
