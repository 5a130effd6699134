"""DC116 not-callable (probes/not_callable.py): a call of a vLLM member the target makes a property or a value.

Fake trees: the plugin shape NF1 (members that hold callables: a class with `__call__`, a `Callable` annotation, an
`int` member the client replaces with its own function) and its twins, which fail with TypeError.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees


def _dc116(tmp_path, vllm_edits=(), client_edits=()) -> list:
    vllm, client = plugin_shape("NF1")
    for old, new in vllm_edits:
        vllm = edited(vllm, "vllm/sampler.py", (old, new))
    for old, new in client_edits:
        client = edited(client, "plug/use.py", (old, new))
    result = scan_trees(tmp_path, vllm, client, only=["DC116"])
    return [(f.severity, f.client.line, f.symbol) for f in result.findings]


def test_dc116_nf1_members_that_hold_callables(tmp_path):
    assert _dc116(tmp_path) == []


def test_dc116_nf1_twin_a_class_without_call(tmp_path):
    found = _dc116(tmp_path, vllm_edits=[("    def __call__(self, x: float) -> float:", "    def apply(self, x: float) -> float:")])
    # `sampler.penalty(x)` and the property `sampler.default_penalty(...)` both hold a Penalty
    assert found == [("error", 9, "vllm.sampler.Sampler.default_penalty"), ("error", 9, "vllm.sampler.Sampler.penalty")]


def test_dc116_nf1_twin_a_value_the_client_does_not_replace(tmp_path):
    found = _dc116(tmp_path, client_edits=[("    sampler.hook = lambda x: x + 1", "    pass")])
    assert found == [("error", 9, "vllm.sampler.Sampler.hook")]


def test_dc116_nf1_twin_a_callable_annotation_that_becomes_a_number(tmp_path):
    found = _dc116(tmp_path, vllm_edits=[("self.post: Callable[[float], float] = abs", "self.post: float = 1.0")])
    assert found == [("error", 9, "vllm.sampler.Sampler.post")]


def test_dc116_the_message_names_the_type(tmp_path):
    vllm, client = plugin_shape("NF1")
    client = edited(client, "plug/use.py", ("    sampler.hook = lambda x: x + 1", "    pass"))
    [f] = scan_trees(tmp_path, vllm, client, only=["DC116"]).findings
    assert "`Sampler.hook` is a value in vLLM 0.99.0 (`int | None`)" in f.message
    assert "TypeError: 'int' object is not callable" in f.message and f.fix is None


def test_dc116_explain():
    from driftcheck.report.explain import explain_text

    [d] = explain_text('Traceback (most recent call last):\n  File "/srv/plug/conn.py", line 9, in step\n'
                       '    n = reqs.num_reqs()\nTypeError: \'int\' object is not callable\n')
    assert d["rule"] == "DC116"
