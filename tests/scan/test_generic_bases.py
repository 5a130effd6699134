"""A client class whose vLLM base is subscripted (`ModelRunnerBase[ModelInputForNeuron]`) derives from that base.

From the self-scan of vLLM 0.8.5: `NeuronModelRunner(ModelRunnerBase[ModelInputForNeuron])` sets
`self.model_config.neuron_sampling_params`, and `model_loader/neuron.py` reads it from a `ModelConfig` parameter. With
the subscripted base read as no base, `self.model_config` had no type, the store was not credited, and the read was
a false error.
"""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {
    "vllm/config.py": """
        class ModelConfig:
            def __init__(self):
                self.model = "m"
    """,
    "vllm/worker/base.py": """
        from typing import Generic, TypeVar

        from vllm.config import ModelConfig

        T = TypeVar("T")


        class ModelRunnerBase(Generic[T]):
            def __init__(self, model_config: ModelConfig):
                self.model_config = model_config
    """,
}


def _client(base: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/runner.py": f"""
        from vllm.worker.base import ModelRunnerBase


        class NeuronRunner({base}):
            def setup(self):
                self.model_config.sampling_params = {{}}
                return self.model_config.no_such_member
    """, "pkg/loader.py": """
        from vllm.config import ModelConfig


        def load(model_config: ModelConfig):
            return model_config.sampling_params
    """}


def test_a_store_through_a_member_of_a_subscripted_vllm_base_is_credited(tmp_path):
    for i, base in enumerate(("ModelRunnerBase[int]", "ModelRunnerBase")):
        result = scan_trees(tmp_path / str(i), VLLM, _client(base), only=["DC006"])
        errors = sorted((f.client.path, f.client.line) for f in result.findings if f.severity == "error")
        # the member the client sets is its own; one it never sets is still missing, read through the typed base
        assert errors == [("pkg/runner.py", 7)], (base, errors)


def test_a_subscripted_client_class_is_not_a_vllm_class(tmp_path):
    """Only a vLLM class subscripted counts: `dict[str, int]` as a base adds no vLLM base."""
    client = {"pkg/__init__.py": "", "pkg/table.py": """
        from vllm.config import ModelConfig


        class Table(dict[str, int]):
            def read(self, config: ModelConfig):
                return config.not_there
    """}
    result = scan_trees(tmp_path, VLLM, client, only=["DC006"])
    assert [(f.client.line, f.severity) for f in result.findings] == [(6, "error")]
