"""The seven root causes of false errors from the sixth batch of untuned plugins (docs/triage/2026-12-02-unseen-plugins-6.md),
one group each: the shape that runs (no error, or unknown / a warning with the reason where driftcheck cannot know),
and the same shape where the code really fails, which must stay an error. Where Python can say what happens (pydantic's
handling of unknown keywords), the test runs the same code.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import vllm_sources
from driftcheck.fix.fixer import FixOptions, plan_fixes
from driftcheck.scan.pipeline import ScanOptions
from driftcheck.sources.sources import ZipTree
from driftcheck.sources.targets import resolve_client, resolve_vllm
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.resolved import Resolved
from scan.helpers import errors, scan_trees, vllm_tree, write_tree


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


def _unknown(result, rule: str) -> list[str]:
    return [u.message for u in result.unknown if u.rule == rule]


def _fixed(tmp_path, vllm_files: dict, client_files: dict, only: list[str] | None = None) -> dict[str, str]:
    """The files `driftcheck fix` (or `fix --only ...`) would change, and their new text."""
    vroot = vllm_tree(tmp_path / "fix-vllm", vllm_files)
    write_tree(vroot, {"vllm/_version.py": '__version__ = "0.99.0"\n'})
    croot = write_tree(tmp_path / "fix-client", client_files)
    plan = plan_fixes(resolve_vllm(str(vroot), tmp_path / "cache"), resolve_client(str(croot), tmp_path / "cache"),
                      ScanOptions(cache_dir=tmp_path / "cache", use_cache=False), FixOptions(only=only))
    return {c.rel: c.new for c in plan.changes}


# ----------------------------------------------------------------------------------------- AN
FLA = {
    "vllm/fla/ops/__init__.py": """
        from .chunk import chunk_rule

        __all__ = ["chunk_rule"]
    """,
    "vllm/fla/ops/chunk.py": """
        def chunk_rule(q, k, v, scale=None):
            return q
    """,
    "vllm/forward_context.py": """
        def set_forward_context(attn_metadata, vllm_config, num_tokens=None):
            return attn_metadata
    """,
}

REBINDING = {
    "pkg/__init__.py": "",
    "pkg/ops.py": """
        def chunk_rule(q, k, v, scale=None, head_first=False):
            return q

        def torch_chunk_rule(query, key, value, chunk_size=64):
            return query
    """,
    "pkg/patch.py": """
        import vllm.fla.ops
        import vllm.fla.ops.chunk

        from pkg.ops import chunk_rule, torch_chunk_rule

        vllm.fla.ops.chunk_rule = chunk_rule
        vllm.fla.ops.chunk.chunk_rule = torch_chunk_rule
    """,
    "pkg/context.py": """
        import vllm.forward_context as vfc

        def _set_forward_context(attn_metadata, vllm_config, num_tokens=None, num_padded_tokens=None):
            return attn_metadata

        vfc.set_forward_context = _set_forward_context
    """,
}


def test_a_call_the_rebound_function_accepts_is_no_error(tmp_path):
    """`M.f = client_f` in one file, `from M import f; f(...)` in another (and the `import M as m; m.f = g` alias):
    the call is checked against the client's function too, so a keyword only the replacement takes is no error."""
    client = {**REBINDING, "pkg/use.py": """
        from vllm.fla.ops import chunk_rule
        from vllm.fla.ops.chunk import chunk_rule as torch_rule
        from vllm.forward_context import set_forward_context

        def run(q, k, v):
            a = chunk_rule(q, k, v, head_first=True)
            b = torch_rule(query=q, key=k, value=v)
            return set_forward_context(a, None, num_tokens=4, num_padded_tokens=8), b
    """}
    result = scan_trees(tmp_path, FLA, client, only=["DC003", "DC004", "DC005"])
    assert _found(result, "DC003", "DC004", "DC005") == []


def test_a_call_both_functions_reject_stays_an_error_without_a_fix(tmp_path):
    """A keyword neither vLLM's function nor the client's replacement takes fails whichever runs: an error, but
    neither `drop-keyword` nor `add-argument` touches it (they know vLLM's signature, not the replacement's)."""
    client = {**REBINDING, "pkg/use.py": """
        import vllm.forward_context as fc
        from vllm.fla.ops import chunk_rule

        def run(q, k, v):
            fc.set_forward_context(q, None, bogus=1)
            return chunk_rule(q, k, v, head_first=True, layout="bhd")
    """}
    result = scan_trees(tmp_path, FLA, client, only=["DC003", "DC005"])
    found = [(f.rule, f.severity, f.details.get("keyword"), f.fix) for f in result.findings if f.rule == "DC003"]
    assert sorted(found) == [("DC003", "error", "bogus", None), ("DC003", "error", "layout", None)]
    assert all("rebinds" in f.message and f.details.get("rebound") for f in result.findings)
    assert _fixed(tmp_path, FLA, client) == {}
    assert _fixed(tmp_path, FLA, client, only=["drop-keyword"]) == {}


def test_the_file_that_rebinds_keeps_the_original_above_the_assignment(tmp_path):
    """`from M import f` above `M.f = g` in the same file binds vLLM's `f` (a module runs in order): the saved
    original is checked against vLLM alone, while `M.f(...)` after the rebinding is checked against both."""
    client = {"pkg/__init__.py": "", "pkg/wrap.py": """
        import vllm.forward_context as vfc
        from vllm.forward_context import set_forward_context as _original

        def _wrapped(attn_metadata, vllm_config, num_tokens=None, extra=None):
            return _original(attn_metadata, vllm_config, num_tokens=num_tokens, extra=extra)

        vfc.set_forward_context = _wrapped

        def later(m):
            vfc.set_forward_context(m, None, extra=1)
            return vfc.set_forward_context(m, None, bogus=1)
    """}
    result = scan_trees(tmp_path, FLA, client, only=["DC003"])
    assert [(f.rule, f.severity, f.client.line, f.details.get("keyword"), f.fix) for f in result.findings] == \
        [("DC003", "error", 5, "extra", "drop-keyword"), ("DC003", "error", 11, "bogus", None)]


def test_a_replacement_in_a_client_given_as_its_package_folder_is_read(tmp_path):
    """`--client .../vllm_ascend` (the package folder itself, whose files import `vllm_ascend.ops`): the replacement
    named by its absolute path is read there too, decorated by a wrapper that passes the call on (`torch.compiler.
    disable`, `contextlib.contextmanager`), so a call it accepts is no error and one it rejects stays one."""
    client = {"__init__.py": "", "ops.py": """
        import torch

        @torch.compiler.disable
        def chunk_rule(q, k, v, scale=None, head_first=False):
            return q
    """, "patch.py": """
        import vllm.fla.ops

        from client.ops import chunk_rule

        vllm.fla.ops.chunk_rule = chunk_rule
    """, "use.py": """
        from vllm.fla.ops import chunk_rule

        def run(q, k, v):
            chunk_rule(q, k, v, head_first=True)
            return chunk_rule(q, k, v, layout="bhd")
    """}
    result = scan_trees(tmp_path, FLA, client, only=["DC003"])
    assert [(f.severity, f.client.line, f.details.get("keyword"), f.fix) for f in result.findings] == \
        [("error", 5, "layout", None)]


def test_a_replacement_driftcheck_cannot_read_makes_a_warning_with_the_reason(tmp_path):
    client = {"pkg/__init__.py": "", "pkg/wrap.py": """
        import functools

        import vllm.forward_context as vfc
        from vllm.forward_context import set_forward_context

        vfc.set_forward_context = functools.partial(set_forward_context, num_tokens=1)
    """, "pkg/use.py": """
        from vllm.forward_context import set_forward_context

        def run(m):
            return set_forward_context(m, None, padded=2)
    """}
    result = scan_trees(tmp_path, FLA, client, only=["DC003"])
    assert _found(result, "DC003") == [("DC003", "warning", "pkg/use.py", 4)]
    finding = result.findings[0]
    assert finding.fix is None and "cannot read" in finding.message and "functools.partial" in finding.message


# ----------------------------------------------------------------------------------------- AO
MARKER = {
    "vllm/attention/abstract.py": """
        from typing import TypeVar

        class AttentionMetadata:
            pass

        T = TypeVar("T", bound=AttentionMetadata)

        class AttentionBackend:
            def get_name(self) -> str:
                return "x"

        class Unused:
            pass
    """,
}


def test_a_member_read_through_a_marker_class_annotation_is_unknown(tmp_path):
    """`attn_metadata: Optional[AttentionMetadata]` where vLLM's class declares nothing and bounds a TypeVar (the name
    of a family of types): the platform's metadata need not derive from it, so a member read is unknown (with the
    reason); an object the client builds as that class, an annotation naming a class that has members, or an empty
    class the tree uses for nothing else, keeps the error."""
    client = {"pkg/__init__.py": "", "pkg/model.py": """
        from typing import Optional

        from vllm.attention.abstract import AttentionBackend, AttentionMetadata, Unused

        def forward(attn_metadata: Optional[AttentionMetadata] = None):
            return attn_metadata.attn_state

        def save(layer, attn_metadata: "AttentionMetadata"):
            return attn_metadata.reshape_cache_event

        def built():
            return AttentionMetadata().num_decodes

        def backend(b: AttentionBackend):
            return b.attn_state

        def unused(u: "Unused"):
            return u.attn_state
    """}
    result = scan_trees(tmp_path, MARKER, client, only=["DC006"])
    assert _found(result, "DC006") == [("DC006", "error", "pkg/model.py", 12), ("DC006", "error", "pkg/model.py", 15),
                                       ("DC006", "error", "pkg/model.py", 18)]
    unknown = _unknown(result, "DC006")
    assert len(unknown) == 2 and all("declares no members" in m for m in unknown)


# ----------------------------------------------------------------------------------------- AP
NORM = {
    "vllm/layers.py": """
        class CustomOp:
            def __init__(self):
                self.enabled = True

        class RMSNormTP(CustomOp):
            def __init__(self, hidden_size: int, eps: float = 1e-6) -> None:
                super().__init__()
                self.eps = eps

        class ShardedNorm(RMSNormTP):
            pass

        class OwnInit(RMSNormTP):
            def __init__(self, hidden_size: int) -> None:
                super().__init__(hidden_size)
    """,
}

NORM_PATCH = {
    "pkg/__init__.py": "",
    "pkg/norm_patch.py": """
        from vllm.layers import CustomOp, RMSNormTP

        def _patched_init(self: "RMSNormTP", hidden_size: int, eps: float = 1e-6, *,
                          shard_world_size: int | None = None, shard_rank: int | None = None) -> None:
            CustomOp.__init__(self)
            self.shard_world_size = shard_world_size or 1

        RMSNormTP.__init__ = _patched_init
    """,
}


def test_a_constructor_is_checked_against_the_init_the_client_installs(tmp_path):
    """`Cls.__init__ = _patched_init` (another file): `Cls(..., shard_world_size=...)` and a subclass that inherits
    that `__init__` bind against it; a subclass with its own `__init__` is still checked against vLLM's."""
    client = {**NORM_PATCH, "pkg/attention.py": """
        from vllm.layers import OwnInit, RMSNormTP, ShardedNorm

        def build(dim):
            a = RMSNormTP(dim, eps=1e-6, shard_world_size=2, shard_rank=0)
            b = ShardedNorm(dim, shard_world_size=2)
            return a, b, OwnInit(dim, shard_world_size=2)
    """}
    result = scan_trees(tmp_path, NORM, client, only=["DC003", "DC005"])
    assert [(f.rule, f.severity, f.client.line, f.details.get("keyword")) for f in result.findings] == \
        [("DC003", "error", 6, "shard_world_size")]
    assert result.findings[0].fix == "drop-keyword" and not result.findings[0].details.get("rebound")


def test_a_construction_both_inits_reject_is_an_error_no_fix_touches(tmp_path):
    client = {**NORM_PATCH, "pkg/attention.py": """
        from vllm.layers import RMSNormTP

        def build(dim):
            return RMSNormTP(dim, shard_world_size=2, shard_axis=1)
    """}
    result = scan_trees(tmp_path, NORM, client, only=["DC003"])
    assert [(f.severity, f.details.get("keyword"), f.fix) for f in result.findings] == [("error", "shard_axis", None)]
    assert "rebinds" in result.findings[0].message
    assert _fixed(tmp_path, NORM, client) == {}
    assert _fixed(tmp_path, NORM, client, only=["drop-keyword"]) == {}


# ----------------------------------------------------------------------------------------- AQ
PYDANTIC_CONFIGS = {
    "vllm/config/utils.py": """
        def config(cls):
            return cls
    """,
    "vllm/config/parallel.py": """
        from dataclasses import dataclass as std_dataclass

        from pydantic import ConfigDict
        from pydantic.dataclasses import dataclass

        from vllm.config.utils import config

        @config
        @dataclass
        class ParallelConfig:
            tensor_parallel_size: int = 1

        @dataclass(config=ConfigDict(extra="forbid"))
        class Strict:
            count: int = 1

        @dataclass
        class StrictChild(Strict):
            size: int = 1

        @dataclass
        class OwnConfig:
            __pydantic_config__ = ConfigDict(extra="forbid")
            count: int = 1

        @dataclass(config=ConfigDict(extra="allow"))
        class Open:
            count: int = 1

        @std_dataclass
        class Plain:
            count: int = 1
    """,
}

PYDANTIC_CLIENT = {"pkg/__init__.py": "", "pkg/mocks.py": """
    from vllm.config.parallel import OwnConfig, Open, ParallelConfig, Plain, Strict, StrictChild

    def build():
        a = ParallelConfig(tensor_parallel_size=1, worker_use_ray=False)
        b = Open(count=2, colour="red")
        return a, b

    def broken():
        return Strict(count=2, colour="red"), StrictChild(colour="red"), OwnConfig(colour="red"), Plain(colour="red")
"""}


def test_pydantic_dataclasses_that_do_not_forbid_extras_drop_the_value_a_warning(tmp_path):
    result = scan_trees(tmp_path, PYDANTIC_CONFIGS, PYDANTIC_CLIENT, only=["DC003"])
    found = sorted((f.client.line, f.severity, f.symbol.split(".")[-1], f.fix) for f in result.findings)
    assert found == [
        (4, "warning", "ParallelConfig(worker_use_ray=)", None),
        (5, "warning", "Open(colour=)", None),
        (9, "error", "OwnConfig(colour=)", "drop-keyword"),
        (9, "error", "Plain(colour=)", "drop-keyword"),
        (9, "error", "Strict(colour=)", "drop-keyword"),
        (9, "error", "StrictChild(colour=)", "drop-keyword"),
    ]
    messages = {f.symbol.split(".")[-1]: f.message for f in result.findings}
    assert "silently drops the value" in messages["ParallelConfig(worker_use_ray=)"]
    assert "kept as an attribute" in messages["Open(colour=)"]
    assert "ValidationError" in messages["Strict(colour=)"] and "TypeError" in messages["Plain(colour=)"]
    # `colour="red"` asks for something the strict configs no longer offer: drop-keyword leaves it and says why (20b, SC)
    assert "pkg/mocks.py" not in _fixed(tmp_path, PYDANTIC_CONFIGS, PYDANTIC_CLIENT)
    # where the dropped value asks for nothing (None), the errors' keywords go and the warnings' stay
    none_client = {**PYDANTIC_CLIENT, "pkg/mocks.py": PYDANTIC_CLIENT["pkg/mocks.py"].replace(
        'Strict(count=2, colour="red"), StrictChild(colour="red"), OwnConfig(colour="red"), Plain(colour="red")',
        "Strict(count=2, colour=None), StrictChild(colour=None), OwnConfig(colour=None), Plain(colour=None)")}
    changed = _fixed(tmp_path / "none", PYDANTIC_CONFIGS, none_client)
    assert "worker_use_ray=False" in changed["pkg/mocks.py"] and 'colour="red")\n' in changed["pkg/mocks.py"].split("def broken")[0]
    assert "colour" not in changed["pkg/mocks.py"].split("def broken")[1]
    assert _fixed(tmp_path / "none2", PYDANTIC_CONFIGS, none_client, only=["drop-keyword"])["pkg/mocks.py"].count("worker_use_ray") == 1
    _pydantic_agrees(tmp_path / "run")


def _python_with_pydantic() -> str | None:
    for exe in dict.fromkeys([sys.executable, shutil.which("python3")]):
        if exe and subprocess.run([exe, "-c", "import pydantic.dataclasses"], capture_output=True).returncode == 0:
            return exe
    return None


def _pydantic_agrees(root) -> None:
    """The same classes under the pydantic on this machine (when one has it): the warnings' calls run, the errors'
    calls raise."""
    exe = _python_with_pydantic()
    if exe is None:
        return
    vllm_tree(root, PYDANTIC_CONFIGS)
    write_tree(root, PYDANTIC_CLIENT)
    probe = textwrap.dedent("""
        from pkg.mocks import build
        from vllm.config import parallel as p
        a, b = build()
        assert a.tensor_parallel_size == 1 and not hasattr(a, "worker_use_ray") and b.colour == "red"
        for cls in (p.Strict, p.StrictChild, p.OwnConfig, p.Plain):
            try:
                cls(colour="red")
            except Exception as exc:
                assert type(exc).__name__ in ("ValidationError", "TypeError"), exc
            else:
                raise SystemExit(f"{cls.__name__} accepted colour=")
    """)
    done = subprocess.run([exe, "-c", probe], cwd=root, capture_output=True, text=True, env={"PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-600:]


@pytest.mark.parametrize("version, mode", [("0.11.0", "ignore"), ("0.13.0", "ignore"), ("0.15.1", "ignore"),
                                           ("0.16.0", "forbid"), ("0.32.0", "forbid")])
def test_vllm_config_classes_forbid_extras_from_0_16(version, mode):
    """vLLM's `@config` only returns the class up to 0.15.1 (pydantic's default then drops unknown keywords) and
    builds `ConfigDict(extra="forbid")` from 0.16.0 (read from each release's config/utils.py)."""
    api = ApiIndex(ZipTree(vllm_sources(version)), version)
    for name in ("ParallelConfig", "ModelConfig", "MultiModalConfig"):
        cls = api.resolve(f"vllm.config.{name}")
        assert isinstance(cls, Resolved) and api.unknown_keywords(cls) == mode, name


# ----------------------------------------------------------------------------------------- AR
EXECUTOR = {
    "vllm/config.py": """
        class ParallelConfig:
            def __init__(self):
                self.worker_cls = "auto"

        class VllmConfig:
            def __init__(self):
                self.parallel_config = ParallelConfig()
    """,
    "vllm/v1/executor/ray_executor.py": """
        class RayDistributedExecutor:
            def collective_rpc(self, method: str, args=()):
                return []
    """,
    "vllm/v1/worker/gpu_worker.py": """
        class Worker:
            def execute_model(self, scheduler_output):
                return None
    """,
}


def _platform(worker_cls_line: str) -> dict[str, str]:
    return {
        "pkg/__init__.py": "",
        "pkg/platform.py": f"""
            from vllm.config import VllmConfig

            class TpuPlatform:
                @classmethod
                def check_and_update_config(cls, vllm_config: VllmConfig) -> None:
                    parallel_config = vllm_config.parallel_config
                    {worker_cls_line}
        """,
        "pkg/worker.py": """
            class TPUWorker:
                def get_node_kv_ip_port(self):
                    return (0, "10.0.0.1", 5555)
        """,
        "pkg/executor.py": """
            from vllm.v1.executor.ray_executor import RayDistributedExecutor

            class Executor(RayDistributedExecutor):
                def connect(self):
                    self.collective_rpc("get_node_kv_ip_port")
                    return self.collective_rpc("initialize_pp_transfer_connect")
        """,
    }


def test_a_worker_named_by_worker_cls_serves_its_methods_whatever_its_bases(tmp_path):
    result = scan_trees(tmp_path, EXECUTOR, _platform('parallel_config.worker_cls = "pkg.worker.TPUWorker"'), only=["DC007"])
    assert [(f.rule, f.severity, f.client.line) for f in result.findings] == [("DC007", "error", 6)]
    assert "initialize_pp_transfer_connect" in result.findings[0].message and "worker_cls" in result.findings[0].message


def test_a_worker_cls_that_cannot_be_read_is_unknown(tmp_path):
    result = scan_trees(tmp_path, EXECUTOR, _platform('parallel_config.worker_cls = "other_pkg.worker.TPUWorker"'),
                        only=["DC007"])
    assert errors(result) == []
    assert len(_unknown(result, "DC007")) == 2 and all("other_pkg.worker.TPUWorker" in m for m in _unknown(result, "DC007"))


# ----------------------------------------------------------------------------------------- AS
LAYERS = {
    "vllm/attention/attention.py": """
        class Attention:
            def __init__(self, layer_name: str):
                self.layer_name = layer_name
    """,
    "vllm/attention/mla.py": """
        class MLAAttention:
            def __init__(self, layer_name: str):
                self.layer_name = layer_name

        class Linear:
            def __init__(self, size: int):
                self.size = size
    """,
}


@pytest.mark.parametrize("annotation", ['"Attention | MLAAttention"', "Attention | MLAAttention",
                                        '"Union[Attention, MLAAttention]"', "Optional[Union[Attention, MLAAttention]]"])
def test_a_store_through_a_union_annotated_parameter_sets_the_member_on_each_class(tmp_path, annotation):
    client = {"pkg/__init__.py": "", "pkg/record.py": f"""
        from typing import Optional, Union

        from vllm.attention.attention import Attention
        from vllm.attention.mla import MLAAttention

        def record(self: {annotation}) -> None:
            self.layer_index = int(self.layer_name.split(".")[1])
    """, "pkg/mla.py": """
        from vllm.attention.mla import Linear, MLAAttention

        def patched_forward(self: MLAAttention, q):
            return q, self.layer_index, self.layer_idx

        def linear(layer: Linear):
            return layer.layer_index
    """}
    result = scan_trees(tmp_path, LAYERS, client, only=["DC006"])
    assert sorted((f.severity, f.symbol.rsplit(".", 2)[-2:][0], f.symbol.rsplit(".", 1)[-1]) for f in result.findings
                  if f.client.path == "pkg/mla.py") == [("error", "Linear", "layer_index"), ("error", "MLAAttention", "layer_idx")]


def test_a_union_parameter_the_function_rebinds_credits_nothing(tmp_path):
    client = {"pkg/__init__.py": "", "pkg/record.py": """
        from vllm.attention.attention import Attention
        from vllm.attention.mla import MLAAttention

        def record(self: "Attention | MLAAttention", other) -> None:
            self.layer_index = 1
            self = other
            self.layer_flag = 2

        def record_kept(layer: "Attention | MLAAttention") -> None:
            layer.layer_kept = 3
    """, "pkg/mla.py": """
        from vllm.attention.mla import MLAAttention

        def patched_forward(self: MLAAttention, q):
            return self.layer_index, self.layer_flag

        def kept(layer: MLAAttention):
            return layer.layer_kept
    """}
    result = scan_trees(tmp_path, LAYERS, client, only=["DC006"])
    assert sorted(f.symbol.rsplit(".", 1)[-1] for f in errors(result)) == ["layer_flag", "layer_index"]


# ----------------------------------------------------------------------------------------- AT
HOOKLESS = {
    "vllm/v1/spec_decode/eagle.py": """
        class EagleProposer:
            pass
    """,
}


def test_an_import_after_the_clients_check_of_the_package_is_a_warning(tmp_path):
    """`if not check_for_registration("vllm"): return False` before importing a module the target lacks: the
    plugin's own capability check decides whether the import runs (a warning saying so); a check of another
    name, or an import before the check, keeps the error."""
    client = {"pkg/__init__.py": "", "pkg/plugin.py": """
        def register() -> bool:
            from pkg.compat import check_for_registration

            if not check_for_registration("vllm"):
                return False
            from vllm.v1.spec_decode.registry import register_speculative_method

            return register_speculative_method("x")

        def register_if_supported():
            from pkg.compat import supports

            if supports("vllm.v1.spec_decode.registry:register_speculative_method"):
                from vllm.v1.spec_decode.registry import register_speculative_method
                register_speculative_method("x")

        def register_other() -> bool:
            from pkg.compat import check_for_registration

            if not check_for_registration("torch"):
                return False
            from vllm.v1.spec_decode.registry import register_speculative_method

            return register_speculative_method("x")

        def register_early() -> bool:
            from pkg.compat import check_for_registration
            from vllm.v1.spec_decode.registry import register_speculative_method

            if not check_for_registration("vllm"):
                return False
            return register_speculative_method("x")
    """}
    result = scan_trees(tmp_path, HOOKLESS, client, only=["DC001"])
    assert _found(result, "DC001") == [("DC001", "error", "pkg/plugin.py", 22), ("DC001", "error", "pkg/plugin.py", 28),
                                       ("DC001", "warning", "pkg/plugin.py", 6), ("DC001", "warning", "pkg/plugin.py", 14)]
    warned = [f.message for f in result.findings if f.severity == "warning"]
    assert all("the client's own check of `vllm" in m for m in warned)
