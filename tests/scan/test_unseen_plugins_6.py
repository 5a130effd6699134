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
