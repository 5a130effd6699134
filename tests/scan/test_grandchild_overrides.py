"""A call on a client class's `self` that a subclass two levels below vLLM's class overrides (plugin shapes GG, GGb):
the override must fit the call for the call to be no error; one that does not fit leaves the error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"


def _errors(root: Path, tmp_path: Path) -> list[str]:
    result = scan(resolve_vllm(str(root / "vllm_src"), tmp_path), [resolve_client(str(root / "client"), tmp_path)],
                  ScanOptions(cache_dir=tmp_path, use_cache=False))
    return [f"{f.rule} {f.client.path}:{f.client.line}" for f in result.findings if f.severity == "error"]


@pytest.mark.parametrize("case", ["GG_self_call_fits_a_grandchild_override",
                                  "GGb_grandchild_override_in_a_file_that_imports_vllm"])
def test_an_override_that_does_not_fit_leaves_the_error(case, tmp_path):
    root = tmp_path / "case"
    shutil.copytree(CASES / case, root)
    dflash = root / "client" / "pkg" / "dflash.py"
    dflash.write_text(dflash.read_text().replace("def build(self, n):", "def build(self, n, m, k, j):"))
    assert _errors(root, tmp_path / "scan") == ["DC005 pkg/base.py:7"] * 2  # two arguments missing


@pytest.mark.parametrize("case", ["GG_self_call_fits_a_grandchild_override",
                                  "GGb_grandchild_override_in_a_file_that_imports_vllm"])
def test_without_the_subclass_the_call_is_an_error(case, tmp_path):
    root = tmp_path / "case"
    shutil.copytree(CASES / case, root)
    (root / "client" / "pkg" / "dflash.py").write_text("from pkg.base import MyBase\n\n\nclass MyDflash(MyBase):\n    method = 'dflash'\n")
    assert _errors(root, tmp_path / "scan") == ["DC005 pkg/base.py:7"] * 2  # two arguments missing


def test_a_base_label_finds_the_table_key_it_ends_with_as_a_scan_of_the_table_would():
    # the lookup by dotted tails answers what `next(k for k in table if label.endswith("." + k))` did
    import itertools
    import random

    from driftcheck.client_model.client_classes import _table_key

    rng = random.Random(7)
    hits = 0
    words = ["pkg", "mod", "Base", "sub", "Worker", "b"]
    names = [".".join(p) for n in (1, 2, 3) for p in itertools.product(words, repeat=n)]
    for _ in range(300):
        table = dict.fromkeys(rng.sample(names, 40))
        label = ".".join(rng.choice(words) for _ in range(rng.randint(1, 5)))
        if label in table:
            continue  # the caller takes a label that is a key as it is
        hits += label != next((k for k in table if label.endswith("." + k)), label)
        assert _table_key(table, label) == next((k for k in table if label.endswith("." + k)), label)
    assert hits > 50  # the tables and labels were made so that most labels find a key
