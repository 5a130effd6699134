"""The root causes of false errors on real code (issue: verdicts that hold on everyone's code), one test each.

Each case is the smallest shape of code found in vLLM's own tree, lmcache or hs-connectors that runs
fine but was reported as an error; where Python itself can say what happens, the test runs the same
code and compares. The converse cases (the same shape that really fails) must stay errors.
"""

from __future__ import annotations

import textwrap

from scan.helpers import scan_trees


def _errors(result, rule=None):
    return [f for f in result.findings if f.severity == "error" and (rule is None or f.rule == rule)]


def _run(code: str) -> None:
    exec(compile(textwrap.dedent(code), "<case>", "exec"), {})


RECORDS = {
    "vllm/records.py": """
        import enum
        from typing import NamedTuple, TypedDict

        class DeviceCapability(NamedTuple):
            major: int
            minor: int

        class _Options(TypedDict, total=False):
            cache_salt: str

        class TokensPrompt(_Options):
            prompt_token_ids: list

        class Policy(enum.Enum):
            FCFS = "fcfs"
            PRIORITY = "priority"

        class HandshakeError(Exception):
            pass
    """,
}


def test_record_type_constructors_read_their_fields(tmp_path):
    client = """
        from vllm.records import DeviceCapability, HandshakeError, Policy, TokensPrompt

        def run():
            DeviceCapability(8, 0)
            DeviceCapability(major=9, minor=0)
            TokensPrompt(prompt_token_ids=[1], cache_salt="s")
            Policy("fcfs")
            raise HandshakeError("peer went away")
    """
    result = scan_trees(tmp_path, RECORDS, {"client.py": client}, only=["DC003", "DC004", "DC005"])
    assert _errors(result) == []


def test_record_type_constructors_still_catch_real_breaks(tmp_path):
    client = """
        from vllm.records import DeviceCapability, HandshakeError

        def run():
            DeviceCapability(8, 0, 1)
            DeviceCapability(major=9)
            HandshakeError(reason="x")
    """
    result = scan_trees(tmp_path, RECORDS, {"client.py": client}, only=["DC003", "DC004", "DC005"])
    rules = sorted(f.rule for f in _errors(result))
    assert rules == ["DC003", "DC004", "DC005"], [f.message for f in result.findings]
    # what Python says about the same calls
    for call in ("DeviceCapability(8, 0, 1)", "DeviceCapability(major=9)", "HandshakeError(reason='x')"):
        try:
            _run(textwrap.dedent(RECORDS["vllm/records.py"]) + f"\n{call}\n")
        except TypeError:
            continue
        raise AssertionError(f"{call} did not fail in Python")


BASE = {
    "vllm/engine.py": """
        class EngineClient:
            def abort(self, request_id):
                ...
            def finish_requests(self, ids, status):
                ...
    """,
}


def test_self_resolves_through_the_client_class_first(tmp_path):
    client = """
        from vllm.engine import EngineClient

        class AsyncLLM(EngineClient):
            def stop(self):
                self.abort("r1", internal=True)
                EngineClient.finish_requests(self, ["a"], 1)

            def abort(self, request_id, internal=False):
                ...
    """
    result = scan_trees(tmp_path, BASE, {"client.py": client}, only=["DC003", "DC004", "DC005", "DC006"])
    assert _errors(result) == [], [f.message for f in result.findings]


def test_explicit_self_through_the_class_is_counted_once(tmp_path):
    client = """
        from vllm.engine import EngineClient

        class Mine(EngineClient):
            def stop(self):
                EngineClient.finish_requests(self, ["a"], 1, "extra")
    """
    result = scan_trees(tmp_path, BASE, {"client.py": client}, only=["DC004"])
    assert [f.rule for f in _errors(result)] == ["DC004"]


INTERFACE = {
    "vllm/connector.py": """
        class KVConnectorBase:
            def start_load_kv(self, ctx):
                ...

        class SharedStorageConnector(KVConnectorBase):
            def __init__(self):
                self.storage_path = "/tmp"
            def request_finished(self, request):
                ...
    """,
}


def test_interface_typed_receiver_member_of_a_subclass_is_a_warning(tmp_path):
    client = """
        from vllm.connector import KVConnectorBase

        def use(c: KVConnectorBase):
            c.request_finished(None)
            return c.never_defined_anywhere
    """
    result = scan_trees(tmp_path, INTERFACE, {"client.py": client}, only=["DC006"])
    by_attr = {f.symbol.rsplit(".", 1)[-1]: f.severity for f in result.findings}
    assert by_attr == {"request_finished": "warning", "never_defined_anywhere": "error"}


def test_guarded_uses_are_warnings_and_not_fixed(tmp_path):
    client = """
        import vllm
        from vllm.connector import KVConnectorBase

        def use(c: KVConnectorBase):
            c.start_load_kv(None)  # the annotation fits: the class has what the function mostly reads
            if hasattr(c, "gone"):
                c.gone()
            try:
                c.also_gone()
            except AttributeError:
                pass
            if vllm.__version__ < "0.20":  # not taken on the target (0.99.0); a branch it takes is no guard (HI1)
                c.new_api()
            c.really_gone()
    """
    result = scan_trees(tmp_path, INTERFACE, {"client.py": client}, only=["DC006"])
    sev = {f.symbol.rsplit(".", 1)[-1]: (f.severity, f.fix, "guarded" in f.details) for f in result.findings}
    assert sev["gone"][0] == sev["also_gone"][0] == sev["new_api"][0] == "warning"
    assert all(v[2] and v[1] is None for k, v in sev.items() if k != "really_gone")
    assert sev["really_gone"][0] == "error"


def test_try_catching_another_exception_is_no_guard(tmp_path):
    client = """
        from vllm.connector import KVConnectorBase

        def use(c: KVConnectorBase):
            try:
                c.gone()
            except KeyError:
                pass
    """
    result = scan_trees(tmp_path, INTERFACE, {"client.py": client}, only=["DC006"])
    assert [f.severity for f in result.findings] == ["error"]


def test_own_package_first_with_a_vllm_fallback(tmp_path):
    vllm = {"vllm/adapter.py": "class Adapter:\n    def __init__(self):\n        pass\n"}
    client = {
        "mypkg/__init__.py": "",
        "mypkg/own.py": "class Adapter:\n    def __init__(self, new_kw=0):\n        pass\n",
        "mypkg/use.py": """
            try:
                from mypkg.own import Adapter
            except ImportError:
                from vllm.adapter import Adapter

            def run():
                return Adapter(new_kw=1)
        """,
    }
    result = scan_trees(tmp_path, vllm, client, only=["DC003"])
    assert _errors(result) == []


def test_fallback_import_that_never_runs_is_not_reported(tmp_path):
    vllm = {"vllm/utils/torch_utils.py": "def get_dtype():\n    pass\n", "vllm/utils/__init__.py": ""}
    client = {"use.py": """
        try:
            from vllm.utils.torch_utils import get_dtype
        except ImportError:
            from vllm.utils import get_dtype
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC002"])
    assert result.findings == []


def test_names_the_client_patches_onto_vllm_exist(tmp_path):
    vllm = {"vllm/parallel_state.py": "class GroupCoordinator:\n    pass\n"}
    client = {"use.py": """
        from vllm import parallel_state
        from vllm.parallel_state import GroupCoordinator

        parallel_state._SP = None
        setattr(GroupCoordinator, "sp_rank", property(lambda self: 0))

        def run(g: GroupCoordinator):
            return parallel_state._SP, g.sp_rank
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC002", "DC006"])
    assert _errors(result) == [], [f.message for f in result.findings]


def test_patch_function_bodies_are_checked_as_methods(tmp_path):
    vllm = {"vllm/runner.py": "class GPUModelRunner:\n    def __init__(self):\n        self.device = 'cpu'\n"}
    client = {"use.py": """
        from vllm.runner import GPUModelRunner

        def load_model(self):
            self.cache = {}
            return self.device, self.cache, self.no_such_member

        GPUModelRunner.load_model = load_model
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.runner.GPUModelRunner.no_such_member"]


def test_generated_module_names_are_unknown_not_missing(tmp_path):
    vllm = {"vllm/grpc/engine_pb2.py": """
        from google.protobuf.internal import builder as _builder
        _globals = globals()
        _builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'vllm.grpc.engine_pb2', _globals)
    """}
    client = {"use.py": "from vllm.grpc import engine_pb2\n\ndef run():\n    return engine_pb2.GenerateRequest()\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC002"])
    assert result.findings == []
    assert any("import time" in u.message for u in result.unknown)


def test_build_variant_module_names_the_build(tmp_path):
    vllm = {
        "vllm/attention/fa_utils.py": "from vllm.vllm_flash_attn import flash_attn_varlen_func\n",
    }
    client = {"use.py": "from vllm.vllm_flash_attn import flash_attn_varlen_func\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC001"])
    assert [f.severity for f in result.findings] == ["warning"]
    assert "vLLM's own code imports it" in result.findings[0].message


def test_removed_module_is_still_an_error(tmp_path):
    vllm = {"vllm/attention/layer.py": "class Attention:\n    pass\n"}
    client = {"use.py": "from vllm.attention.gone import Attention\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC001"])
    assert [f.severity for f in result.findings] == ["error"]


NN = {
    "vllm/model.py": """
        import torch
        from torch import nn

        class LlamaModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("inv_freq", torch.ones(1))

            def embed_input_ids(self, ids):
                return ids
    """,
    "vllm/quant.py": """
        def create_weights(layer):
            layer.register_parameter("w13_weight", None)
    """,
}


def test_nn_module_receivers(tmp_path):
    client = {"use.py": """
        from vllm.model import LlamaModel

        def run(model: LlamaModel, ids):
            model.eval()
            model.named_parameters()
            model.inv_freq
            model.w13_weight
            return model.get_input_embeddings(ids)
    """}
    result = scan_trees(tmp_path, NN, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.model.LlamaModel.get_input_embeddings"]
    assert result.unknown == []


def test_module_dunders_and_deep_chains_do_not_crash(tmp_path):
    vllm = {"vllm/a.py": "from vllm.b import x\n", "vllm/b.py": "from vllm.a import x\n"}
    chain = "vllm.a" + ".x" * 2500
    client = {"use.py": f"import vllm.a\nfrom vllm.a import x\n\ndef run():\n    return vllm.a.__name__, vllm.a.__file__, {chain}\n"}
    result = scan_trees(tmp_path, vllm, client)
    assert result.internal_errors == []
    assert _errors(result, "DC002") == []


def test_typeddict_values_are_dicts_and_computed_setattr_names_exist(tmp_path):
    vllm = {
        "vllm/prompts.py": """
            from typing import TypedDict

            class TokensPrompt(TypedDict):
                prompt_token_ids: list
        """,
        "vllm/mla.py": """
            class MLAAttention:
                def process_weights(self, w):
                    for name, value in (("W_K", w), ("W_V", w)):
                        setattr(self, name, value)
        """,
    }
    client = {"use.py": """
        from vllm.mla import MLAAttention
        from vllm.prompts import TokensPrompt

        def run(p: TokensPrompt, layer: MLAAttention):
            return p.get("prompt_token_ids"), layer.W_K, layer.W_Q
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.mla.MLAAttention.W_Q"]


def test_precondition_names_come_from_the_message_not_its_fstring_fields(tmp_path):
    vllm = {"vllm/config.py": """
        class VllmConfig:
            def __post_init__(self):
                unsupported = self._features()
                if unsupported:
                    raise ValueError(f"Runner V2 does not yet support: {', '.join(unsupported)}")
            def _features(self):
                return []

        def unsupported(x):
            return x
    """, "vllm/engine/core.py": "from vllm.config import unsupported\n\ndef run():\n    unsupported(1)\n"}
    client = {"use.py": "from vllm.config import VllmConfig\n\ndef run():\n    VllmConfig().__post_init__()\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC108"])
    assert result.findings == []


def test_negative_isinstance_with_early_return_guards_the_rest(tmp_path):
    vllm = {"vllm/kv.py": """
        class KVConnectorBase:
            def request_finished(self, r):
                ...

        class SupportsHMA:
            def request_finished_all_groups(self, r, ids):
                ...
    """}
    client = {"use.py": """
        from vllm.kv import KVConnectorBase, SupportsHMA

        class Scheduler:
            def __init__(self, c: KVConnectorBase):
                self.connector = c

            def finish(self, r):
                if not isinstance(self.connector, SupportsHMA):
                    return self.connector.request_finished(r)
                return self.connector.request_finished_all_groups(r, [])

            def cancel(self, r):
                if not isinstance(self.connector, SupportsHMA):
                    return None
                return self.connector.request_cancelled(r)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    # `finish`: the class the test narrows to defines the member (isinstance_narrowing.py, ME1): no finding at all;
    # `cancel`: neither class has it, and the early return guards the rest: a warning at most
    assert [(f.client.line, f.severity, "guarded" in f.details) for f in result.findings] == [(15, "warning", True)]


def test_names_built_from_an_fstring_template_exist(tmp_path):
    vllm = {
        "vllm/moe.py": "from torch import nn\n\n\nclass FusedMoE(nn.Module):\n    def __init__(self):\n        self.w13_weight = None\n",
        "vllm/fp8.py": """
            class Fp8MoEMethod:
                def __init__(self):
                    self.scale_name = "weight_scale_inv"

                def create_weights(self, layer):
                    layer.register_parameter(f"w13_{self.scale_name}", None)
        """,
    }
    client = {"use.py": """
        from vllm.moe import FusedMoE

        def apply(layer: FusedMoE):
            return layer.w13_weight_scale_inv, layer.bias_gone  # no template builds `bias_gone`
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.moe.FusedMoE.bias_gone"]


def test_an_annotation_that_fits_none_of_the_reads_is_doubted(tmp_path):
    vllm = {"vllm/config.py": "class ModelConfig:\n    def __init__(self):\n        self.model = 'm'\n"}
    client = {"use.py": """
        from vllm.config import ModelConfig

        class MoE:
            def __init__(self, config: ModelConfig):  # really handed a Hugging Face config
                self.n = config.moe_num_experts
                self.k = config.moe_top_k
                self.norm = config.norm_expert_weight

        def one_read(config: ModelConfig):
            return config.removed_field  # a single read of a removed field stays an error

        def mixed(config: ModelConfig):
            return config.model, config.gone_a, config.gone_b, config.gone_c
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    sev = {f.symbol.rsplit(".", 1)[-1]: f.severity for f in result.findings}
    assert sev == {"moe_num_experts": "warning", "moe_top_k": "warning", "norm_expert_weight": "warning",
                   "removed_field": "error", "gone_a": "error", "gone_b": "error", "gone_c": "error"}


def test_a_hasattr_guard_covers_the_attribute_it_checks_only(tmp_path):
    vllm = {"vllm/fc.py": "class ForwardContext:\n    def __init__(self):\n        self.no_compile_layers = {}\n"}
    client = {"use.py": """
        from vllm.fc import ForwardContext

        def init(fc: ForwardContext, caches):
            for name in fc.no_compile_layers:
                layer = fc.no_compile_layers[name]
                if not hasattr(layer, "kv_cache"):
                    continue
                caches[name] = layer.kv_cache[fc.virtual_engine]
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.symbol.rsplit(".", 1)[-1], f.severity) for f in result.findings] == [("virtual_engine", "error")]


def test_an_assignment_on_another_object_does_not_hide_a_missing_member(tmp_path):
    vllm = {
        "vllm/impl.py": "class FlashAttentionImpl:\n    def __init__(self):\n        self.head_size = 64\n",
        "vllm/builder.py": "def build(meta):\n    meta.block_size = 16\n",
    }
    client = {"use.py": """
        from vllm.impl import FlashAttentionImpl

        def schedule(impl: FlashAttentionImpl):
            return impl.head_size, impl.block_size
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.symbol, f.severity) for f in result.findings] == [("vllm.impl.FlashAttentionImpl.block_size", "error")]


RUNNERS = {
    "vllm/runner_v1.py": "class GPUModelRunner:\n    def execute_model(self, scheduler_output):\n        pass\n",
    "vllm/runner_v2.py": "class GPUModelRunner:\n    def execute_model(self, scheduler_output, dummy_run=False):\n        pass\n",
    "vllm/worker.py": """
        from vllm.runner_v1 import GPUModelRunner

        class Worker:
            def __init__(self, v2):
                if v2:
                    from vllm.runner_v2 import GPUModelRunner as GPUModelRunnerV2
                    self.model_runner: GPUModelRunner = GPUModelRunnerV2()  # type: ignore
                else:
                    self.model_runner = GPUModelRunner()

            def dummy(self):
                self.model_runner.execute_model(None, dummy_run=True)
    """,
}


def test_an_attribute_holds_what_was_built_not_what_the_annotation_says(tmp_path):
    """`self.x: A = B()` holds a B: vLLM's worker annotates its V2 runner with the V1 class (0.14.0 gpu_worker.py)."""
    inside = scan_trees(tmp_path / "inside", {k: v for k, v in RUNNERS.items() if k != "vllm/worker.py"},
                        {"vllm/worker.py": RUNNERS["vllm/worker.py"]}, only=["DC003"])
    outside = scan_trees(tmp_path / "outside", RUNNERS, {"plugin.py": """
        from vllm.worker import Worker

        def warm(worker: Worker):
            worker.model_runner.execute_model(None, dummy_run=True)
    """}, only=["DC003"])
    assert _errors(inside) == [] and _errors(outside) == []


def test_a_subclass_built_under_a_base_annotation_is_checked_as_the_subclass(tmp_path):
    vllm = {"vllm/runners.py": """
        class Base:
            def run(self):
                pass

        class Fast(Base):
            def run(self, steps):
                pass

        class Worker:
            def __init__(self):
                self.runner: Base = Fast()
    """}
    result = scan_trees(tmp_path, vllm, {"plugin.py": """
        from vllm.runners import Worker

        def go(worker: Worker):
            worker.runner.run(1, 2)
    """}, only=["DC004"])
    assert [f.symbol for f in _errors(result)] == ["vllm.runners.Fast.run"]


def test_members_a_decorator_sets_on_the_object_exist(tmp_path):
    """vLLM 0.32.0: `@JitWarmupRegistry.capture` on `GPUModelRunner.__init__` sets `instance.jit_warmup_registry`."""
    vllm = {"vllm/warmup.py": """
        from functools import wraps

        class Registry:
            @classmethod
            def capture(cls, init_fn):
                @wraps(init_fn)
                def wrapped(instance, *args, **kwargs):
                    instance.registry = cls()
                    init_fn(instance, *args, **kwargs)
                return wrapped

            def activate(self):
                pass

        def tagged(cls):
            cls.tag = "x"
            return cls
    """, "vllm/runner.py": """
        from vllm.warmup import Registry, tagged

        @tagged
        class Runner:
            @Registry.capture
            def __init__(self):
                self.ready = True
    """}
    client = {"plugin.py": """
        from vllm.runner import Runner

        def warm(runner: Runner):
            runner.registry.activate()
            return runner.ready, runner.tag, runner.missing
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.runner.Runner.missing"]


def test_a_member_the_client_sets_on_a_typed_object_is_its_own(tmp_path):
    """vLLM 0.32.0 amx_mla.py: the metadata builder sets `prefill.req_to_token`, the backend reads it."""
    vllm = {"vllm/meta.py": """
        from dataclasses import dataclass

        @dataclass
        class PrefillMetadata:
            chunk: int
    """}
    client = {"builder.py": """
        from vllm.meta import PrefillMetadata

        def build() -> PrefillMetadata:
            prefill = PrefillMetadata(1)
            prefill.req_to_token = [0]
            return prefill
    """, "backend.py": """
        from vllm.meta import PrefillMetadata

        def run(prefill: PrefillMetadata, other: PrefillMetadata):
            return prefill.chunk, prefill.req_to_token, other.req_pool_indices
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.meta.PrefillMetadata.req_pool_indices"]


def test_a_member_set_through_the_same_variable_in_the_same_file_is_the_clients(tmp_path):
    """amx_mla.py: `prefill = attn_metadata.prefill; prefill.cpu_seq_lens = ...` where the builder's
    metadata comes from `super().build(...)` (untyped), read back as `prefill.cpu_seq_lens` in the backend."""
    vllm = {"vllm/meta.py": "class PrefillMetadata:\n    def __init__(self):\n        self.chunk = 1\n"}
    client = {"backend.py": """
        from vllm.meta import PrefillMetadata

        def build(meta):
            prefill = meta.prefill
            prefill.cpu_seq_lens = [1]

        def run(prefill: PrefillMetadata, decode: PrefillMetadata):
            return prefill.chunk, prefill.cpu_seq_lens, decode.cpu_seq_lens
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.meta.PrefillMetadata.cpu_seq_lens"]
    assert [f.client.line for f in _errors(result)] == [8]


def test_a_name_bound_twice_has_no_one_type(tmp_path):
    """vLLM 0.32.0 helion `pick_config`: `result, _, *_ = args` (untyped), later `result = CaseKey(...)`;
    `result.shape` reads the first. A parameter rebound in the body holds either value too."""
    vllm = {"vllm/keys.py": "class CaseKey(dict):\n    pass\n"}
    client = {"pick.py": """
        from vllm.keys import CaseKey

        def pick(args, key: CaseKey):
            result, _, *_ = args
            n = result.shape
            result = CaseKey()
            key = args[0]
            return n, key.shape, CaseKey().shape
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.symbol, f.client.line) for f in _errors(result)] == [("vllm.keys.CaseKey.shape", 8)]


def test_a_dataclass_over_a_base_we_do_not_read_has_an_unknown_constructor(tmp_path):
    """vLLM 0.33.0 tml_fa4: `@dataclass(frozen=True) class NamedBarrier(cutlass.pipeline.NamedBarrier)` takes
    the fields of cutlass's class (`barrier_id=`, `num_threads=`), which the scan does not read."""
    vllm = {"vllm/pipeline.py": """
        from dataclasses import dataclass
        from cutlass.pipeline import NamedBarrier as NamedBarrierOg

        @dataclass(frozen=True)
        class NamedBarrier(NamedBarrierOg):
            def arrive(self):
                pass

        @dataclass
        class Local:
            size: int
    """}
    client = {"use.py": """
        from vllm.pipeline import Local, NamedBarrier

        def make():
            return NamedBarrier(barrier_id=1, num_threads=64), Local(size=1, extra=2)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC003"])
    assert [f.symbol for f in _errors(result)] == ["vllm.pipeline.Local(extra=)"]


def test_an_annotation_a_caller_contradicts_is_doubted(tmp_path):
    """vLLM kimi_linear.py passes `model_config=config` (a `KimiLinearConfig`) to `KimiDeltaAttention(model_config:
    ModelConfig)`; step3p5.py hands `Step3p5MLP(config: ModelConfig)` the Hugging Face config."""
    vllm = {"vllm/config.py": """
        from transformers import PretrainedConfig

        class ModelConfig:
            def __init__(self):
                self.hf_config: PretrainedConfig = load()
                self.dtype = "bf16"

        class VllmConfig:
            def __init__(self):
                self.model_config = ModelConfig()
    """, "vllm/kimi_config.py": "class KimiLinearConfig:\n    def __init__(self):\n        self.linear_attn_config = {}\n"}
    client = {"layers.py": """
        from vllm.config import ModelConfig, VllmConfig
        from vllm.kimi_config import KimiLinearConfig

        class KimiDeltaAttention:
            def __init__(self, layer_idx: int, model_config: ModelConfig | None = None):
                self.kda = model_config.linear_attn_config

        class Step3p5MLP:
            def __init__(self, config: ModelConfig):
                self.limit = config.swiglu_limits_shared

        class Genuine:
            def __init__(self, config: ModelConfig):
                self.limit = config.no_such_field

        def build(config: KimiLinearConfig, vllm_config: VllmConfig):
            hf = vllm_config.model_config.hf_config
            return (KimiDeltaAttention(0, model_config=config), Step3p5MLP(hf),
                    Genuine(vllm_config.model_config))
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.config.ModelConfig.no_such_field"]
    doubted = sorted(f.symbol for f in result.findings if f.details.get("annotation_doubted"))
    assert doubted == ["vllm.config.ModelConfig.linear_attn_config", "vllm.config.ModelConfig.swiglu_limits_shared"]


def test_self_of_a_method_called_unbound_with_another_object_is_doubted(tmp_path):
    """vLLM 0.32.0 inkling: the LoRA wrapper calls `type(self.base_layer)._lora_forward(self, ...)`, so inside
    `InklingLogitsProcessor._lora_forward`, `self` is the wrapper and `self.base_layer` exists."""
    vllm = {"vllm/logits.py": "class LogitsProcessor:\n    def __init__(self):\n        self.scale = 1.0\n",
            "vllm/moe.py": "class FusedMoE:\n    def __init__(self):\n        self.w = 1\n"}
    client = {"inkling.py": """
        from vllm.logits import LogitsProcessor
        from vllm.moe import FusedMoE

        class Wrapper:
            def __init__(self, base_layer: LogitsProcessor):
                self.base_layer = base_layer

            def forward(self, x):
                return type(self.base_layer)._lora_forward(self, x) + type(self.base_layer).forward(self, x)

        class InklingLogitsProcessor(LogitsProcessor):
            def _lora_forward(self, x):
                return self.base_layer.scale * x

            def compute(self, x):
                return self.no_such_member

        class ZeroExpertMoE(FusedMoE):  # its forward is not the one the wrapper calls unbound

            def forward(self, x):
                return self.select_experts(x)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert sorted(f.symbol for f in _errors(result)) == ["vllm.logits.LogitsProcessor.no_such_member",
                                                         "vllm.moe.FusedMoE.select_experts"]
    assert [f.symbol for f in result.findings if f.details.get("annotation_doubted")] == ["vllm.logits.LogitsProcessor.base_layer"]


def test_a_function_behind_a_third_party_decorator_is_not_checked(tmp_path):
    """vLLM 0.29.0 mhc: `@tilelang_jit def mhc_fused_tilelang(...)` where vLLM's `tilelang_jit(fn)` returns
    `tilelang.jit(...)(fn)`; the compiled kernel takes extra keywords (`n_splits=`)."""
    vllm = {"vllm/jit.py": """
        import functools
        import tilelang

        def tilelang_jit(fn):
            return tilelang.jit(pass_configs={})(fn)

        def timed(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)
            return wrapper
    """, "vllm/kernels.py": """
        import functools
        import torch
        from vllm.jit import tilelang_jit, timed

        @tilelang_jit
        def fused(x):
            pass

        @torch.inference_mode()
        def plain(x):
            pass

        @timed
        def wrapped(x):
            pass
    """, "vllm/ops.py": """
        from vllm.platforms import on_gpu

        if on_gpu():
            import tilelang
        else:
            tilelang = None

        @tilelang.jit(out_idx=[-1])
        def fused_ops(x):
            pass

        def lazy_jit(fn):
            return tilelang.jit(pass_configs={})(fn)

        @lazy_jit
        def fused_lazy(x):
            pass
    """, "vllm/platforms.py": "def on_gpu():\n    return False\n"}
    client = {"use.py": """
        from vllm.kernels import fused, plain, wrapped
        from vllm.ops import fused_lazy, fused_ops

        def run(x):
            return (fused(x, n_splits=4), plain(x, n_splits=4), wrapped(x, n_splits=4), fused_ops(x, n_splits=4),
                    fused_lazy(x, n_splits=4))
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC003"])
    assert sorted(f.symbol for f in _errors(result)) == ["vllm.kernels.plain(n_splits=)", "vllm.kernels.wrapped(n_splits=)"]


def test_a_caller_that_imports_one_of_several_same_named_functions_is_evidence(tmp_path):
    """vLLM 0.29.0 models/utils.py `get_spec_layer_idx_from_weight_name(config: "ModelConfig", ...)` is called by
    34 model files with the Hugging Face config; another file defines a function of the same name."""
    vllm = {"vllm/config.py": """
        from transformers import PretrainedConfig

        class ModelConfig:
            def __init__(self):
                self.hf_config: PretrainedConfig = load()
    """}
    client = {"vllm/models/utils.py": """
        from vllm.config import ModelConfig

        def spec_layer(config: "ModelConfig", name):
            return config.num_hidden_layers
    """, "vllm/models/other.py": """
        from vllm.config import ModelConfig

        def spec_layer(config, name):
            return 0
    """, "vllm/models/deepseek.py": """
        from vllm.config import ModelConfig
        from .utils import spec_layer

        class Model:
            def __init__(self, model_config: ModelConfig):
                self.config = model_config.hf_config

            def load(self, name):
                return spec_layer(self.config, name)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert _errors(result) == []
    assert [f.symbol for f in result.findings if f.details.get("annotation_doubted")] == ["vllm.config.ModelConfig.num_hidden_layers"]


FACTORY_WORKER = """
    from vllm.runner_v1 import GPUModelRunner

    class Worker:
        def __init__(self, v2):
            self.v2 = v2
            self.model_runner: GPUModelRunner = self._make_model_runner()

        def _make_model_runner(self) -> "GPUModelRunner":
            if self.v2:
                from vllm.runner_v2 import GPUModelRunner as GPUModelRunnerV2
                return GPUModelRunnerV2()  # type: ignore
            return GPUModelRunner()

        def dummy(self):
            self.model_runner.execute_model(None, dummy_run=True)
"""


def test_an_attribute_a_factory_method_builds_holds_each_class_it_returns(tmp_path):
    """vLLM 0.32.0 gpu_worker.py: `self.model_runner: GPUModelRunner = self._make_model_runner()`, which returns the
    V2 runner (a different class of the same name) or the V1 one."""
    runners = {k: v for k, v in RUNNERS.items() if k != "vllm/worker.py"}
    inside = scan_trees(tmp_path / "inside", runners, {"vllm/worker.py": FACTORY_WORKER}, only=["DC003"])
    outside = scan_trees(tmp_path / "outside", {**runners, "vllm/worker.py": FACTORY_WORKER}, {"plugin.py": """
        from vllm.worker import Worker

        def warm(worker: Worker):
            worker.model_runner.execute_model(None, dummy_run=True)
    """}, only=["DC003"])
    assert _errors(inside) == [] and _errors(outside) == []


def test_version_switches_that_pick_a_helper_or_a_vendored_module_guard_them(tmp_path):
    """vllm-spyre 1.10.0: `if find_spec("vllm.profiler.wrapper") is None: return self._setup_legacy_profiler()`;
    vllm-beam-search-plugin 0.1.5: a selector returns ".vendored_scheduler_v028" under `release == (0, 28, 0)`
    and `import_module(name, package=__package__)` loads it."""
    vllm = {"vllm/__init__.py": "__version__ = '0.28.0'\n__version_tuple__ = (0, 28, 0)\n", "vllm/envs.py": "VLLM_NEW = 1\n",
            "vllm/sched.py": "class SchedulerOutput:\n    def __init__(self, n):\n        pass\n"}
    client = {"pkg/worker.py": """
        import importlib.util
        import vllm.envs as envs

        class Worker:
            def setup(self):
                if importlib.util.find_spec("vllm.profiler.wrapper") is None:
                    return self._legacy()
                return None

            def _legacy(self):
                return envs.VLLM_TORCH_PROFILER_DIR

            def plain(self):
                return envs.VLLM_GONE
    """, "pkg/__init__.py": "", "pkg/adapter.py": """
        from importlib import import_module
        import vllm

        def _select(version_tuple):
            release = version_tuple[:3]
            if release == (0, 28, 0):
                return ".vendored_v028"
            raise RuntimeError("unsupported")

        def schedule():
            return import_module(_select(vllm.__version_tuple__), package=__package__).run
    """, "pkg/vendored_v028.py": """
        from vllm.sched import SchedulerOutput

        def run():
            return SchedulerOutput(1, partial_tail_offloads=[])
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC002", "DC003"])
    assert [f.symbol for f in _errors(result)] == ["vllm.envs.VLLM_GONE"]
    assert {f.symbol for f in result.findings if f.severity == "warning"} == {
        "vllm.envs.VLLM_TORCH_PROFILER_DIR", "vllm.sched.SchedulerOutput(partial_tail_offloads=)"}


def test_self_passed_on_through_type_of_a_member_is_doubted(tmp_path):
    """vLLM 0.32.0 inkling (the form it really has): inside the class itself, `if hasattr(self, "base_layer"):
    return type(self.base_layer)._lora_forward(self, ...)`; `_lora_forward` then reads `self.base_layer`."""
    vllm = {"vllm/logits.py": "class LogitsProcessor:\n    def __init__(self):\n        self.scale = 1.0\n"}
    client = {"inkling.py": """
        from vllm.logits import LogitsProcessor

        class InklingLogitsProcessor(LogitsProcessor):
            def forward(self, x):
                if hasattr(self, "base_layer"):
                    return type(self.base_layer)._lora_forward(self, x)
                return self.scale * x

            def _lora_forward(self, x):
                return self.base_layer.scale * x

            def other(self):
                return self.no_such_member
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.logits.LogitsProcessor.no_such_member"]


def test_a_caller_that_rebinds_the_argument_first_is_evidence(tmp_path):
    """vLLM 0.11.1 step3_text.py: `def __init__(self, config: ModelConfig): config = config.hf_config; ...
    FusedMoEBlock(config=config)`, and `FusedMoEBlock(config: ModelConfig)` reads the MoE fields of the HF config."""
    vllm = {"vllm/config.py": """
        from transformers import PretrainedConfig

        class ModelConfig:
            def __init__(self):
                self.hf_config: PretrainedConfig = load()
    """}
    client = {"vllm/models/step3_text.py": """
        from vllm.config import ModelConfig

        class FusedMoEBlock:
            def __init__(self, config: ModelConfig):
                self.n = config.moe_num_experts

        class DecoderLayer:
            def __init__(self, config: ModelConfig):
                config = config.hf_config
                self.moe = FusedMoEBlock(config=config)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert _errors(result) == []
    assert [f.symbol for f in result.findings if f.details.get("annotation_doubted")] == ["vllm.config.ModelConfig.moe_num_experts"]


def test_a_name_bound_to_different_classes_has_no_one_class(tmp_path):
    """vLLM 0.33.0 tml_fa4 flash_fwd_combine.py picks `TileScheduler = DynamicPersistentVarlenScheduler` in one
    branch and `= SingleTileScheduler` in another, then calls it with the arguments of the one it picked."""
    vllm = {"vllm/sched.py": """
        class Single:
            def __init__(self, params):
                pass

        class Dynamic:
            def __init__(self, params, work, pipeline):
                pass
    """}
    client = {"combine.py": """
        from vllm.sched import Dynamic, Single

        def make(dynamic):
            if dynamic:
                TileScheduler = Dynamic
            else:
                TileScheduler = Single
            return TileScheduler(1, 2, 3) if dynamic else TileScheduler(1), Single(1, 2)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC004"])
    # only `Single(1, 2)`: `TileScheduler(1, 2, 3)` may be either class
    assert [(f.client.line, f.client.col) for f in _errors(result)] == [(8, 69)]


def test_a_member_read_from_an_object_handed_to_unread_code_is_unknown(tmp_path):
    """vLLM 0.22's fused_humming_moe.py hands `self.layer` to the third-party humming library, which sets
    `layer.humming_metas`; a read of it there is unknown. The same read from an object that is not handed
    over (another method's parameter, another class's `self.layer`, or one handed only to the stdlib) stays an error."""
    vllm = {
        "vllm/layer.py": "class FusedMoE:\n    def __init__(self):\n        self.num_experts = 4\n",
    }
    client = {"experts.py": """
        import copy
        from thirdlib import prepare
        from vllm.layer import FusedMoE

        class Experts:
            def __init__(self, layer: FusedMoE):
                self.layer = layer
                prepare(layer=self.layer)

            def size(self):
                return self.layer.lib_metas["w"], self.layer.num_experts

            def other(self, layer: FusedMoE):
                return layer.lib_metas

        class Plain:
            def __init__(self, layer: FusedMoE):
                self.layer = layer
                copy.copy(self.layer)

            def size(self):
                return self.layer.lib_metas
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert sorted((f.client.line, f.severity) for f in result.findings) == [(14, "error"), (22, "error")]
    [unknown] = [u for u in result.unknown if "handed" in u.message]
    assert "`thirdlib.prepare` (line 8)" in unknown.message and "lib_metas" in unknown.message


def test_a_vllm_class_the_client_replaces_is_not_checked_as_vllm_s(tmp_path):
    """vllm-omni sets its own StreamingUpdate on every loaded vllm module (a loop over sys.modules); a direct
    `request.Cls = Mine` does the same for one module. Values typed as the replaced class may be the client's
    class; a class left alone is still checked."""
    vllm = {
        "vllm/request.py": "class StreamingUpdate:\n    max_tokens: int = 0\n\nclass Request:\n    max_tokens: int = 0\n",
        "vllm/outputs.py": "class Output:\n    text: str = ''\n",
    }
    client = {
        "patch.py": """
            import sys

            import vllm.outputs
            from mine import MyOutput, MyUpdate

            for name, module in list(sys.modules.items()):
                if hasattr(module, "StreamingUpdate"):
                    module.StreamingUpdate = MyUpdate
            vllm.outputs.Output = MyOutput
        """,
        "use.py": """
            from vllm.outputs import Output
            from vllm.request import Request, StreamingUpdate

            def finish(update: StreamingUpdate, out: Output, req: Request):
                return update.extra_info, out.extra_text, req.extra_info
        """,
    }
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.symbol, f.severity) for f in result.findings] == [("vllm.request.Request.extra_info", "error")]


def test_a_method_body_replaced_at_import_is_a_warning(tmp_path):
    """vllm-rbln defines `forward` on a class and replaces it at module level (`MyMoE.forward = patched`): the
    original body never runs. A replacement that wraps the original (reads `MyMoE.forward`) keeps it live."""
    vllm = {"vllm/moe.py": "class Experts:\n    def __init__(self):\n        self.top_k = 2\n"}
    client = {"model.py": """
        from vllm.moe import Experts

        class MyMoE:
            def __init__(self):
                self.experts = Experts()

            def forward(self, h):
                return self.experts.is_internal_router

        class Wrapped:
            def __init__(self):
                self.experts = Experts()

            def forward(self, h):
                return self.experts.is_internal_router

        def patched(self, h):
            return h

        MyMoE.forward = patched
        _original = Wrapped.forward
        Wrapped.forward = lambda self, h: _original(self, h)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert sorted((f.client.line, f.severity) for f in result.findings) == [(8, "warning"), (15, "error")]
    assert "which line 20 replaces at import (this body never runs)." in result.findings[0].message


def test_probe_and_version_idioms_guard_only_what_they_probe(tmp_path):
    """Shapes from trl, memkv-vllm and verl: a flag bound to a version check made with a keyword; a getattr bound to
    a name with an early return (the rest is the other spelling on the same object); `getattr(...) or fallback`;
    a public function used only on the old-vLLM branch of a dispatcher. What none of them guards stays an error."""
    vllm = {
        "vllm/spec.py": "class OffloadingSpec:\n    def __init__(self):\n        self.blocks_per_chunk = 4\n",
        "vllm/other.py": "class Other:\n    pass\n",
    }
    client = {"compat.py": """
        from importlib.metadata import version as _v

        import vllm.spec as spec_mod
        from vllm.other import Other
        from vllm.spec import OffloadingSpec

        def _v_at_least(min_version):
            return _v("vllm") >= min_version

        HAS_NEW = _v_at_least(min_version="0.28.0")
        if HAS_NEW:
            from vllm.spec import NewThing
        else:
            from vllm.spec import OldThing

        Spec = getattr(spec_mod, "Spec", None) or spec_mod.SpecV0

        def blocks(spec: OffloadingSpec, other: Other):
            found = getattr(spec, "blocks_per_chunk", None)
            if found is not None:
                return found
            return spec.block_size_factor, other.missing_here

        def legacy(spec: OffloadingSpec):
            return spec.legacy_only

        def dispatch(new):
            if HAS_NEW:
                return None
            return legacy

        def caller():
            return blocks(None, None)

        def unguarded(spec: OffloadingSpec):
            return spec.nowhere
    """}
    result = scan_trees(tmp_path, vllm, client)
    assert sorted(f"{f.symbol} {f.severity}" for f in result.findings if f.rule in ("DC002", "DC006")) == [
        "vllm.other.Other.missing_here error", "vllm.spec.NewThing warning",
        "vllm.spec.OffloadingSpec.block_size_factor warning", "vllm.spec.OffloadingSpec.legacy_only warning",
        "vllm.spec.OffloadingSpec.nowhere error", "vllm.spec.OldThing warning", "vllm.spec.SpecV0 warning"]


def test_names_a_loop_sets_on_a_client_class_are_its_members(tmp_path):
    """vllm-kvblockd: `setattr(MyConnector, name, property(...))` in a helper looping over the names every call
    passes as literals. A name no call passes stays missing."""
    vllm = {"vllm/base.py": "class KVConnectorBase:\n    def __init__(self):\n        self.role = 'worker'\n"}
    client = {"conn.py": """
        from vllm.base import KVConnectorBase

        class MyConnector(KVConnectorBase):
            def shutdown(self):
                return self._prefetch_ex, self._slab_disabled, self._never_set

        def _alias(owner, names):
            for name in names:
                setattr(MyConnector, name, property(lambda self, _n=name: getattr(getattr(self, owner), _n)))

        _alias("_loader", ("_prefetch_ex", "_slab_disabled"))
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [f.symbol for f in _errors(result)] == ["vllm.base.KVConnectorBase._never_set"]


def test_super_calls_are_checked_against_the_next_vllm_base(tmp_path):
    """verl 0.9.1 calls `super().__init__(config, vllm_config, device, model)` on vLLM 0.24's 3-parameter
    WeightTransferEngine.__init__: a TypeError that no override can absorb. A client base in between, or a call
    that fits, is no finding."""
    vllm = {"vllm/base.py": """
        class WeightTransferEngine:
            def __init__(self, config, parallel_config, model):
                self.config = config

            def send(self, x):
                return x
    """}
    client = {"eng.py": """
        from vllm.base import WeightTransferEngine

        class Mine(WeightTransferEngine):
            def __init__(self, config, vllm_config, device, model):
                super().__init__(config, vllm_config, device, model)
                super(Mine, self).send(1, 2)

        class Fits(WeightTransferEngine):
            def __init__(self, config, parallel_config, model):
                super().__init__(config, parallel_config, model=model)
                super().send(1)

        class Mixin:
            def send(self, a, b):
                return a

        class Mixed(Mixin, WeightTransferEngine):
            def go(self):
                return super().send(1, 2)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC003", "DC004", "DC005"])
    assert sorted((f.client.line, f.severity) for f in result.findings) == [(5, "error"), (6, "error")]


def test_a_flag_that_reads_a_signature_is_a_version_check(tmp_path):
    """memkv-vllm: `ACCEPTS = "lookup_timeout_s" in inspect.signature(Base.__init__).parameters`, then
    `if ACCEPTS: super().__init__(..., lookup_timeout_s=t) else: super().__init__(...)`."""
    vllm = {"vllm/lookup.py": "class AsyncLookupManager:\n    def __init__(self, tier_type):\n        self.tier_type = tier_type\n"}
    client = {"lookup.py": """
        import inspect

        from vllm.lookup import AsyncLookupManager

        ACCEPTS = "lookup_timeout_s" in inspect.signature(AsyncLookupManager.__init__).parameters

        class Mine(AsyncLookupManager):
            def __init__(self, tier_type, timeout=5.0):
                if ACCEPTS:
                    super().__init__(tier_type=tier_type, lookup_timeout_s=timeout)
                else:
                    super().__init__(tier_type=tier_type)

        class Unguarded(AsyncLookupManager):
            def __init__(self, tier_type, timeout=5.0):
                super().__init__(tier_type=tier_type, lookup_timeout_s=timeout)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC003"])
    assert sorted((f.client.line, f.severity) for f in result.findings) == [(10, "warning"), (16, "error")]


def test_the_same_call_with_and_without_what_the_test_checks_is_a_switch(tmp_path):
    """lmcache 0.4.7-0.5.6: `if kv_cache_config is not None: super().__init__(..., kv_cache_config=...) else:
    super().__init__(...)`; vLLM's factory picks the branch. A call that differs in nothing the test checks is
    still checked."""
    vllm = {"vllm/base.py": """
        class KVConnectorBase_V1:
            def __init__(self, vllm_config, role, kv_cache_config):
                self._vllm_config = vllm_config
    """}
    client = {"conn.py": """
        from vllm.base import KVConnectorBase_V1

        class Dynamic(KVConnectorBase_V1):
            def __init__(self, vllm_config, role, kv_cache_config=None):
                if kv_cache_config is not None:
                    super().__init__(vllm_config=vllm_config, role=role, kv_cache_config=kv_cache_config)
                else:
                    super().__init__(vllm_config=vllm_config, role=role)

        class Broken(KVConnectorBase_V1):
            def __init__(self, vllm_config, role, debug=False):
                if debug:
                    super().__init__(vllm_config=vllm_config, role=role)
                else:
                    super().__init__(vllm_config, role)
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC005"])
    assert sorted((f.client.line, f.severity) for f in result.findings) == [
        (8, "warning"), (13, "error"), (15, "error")]


def test_an_object_handed_to_unread_code_through_a_vllm_wrapper_is_unknown_too(tmp_path):
    """vLLM 0.27.1 imports humming's HummingMethod through its own `vllm.utils.humming` (a module __getattr__),
    inside the method: the callee is still code driftcheck does not read."""
    vllm = {
        "vllm/layer.py": "class FusedMoE:\n    def __init__(self):\n        self.num_experts = 4\n",
        "vllm/utils_lib.py": "def __getattr__(name):\n    import thirdlib\n    return getattr(thirdlib, name)\n",
    }
    client = {"experts.py": """
        from vllm.layer import FusedMoE

        class Experts:
            def __init__(self, layer: FusedMoE):
                self.layer = layer
                from vllm.utils_lib import Method
                Method.prepare(layer=self.layer)

            def size(self):
                return self.layer.lib_metas

        class Plain:
            def __init__(self, layer: FusedMoE):
                self.layer = layer

            def size(self):
                return self.layer.lib_metas
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert [(f.client.line, f.severity) for f in result.findings] == [(17, "error")]
    assert any("`vllm.utils_lib.Method.prepare` (line 7)" in u.message for u in result.unknown)


def test_a_caller_passing_elements_of_a_container_of_another_class_doubts_the_annotation(tmp_path):
    """vllm-ascend 0.23.0: `_process_new_request(self, request: Request, ...)` is called with each element of
    `scheduler_output.scheduled_new_reqs: list[NewRequestData]`. A caller iterating Requests confirms the annotation."""
    vllm = {"vllm/sched.py": """
        from dataclasses import dataclass, field

        class Request:
            def __init__(self, request_id):
                self.request_id = request_id

        @dataclass
        class NewRequestData:
            req_id: str

        @dataclass
        class SchedulerOutput:
            scheduled_new_reqs: list[NewRequestData] = field(default_factory=list)
            finished: list[Request] = field(default_factory=list)
    """}
    client = {"pool.py": """
        from vllm.sched import Request, SchedulerOutput

        class Pool:
            def _new(self, request: Request):
                return request.req_id

            def _done(self, request: Request):
                return request.req_id

            def build(self, out: SchedulerOutput):
                return [self._new(n) for n in out.scheduled_new_reqs] + [self._done(r) for r in out.finished]
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    assert sorted((f.client.line, f.severity) for f in result.findings) == [(5, "warning"), (8, "error")]
