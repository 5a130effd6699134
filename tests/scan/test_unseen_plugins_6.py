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
    changed = _fixed(tmp_path, PYDANTIC_CONFIGS, PYDANTIC_CLIENT)
    assert "worker_use_ray=False" in changed["pkg/mocks.py"] and 'colour="red")\n' in changed["pkg/mocks.py"].split("def broken")[0]
    assert _fixed(tmp_path, PYDANTIC_CONFIGS, PYDANTIC_CLIENT, only=["drop-keyword"])["pkg/mocks.py"].count("worker_use_ray") == 1
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
