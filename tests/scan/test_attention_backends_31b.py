"""Batch 31b (attention backends and KV-cache research clients at their GitHub HEAD,
docs/triage/2026-12-05-attention-backends-31b.md).

TG1: a same-named function that rejects the client's calls is no new home. FAndromedA/vllm_for_sp2 @ 2131526, written
for vLLM 0.17.1, imports the custom-op wrapper `unified_attention` from `vllm.model_executor.layers.attention.attention`
(`sse_swa_moba_vllm/layers/moba.py:31`) and calls it as `unified_attention(query, key, value, self.layer_name)`
(`:386`). vLLM 0.20.2 dropped the wrapper, and DC002 said "It is defined in `vllm.v1.attention.ops.triton_unified_attention`
now", whose `unified_attention(q, k, v, out, cu_seqlens_q, ...)` is a Triton kernel's launcher with ten required
arguments; `move-import` would have rewritten the import to it. A `def` of the name elsewhere is now a new home only when
it accepts at least one of the calls the importing file makes through the name (`_homes_taking_the_calls`); a file
that never calls it, or binds the name in another way too, keeps the hint.

TG2: DC004's "gets 'x' both by position and by keyword" said "(a parameter was inserted before it)". The same client
calls `get_attn_backend(head_size, dtype, kv_cache_dtype, block_size, use_mla=False, ...)` (`moba.py:180`), and
vLLM 0.18 removed `block_size`: an inserted parameter pushes `use_mla` back and never causes this; a removed one does.
The message now says which positional argument reaches the parameter and why.

TG3: the same client reads `forward_context.virtual_engine` (`sse_swa_h.py:608`), which vLLM 0.19 dropped from
`ForwardContext`. The unknown said the client imports `sse_swa_moba_hf` (test_precision_compare.py:92), "which
driftcheck does not read ...: a plugin the client runs under may set 'virtual_engine'": `sse_swa_moba_hf` is a package
of the client's own tree whose files import no vLLM (the Hugging Face twin of its model), so it cannot reach what vLLM
hands out from its module state. The top-level names of every module of the client's tree are now its own
(`Usage.own_packages`) for that question (`unread_code.plugin_may_set`); a package outside the tree (`fla` there) is
still unread and named, so vllm_for_sp2's read stays unknown, for the right reason.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"
TG1 = SHAPES / "TG1_same_named_function_that_rejects_the_call_is_no_new_home"
TG2 = SHAPES / "TG2_keyword_also_filled_by_position_once_a_parameter_before_it_was_removed"


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}


def _fixed(tmp_path: Path) -> list:
    from driftcheck.fix.fixer import FixOptions, plan_fixes
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    plan = plan_fixes(resolve_vllm(str(tmp_path / "vllm-src"), tmp_path / "cache"),
                      resolve_client(str(tmp_path / "client"), tmp_path / "cache"),
                      ScanOptions(cache_dir=tmp_path / "cache", use_cache=False), FixOptions(only=["move-import"]))
    return plan.changes


# ----------------------------------------------------------------------------------------------------------- TG1
VLLM = _tree(TG1 / "vllm_src")
UNGUARDED = """\
from vllm.layers.attention.attention import unified_attention


class MixtureOfBlocksAttention:
    layer_name = "model.layers.0.self_attn.attn"

    def forward(self, query, key, value):
        return unified_attention(query, key, value, self.layer_name)
"""


def _dc002(tmp_path: Path, code: str, vllm: dict[str, str] = VLLM) -> list:
    client = {"plugin/__init__.py": "", "plugin/moba.py": code}
    return [f for f in scan_trees(tmp_path, vllm, client).findings if f.rule == "DC002"]


def test_tg1_guarded_as_in_the_shape_a_warning_that_names_no_home(tmp_path):
    (f,) = _dc002(tmp_path, (TG1 / "client" / "plugin" / "moba.py").read_text())
    assert f.severity == "warning"
    assert "It is defined in" not in f.message and not f.details.get("moved_to") and f.fix is None
    assert "another function" in f.message and "unified_attention(q, k, v, out, cu_seqlens_q, ...)" in f.message


def test_tg1_unguarded_as_the_client_writes_it_stays_an_error_and_is_not_moved(tmp_path):
    (f,) = _dc002(tmp_path, UNGUARDED)
    assert (f.severity, f.fix) == ("error", None)  # the import still fails: a real error
    assert "triton_unified_attention` defines a `unified_attention(" in f.message and "(line 8)" in f.message
    assert _fixed(tmp_path) == []


def test_tg1_twin_a_def_that_takes_the_call_is_where_the_name_went(tmp_path):
    moved = {**VLLM, "vllm/ops/triton_unified_attention.py": "def unified_attention(query, key, value, layer_name):\n"
                                                             "    return query\n"}
    (f,) = _dc002(tmp_path, UNGUARDED, moved)
    assert f.severity == "error" and "It is defined in `vllm.ops.triton_unified_attention` now." in f.message
    [change] = _fixed(tmp_path)
    assert change.new.startswith("from vllm.ops.triton_unified_attention import unified_attention\n")


def test_tg1_twin_a_file_that_never_calls_the_name_keeps_the_hint(tmp_path):
    (f,) = _dc002(tmp_path, "from vllm.layers.attention.attention import unified_attention\n\nOPS = [unified_attention]\n")
    assert "It is defined in `vllm.ops.triton_unified_attention` now." in f.message


def test_tg1_twin_a_name_the_file_binds_otherwise_too_keeps_the_hint(tmp_path):
    code = UNGUARDED + "\n\ndef helper(x):\n    unified_attention = x\n    return unified_attention(1)\n"
    (f,) = _dc002(tmp_path, code)
    assert "It is defined in `vllm.ops.triton_unified_attention` now." in f.message


def test_tg1_twin_one_call_the_def_takes_is_enough(tmp_path):
    code = UNGUARDED + ("\n\ndef launch(q, k, v, o, cu, mq, sk, mk, scale):\n"
                        "    return unified_attention(q, k, v, o, cu, mq, sk, mk, scale, True)\n")
    (f,) = _dc002(tmp_path, code)
    assert "It is defined in `vllm.ops.triton_unified_attention` now." in f.message


# ----------------------------------------------------------------------------------------------------------- TG2
def _dc004(tmp_path: Path, code: str) -> list:
    client = {"plugin/__init__.py": "", "plugin/layer.py": code}
    return [f for f in scan_trees(tmp_path, _tree(TG2 / "vllm_src"), client).findings if f.rule == "DC004"]


def test_tg2_guarded_as_in_the_shape_a_warning_that_says_a_parameter_before_it_went(tmp_path):
    (f,) = _dc004(tmp_path, (TG2 / "client" / "plugin" / "layer.py").read_text())
    assert f.severity == "warning"
    assert "inserted" not in f.message
    assert ("gets 'use_mla' both by position and by keyword in vLLM 0.99.0: the call's 4th positional argument binds "
            "it, since only 3 parameters come before it now (a parameter before it was removed, or moved behind it)"
            in f.message)


def test_tg2_unguarded_it_stays_an_error(tmp_path):
    code = ("from vllm.attention.selector import get_attn_backend\n\n\n"
            "def pick(b):\n    return get_attn_backend(128, 'bf16', 'auto', b, use_mla=True)\n")
    (f,) = _dc004(tmp_path, code)
    assert f.severity == "error" and "4th positional argument binds it" in f.message


def test_tg2_the_first_parameter_says_no_parameter_comes_before_it(tmp_path):
    code = ("from vllm.attention.selector import get_attn_backend\n\n\n"
            "def pick():\n    return get_attn_backend(128, head_size=64, dtype='bf16', kv_cache_dtype='auto')\n")
    (f,) = _dc004(tmp_path, code)
    assert f.severity == "error" and "1st positional argument binds it, since no parameter comes before it" in f.message


# ----------------------------------------------------------------------------------------------------------- TG3
TG3 = SHAPES / "TG3_package_of_the_client_tree_without_vllm_is_its_own_not_an_unread_plugin"
UNGUARDED_READ = """\
from vllm.forward_context import get_forward_context

from helpers.shapes import first_cache


def kv_for(layer_caches):
    return layer_caches[get_forward_context().virtual_engine]
"""


def _dc006(tmp_path: Path, code: str, extra: dict[str, str] | None = None):
    client = {"plugin/__init__.py": "", "plugin/attn.py": code, "helpers/__init__.py": "",
              "helpers/shapes.py": (TG3 / "client" / "helpers" / "shapes.py").read_text(), **(extra or {})}
    result = scan_trees(tmp_path, _tree(TG3 / "vllm_src"), client)
    return [f for f in result.findings if f.rule == "DC006"], [u for u in result.unknown if u.rule == "DC006"]


def test_tg3_guarded_as_in_the_shape_a_warning_not_an_unknown_naming_the_clients_own_package(tmp_path):
    found, unknown = _dc006(tmp_path, (TG3 / "client" / "plugin" / "attn.py").read_text())
    assert unknown == []
    assert [f.severity for f in found] == ["warning"] and "hasattr" in found[0].message


def test_tg3_unguarded_the_read_fails_an_error(tmp_path):
    found, unknown = _dc006(tmp_path, UNGUARDED_READ)
    assert unknown == [] and [(f.severity, f.client.line) for f in found] == [("error", 7)]


def test_tg3_a_module_of_the_tree_under_src_is_its_own_too(tmp_path):
    code = UNGUARDED_READ.replace("from helpers.shapes", "from hfmodel.shapes")
    found, unknown = _dc006(tmp_path, code, {"src/hfmodel/__init__.py": "", "src/hfmodel/shapes.py": "def first_cache(c):\n"
                                                                                                      "    return c[0]\n"})
    assert unknown == [] and [f.severity for f in found] == ["error"]


def test_tg3_twin_a_package_outside_the_tree_is_still_unread_and_named(tmp_path):
    code = UNGUARDED_READ + "\n\ndef kernels():\n    import fla\n\n    return fla\n"
    found, unknown = _dc006(tmp_path, code)
    assert found == [] and len(unknown) == 1
    assert "imports `fla`" in unknown[0].message and "helpers" not in unknown[0].message
