"""The nn.Module member table is what torch's own sources say (driftcheck never imports torch)."""

from __future__ import annotations

import glob
import re
import sys
import zipfile
from pathlib import Path

import pytest

from driftcheck.vllm_model.external_apis import TORCH_NN_MODULE, TORCH_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from gen_external_apis import members_of  # noqa: E402


def _torch_sources() -> list[tuple[str, str]]:
    """(version, text of torch/nn/modules/module.py) from every torch this machine has on disk."""
    found = []
    for path in glob.glob(str(Path.home() / ".cache/driftcheck/envs/*/lib/python3*/site-packages/torch/nn/modules/module.py")):
        version_file = Path(path).parents[2] / "version.py"
        m = re.search(r"__version__\s*=\s*['\"]([^'\"+]+)", version_file.read_text()) if version_file.exists() else None
        found.append((m.group(1) if m else "?", Path(path).read_text()))
    for whl in glob.glob("/opt/wheels/torch-*.whl"):
        version = Path(whl).name.split("-")[1].split("+")[0]
        with zipfile.ZipFile(whl) as zf:
            found.append((version, zf.read("torch/nn/modules/module.py").decode()))
    return found


def test_table_matches_torch_sources():
    sources = _torch_sources()
    if not sources:
        pytest.skip("no torch sources on this machine (no vLLM environment, no torch wheel)")
    for version, text in sources:
        read = set(members_of(text, "torch.nn.modules.module", "Module"))
        if version == TORCH_VERSION:
            assert read == set(TORCH_NN_MODULE), f"torch {version}: regenerate with scripts/gen_external_apis.py"
        else:  # another torch: the public API the table names is still there
            public = {n for n in TORCH_NN_MODULE if not n.startswith("_")}
            assert len(public - read) <= 3, f"torch {version} lacks {sorted(public - read)}"


def test_table_has_the_api_clients_use():
    for name in ("named_parameters", "register_buffer", "load_state_dict", "to", "eval", "training", "forward"):
        assert name in TORCH_NN_MODULE
