"""DC115 unpack-count (probes/unpack_count.py): a vLLM call's result unpacked into a number of names the target does
not return.

Real releases: `GPUModelRunner._prepare_inputs` returns 8 values in 0.11.0, 2 in 0.16.0 and 3 in 0.32.0, each a
tuple display in every `return` (0.16.0's also takes a required `num_scheduled_tokens`, so a call without it raises
TypeError before any unpacking, and DC115 says nothing of it). Fake trees: the plugin shapes NE1 (the client's subclass overrides the method) and
NE2 (a function whose returns are not all tuple displays of one length; a function the client replaces) and their
twins.
"""

from __future__ import annotations

import pytest

from behaviour import scan_files
from scan.helpers import edited, plugin_shape, scan_trees

RUNNER = """
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner


    class MyRunner(GPUModelRunner):
        def execute_model(self, scheduler_output, intermediate_tensors=None):
            attn_metadata, logits_indices, spec_decode_metadata = self._prepare_inputs(scheduler_output)
            first, *rest = self._prepare_inputs(scheduler_output)
            return attn_metadata, first
"""


def _dc115(result) -> list[tuple[str, int]]:
    return [(f.severity, f.client.line) for f in result.findings if f.rule == "DC115"]


@pytest.mark.parametrize("vllm, returned", [("0.11.0", 8)])
def test_dc115_prepare_inputs_unpacked_into_three_names(tmp_path, vllm, returned):
    result = scan_files(tmp_path, {"runner.py": RUNNER}, vllm=vllm, only=["DC115"])
    assert _dc115(result) == [("error", 6)]  # `first, *rest = ...` takes any length
    [f] = result.findings
    assert f"returns {returned} values" in f.message and f.details["unpacked"] == 3
    assert f.vllm.path == "vllm/v1/worker/gpu_model_runner.py" and f.vllm.code.startswith("return")
    expected = "too many values to unpack (expected 3)" if returned > 3 else "not enough values to unpack (expected 3, got 2)"
    assert expected in f.message


def test_dc115_absent_where_the_call_raises_type_error_first(tmp_path):
    """0.16.0's `_prepare_inputs(scheduler_output, num_scheduled_tokens)` returns 2 values, but this call lacks its
    required second argument: TypeError (DC005) before anything is returned, so no unpack error (batch 30d)."""
    result = scan_files(tmp_path, {"runner.py": RUNNER}, vllm="0.16.0", only=["DC115", "DC005"])
    assert sorted((f.rule, f.client.line) for f in result.findings) == [("DC005", 6), ("DC005", 7)]


def test_dc115_absent_on_0_32_which_returns_three(tmp_path):
    assert _dc115(scan_files(tmp_path, {"runner.py": RUNNER}, vllm="0.32.0", only=["DC115"])) == []


def _shape_scan(tmp_path, prefix: str, vllm_edits=(), client_edits=()) -> list:
    vllm, client = plugin_shape(prefix)
    for rel, edits in dict(vllm_edits).items():
        vllm = edited(vllm, rel, *edits)
    for rel, edits in dict(client_edits).items():
        client = edited(client, rel, *edits)
    return _dc115(scan_trees(tmp_path, vllm, client, only=["DC115"]))


def test_dc115_ne1_a_client_override_is_what_runs(tmp_path):
    assert _shape_scan(tmp_path, "NE1") == []


def test_dc115_ne1_twin_without_the_override_is_an_error(tmp_path):
    no_override = {"plug/runner.py": [("    def _prepare_inputs(self, batch):", "    def _prepare_device(self, batch):")]}
    assert _shape_scan(tmp_path, "NE1", client_edits=no_override) == [("error", 10)]


def test_dc115_ne2_returns_of_several_lengths_and_a_replaced_function(tmp_path):
    assert _shape_scan(tmp_path, "NE2") == []


def test_dc115_ne2_twin_one_length_is_certain(tmp_path):
    one = {"vllm/utils.py": [("    head = (batch[0], batch[1:])\n    if len(batch) > 3:\n        return batch[0], batch[1], "
                              "batch[2:]\n    return head", "    return batch[0], batch[1], batch[2:]")]}
    assert _shape_scan(tmp_path, "NE2", vllm_edits=one) == [("error", 13)]


def test_dc115_ne2_twin_without_the_replacement_is_an_error(tmp_path):
    unpatched = {"plug/use.py": [("utils.shape_of = _shape", "utils.other_shape = _shape")]}
    assert _shape_scan(tmp_path, "NE2", client_edits=unpatched) == [("error", 18)]


def test_dc115_an_annotation_that_disagrees_with_the_body_is_not_certain(tmp_path):
    fake = {"vllm/utils.py": "def pair() -> tuple[int, int, int]:\n    return (1, 2)\n"}
    client = {"c.py": "from vllm.utils import pair\n\na, b, c = pair()\n"}
    assert _dc115(scan_trees(tmp_path, fake, client, only=["DC115"])) == []
    fake = {"vllm/utils.py": "def pair() -> tuple[int, int]:\n    return (1, 2)\n"}
    assert _dc115(scan_trees(tmp_path / "twin", fake, client, only=["DC115"])) == [("error", 3)]


def test_dc115_explain_names_the_tuple_change():
    from driftcheck.report.explain import explain_text

    [d] = explain_text('Traceback (most recent call last):\n  File "/srv/plug/runner.py", line 6, in execute_model\n'
                       '    a, b, c = self._prepare_inputs(scheduler_output)\n'
                       'ValueError: not enough values to unpack (expected 3, got 2)\n')
    assert d["rule"] == "DC115" and "_prepare_inputs" in d["vllm_change"]


def test_dc115_a_diff_the_client_ships_for_the_vllm_file_keeps_it_silent(tmp_path):
    # omni-infer ships diffs for vLLM's own files (applied at install): the function it unpacks may return more there
    fake = {"vllm/sampling.py": "def tensors(meta):\n    return (meta, False)\n"}
    client = {"c.py": "from vllm.sampling import tensors\n\nt, a, b = tensors(1)\n"}
    patch = ("--- a/vllm/sampling.py\n+++ b/vllm/sampling.py\n@@ -1,2 +1,2 @@\n def tensors(meta):\n"
             "-    return (meta, False)\n+    return (meta, False, True)\n")
    assert _dc115(scan_trees(tmp_path, fake, {**client, "patches/sampling.patch": patch}, only=["DC115"])) == []
    assert _dc115(scan_trees(tmp_path / "twin", fake, client, only=["DC115"])) == [("error", 3)]
