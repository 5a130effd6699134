"""Root causes of false errors in the self-scans of vLLM 0.8.5, 0.9.0, 0.9.1, 0.9.2, 0.10.0 and 0.10.1 (batch 21b,
docs/triage/2026-12-05-self-scans-old-releases-21b.md): the shape that runs (no error, tests/fixtures/plugin_shapes/X*),
and the same shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"


def _shape_files(case: str, part: str) -> dict[str, str]:
    root = SHAPES / case / part
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}


def _found(tmp_path, case: str, client_edits: dict[str, tuple[str, str]] | None = None,
           vllm_edits: dict[str, tuple[str, str]] | None = None, rule: str = "") -> list[tuple[str, str]]:
    """(rule, severity) of each finding for the shape, after replacing `old` with `new` in the files named."""
    vllm, client = _shape_files(case, "vllm_src"), _shape_files(case, "client")
    for files, edits in ((vllm, vllm_edits or {}), (client, client_edits or {})):
        for rel, (old, new) in edits.items():
            assert old in files[rel], (rel, old)
            files[rel] = files[rel].replace(old, new)
    result = scan_trees(tmp_path, vllm, client)
    assert result.internal_errors == []
    return [(f.rule, f.severity) for f in result.findings if not rule or f.rule == rule]


# ----------------------------------------------------------------------------------------- XA
# vLLM 0.8.5-0.10.1, lora/fully_sharded_layers.py (5 calls a release): `super().can_replace_layer(..., decorate=False)`
# reaches a method under `@_not_fully_sharded_can_replace`, whose wrapper `dec(*args, **kwargs)` pops `decorate` out of
# its `**kwargs` before calling the method. The call was bound against the method's own signature.
XA = "XA_keyword_a_decorator_wrapper_takes_before_handing_the_call_on"
XA_CALLER = "pkg/layers.py"
XA_LAYERS = "vllm/lora/layers.py"
XA_POP = 'decorate = kwargs.pop("decorate") if "decorate" in kwargs else True'


def test_xa_a_keyword_the_wrapper_pops_is_accepted(tmp_path):
    assert _found(tmp_path, XA, rule="DC003") == []


def test_xa_a_keyword_neither_the_wrapper_nor_the_method_takes_stays_an_error(tmp_path):
    edits = {XA_CALLER: ("decorate=False,", "decorate=False,\n            sharded=True,")}
    assert _found(tmp_path, XA, client_edits=edits, rule="DC003") == [("DC003", "error")]


def test_xa_a_wrapper_that_pops_nothing_stays_an_error(tmp_path):
    # the wrapper hands `decorate` on to the method, which does not take it: TypeError
    edits = {XA_LAYERS: (XA_POP, 'decorate = kwargs.get("decorate", True)')}
    assert _found(tmp_path, XA, vllm_edits=edits, rule="DC003") == [("DC003", "error")]


def test_xa_a_keyword_only_parameter_of_the_wrapper_is_accepted(tmp_path):
    edits = {XA_LAYERS: ("def dec(*args, **kwargs):\n        " + XA_POP, "def dec(*args, decorate=True, **kwargs):")}
    assert _found(tmp_path, XA, vllm_edits=edits, rule="DC003") == []


def test_xa_a_wrapper_that_does_not_call_the_decorated_function_adds_nothing(tmp_path):
    # the popped keyword counts only for a wrapper that hands the rest of the call on to what it decorates
    edits = {XA_LAYERS: ("return can_replace(*args, **kwargs) and condition", "return condition")}
    assert _found(tmp_path, XA, vllm_edits=edits, rule="DC003") == [("DC003", "error")]


# ----------------------------------------------------------------------------------------- XB
# vLLM 0.8.5-0.9.2, prompt_adapter/layers.py: `self.emb_layer = self.base_layer.base_layer` where `base_layer` is
# annotated `VocabParallelEmbedding`, read only under `if 'LoRA' in base_layer.__class__.__name__:` (the LoRA wrapper,
# no subclass of it, has `base_layer`). A test of the object's class name is a type check, as `isinstance` is.
XB = "XB_member_read_under_a_test_of_the_class_name"
XB_LAYERS = "pkg/layers.py"
XB_TEST = "if 'LoRA' in base_layer.__class__.__name__:"


def test_xb_a_member_read_under_a_class_name_test_is_a_warning(tmp_path):
    assert _found(tmp_path, XB, rule="DC006") == [("DC006", "warning")]


def test_xb_type_of_the_object_named_is_a_class_name_test_too(tmp_path):
    edits = {XB_LAYERS: (XB_TEST, "if type(base_layer).__name__.endswith('WithLoRA'):")}
    assert _found(tmp_path, XB, client_edits=edits, rule="DC006") == [("DC006", "warning")]


def test_xb_the_same_read_without_the_test_stays_an_error(tmp_path):
    edits = {XB_LAYERS: (XB_TEST, "if True:")}
    assert _found(tmp_path, XB, client_edits=edits, rule="DC006") == [("DC006", "error")]


def test_xb_a_test_of_a_name_that_is_not_the_class_name_stays_an_error(tmp_path):
    edits = {XB_LAYERS: (XB_TEST, "if 'LoRA' in base_layer.__module__:")}
    assert _found(tmp_path, XB, client_edits=edits, rule="DC006") == [("DC006", "error")]


# ----------------------------------------------------------------------------------------- XC
# vLLM 0.9.1, model_executor/model_loader/__init__.py and 3 more callers of load_model / load_weights: the BitsAndBytes
# loader raises "does not support BitsAndBytes quantization yet. No 'packed_modules_mapping' found." (a class attribute
# of the model). DC108 took `packed_modules_mapping` for a setup function, and `get_packed_modules_mapping(self.model)`
# in lora/models.py for vLLM's own call of it: the engine's call site was found by a substring.
XC = "XC_raise_naming_an_attribute_vllm_reads_only_through_a_longer_named_getter"
XC_LORA = "vllm/lora/models.py"


def test_xc_a_longer_name_ending_in_the_named_one_is_no_call_of_it(tmp_path):
    assert _found(tmp_path, XC, rule="DC108") == []


def test_xc_a_real_call_of_the_named_setup_stays_an_error(tmp_path):
    # vLLM's engine calls `packed_modules_mapping(...)` itself, and the client never does: DC108 as before
    edits = {XC_LORA: ("get_packed_modules_mapping(self.model)", "packed_modules_mapping(self.model)")}
    assert _found(tmp_path, XC, vllm_edits=edits, rule="DC108") == [("DC108", "error")]


def test_xc_a_method_call_of_the_named_setup_stays_an_error(tmp_path):
    edits = {XC_LORA: ("get_packed_modules_mapping(self.model)", "self.model.packed_modules_mapping()")}
    assert _found(tmp_path, XC, vllm_edits=edits, rule="DC108") == [("DC108", "error")]
