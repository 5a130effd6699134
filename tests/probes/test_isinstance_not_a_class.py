"""DC119 isinstance-not-a-class (probes/isinstance_not_a_class.py): `isinstance` / `issubclass` against a vLLM name the
target makes a plain function (0.24.0's `FusedMoE` factory).

Fake trees: the plugin shape HH2 (the class: the client's weight map runs) and its twins, which raise TypeError.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees

LAYER = "vllm/model_executor/layers/fused_moe/layer.py"
WEIGHTS = "plug/weights.py"
FACTORY_EDITS = (("class FusedMoE:", "class MoERunner:"),
                 ("self.num_experts = num_experts\n",
                  "self.num_experts = num_experts\n\n\ndef FusedMoE(num_experts: int) -> MoERunner:\n"
                  "    return MoERunner(num_experts)\n"))


def _dc119(tmp_path, factory=True, client_edits=()) -> list:
    vllm, client = plugin_shape("HH2")
    if factory:
        vllm = edited(vllm, LAYER, *FACTORY_EDITS)
    if client_edits:
        client = edited(client, WEIGHTS, *client_edits)
    result = scan_trees(tmp_path, vllm, client, only=["DC119"])
    return [(f.severity, f.client.line, f.symbol, f.fix) for f in result.findings]


def test_dc119_a_class_is_no_finding(tmp_path):
    assert _dc119(tmp_path, factory=False) == []


def test_dc119_a_factory_function_fails_isinstance(tmp_path):
    assert _dc119(tmp_path) == [("error", 7, "vllm.model_executor.layers.fused_moe.layer.FusedMoE", None)]


def test_dc119_issubclass_and_an_alias_too(tmp_path):
    found = _dc119(tmp_path, client_edits=[
        ("import FusedMoE\n", "import FusedMoE as MoE\n"),
        ("if not isinstance(module, FusedMoE):", "if not issubclass(type(module), MoE):")])
    assert [f[:2] for f in found] == [("error", 7)]


def test_dc119_absent_cases(tmp_path):
    # the name as the first argument (`isinstance(FusedMoE, type)`: verl 0.9.1's own check) tests nothing against it
    assert _dc119(tmp_path, client_edits=[("isinstance(module, FusedMoE)", "isinstance(FusedMoE, type)")]) == []
    # a file that defines its own `isinstance`
    assert _dc119(tmp_path, client_edits=[("def build_expert_map", "def isinstance(a, b):\n    return False\n\n\ndef build_expert_map")]) == []


def test_dc119_message(tmp_path):
    vllm, client = plugin_shape("HH2")
    [f] = scan_trees(tmp_path, edited(vllm, LAYER, *FACTORY_EDITS), client, only=["DC119"], version="0.24.0").findings
    assert "is a function in vLLM 0.24.0, not a class" in f.message
    assert "TypeError: isinstance() arg 2 must be a type" in f.message and f.vllm.path.endswith("fused_moe/layer.py")


def test_dc119_explain():
    from driftcheck.report.explain import explain_text

    [d] = explain_text('Traceback (most recent call last):\n  File "/srv/plug/weights.py", line 7, in build_expert_map\n'
                       '    if not isinstance(module, FusedMoE):\nTypeError: isinstance() arg 2 must be a type, a tuple '
                       'of types, or a union\n')
    assert d["rule"] == "DC119"
