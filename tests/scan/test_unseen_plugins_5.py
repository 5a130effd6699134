"""The six root causes of false errors from the fifth batch of untuned plugins (docs/triage/2026-12-02-unseen-plugins-5.md),
one group each: the shape that runs (no error, or unknown where driftcheck cannot know), and the same shape where the
code really fails, which must stay an error. Where Python can say what happens, the test runs the same code.
"""

from __future__ import annotations

import textwrap

from conftest import vllm_sources
from driftcheck.sources.sources import ZipTree
from driftcheck.vllm_model.api_index import ApiIndex
from scan.helpers import errors, line_of, scan_trees


def _dc006(result) -> list[tuple[str, str]]:
    return sorted((f.severity, f.symbol.rsplit(".", 1)[-1]) for f in result.findings if f.rule == "DC006")


def _unknown(result) -> list[str]:
    return [u.message for u in result.unknown if u.rule == "DC006"]


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


# ----------------------------------------------------------------------------------------- AJ
OUTPUTS = {
    "vllm/outputs.py": """
        class RequestOutput:
            def __init__(self, text: str):
                self.text = text
    """,
    "vllm/llm.py": """
        from vllm.outputs import RequestOutput

        class LLM:
            def generate(self, prompts: list[str]) -> list[RequestOutput]:
                return [RequestOutput(p) for p in prompts]

            def encode(self, prompts: list[str]) -> list[str]:
                return list(prompts)
    """,
}

PATCH = """
    from vllm.llm import LLM
    _orig = None

    def _finish(outputs: list) -> list:
        for output in outputs:
            output.activations = len(output.text)
        return outputs

    def _patched(self: LLM, prompts):
        return _finish(_orig(self, prompts))

    def register():
        global _orig
        _orig = LLM.{method}
        LLM.{method} = _patched
"""

READ = """
    from vllm.outputs import RequestOutput

    def first(llm) -> RequestOutput:
        return llm.generate(["hi"])[0]

    def probe(llm):
        out = first(llm)
        return out.activations, out.tokens
"""


def test_a_member_a_replaced_method_sets_on_what_it_returns_is_unknown_not_an_error(tmp_path):
    result = scan_trees(tmp_path, OUTPUTS, {"plugin.py": PATCH.replace("{method}", "generate"), "main.py": READ},
                        only=["DC006"])
    assert _dc006(result) == [("error", "tokens")]  # a member nothing sets stays an error
    (message,) = _unknown(result)
    store = line_of(textwrap.dedent(PATCH), "output.activations =") - 1  # the file is written without its first newline
    assert "LLM.generate" in message and f"plugin.py:{store}" in message and "'activations'" in message


def test_a_replacement_of_a_method_that_returns_another_class_credits_nothing(tmp_path):
    result = scan_trees(tmp_path, OUTPUTS, {"plugin.py": PATCH.replace("{method}", "encode"), "main.py": READ},
                        only=["DC006"])
    assert _dc006(result) == [("error", "activations"), ("error", "tokens")]
    assert _unknown(result) == []


# ----------------------------------------------------------------------------------------- AK
CONTEXT = {
    "vllm/forward_context.py": """
        from dataclasses import dataclass

        _forward_context = None

        @dataclass
        class ForwardContext:
            attn_metadata: object = None

        @dataclass(frozen=True)
        class FrozenContext:
            attn_metadata: object = None

        def get_forward_context() -> ForwardContext:
            return _forward_context

        def get_frozen_context() -> FrozenContext:
            return FrozenContext()
    """,
}


def _draft(imports: str, read: str = "forward_context = get_forward_context()") -> dict[str, str]:
    return {"draft.py": f"""
        from vllm.forward_context import ForwardContext, FrozenContext, get_forward_context, get_frozen_context
        {imports}

        def step(ctx: ForwardContext):
            {read}
            return forward_context.capturing
    """}


def test_a_member_a_host_plugin_may_set_on_what_vllm_hands_out_is_unknown(tmp_path):
    result = scan_trees(tmp_path, CONTEXT, _draft("from host_platform.context import set_context  # noqa"), only=["DC006"])
    assert _dc006(result) == []
    (message,) = _unknown(result)
    assert "host_platform" in message and "get_forward_context" in message and "'capturing'" in message


def test_without_an_unread_package_the_member_is_missing(tmp_path):
    result = scan_trees(tmp_path, CONTEXT, _draft("import json, os  # the standard library only"), only=["DC006"])
    assert _dc006(result) == [("error", "capturing")]


def test_an_object_the_function_was_given_is_not_what_vllm_hands_out(tmp_path):
    result = scan_trees(tmp_path, CONTEXT, _draft("import host_platform", "forward_context = ctx"), only=["DC006"])
    assert _dc006(result) == [("error", "capturing")]


def test_no_code_can_set_a_member_on_a_frozen_dataclass(tmp_path):
    result = scan_trees(tmp_path, CONTEXT, _draft("import host_platform", "forward_context = get_frozen_context()"),
                        only=["DC006"])
    assert _dc006(result) == [("error", "capturing")]


def test_the_clients_own_store_credits_before_the_plugin_is_suspected(tmp_path):
    files = {"draft.py": textwrap.dedent(_draft("import host_platform")["draft.py"])}
    files["draft.py"] += "\n\ndef mark():\n    forward_context = get_forward_context()\n    forward_context.capturing = True\n"
    result = scan_trees(tmp_path, CONTEXT, files, only=["DC006"])
    assert [f for f in result.findings if f.rule == "DC006" and f.severity == "error"] == []
    assert _unknown(result) == []


def test_vllms_own_requirements_are_no_plugins(tmp_path):
    """With the release's metadata, a package vLLM requires (and so cannot depend on vLLM) is no host plugin."""
    files = {**CONTEXT, "vllm-0.99.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: vllm\nVersion: 0.99.0\n"
                                                          "Requires-Dist: host-platform>=1.0\n"}
    result = scan_trees(tmp_path, files, _draft("import host_platform"), only=["DC006"])
    assert _dc006(result) == [("error", "capturing")]
    result = scan_trees(tmp_path / "other", files, _draft("import other_platform"), only=["DC006"])
    assert _dc006(result) == [] and "which vLLM does not require" in _unknown(result)[0]


# ----------------------------------------------------------------------------------------- AL
PLUGGABLE = {
    "vllm/custom_op.py": """
        op_registry = {}
        op_registry_oot = {}

        class PluggableLayer:
            def __new__(cls, *args, **kwargs):
                if cls.__name__ not in op_registry_oot:
                    chosen = cls
                else:
                    chosen = op_registry_oot[cls.__name__]
                return super().__new__(chosen)

            @classmethod
            def register(cls, name):
                def decorator(op_cls):
                    op_registry[name] = op_cls
                    return op_cls
                return decorator

            @classmethod
            def register_oot(cls, _decorated=None, name=None):
                def decorator(layer_cls):
                    op_registry_oot[name if name is not None else cls.__name__] = layer_cls
                    return layer_cls
                return decorator(_decorated) if _decorated is not None else decorator

        class PlainLayer:
            def __new__(cls, *args, **kwargs):
                return super().__new__(cls)
    """,
    "vllm/mla.py": """
        from vllm.custom_op import PlainLayer, PluggableLayer

        class Wrapper(PluggableLayer):
            def __init__(self, hidden_size: int, prefix: str = "") -> None:
                self.hidden_size = hidden_size

        class Plain(PlainLayer):
            def __init__(self, hidden_size: int, prefix: str = "") -> None:
                self.hidden_size = hidden_size
    """,
}

CALLER = """
    import ops
    from vllm.mla import Plain, Wrapper

    def build():
        return Wrapper(64, "p", gate_is_fused=True), Wrapper(64, nope=1), Plain(64, gate_is_fused=True)
"""


def _ops(decorator: str, base: str = "Wrapper") -> str:
    return f"""
        from vllm.custom_op import PluggableLayer
        from vllm.mla import Plain, Wrapper

        {decorator}
        class Replacement({base}):
            def __init__(self, hidden_size: int, prefix: str = "", gate_is_fused: bool = False) -> None:
                self.gate_is_fused = gate_is_fused
    """


def _dc003(result) -> list[str]:
    return sorted(f.message.split("keyword argument ")[1].split()[0] for f in errors(result) if f.rule == "DC003")


def test_a_call_the_registered_replacement_accepts_is_no_error(tmp_path):
    for i, decorator in enumerate(["@Wrapper.register_oot", '@PluggableLayer.register_oot(name="Wrapper")']):
        result = scan_trees(tmp_path / str(i), PLUGGABLE, {"ops.py": _ops(decorator), "main.py": CALLER}, only=["DC003"])
        # gate_is_fused fits the replacement; `nope` fits neither; Plain's __new__ builds a Plain whatever is registered
        assert _dc003(result) == ["'gate_is_fused'", "'nope'"], decorator


def test_a_replacement_handed_to_the_registrar_in_a_call_counts(tmp_path):
    ops = textwrap.dedent(_ops("")) + "\nWrapper.register_oot(Replacement)\n"
    result = scan_trees(tmp_path, PLUGGABLE, {"ops.py": ops, "main.py": CALLER}, only=["DC003"])
    assert _dc003(result) == ["'gate_is_fused'", "'nope'"]


def test_an_in_tree_registration_or_no_registration_replaces_nothing(tmp_path):
    """`register` fills `op_registry`, which `__new__` does not read: `Wrapper(...)` still builds a Wrapper."""
    for i, decorator in enumerate(['@PluggableLayer.register("replacement")', ""]):
        result = scan_trees(tmp_path / str(i), PLUGGABLE, {"ops.py": _ops(decorator), "main.py": CALLER}, only=["DC003"])
        assert _dc003(result) == ["'gate_is_fused'", "'gate_is_fused'", "'nope'"], decorator


def test_python_builds_the_registered_replacement(tmp_path):
    """What the rule models: `Wrapper(...)` runs the registered class's `__init__`."""
    namespace: dict = {}
    parts = [PLUGGABLE["vllm/custom_op.py"], PLUGGABLE["vllm/mla.py"], _ops("@Wrapper.register_oot")]
    source = "\n".join(line for part in parts for line in textwrap.dedent(part).splitlines() if not line.startswith("from vllm"))
    exec(compile(source, "<al>", "exec"), namespace)
    built = namespace["Wrapper"](64, "p", gate_is_fused=True)
    assert type(built).__name__ == "Replacement" and built.gate_is_fused is True


def test_pluggable_layer_and_custom_op_choose_their_class_in_a_real_release(tmp_path):
    """vLLM 0.32.0: both bases' `__new__` build what `register_oot` files in `op_registry_oot`; `register` files
    in-tree ops elsewhere; a class without such a `__new__` builds itself."""
    api = ApiIndex(ZipTree(vllm_sources("0.32.0")), "0.32.0")
    for layer in ("vllm.model_executor.layers.layernorm.RMSNorm", "vllm.model_executor.layers.mla.MultiHeadLatentAttentionWrapper"):
        cls = api.resolve(layer)
        chooser, containers = api.new_chooses_class(cls)
        assert chooser.qualname.rsplit(".", 1)[-1] in ("CustomOp", "PluggableLayer") and "op_registry_oot" in containers
        assert "op_registry_oot" in api.containers_filled_by(chooser, "register_oot")
        assert "op_registry_oot" not in api.containers_filled_by(chooser, "register")
    assert api.new_chooses_class(api.resolve("vllm.config.CacheConfig")) is None


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
