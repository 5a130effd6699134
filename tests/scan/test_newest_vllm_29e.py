"""Batch 29e (the newest vLLM: no nightly on the index is newer than 0.33.0, so vLLM 0.34.0's own tree scanned against
itself, and vLLM-project clients at their stored HEAD against 0.34.0; docs/triage/2026-12-05-newest-nightly-29e.md).

QE1: DC108 keyed vLLM's "not ... yet" raises by the bare name of the function holding them. vLLM 0.34.0's
unlimited_ocr2 logits guard has an `add_request` that raises unless `eos_token_id` is resolved, and every other
`add_request` of the tree (the scheduler's, EngineCore's, the KV connectors' metadata, the samplers' states: 9 lines of
the self-scan) was reported as needing it. A raise now counts for the function it is in; a name found in a body's text
counts only when the tree defines one function of that name (probes/engine_setup_precondition.py). Twin: the client
calls the guarded method itself.

QE2: `engine_call_site` took a method's definition (`    def eos_token_id(self)`, a property) for the engine calling
it: `strip()` removed the space `def ` ends with. A raise naming a value the engine never calls is no recipe now
(vllm_model/facts.py). Twin: the named function is one vLLM's engine calls.

QE3: a module `__getattr__` serving `if name in _WARMUP_LAZY_EXPORTS:` where that name is `frozenset({"warmup", ...})`
(vLLM 0.34.0's vllm/third_party/fmha_sm100/__init__.py) was read as serving nothing, and its final `raise` closed the
module: `from vllm.third_party.fmha_sm100 import warmup` was an error. A module-level list, tuple, set or
frozenset/set/tuple of strings is read as the names it serves (vllm_model/pysummary.py). Twin: a name the set lacks.

QE4: `self.experts: nn.Module = experts_cls(...)` in one branch and `self.experts = FusedMoEFactory(...)` in another
(vLLM 0.34.0's muse_spark MoE): the annotated assignment, whose annotation names no vLLM class and whose value is
untyped, did not make the member's type unknown, so every mega-MoE method read on it was an error on MoERunner (7
lines). It does now, as an unannotated one does (client_model/client_classes.py). Twins: a bare `self.experts: Module`
declaration, or no such branch.

QE5: `class DraftLayer(Layer)` where `Layer` is imported from the NVIDIA module under `if TYPE_CHECKING or not
is_rocm():` and from the AMD one otherwise (vLLM 0.34.0's muse_spark dspark): the members read through the base were
the AMD class's alone. A base whose name an `if` rebinds now gives each member the other class's as `otherwise`, as a
class reached through such a name does (vllm_model/classes.py `_through_rebound_base`). Twins: the other class lacks
the member too, or the base is imported once.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, line_of, plugin_shape, scan_trees


def _errors(tmp_path, vllm, client, rule):
    found = scan_trees(tmp_path, vllm, client, only=[rule]).findings
    return [(f.client.path, f.client.line) for f in found if f.severity == "error"]


def test_qe1_same_named_method_of_another_class_needs_no_setup(tmp_path):
    vllm, client = plugin_shape("QE1")
    assert _errors(tmp_path, vllm, client, "DC108") == []


def test_qe1_twin_the_guarded_method_itself_stays_an_error(tmp_path):
    vllm, client = plugin_shape("QE1")
    client = edited(client, "plug/batcher.py", ("import RequestQueue", "import RequestQueue  # noqa\n"
                                                "from vllm.v1.engine.guard import GuardState"),
                    ("queue = RequestQueue()", "queue = GuardState()"), ("return queue.items", "return queue.requests"))
    assert _errors(tmp_path, vllm, client, "DC108") == [("plug/batcher.py", 8)]


def test_qe2_a_raise_naming_a_property_is_no_setup_recipe(tmp_path):
    vllm, client = plugin_shape("QE2")
    assert _errors(tmp_path, vllm, client, "DC108") == []


def test_qe2_twin_a_setup_the_engine_calls_stays_an_error(tmp_path):
    vllm, client = plugin_shape("QE2")
    guard = "vllm/v1/sample/page_guard.py"
    vllm = edited(vllm, guard, ("the model config.", "the model config; call `load_guard_defaults()` first."),
                  ("    def add_request(", "    def load_guard_defaults(self):\n        self.default_eos_token_id = 2\n\n"
                                            "    def add_request("))
    vllm = {**vllm, "vllm/v1/engine/core.py": "from vllm.v1.sample.page_guard import PageCountGuardState\n\n\n"
                                              "def build():\n    state = PageCountGuardState()\n"
                                              "    state.load_guard_defaults()\n    return state\n"}
    assert _errors(tmp_path, vllm, client, "DC108") == [("plug/guarded.py", 7)]


def test_qe3_names_served_from_a_frozenset_are_found(tmp_path):
    vllm, client = plugin_shape("QE3")
    assert _errors(tmp_path, vllm, client, "DC002") == []


@pytest.mark.parametrize("collection", ['frozenset({"warmup", "plan_warmup"})', '("warmup", "plan_warmup")',
                                        '{"warmup", "plan_warmup"}', 'set(["warmup", "plan_warmup"])'])
def test_qe3_twin_a_name_the_collection_lacks_stays_an_error(tmp_path, collection):
    vllm, client = plugin_shape("QE3")
    vllm = edited(vllm, "vllm/kernels/__init__.py", ('frozenset({"warmup", "plan_warmup"})', collection))
    client = edited(client, "plug/warm.py", ("from vllm.kernels import warmup", "from vllm.kernels import cold_start"))
    assert _errors(tmp_path, vllm, client, "DC002") == [("plug/warm.py", 5)]


def test_qe4_member_typed_by_an_untyped_annotated_branch_is_not_the_factorys(tmp_path):
    vllm, client = plugin_shape("QE4")
    assert _errors(tmp_path, vllm, client, "DC006") == []


@pytest.mark.parametrize("twin", [
    ("            self.experts: Module = experts_cls()\n            return\n", ""),  # only the factory builds it
    ("            self.experts: Module = experts_cls()\n            return\n", "            self.experts: Module\n"),
])
def test_qe4_twins_stay_errors(tmp_path, twin):
    vllm, client = plugin_shape("QE4")
    client = edited(client, "plug/block.py", twin)
    block = client["plug/block.py"]
    assert _errors(tmp_path, vllm, client, "DC006") == [("plug/block.py", line_of(block, ".finalize_weights()")),
                                                        ("plug/block.py", line_of(block, ".use_trtllm(n)"))]


def test_qe5_member_through_a_rebound_base_is_not_an_error(tmp_path):
    vllm, client = plugin_shape("QE5")
    assert _errors(tmp_path, vllm, client, "DC006") == []


def test_qe5_twin_the_other_class_lacks_the_member_too(tmp_path):
    vllm, client = plugin_shape("QE5")
    vllm = edited(vllm, "vllm/models/spark/nvidia/model.py", ("        self.cute_gate = True\n", ""),
                  ("    def _project_output", "    def _other_output"))
    assert _errors(tmp_path, vllm, client, "DC006") == [("plug/decode.py", 6), ("plug/decode.py", 8)]


def test_qe5_twin_the_base_imported_once(tmp_path):
    vllm, client = plugin_shape("QE5")
    vllm = edited(vllm, "vllm/models/spark/common/draft.py",
                  ("if TYPE_CHECKING or not is_rocm():\n    from vllm.models.spark.nvidia.model import SparkDecoderLayer\n"
                   "else:\n    from", "from"))
    assert _errors(tmp_path, vllm, client, "DC006") == [("plug/decode.py", 6), ("plug/decode.py", 8)]
