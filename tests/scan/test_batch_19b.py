"""Batch 19b (GitHub clients that change vLLM at build or install time: minimax-m3-sm120, vllm-windows-build,
vllm-experiment and three more; docs/triage/2026-12-06-build-time-patchers-19b.md): 27 false errors, one cause.

NH1 (9 errors at each of 0.25.1, 0.26.0 and 0.33.0, vllm-windows-build): its `turboquant/` folder holds copies of files
of the author's vLLM tree (a changed copy of the release's `vllm/v1/attention/ops/triton_turboquant_decode.py`, and
modules no release has) that import each other by vLLM's names: `vllm.v1.attention.ops.turboquant_kv_cache` is the
file beside the importer. Dropped into vLLM's `ops/` they run; nothing in the client says whether they are, so a module
only the folder holds is unknown (DC001), as is a name only the folder's copy of a release module defines (DC002)
(drop_ins.py). The runnable shape is tests/fixtures/plugin_shapes/NH1_; here, the twins that stay errors.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

NH1_VLLM, _SHAPE = plugin_shape("NH1")
NH1_CLIENT = {rel: text for rel, text in _SHAPE.items() if rel != "main.py"}  # the folder alone (main.py drops it in)
BACKEND = "turboquant/triton_attn_modified.py"
DECODE = "turboquant/triton_turboquant_decode.py"


def _found(tmp_path, client_files):
    result = scan_trees(tmp_path, NH1_VLLM, client_files, only=["DC001", "DC002"])
    assert not result.internal_errors
    out = [(f.severity, f.rule, f.client.path, f.client.line) for f in result.findings]
    out += [("unknown", u.rule, u.client.path, u.client.line) for u in result.unknown]
    return sorted(out), result


def test_nh1_the_folders_modules_are_unknowns_naming_the_copy_and_the_import(tmp_path):
    found, result = _found(tmp_path, NH1_CLIENT)
    assert found == [("unknown", "DC001", BACKEND, 3), ("unknown", "DC001", DECODE, 3), ("unknown", "DC002", BACKEND, 2)]
    by_rule = {u.rule: u.message for u in result.unknown}
    assert "the client's `turboquant/turboquant_kv_cache.py` is a copy of it" in by_rule["DC001"]
    assert "the client's `turboquant/triton_turboquant_decode.py` is a copy of that module, which may" in by_rule["DC002"]
    assert all("in a folder of copies of `vllm.v1.attention.ops`'s files that import each other by vLLM's names ("
               in u.message for u in result.unknown)


@pytest.mark.parametrize("client, expected", [
    # a module the folder does not hold: no copy of it anywhere
    (edited(NH1_CLIENT, BACKEND, ("ops.turboquant_kv_cache import", "ops.turboquant_metadata import")),
     [("error", "DC001", BACKEND, 3)]),
    # no file of the folder is named like a file of `vllm/v1/attention/ops/`: nothing says the folder mirrors it
    ({**{k: v for k, v in NH1_CLIENT.items() if k != DECODE}, "turboquant/my_decode.py": NH1_CLIENT[DECODE]},
     [("error", "DC001", "turboquant/my_decode.py", 3), ("error", "DC001", BACKEND, 3), ("error", "DC002", BACKEND, 2)]),
    # the imports name a package the release lacks (`attention.kernels`): not a copy of one of its packages
    ({rel: text.replace("attention.ops.", "attention.kernels.") for rel, text in NH1_CLIENT.items()},
     [("error", "DC001", BACKEND, 2), ("error", "DC001", BACKEND, 3), ("error", "DC001", DECODE, 3)]),
], ids=["not-a-sibling", "mirrors-nothing", "no-such-package"])
def test_nh1_twins_keep_the_errors(tmp_path, client, expected):
    found, _ = _found(tmp_path, client)
    assert [x for x in found if x[0] == "error"] == expected
