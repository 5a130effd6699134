"""vLLM's own tests, examples and benchmarks of 0.13.0, 0.19.0, 0.21.0, 0.28.0 and 0.30.0 as a client (batch 31e,
docs/triage/2026-12-05-vllm-own-tests-31e.md).

Every error those scans gave was real (stale benchmarks, ROCm/CUDA-only tests, helpers no test calls any more); what
they showed wrong were the reasons of unknowns and the claim of a warning:

- TL1 (DC002 unknown "import chain too deep (an import cycle?)"): `from vllm.ir import ops` where
  `vllm/ir/__init__.py` says `from . import ops`. A package that imports its own submodule by a relative import
  binds the submodule; looking `ops` up in the package again went round until the depth limit. Now the name is the
  submodule, so what the client reads on it is checked (`names._binding_result`); where the sources hold no such
  module (`from . import _C`, a compiled extension), an unknown that says so.
- TL2 (DC006 warning "this assignment creates a new attribute that vLLM never reads"): `linear.is_bmm = True` (0.30.0
  tests/quantization/test_fp8.py), which vLLM reads as `getattr(layer, "is_bmm", False)`, and `self.attn._k_scale =
  ...` (0.13.0 tests/compile/test_fusion_attn.py) on an `Attention` whose `__init__` hands itself to
  `_init_kv_cache_quant(self, ...)`, which sets `layer._k_scale`. A store of a member vLLM reads by its name
  (`getattr`/`hasattr` with the literal) or, on a torch module, creates from outside the class (as reads of it are
  taken since before) is read by vLLM: no warning (`missing_attribute._read_by_vllm`).
- TL3 (DC006 unknown, reason): `MistralToolParser(MistralParserToolAdapter)`, where vLLM binds the base as
  `(..., MistralParserToolAdapter) = make_adapters(MistralParser)`, said the class "inherits from
  MistralParserToolAdapter, which driftcheck does not read", as of a third-party base. It now names the binding and
  says it is a value computed at import time (`classes._computed_bases`); a third-party base keeps its reason.
- TL4 (DC006): `rejection_sampler.sampler.return_value = ...` (0.13.0, 0.30.0 tests/v1/sample/test_rejection_sampler.py,
  a warning "vLLM never reads"), where the fixture handed `Mock(spec=Sampler)` to `RejectionSampler(sampler: Sampler)`;
  reads of `.assert_called_once_with` / `.call_count` there were errors. A member only unittest.mock's mocks have
  (read from the running Python's `AsyncMock`), used on a vLLM-typed value in a file that makes mocks (imports
  unittest.mock or takes `mocker`), is an unknown that says why (`visitor.mock_members`, `_makes_mocks`).
"""

from __future__ import annotations

from scan.helpers import by_rule, edited, errors, plugin_shape, scan_trees

TL1_VLLM, TL1_CLIENT = plugin_shape("TL1")
TL2_VLLM, TL2_CLIENT = plugin_shape("TL2")
TL3_VLLM, TL3_CLIENT = plugin_shape("TL3")
TL4_VLLM, TL4_CLIENT = plugin_shape("TL4")


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


def test_tl1_twin_a_from_dot_import_of_a_submodule_the_sources_lack_is_no_error(tmp_path):
    # `from . import _C` of a compiled extension: the sources read hold no such module, and Python finds the .so
    vllm = {**TL1_VLLM, "vllm/ir/__init__.py": "from . import ops, _C\nfrom .op import register_op\n"}
    client = edited(TL1_CLIENT, "tests/test_ir.py", ("from vllm.ir import ops\n", "from vllm.ir import ops, _C\n"))
    result = scan_trees(tmp_path, vllm, client)
    assert errors(result) == []
    assert [u.message for u in result.unknown if u.rule == "DC002"] == [
        "cannot tell whether `vllm.ir._C` exists: `vllm.ir` imports `_C` from itself (`from . import _C`, "
        "vllm/ir/__init__.py:1) and no module `vllm.ir._C` is in the sources read: a compiled extension or another "
        "build's module may be it"]


# ----------------------------------------------------------------------------------------------------------- TL2
def _stores(result) -> list[str]:
    return sorted(f"{f.severity} {f.symbol.rsplit('.', 1)[-1]}" for f in by_rule(result, "DC006"))


def test_tl2_stores_of_members_vllm_reads_by_name_or_sets_from_outside_are_no_finding(tmp_path):
    result = scan_trees(tmp_path, TL2_VLLM, TL2_CLIENT, only=["DC006"])
    assert errors(result) == []
    assert _stores(result) == []


def test_tl2_twin_a_store_vllm_never_reads_stays_a_warning(tmp_path):
    rel = "tests/test_layers.py"
    client = edited(TL2_CLIENT, rel, ("    linear.is_bmm = True\n", "    linear.is_bmm = True\n    linear.is_bnm = True\n"),
                    ("        self.attn._v_scale = scale\n", "        self.attn._v_scale = scale\n        self.attn._w_scale = scale\n"))
    result = scan_trees(tmp_path, TL2_VLLM, client, only=["DC006"])
    assert _stores(result) == ["warning _w_scale", "warning is_bnm"]
    assert all("vLLM never reads" in f.message for f in by_rule(result, "DC006"))


def test_tl2_twin_set_from_outside_counts_only_on_torch_modules(tmp_path):
    # vLLM's helper sets `_k_scale` on what it is handed; a class that is no torch module is not what it is handed
    vllm = {**TL2_VLLM, "vllm/attention/layer.py": TL2_VLLM["vllm/attention/layer.py"].replace(
        "class Attention(nn.Module):", "class Attention:").replace("        super().__init__()\n", "")}
    result = scan_trees(tmp_path, vllm, TL2_CLIENT, only=["DC006"])
    assert _stores(result) == ["warning _k_scale", "warning _v_scale"]


# ----------------------------------------------------------------------------------------------------------- TL3
def test_tl3_a_base_a_factory_call_returns_is_named_as_such_in_the_unknown(tmp_path):
    result = scan_trees(tmp_path, TL3_VLLM, TL3_CLIENT, only=["DC006"])
    assert errors(result) == []
    reasons = [u.message for u in result.unknown if u.rule == "DC006"]
    assert reasons and all("`vllm.parser.engine.registered_adapters.MistralParserToolAdapter` "
                           "(vllm/parser/engine/registered_adapters.py:9), a name vLLM binds to a value computed at "
                           "import time" in r for r in reasons)
    assert not any("which driftcheck does not read" in r for r in reasons)


def test_tl3_twin_a_third_party_base_keeps_its_reason(tmp_path):
    vllm = {**TL3_VLLM, "vllm/tool_parsers/mistral_tool_parser.py": TL3_VLLM["vllm/tool_parsers/mistral_tool_parser.py"]
            .replace("from vllm.parser.engine.registered_adapters import MistralParserToolAdapter",
                     "from mistral_common.adapters import MistralParserToolAdapter")}
    result = scan_trees(tmp_path, vllm, TL3_CLIENT, only=["DC006"])
    reasons = [u.message for u in result.unknown if u.rule == "DC006"]
    assert reasons and all("which driftcheck does not read" in r and "computed at import time" not in r for r in reasons)


# ----------------------------------------------------------------------------------------------------------- TL4
def test_tl4_mock_members_on_a_vllm_member_a_test_filled_with_a_mock_are_unknown(tmp_path):
    result = scan_trees(tmp_path, TL4_VLLM, TL4_CLIENT, only=["DC006"])
    assert errors(result) == []
    assert by_rule(result, "DC006") == []
    unknown = sorted(u.symbol.rsplit(".", 1)[-1] for u in result.unknown if u.rule == "DC006")
    assert unknown == ["assert_called_once_with", "call_count", "return_value"]
    assert all("a member of unittest.mock's mocks, and this file makes mocks" in u.message for u in result.unknown)


def test_tl4_twin_without_mocks_in_the_file_or_for_another_name_stays_an_error(tmp_path):
    rel = "tests/test_rejection_sampler.py"
    no_mock = edited(TL4_CLIENT, rel, ("from unittest.mock import Mock\n", ""),
                     ("    mock_sampler = Mock(spec=Sampler)\n", "    mock_sampler = Sampler()\n"))
    result = scan_trees(tmp_path / "no_mock", TL4_VLLM, no_mock, only=["DC006"])
    assert sorted(f.symbol.rsplit(".", 1)[-1] for f in errors(result)) == ["assert_called_once_with", "call_count"]
    other = edited(TL4_CLIENT, rel, ("    assert sampler.sampler.call_count == 1\n",
                                     "    assert sampler.sampler.call_count == 1\n    assert sampler.sampler.temperature\n"))
    result = scan_trees(tmp_path / "other", TL4_VLLM, other, only=["DC006"])
    assert [f.symbol.rsplit(".", 1)[-1] for f in errors(result)] == ["temperature"]
