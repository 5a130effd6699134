"""The six root causes of false errors from the fifth batch of untuned plugins (docs/triage/2026-12-02-unseen-plugins-5.md),
one group each: the shape that runs (no error, or unknown where driftcheck cannot know), and the same shape where the
code really fails, which must stay an error. Where Python can say what happens, the test runs the same code.
"""

from __future__ import annotations

import textwrap

from scan.helpers import errors, scan_trees


def _dc006(result) -> list[tuple[str, str]]:
    return sorted((f.severity, f.symbol.rsplit(".", 1)[-1]) for f in result.findings if f.rule == "DC006")


# ----------------------------------------------------------------------------------------- AH
MODULE = {
    "vllm/layers.py": """
        class Module:  # stands in for torch.nn.Module
            def register_buffer(self, name, tensor, persistent=True):
                setattr(self, name, tensor)

        class Attention(Module):
            def __init__(self, heads):
                self.heads = heads
    """,
}


def test_buffers_registered_in_a_loop_over_literal_names_are_members(tmp_path):
    client = """
        from vllm.layers import Attention

        NAMES = ("scale_k", "scale_v")

        class Shared(Attention):
            def __init__(self, heads):
                super().__init__(heads)
                for name in ("rotary_query", "mean_v"):
                    self.register_buffer(name, 1.0)
                for name in NAMES:
                    setattr(self, name, 2.0)
                for name, value in (("gate", 3.0), ("bias", 4.0)):
                    self.register_buffer(name, value)

            def forward(self, q):
                return q * self.rotary_query + self.mean_v + self.scale_k * self.scale_v + self.gate + self.bias
    """
    result = scan_trees(tmp_path, MODULE, {"client.py": client}, only=["DC006"])
    assert _dc006(result) == []


def test_a_member_no_loop_registers_is_still_missing(tmp_path):
    client = """
        from vllm.layers import Attention

        class Shared(Attention):
            def __init__(self, heads):
                super().__init__(heads)
                for name in ("rotary_query", "mean_v"):
                    self.register_buffer(name, 1.0)

            def forward(self, q):
                return q * self.rotary_query + self.residual_query
    """
    result = scan_trees(tmp_path, MODULE, {"client.py": client}, only=["DC006"])
    assert _dc006(result) == [("error", "residual_query")]


def test_a_computed_name_does_not_hide_the_type_of_a_base_member(tmp_path):
    """`setattr(self, name, ...)` with a name from data may set any of the file's strings, but only stands for
    members the class otherwise lacks: `self.config` keeps vLLM's type, so a drifted member behind it is found."""
    vllm = {
        "vllm/config.py": """
            class ModelConfig:
                def __init__(self):
                    self.model = "m"
        """,
        "vllm/worker.py": """
            from vllm.config import ModelConfig

            class WorkerBase:
                def __init__(self):
                    self.config: ModelConfig = ModelConfig()
        """,
    }
    client = """
        from vllm.worker import WorkerBase

        class Worker(WorkerBase):
            def update(self, overrides):
                for key, value in overrides.items():
                    setattr(self, key, value)
                allowed = {"config", "extra_state"}
                return allowed

            def run(self):
                return self.config.served_name, self.extra_state
    """
    result = scan_trees(tmp_path, vllm, {"client.py": client}, only=["DC006"])
    assert _dc006(result) == [("error", "served_name")]


# ----------------------------------------------------------------------------------------- AI
WORKERS = {
    "vllm/engine.py": """
        class EngineArgs:
            def __init__(self, worker_extension_cls=""):
                self.worker_extension_cls = worker_extension_cls

            def create_engine_config(self):
                return self.worker_extension_cls
    """,
    "vllm/v1/worker/worker_base.py": """
        class WorkerBase:
            def load_model(self):
                pass
    """,
    "vllm/llm.py": """
        class LLM:
            def collective_rpc(self, method, args=()):
                return []
    """,
}


def _ext_client(constant_line: str, import_line: str = "") -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/consts.py": 'import vllm\nEXT = "pkg.ext.Capture"\n',
        "pkg/ext.py": "import vllm\n\nclass Capture:\n    def get_states(self):\n        return []\n",
        "pkg/plugin.py": f"""
            from vllm.engine import EngineArgs
            from vllm.llm import LLM
            {import_line}
            {constant_line}

            def _patched(self, *args):
                self.worker_extension_cls = _EXT
                return EngineArgs.create_engine_config(self)

            def states(llm: LLM):
                return llm.collective_rpc("get_states")
        """,
    }


def test_worker_extension_named_by_a_module_constant(tmp_path):
    result = scan_trees(tmp_path, WORKERS, _ext_client('_EXT = "pkg.ext.Capture"'), only=["DC007"])
    assert errors(result) == []


def test_worker_extension_named_by_a_constant_imported_from_another_client_file(tmp_path):
    result = scan_trees(tmp_path, WORKERS, _ext_client("", "from pkg.consts import EXT as _EXT"), only=["DC007"])
    assert errors(result) == []


def test_a_constant_bound_to_a_computed_value_names_no_extension(tmp_path):
    result = scan_trees(tmp_path, WORKERS, _ext_client('_EXT = "pkg.ext." + "Capture".strip()'), only=["DC007"])
    assert [f.rule for f in errors(result)] == ["DC007"]


def test_an_extension_constant_without_the_method_still_fails(tmp_path):
    files = _ext_client('_EXT = "pkg.ext.Capture"')
    files["pkg/ext.py"] = "import vllm\n\nclass Capture:\n    def other(self):\n        return []\n"
    result = scan_trees(tmp_path, WORKERS, files, only=["DC007"])
    assert [f.rule for f in errors(result)] == ["DC007"]


# ----------------------------------------------------------------------------------------- AM
EMBEDDING = {
    "vllm/layers.py": MODULE["vllm/layers.py"] + """
        class VocabParallelEmbedding(Module):
            def __init__(self, num_embeddings: int):
                self.num_embeddings = num_embeddings

        class SamplingParams:  # no register_buffer: nothing registers on it
            def __init__(self):
                self.n = 1
    """,
}

LOADER = """
    import vllm

    class Loader:
        SUFFIXES = {"luts", "encoded_exponent"}

        def load(self, model, checkpoint: dict):
            for path, parts in checkpoint.items():
                module = self.resolve(model, path)
                for name, tensor in parts.items():
                    module.register_buffer(name, tensor)

        @staticmethod
        def resolve(root, dotted):
            return getattr(root, dotted)
"""

METHOD = """
    from vllm.layers import SamplingParams, VocabParallelEmbedding

    def embedding(layer: VocabParallelEmbedding, params: SamplingParams):
        return layer.luts, layer.encoded_exponent, layer.gaps, layer.num_embeddings, params.luts
"""


def test_buffers_registered_by_checkpoint_names_on_an_untyped_module(tmp_path):
    result = scan_trees(tmp_path, EMBEDDING, {"loader.py": LOADER, "method.py": METHOD}, only=["DC006"])
    # the loader's strings name what it may register; `gaps` is none of them; SamplingParams has no register_buffer
    assert _dc006(result) == [("error", "gaps"), ("error", "luts")]
    assert [f.symbol.rsplit(".", 2)[-2] for f in result.findings if f.symbol.endswith(".luts")] == ["SamplingParams"]


def test_without_the_loader_the_buffers_are_missing(tmp_path):
    result = scan_trees(tmp_path, EMBEDDING, {"method.py": METHOD}, only=["DC006"])
    assert _dc006(result) == [("error", "encoded_exponent"), ("error", "gaps"), ("error", "luts"), ("error", "luts")]


def test_the_real_loader_shape_runs(tmp_path):
    """Python agrees: the buffers exist on the embedding once the loader ran."""
    namespace: dict = {}
    source = textwrap.dedent(EMBEDDING["vllm/layers.py"]) + textwrap.dedent(LOADER).replace("import vllm", "")
    exec(compile(source, "<am>", "exec"), namespace)
    layer = namespace["VocabParallelEmbedding"](4)
    namespace["Loader"]().load(type("M", (), {"embed": layer})(), {"embed": {"luts": 1, "encoded_exponent": 2}})
    assert (layer.luts, layer.encoded_exponent) == (1, 2)
