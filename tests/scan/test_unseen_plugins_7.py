"""The six root causes of false errors from the seventh batch of untuned plugins (docs/triage/2026-12-02-unseen-plugins-7.md),
one group each: the shape that runs (no error, or unknown / a warning with the reason where driftcheck cannot know),
and the same shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from driftcheck.client_model.cross_file_guards import dispatched_modules
from driftcheck.client_model.client import parse_client_file
from driftcheck.fix.fixer import FixOptions, plan_fixes
from driftcheck.scan.pipeline import ScanOptions
from driftcheck.sources.sources import FolderTree
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import scan_trees, vllm_tree, write_tree


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


def _unknown(result, rule: str) -> list[str]:
    return [u.message for u in result.unknown if u.rule == rule]


def _fixed(tmp_path, vllm_files: dict, client_files: dict) -> dict[str, str]:
    """The files `driftcheck fix` would change, and their new text."""
    vroot = vllm_tree(tmp_path / "fix-vllm", vllm_files)
    write_tree(vroot, {"vllm/_version.py": '__version__ = "0.99.0"\n'})
    croot = write_tree(tmp_path / "fix-client", client_files)
    plan = plan_fixes(resolve_vllm(str(vroot), tmp_path / "cache"), resolve_client(str(croot), tmp_path / "cache"),
                      ScanOptions(cache_dir=tmp_path / "cache", use_cache=False), FixOptions())
    return {c.rel: c.new for c in plan.changes}


# ----------------------------------------------------------------------------------------- AU
PARALLEL = {
    "vllm/distributed/parallel_state.py": """
        def init_model_parallel_group(group_ranks, local_rank, backend, use_message_queue_broadcaster=False):
            return group_ranks
    """,
}

COPY = {  # a copy of an old vLLM's code, three files that import one another
    "pkg/__init__.py": "",
    "pkg/third_party/__init__.py": "",
    "pkg/third_party/copy_054/__init__.py": "",
    "pkg/third_party/copy_054/parallel_state.py": """
        from vllm.distributed.parallel_state import init_model_parallel_group

        def initialize(group_ranks):
            return init_model_parallel_group(group_ranks, 0, "nccl", use_custom_allreduce=False)
    """,
    "pkg/third_party/copy_054/llm.py": """
        from vllm.distributed.parallel_state import init_model_parallel_group

        from .engine import make_group

        class LLM:
            def __init__(self):
                self.group = make_group([0])
                self.other = init_model_parallel_group([0], 0, "gloo", use_custom_allreduce=True)
    """,
    "pkg/third_party/copy_054/engine.py": """
        from vllm.distributed.parallel_state import init_model_parallel_group

        from . import llm  # the copies import one another

        def make_group(group_ranks):
            return init_model_parallel_group(group_ranks, 0, "nccl", use_custom_allreduce=False)
    """,
}


def _dispatcher(test: str, prelude: str = 'package_version = version("vllm")') -> dict[str, str]:
    return {"pkg/third_party/__init__.py": "\n".join([
        "from importlib.metadata import version", prelude, f"if {test}:",
        "    from .copy_054 import parallel_state", "    from .copy_054.llm import LLM", "else:",
        "    from vllm.distributed import parallel_state", ""])}


def test_copies_imported_under_a_test_naming_releases_are_warnings_never_fixed(tmp_path):
    """verl's `elif package_version == "0.5.4": from .vllm_v_0_5_4.llm import LLM`: the copy, and what only the copy
    imports (engine.py, reached from llm.py; the copies import one another), is loaded on 0.5.4 alone. Its drifts are
    warnings naming the version check, and `fix` leaves the copy alone."""
    client = {**COPY, **_dispatcher('package_version == "0.5.4"')}
    result = scan_trees(tmp_path, PARALLEL, client, only=["DC003"])
    assert _found(result, "DC003") == [
        ("DC003", "warning", "pkg/third_party/copy_054/engine.py", 6),
        ("DC003", "warning", "pkg/third_party/copy_054/llm.py", 8),
        ("DC003", "warning", "pkg/third_party/copy_054/parallel_state.py", 4),
    ]
    engine = next(f for f in result.findings if f.client.path.endswith("engine.py"))
    assert "only pkg/third_party/copy_054/llm.py imports" in engine.message
    assert "version check (pkg/third_party/__init__.py:" in engine.message
    assert all(f.fix is None for f in result.findings)
    assert _fixed(tmp_path, PARALLEL, client) == {}


def test_a_helper_returning_the_installed_version_and_a_membership_test_dispatch_too(tmp_path):
    """The installed version read through a helper of the file (`importlib.metadata.version("vllm")` or
    `vllm.__version__`), bound to a name that says nothing of a version, then `in (...)` / `startswith`."""
    helper = "import vllm\n\ndef _installed():\n    return vllm.__version__\n\npv = _installed()"
    for test in ('pv in ("0.5.4", "0.5.4+rocm")', 'pv.startswith("0.5.")', '_installed() == "0.5.4"'):
        client = {**COPY, **_dispatcher(test, helper)}
        result = scan_trees(tmp_path / str(abs(hash(test))), PARALLEL, client, only=["DC003"])
        assert {f.severity for f in result.findings} == {"warning"}, test
        assert len(result.findings) == 3, test


def test_a_copy_module_also_imported_unconditionally_keeps_its_errors(tmp_path):
    """Recall: a module of the copy that another client file imports without any test runs on every vLLM, and so
    does what it imports; and a range test (`>= "0.7"`) loads its branch on the target too."""
    client = {**COPY, **_dispatcher('package_version == "0.5.4"'),
              "pkg/worker.py": """
        import vllm

        from pkg.third_party.copy_054.llm import LLM

        def build():
            return LLM()
    """}
    result = scan_trees(tmp_path / "a", PARALLEL, client, only=["DC003"])
    assert _found(result, "DC003") == [
        ("DC003", "error", "pkg/third_party/copy_054/engine.py", 6),
        ("DC003", "error", "pkg/third_party/copy_054/llm.py", 8),
        ("DC003", "warning", "pkg/third_party/copy_054/parallel_state.py", 4),
    ]
    ranged = {**COPY, **_dispatcher('vs.parse(package_version) >= vs.parse("0.7.0")',
                                    'from packaging import version as vs\npackage_version = version("vllm")')}
    result = scan_trees(tmp_path / "b", PARALLEL, ranged, only=["DC003"])
    assert {f.severity for f in result.findings} == {"error"} and len(result.findings) == 3


def test_a_module_named_by_a_string_elsewhere_is_not_dispatched(tmp_path):
    """`worker_cls="pkg.third_party.copy_054.llm.LLM"` in another file may load the module by name on any vLLM."""
    client = {**COPY, **_dispatcher('package_version == "0.5.4"'),
              "pkg/platform.py": """
        import vllm

        WORKER = "pkg.third_party.copy_054.llm.LLM"
    """}
    root = write_tree(tmp_path / "c", client)
    tree = FolderTree(root)
    files = [parse_client_file(tree, rel, (root / rel).read_bytes()) for rel in sorted(client) if "import" in client[rel]]
    dispatched = dispatched_modules(files)
    assert sorted(dispatched) == ["pkg/third_party/copy_054/parallel_state.py"]


# ----------------------------------------------------------------------------------------- AV
V0_METADATA = {
    "vllm/attention/backends/abstract.py": """
        from dataclasses import dataclass

        @dataclass
        class AttentionMetadata:
            num_prefills: int
            num_decode_tokens: int

        class AttentionBackend:
            @staticmethod
            def get_metadata_cls():
                raise NotImplementedError
    """,
    "vllm/attention/backends/flash_attn.py": """
        from dataclasses import dataclass

        from vllm.attention.backends.abstract import AttentionMetadata

        @dataclass
        class FlashAttentionMetadata(AttentionMetadata):
            max_query_len: int = 0
    """,
}

PLATFORM_METADATA = {
    "pkg/__init__.py": "",
    "pkg/attention.py": """
        from dataclasses import dataclass

        from vllm.attention.backends.abstract import AttentionBackend

        @dataclass
        class AscendMLAMetadata:
            num_decodes: int = 0
            attn_state: int = 0

        class AscendBackend(AttentionBackend):
            @staticmethod
            def get_metadata_cls():
                return AscendMLAMetadata
    """,
    "pkg/model.py": """
        from typing import Optional

        from vllm.attention.backends.abstract import AttentionMetadata

        def forward(x, attn_metadata: Optional[AttentionMetadata] = None):
            if attn_metadata is not None and attn_metadata.attn_state == 3:
                return attn_metadata.num_decodes
            return 0

        def other(attn_metadata: AttentionMetadata):
            return attn_metadata.num_decode_tokenz
    """,
}


def test_a_family_base_annotation_read_for_a_member_the_platforms_metadata_has_is_unknown(tmp_path):
    """vLLM 0.10.2's V0 `AttentionMetadata` dataclass (the V0 backends' metadata derive from it) annotating what is
    really the platform's own metadata (`AscendMLAMetadata`, no vLLM base): its members are unknown, with the
    reason; a member neither vLLM's family nor the client's classes define stays an error."""
    result = scan_trees(tmp_path, V0_METADATA, PLATFORM_METADATA, only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "error", "pkg/model.py", 11)]
    reasons = _unknown(result, "DC006")
    assert len(reasons) == 2 and all("pkg.attention.AscendMLAMetadata" in r and "names a family" in r for r in reasons)


def test_a_class_that_names_no_family_or_a_client_class_of_another_kind_keeps_the_error(tmp_path):
    """The same read where vLLM's class is no base of anything (and bounds no TypeVar): the annotation is trusted.
    And a client class that defines the member but is not of the annotated class's kind (`...Builder`, not
    `...Metadata`) says nothing about what the parameter holds."""
    result = scan_trees(tmp_path / "family", V0_METADATA, PLATFORM_METADATA, only=["DC006"])
    assert len(_unknown(result, "DC006")) == 2  # the family, and the client's metadata: not known
    lone = {"vllm/attention/backends/abstract.py": V0_METADATA["vllm/attention/backends/abstract.py"]}
    result = scan_trees(tmp_path, lone, PLATFORM_METADATA, only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "error", "pkg/model.py", 6), ("DC006", "error", "pkg/model.py", 7),
                                       ("DC006", "error", "pkg/model.py", 11)]
    client = {**PLATFORM_METADATA, "pkg/attention.py": PLATFORM_METADATA["pkg/attention.py"].replace(
        "class AscendMLAMetadata", "class AscendMLABuilder").replace("return AscendMLAMetadata", "return AscendMLABuilder")}
    result = scan_trees(tmp_path / "kind", V0_METADATA, client, only=["DC006"])
    assert [f.severity for f in result.findings] == ["error"] * 3 and _unknown(result, "DC006") == []


# ----------------------------------------------------------------------------------------- AW
CUSTOM_OP = {
    "vllm/model_executor/custom_op.py": """
        class CustomOp:
            op_registry: dict = {}
            op_registry_oot: dict = {}

            def __new__(cls, *args, **kwargs):
                op_name = cls.__name__
                if op_name not in cls.op_registry_oot:
                    op_cls_to_instantiate = cls
                else:
                    op_cls_to_instantiate = cls.op_registry_oot[op_name]
                return super().__new__(op_cls_to_instantiate)

            @classmethod
            def register(cls, name):
                def decorator(op_cls):
                    cls.op_registry[name] = op_cls
                    return op_cls
                return decorator

            @classmethod
            def register_oot(cls, _decorated_op_cls=None, name=None):
                def decorator(op_cls):
                    cls.op_registry_oot[name or cls.__name__] = op_cls
                    return op_cls
                if _decorated_op_cls is None:
                    return decorator
                return decorator(_decorated_op_cls)
    """,
    "vllm/model_executor/layers/mla.py": """
        from vllm.model_executor.custom_op import CustomOp

        class MultiHeadLatentAttention(CustomOp):
            def __init__(self, hidden_size, num_heads, scale, prefix=""):
                self.hidden_size = hidden_size
    """,
}


def _op_client(registration: str) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/mla.py": """
            from vllm.model_executor.layers.mla import MultiHeadLatentAttention

            class AscendMLA(MultiHeadLatentAttention):
                def __init__(self, hidden_size, shared_dp, layer_idx, num_heads=1, scale=1.0, prefix=""):
                    super().__init__(hidden_size, num_heads, scale, prefix)
        """,
        "pkg/utils.py": """
            OPS = {}

            def register_ops():
                from vllm.model_executor.custom_op import CustomOp

                from pkg.mla import AscendMLA

                global OPS
                OPS = {"MultiHeadLatentAttention": AscendMLA}
                for name, op_cls in OPS.items():
                    %s
        """ % registration,
        "pkg/model.py": """
            from vllm.model_executor.layers.mla import MultiHeadLatentAttention

            def build(h):
                a = MultiHeadLatentAttention(h, False, 3, 4, 0.125, "p")
                return a, MultiHeadLatentAttention(h, False, 3, bogus=1)
        """,
    }


def test_a_replacement_registered_from_a_table_in_another_file_is_read(tmp_path):
    """vllm-ascend's `register_ascend_customop()`: CustomOp imported inside the function, a dict of the platform's
    classes, `CustomOp.register_oot(_decorated_op_cls=op_cls, name=name)` in a loop. `MultiHeadLatentAttention(...)`
    builds the registered class, so a call its `__init__` accepts is no error; one neither accepts stays one."""
    result = scan_trees(tmp_path, CUSTOM_OP, _op_client("CustomOp.register_oot(_decorated_op_cls=op_cls, name=name)"),
                        only=["DC003", "DC004", "DC005"])
    assert _found(result, "DC003", "DC004", "DC005") == [("DC003", "error", "pkg/model.py", 5)]
    # `CustomOp.register(name)(op_cls)` fills `op_registry`, which `__new__` does not read: the call is vLLM's
    result = scan_trees(tmp_path / "in-tree", CUSTOM_OP, _op_client("CustomOp.register(name)(op_cls)"), only=["DC004"])
    assert _found(result, "DC004") == [("DC004", "error", "pkg/model.py", 4)]


# ----------------------------------------------------------------------------------------- AX
ATTN_V0 = {
    "vllm/attention/backends/abstract.py": """
        from dataclasses import dataclass

        @dataclass
        class AttentionMetadata:
            num_prefills: int
            num_decode_tokens: int
    """,
}


def test_a_member_set_with_a_literal_setattr_on_a_typed_object_is_the_clients(tmp_path):
    """lmcache-vllm's `setattr(attn_metadata, "blend_metadata", BlendMetadata())` then `attn_metadata.blend_metadata`
    (there and in another function): the store is the same as `attn_metadata.blend_metadata = ...`. A member no
    store sets stays an error."""
    client = {"pkg/__init__.py": "", "pkg/blend.py": """
        from vllm.attention.backends.abstract import AttentionMetadata

        def attach(ids, attn_metadata: AttentionMetadata):
            setattr(attn_metadata, "blend_metadata", [])
            attn_metadata.blend_metadata.append(ids)

        def read(attn_metadata: AttentionMetadata):
            return attn_metadata.blend_metadata, attn_metadata.blend_metdata
    """}
    result = scan_trees(tmp_path, ATTN_V0, client, only=["DC006"])
    # the store itself is no warning: the file reads the member back and vLLM never names it, so it is the
    # client's own (26d R1)
    assert _found(result, "DC006") == [("DC006", "error", "pkg/blend.py", 8)]
    assert next(f for f in result.findings if f.severity == "error").symbol.endswith(".blend_metdata")


# ----------------------------------------------------------------------------------------- AY
RUNNER_V0 = {
    "vllm/worker/model_runner.py": """
        from dataclasses import dataclass

        @dataclass(frozen=True)
        class ModelInputForGPU:
            input_tokens: list = None

        class LlamaForCausalLM:
            def __init__(self):
                self.model = None

        class ModelRunner:
            def __init__(self):
                self.model = LlamaForCausalLM()

            def execute_model(self, model_input: ModelInputForGPU):
                return self.model
    """,
}


def _chain_client(passed: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/adapter.py": """
        from vllm.worker.model_runner import ModelInputForGPU

        def subset(name, model_executable: "ModelInputForGPU"):
            return model_executable.model

        def middle(model_executable, name):
            return subset(name, model_executable)

        def retrieve(model_executable, name: str):
            return middle(model_executable, name)
    """, "pkg/injection.py": """
        import vllm.worker.model_runner
        from vllm.worker.model_runner import ModelInputForGPU

        from pkg.adapter import retrieve

        def new_execute_model(self, model_input):
            return retrieve(%s, "llama")

        vllm.worker.model_runner.ModelRunner.execute_model = new_execute_model
    """ % passed}


def test_an_annotation_contradicted_through_untyped_parameters_is_doubted(tmp_path):
    """`subset(model_executable: "ModelInputForGPU")` reached through two functions that hand on an unannotated
    parameter, from a caller that passes the runner's model: the annotation is doubted (a warning with the path)."""
    result = scan_trees(tmp_path, RUNNER_V0, _chain_client("self.model"), only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "warning", "pkg/adapter.py", 4)]
    message = result.findings[0].message
    assert "pkg/injection.py:7 passes a `LlamaForCausalLM` on through `retrieve` (pkg/adapter.py:10) on through " \
        "`middle` (pkg/adapter.py:7)" in message
    # the same chain handed a real `ModelInputForGPU`, or an untyped value nobody contradicts: the annotation holds,
    # and the member is missing
    for i, passed in enumerate(("ModelInputForGPU()", "model_input")):
        result = scan_trees(tmp_path / str(i), RUNNER_V0, _chain_client(passed), only=["DC006"])
        assert _found(result, "DC006") == [("DC006", "error", "pkg/adapter.py", 4)], passed


# ----------------------------------------------------------------------------------------- AZ
MIXIN = {
    "vllm/v1/worker/kv_connector_model_runner_mixin.py": """
        class KVConnectorModelRunnerMixin:
            @staticmethod
            def maybe_setup_kv_connector(scheduler_output):
                return None
    """,
}


def _runner(helper_param: str, store: str = "self.runner.layer_index = {}") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/manager.py": """
        from typing import TYPE_CHECKING

        from vllm.v1.worker.kv_connector_model_runner_mixin import KVConnectorModelRunnerMixin

        if TYPE_CHECKING:
            from pkg.runner import TPUModelRunner

        class KVCacheManager:
            def __init__(self, %s):
                self.runner = runner

            def initialize(self, names):
                %s
    """ % (helper_param, store), "pkg/runner.py": """
        from vllm.v1.worker.kv_connector_model_runner_mixin import KVConnectorModelRunnerMixin

        from pkg.manager import KVCacheManager

        class TPUModelRunner(KVConnectorModelRunnerMixin):
            def __init__(self):
                self.manager = KVCacheManager(self)

            def execute_model(self):
                return self.layer_index, self.layer_indx
    """}


def test_a_member_stored_through_a_reference_typed_as_the_class_is_its_own(tmp_path):
    """tpu-inference's `KVCacheManager(self)`, whose `self.runner: "TPUModelRunner"` gets
    `self.runner.layer_name_to_kvcache_index = {}`: the runner's `self.layer_name_to_kvcache_index` is its own member.
    A member no code stores stays an error."""
    result = scan_trees(tmp_path, MIXIN, _runner('runner: "TPUModelRunner"'), only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "error", "pkg/runner.py", 10)]
    assert result.findings[0].symbol.endswith(".layer_indx")


def test_a_member_stored_through_an_untyped_reference_is_unknown_when_self_is_handed_out(tmp_path):
    """The helper's parameter unannotated: the store may be on the runner (it hands `self` to the helper), which
    driftcheck cannot tell: unknown with the reason. A store through a reference annotated as another class, or a
    class that hands itself to nothing, keeps the error."""
    result = scan_trees(tmp_path / "a", MIXIN, _runner("runner"), only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "error", "pkg/runner.py", 10)]
    reasons = _unknown(result, "DC006")
    assert len(reasons) == 1 and "hands `self` to other code (pkg/runner.py:7)" in reasons[0] \
        and "pkg/manager.py:13" in reasons[0]
    other = _runner('runner: "KVCacheManager"')
    result = scan_trees(tmp_path / "b", MIXIN, other, only=["DC006"])
    assert [f.severity for f in result.findings] == ["error", "error"] and _unknown(result, "DC006") == []
    alone = _runner("runner")
    alone["pkg/runner.py"] = alone["pkg/runner.py"].replace("KVCacheManager(self)", "KVCacheManager(None)")
    result = scan_trees(tmp_path / "c", MIXIN, alone, only=["DC006"])
    assert [f.severity for f in result.findings] == ["error", "error"] and _unknown(result, "DC006") == []


# ----------------------------------------------------------------------------------------- AY, from the rescan
RUNNER_DECLARED = {
    "vllm/worker/model_runner.py": """
        from dataclasses import dataclass

        import torch.nn as nn

        @dataclass(frozen=True)
        class ModelInputForGPU:
            input_tokens: list = None

        class ModelRunner:
            def __init__(self):
                self.model: nn.Module  # set after load_model

            def load_model(self):
                self.model = get_model()
                self.model = self.wrap(self.model)

            def execute_model(self, model_input: ModelInputForGPU):
                return self.model

        def get_model() -> nn.Module:
            return nn.Module()
    """,
}


def test_a_bare_declaration_types_the_attribute_whatever_is_assigned_later(tmp_path):
    """vLLM 0.6.2's runner declares `self.model: nn.Module` and assigns `get_model(...)` in load_model: the
    attribute holds an `nn.Module` (the declaration is authoritative), so the caller's `self.model` contradicts the
    helper's `ModelInputForGPU` annotation (lmcache-vllm 0.6.2.3's three DC006 errors, a warning each)."""
    result = scan_trees(tmp_path, RUNNER_DECLARED, _chain_client("self.model"), only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "warning", "pkg/adapter.py", 4)]
    assert "passes a `Module`" in result.findings[0].message
    # an attribute never declared, assigned a function's result and another value: what it holds is not known, so
    # nothing contradicts the annotation and the missing member stays an error
    undeclared = {k: v.replace("self.model: nn.Module  # set after load_model", "self.model = None")
                  for k, v in RUNNER_DECLARED.items()}
    result = scan_trees(tmp_path / "u", undeclared, _chain_client("self.model"), only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "error", "pkg/adapter.py", 4)]


def _installed_in_function(import_there: bool) -> dict[str, str]:
    client = _chain_client("self.model")
    client["pkg/injection.py"] = """
        from pkg.adapter import retrieve

        def new_execute_model(self, model_input):
            return retrieve(self.model, "llama")

        def install():
            %s
            vllm.worker.model_runner.ModelRunner.execute_model = new_execute_model
    """ % ("import vllm.worker.model_runner" if import_there else "pass")
    return client


def test_a_patch_made_inside_a_function_that_imports_vllm_there_binds_self(tmp_path):
    """lmcache-vllm 0.6.2.3 sets `vllm.worker.model_runner.ModelRunner.execute_model = new_execute_model` inside
    `InitLMCacheEnvironment()`, after an `import vllm.worker.model_runner` in that function: the patch is read, so
    `self.model` in the replacement is the runner's and contradicts the helper's annotation (a warning). Without the
    local import the name means nothing there and the annotation holds (the error stays)."""
    result = scan_trees(tmp_path, RUNNER_DECLARED, _installed_in_function(True), only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "warning", "pkg/adapter.py", 4)]
    result = scan_trees(tmp_path / "u", RUNNER_DECLARED, _installed_in_function(False), only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "error", "pkg/adapter.py", 4)]
