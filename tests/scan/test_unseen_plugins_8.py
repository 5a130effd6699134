"""Three root causes of false errors from the eighth batch of untuned plugins (docs/triage/2026-12-02-unseen-plugins-8.md),
BB to BD, one group each: the shape that runs (no error, or unknown / a warning with the reason where driftcheck cannot
know), and the same shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


def _unknown(result, rule: str) -> list[str]:
    return [u.message for u in result.unknown if u.rule == rule]


# ----------------------------------------------------------------------------------------- BB
ENGINE = {
    "vllm/engine/protocol.py": """
        from abc import ABC, abstractmethod

        class EngineClient(ABC):
            vllm_config: object

            @abstractmethod
            def generate(self, prompt, sampling_params, request_id, *, lora_request=None):
                ...

        class AsyncLLM(EngineClient):
            def generate(self, prompt, sampling_params, request_id, *, lora_request=None):
                return prompt
    """,
    "vllm/entrypoints/serving.py": """
        from vllm.engine.protocol import EngineClient

        class OpenAIServing:
            def __init__(self, engine_client: EngineClient, models=None):
                self.engine_client = engine_client
                self.models = models
    """,
}

OMNI = {  # a duck-typed engine: does not derive from EngineClient; this module imports no vLLM
    "pkg/__init__.py": "",
    "pkg/omni.py": """
        class OmniBase:
            def __init__(self):
                self.stage_list = ["thinker", "talker"]

        class AsyncOmni(OmniBase):
            def generate(self, prompt, request_id, sampling_params_list=None, *, output_modalities=None):
                return prompt

            async def get_vllm_config(self):
                return {}
    """,
    "pkg/serving.py": """
        from vllm.entrypoints.serving import OpenAIServing

        class OmniServingChat(OpenAIServing):
            def chat(self, prompt):
                n = len(self.engine_client.stage_list)
                return self.engine_client.generate(prompt=prompt, request_id="r", sampling_params_list=None), n
    """,
}


def test_a_client_engine_annotated_as_the_vllm_protocol_makes_its_members_unknown(tmp_path):
    """vllm-omni 0.14.0: `async_omni: EngineClient | None = AsyncOmni(...)`, handed on to vLLM's `OpenAIServing`,
    whose `__init__` types `self.engine_client` as `EngineClient`: reads of AsyncOmni's own members on it are not
    certain failures (unknown, naming the client class and where it is put there), and a call its method accepts is
    a warning."""
    client = {**OMNI, "pkg/server.py": """
        from vllm.engine.protocol import EngineClient

        from pkg.omni import AsyncOmni
        from pkg.serving import OmniServingChat

        def build():
            async_omni: EngineClient | None = AsyncOmni()
            return async_omni

        async def init_state(engine_client: EngineClient, state):
            state["config"] = await engine_client.get_vllm_config()
            state["chat"] = OmniServingChat(engine_client)
    """}
    result = scan_trees(tmp_path, ENGINE, client)
    assert [f for f in result.findings if f.severity == "error"] == []
    assert _found(result, "DC003", "DC005") == [("DC003", "warning", "pkg/serving.py", 6),
                                                ("DC005", "warning", "pkg/serving.py", 6)]
    unknown = _unknown(result, "DC006")
    assert len(unknown) == 2 and all("`pkg.omni.AsyncOmni`" in m and "pkg/server.py:7" in m for m in unknown)


def test_a_client_engine_passed_straight_to_the_vllm_constructor_is_a_stand_in_too(tmp_path):
    """`OmniServingChat(AsyncOmni())`: the object reaches vLLM's `engine_client: EngineClient` parameter (the
    `__init__` the client class inherits). Only files that import vLLM are read for this, as for every use."""
    client = {**OMNI, "pkg/server.py": """
        import vllm

        from pkg.omni import AsyncOmni
        from pkg.serving import OmniServingChat

        def build():
            return OmniServingChat(AsyncOmni())
    """}
    result = scan_trees(tmp_path, ENGINE, client)
    assert [f for f in result.findings if f.severity == "error"] == []
    assert any("`pkg.omni.AsyncOmni`" in m for m in _unknown(result, "DC006"))


def test_members_no_client_object_put_there_has_stay_errors(tmp_path):
    """Recall: without a client object put where `EngineClient` is expected, the reads and the call stay errors; with
    one, a member it lacks too (`stage_count`) and a call its method does not accept either stay errors."""
    plain = {**OMNI, "pkg/server.py": """
        from vllm.engine.protocol import AsyncLLM
        from pkg.serving import OmniServingChat

        def build():
            return OmniServingChat(AsyncLLM())
    """}
    result = scan_trees(tmp_path / "a", ENGINE, plain)
    assert _found(result, "DC006", "DC003") == [("DC003", "error", "pkg/serving.py", 6),
                                                ("DC006", "error", "pkg/serving.py", 5)]
    wrong = {**OMNI, "pkg/serving.py": """
        from vllm.entrypoints.serving import OpenAIServing

        class OmniServingChat(OpenAIServing):
            def chat(self, prompt):
                n = self.engine_client.stage_count
                return self.engine_client.generate(prompt=prompt, request_id="r", stages=None), n
    """, "pkg/server.py": """
        import vllm
        from pkg.omni import AsyncOmni
        from pkg.serving import OmniServingChat

        def build():
            return OmniServingChat(AsyncOmni())
    """}
    result = scan_trees(tmp_path / "b", ENGINE, wrong)
    assert ("DC006", "error", "pkg/serving.py", 5) in _found(result, "DC006")
    assert ("DC003", "error", "pkg/serving.py", 6) in _found(result, "DC003")


def test_a_client_subclass_of_the_vllm_class_is_not_a_stand_in(tmp_path):
    """A client class that derives from the annotated class is the subclass case (warnings naming it), unchanged."""
    client = {**OMNI, "pkg/omni.py": OMNI["pkg/omni.py"].replace(
        "class AsyncOmni(OmniBase):", "class AsyncOmni(OmniBase, EngineClient):").replace(
        "class OmniBase:", "from vllm.engine.protocol import EngineClient\n\n        class OmniBase:"),
        "pkg/server.py": """
        import vllm
        from pkg.omni import AsyncOmni
        from pkg.serving import OmniServingChat

        def build():
            return OmniServingChat(AsyncOmni())
    """}
    result = scan_trees(tmp_path, ENGINE, client)
    assert [f for f in result.findings if f.severity == "error"] == []
    assert not any("does not derive from" in m for m in _unknown(result, "DC006"))


# ----------------------------------------------------------------------------------------- BC
INTERFACES = {
    "vllm/model_executor/models/interfaces.py": """
        from typing import Protocol, runtime_checkable

        @runtime_checkable
        class SupportsMultiModal(Protocol):
            supports_multimodal = True

            def embed_input_ids(self, input_ids, multimodal_embeddings=None, *, is_multimodal=None):
                return input_ids
    """,
    "vllm/model_executor/models/interfaces_base.py": """
        from typing import Protocol, TypeVar, runtime_checkable

        T = TypeVar("T")

        @runtime_checkable
        class VllmModel(Protocol[T]):
            def embed_input_ids(self, input_ids):
                ...

        @runtime_checkable
        class VllmModelForTextGeneration(VllmModel[T], Protocol[T]):
            def compute_logits(self, hidden_states): ...
    """,
}

MIXINS = {
    "pkg/__init__.py": "",
    "pkg/model_base.py": """
        from vllm.model_executor.models.interfaces_base import VllmModelForTextGeneration

        class ModelBase:
            pass

        class MultimodalMixin:
            def embed_input_ids(self, input_ids, multimodal_embeddings=None, *, is_multimodal=None):
                return list(input_ids) + list(multimodal_embeddings or [])

        class DecoderMixin(VllmModelForTextGeneration):
            pass
    """,
}


def _model(bases: str) -> dict[str, str]:
    return {**MIXINS, "pkg/gemma3.py": f"""
        from vllm.model_executor.models.interfaces_base import VllmModelForTextGeneration

        from pkg.model_base import DecoderMixin, ModelBase, MultimodalMixin

        class Gemma3({bases}):
            def forward(self, input_ids, mm):
                return self.embed_input_ids(input_ids, mm)
    """}


def test_a_method_of_an_earlier_client_mixin_of_another_file_is_the_one_called(tmp_path):
    """vllm-rbln 0.11.0: `class M(ModelBase, MultimodalMixin, DecoderMixin, VllmModelForTextGeneration)` calling
    `self.embed_input_ids(ids, mm)`: by the MRO the mixin's method runs, not the Protocol's (also through a client
    ancestor of the mixin)."""
    result = scan_trees(tmp_path / "a", INTERFACES, _model("ModelBase, MultimodalMixin, DecoderMixin, VllmModelForTextGeneration"))
    assert _found(result, "DC003", "DC004") == []
    inherited = {**_model("ModelBase, Multimodal, VllmModelForTextGeneration"), "pkg/more.py": """
        import vllm
        from pkg.model_base import MultimodalMixin

        class Multimodal(MultimodalMixin):
            pass
    """}
    inherited["pkg/gemma3.py"] = inherited["pkg/gemma3.py"].replace(
        "from pkg.model_base import DecoderMixin, ModelBase, MultimodalMixin", "from pkg.model_base import ModelBase\n        from pkg.more import Multimodal")
    result = scan_trees(tmp_path / "b", INTERFACES, inherited)
    assert _found(result, "DC003", "DC004") == []
    plain = {**_model("ModelBase, Plain, DecoderMixin, VllmModelForTextGeneration"), "pkg/plain.py": """
        class Plain:  # a module that imports no vLLM
            def embed_input_ids(self, input_ids, multimodal_embeddings=None):
                return input_ids
    """}
    plain["pkg/gemma3.py"] = plain["pkg/gemma3.py"].replace(
        "from pkg.model_base import DecoderMixin, ModelBase, MultimodalMixin",
        "from pkg.model_base import DecoderMixin, ModelBase\n        from pkg.plain import Plain")
    result = scan_trees(tmp_path / "c", INTERFACES, plain)
    assert _found(result, "DC003", "DC004") == []


def test_a_vllm_base_listed_before_the_client_mixin_still_decides(tmp_path):
    """Recall: with the vLLM base listed first (`class M(VllmModelForTextGeneration, MultimodalMixin)`), vLLM's method
    comes first in the MRO and the call still fails; and a mixin that does not define the method changes nothing."""
    result = scan_trees(tmp_path / "a", INTERFACES, _model("VllmModelForTextGeneration, MultimodalMixin"))
    assert _found(result, "DC004") == [("DC004", "error", "pkg/gemma3.py", 7)]
    result = scan_trees(tmp_path / "b", INTERFACES, _model("ModelBase, DecoderMixin, VllmModelForTextGeneration"))
    assert _found(result, "DC004") == [("DC004", "error", "pkg/gemma3.py", 7)]


# ----------------------------------------------------------------------------------------- BD
FUSED_MOE = {
    "vllm/model_executor/layers/fused_moe/layer.py": """
        class FusedMoE:
            def __init__(self, num_experts: int, ep_size: int = 1):
                self.global_num_experts = num_experts
                self.expert_map = list(range(num_experts)) if ep_size > 1 else None
    """,
}


def _layer(init_body: str, graft: str = "FusedMoE.__init__ = _init_with_all2all") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/layer.py": f"""
        from vllm.model_executor.layers.fused_moe.layer import FusedMoE

        upstream_init = FusedMoE.__init__

        def custom_init(self, *args, **kwargs):
            upstream_init(self, *args, **kwargs)
            self.expert_map_const = tuple(self.expert_map or ())

        def _init_with_all2all(self, *args, **kwargs):
            {init_body}

        {graft}

        def apply(layer: FusedMoE, x):
            if layer.expert_map is not None:
                return x, layer.expert_map_const
            return x, None
    """}


def test_a_member_stored_by_a_helper_the_grafted_init_hands_its_self_to_is_the_class_member(tmp_path):
    """vllm-rbln 0.11.0: `FusedMoE.__init__ = _init_with_all2all`, which calls `custom_init(self, ...)` (untyped),
    which sets `self.expert_map_const`: every FusedMoE built after the patch has it (also by keyword, and two calls
    deep)."""
    for i, body in enumerate(("custom_init(self, *args, **kwargs)", "custom_init(self=self)",
                              "(lambda: None)()\n            _hop(self)\n\n        def _hop(me):\n            custom_init(me)")):
        result = scan_trees(tmp_path / str(i), FUSED_MOE, _layer(body))
        assert _found(result, "DC006") == [], body


def test_a_helper_not_reached_from_the_grafted_init_with_its_self_keeps_the_error(tmp_path):
    """Recall: the helper called with another object, not called at all, or the graft never made: still an error."""
    for i, (body, graft) in enumerate((("custom_init(object(), *args)", "FusedMoE.__init__ = _init_with_all2all"),
                                       ("upstream_init(self, *args, **kwargs)", "FusedMoE.__init__ = _init_with_all2all"),
                                       ("custom_init(self, *args, **kwargs)", "pass"))):
        result = scan_trees(tmp_path / str(i), FUSED_MOE, _layer(body, graft))
        assert _found(result, "DC006") == [("DC006", "error", "pkg/layer.py", 16)], body
