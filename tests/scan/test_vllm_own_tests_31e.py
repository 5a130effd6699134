"""vLLM's own tests, examples and benchmarks of 0.13.0, 0.19.0, 0.21.0, 0.28.0 and 0.30.0 as a client (batch 31e,
docs/triage/2026-12-05-vllm-own-tests-31e.md).

Every error those scans gave was real (stale benchmarks, ROCm/CUDA-only tests, helpers no test calls any more); what
they showed wrong were unknowns and their reasons:

- TL1 (DC002/DC006 unknown "import chain too deep (an import cycle?)"): `from vllm.ir import ops` where
  `vllm/ir/__init__.py` says `from . import ops`. A package that imports its own submodule by a relative import
  binds the submodule; looking `ops` up in the package again went round until the depth limit. Now the name is the
  submodule, so what the client reads on it is checked (`names._binding_result`).
"""

from __future__ import annotations

from scan.helpers import by_rule, edited, errors, plugin_shape, scan_trees

TL1_VLLM, TL1_CLIENT = plugin_shape("TL1")


# ----------------------------------------------------------------------------------------------------------- TL1
def test_tl1_a_submodule_the_package_binds_by_from_dot_import_resolves(tmp_path):
    result = scan_trees(tmp_path, TL1_VLLM, TL1_CLIENT)
    assert errors(result) == []
    assert [u.message for u in result.unknown if "vllm.ir" in u.message] == []


def test_tl1_twin_a_name_the_submodule_lacks_is_an_error(tmp_path):
    rel = "tests/test_ir.py"
    client = edited(TL1_CLIENT, rel, ("    assert ir.ops.rms_norm(1.0) == 1.0\n",
                                      "    assert ir.ops.rms_norm(1.0) == 1.0\n"
                                      "    assert ir.ops.fused_add_rms_norm(1.0) == 1.0\n"
                                      "    assert ops.poly_norm(1.0) == 1.0\n"))
    result = scan_trees(tmp_path, TL1_VLLM, client)
    found = sorted((f.client.line, f.symbol) for f in errors(result))
    assert found == [(10, "vllm.ir.ops.fused_add_rms_norm"), (11, "vllm.ir.ops.poly_norm")]
    assert [u.message for u in result.unknown if "too deep" in u.message] == []


def test_tl1_twin_a_from_dot_import_of_a_submodule_the_package_lacks_stays_missing(tmp_path):
    vllm = {**TL1_VLLM, "vllm/ir/__init__.py": "from . import ops, passes\nfrom .op import register_op\n"}
    client = edited(TL1_CLIENT, "tests/test_ir.py", ("from vllm.ir import ops\n", "from vllm.ir import ops, passes\n"))
    result = scan_trees(tmp_path, vllm, client)
    assert [f.symbol for f in by_rule(result, "DC002") if f.severity == "error"] == ["vllm.ir.passes"]
