"""Root causes of false errors from batch 16b (PyPI clients at the vLLM each declares,
docs/triage/2026-12-04-unseen-plugins-16b.md): the shape that runs (no error), and the same shape where the code
really reaches vLLM, which must stay an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- IA
# xinference 4.1.0 (`vllm>=0.2.6` extra, files 2026-10-25, scanned at 0.32.0): model/llm/trt_llm/core.py, the
# TensorRT-LLM backend, sets `config["speculative_config"] = {"decoding_type": "DraftTarget", "speculative_model":
# draft, "max_draft_len": ...}` and hands `config` to TensorRT-LLM's `LLM`; the file never names vLLM. DC111 read the
# dict as vLLM's SpeculativeConfig (3 errors).
VLLM = {
    "vllm/__init__.py": "__version__ = '0.99.0'\n",
    "vllm/config/__init__.py": "from vllm.config.speculative import SpeculativeConfig\n",
    "vllm/config/speculative.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass SpeculativeConfig:\n"
                                  "    num_speculative_tokens: int | None = None\n    method: str | None = None\n",
}
BACKEND = '''{head}
from pkg.engine import Engine


def launch(model, config, draft=None):
    if draft:
        config["speculative_config"] = {{"decoding_type": "DraftTarget", "speculative_model": draft, "max_draft_len": 3}}
    return Engine(model, **config)
'''


def _client(head: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/engine.py": "class Engine:\n    def __init__(self, model, **kw):\n        pass\n",
            "pkg/backend.py": BACKEND.format(head=head), "main.py": "import vllm\nfrom pkg.backend import launch\n"}


def test_ia_a_config_dict_in_a_file_that_never_names_vllm_is_not_vllms(tmp_path):
    result = scan_trees(tmp_path, VLLM, _client("# the TensorRT-LLM backend"))
    assert [f for f in result.findings if f.rule == "DC111"] == []


def test_ia_the_same_dict_in_a_file_that_names_vllm_stays_an_error(tmp_path):
    # the file hands the dict to vLLM (`LLM(..., speculative_config=...)` elsewhere): each unknown key is refused
    result = scan_trees(tmp_path, VLLM, _client("# the vLLM backend"))
    found = [f for f in result.findings if f.rule == "DC111"]
    assert len(found) == 3 and {f.severity for f in found} == {"error"}


def test_ia_an_import_of_vllm_also_names_it(tmp_path):
    result = scan_trees(tmp_path, VLLM, _client("import vllm  # noqa: F401"))
    assert {f.severity for f in result.findings if f.rule == "DC111"} == {"error"}


# ----------------------------------------------------------------------------------------- IB
# xinference 4.1.0 @ 0.32.0: model/llm/vllm/xavier/engine.py binds `from vllm import __version__ as VLLM_VERSION` and
# loads its V0 engine only under `if version.parse(VLLM_VERSION) < version.parse("0.11.0"): from .legacy_engine import
# ...`; the V0 modules (legacy_engine, scheduler, executor, block_manager, allocator, block, the scheduler hooks) import
# `vllm.core`, `vllm.sequence.SequenceGroup`, ... (44 errors). Their other loads: a test that first skips itself on a
# newer vLLM (`if Version(vllm.__version__) >= Version("0.11.0"): pytest.skip(...)`), and a test that puts a stand-in
# under the engine's name in `sys.modules`.
IB_VLLM = {"vllm/__init__.py": "from vllm._version import __version__\n", "vllm/engine.py": "class AsyncLLM:\n    pass\n"}
IB_ENGINE = '''from packaging import version
from vllm import __version__ as VLLM_VERSION
from vllm.engine import AsyncLLM


def make(args):
    if version.parse(VLLM_VERSION) < version.parse("0.11.0"):
        from .legacy_engine import LegacyEngine
        return LegacyEngine(args)
    return AsyncLLM()
'''
IB_SKIP = '''import pytest
from packaging.version import Version


def test_v0_scheduler():
    vllm = pytest.importorskip("vllm")
    if {test}:
        pytest.skip("V0 scheduler requires vLLM < 0.11")
    from ..scheduler import LegacyScheduler
    assert LegacyScheduler
'''
IB_SWAP = '''import sys
from types import SimpleNamespace


def test_v0_uses_legacy_adapter(monkeypatch):
    {line}
'''


def _ib_client(skip_test: str = 'Version(vllm.__version__) >= Version("0.11.0")',
               swap: str = 'monkeypatch.setitem(sys.modules, "pkg.legacy_engine", SimpleNamespace(LegacyEngine=object))'
               ) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/engine.py": IB_ENGINE,
            "pkg/legacy_engine.py": "from vllm.core.scheduler import Scheduler\nfrom .scheduler import LegacyScheduler\n",
            "pkg/scheduler.py": "from vllm.core.scheduler import Scheduler\n\n\nclass LegacyScheduler(Scheduler):\n    pass\n",
            "pkg/test/__init__.py": "", "pkg/test/test_legacy.py": IB_SKIP.format(test=skip_test),
            "pkg/test/test_swap.py": IB_SWAP.format(line=swap)}


def _ib(result) -> dict[str, str]:
    return {f.client.path: f.severity for f in result.findings if f.rule == "DC001"}


def test_ib_the_v0_modules_run_only_below_the_release_the_engine_names(tmp_path):
    assert _ib(scan_trees(tmp_path, IB_VLLM, _ib_client(), version="0.32.0")) == {
        "pkg/legacy_engine.py": "warning", "pkg/scheduler.py": "warning"}


def test_ib_on_an_older_release_the_v0_modules_run(tmp_path):
    assert _ib(scan_trees(tmp_path, IB_VLLM, _ib_client(), version="0.10.0")) == {
        "pkg/legacy_engine.py": "error", "pkg/scheduler.py": "error"}


def test_ib_a_skip_the_target_does_not_take_keeps_the_test_import(tmp_path):
    # the test skips below 0.11.0 only: on 0.32.0 it goes on and imports the scheduler
    found = _ib(scan_trees(tmp_path, IB_VLLM, _ib_client(skip_test='Version(vllm.__version__) < Version("0.11.0")'),
                           version="0.32.0"))
    assert found == {"pkg/legacy_engine.py": "warning", "pkg/scheduler.py": "error"}


def test_ib_a_skip_on_something_else_keeps_the_test_import(tmp_path):
    found = _ib(scan_trees(tmp_path, IB_VLLM, _ib_client(skip_test='vllm.envs.VLLM_USE_V1'), version="0.32.0"))
    assert found == {"pkg/legacy_engine.py": "warning", "pkg/scheduler.py": "error"}


def test_ib_a_module_named_outside_sys_modules_is_loaded(tmp_path):
    # `import_module("pkg.legacy_engine")` in the test imports the V0 engine on any release
    swap = 'return __import__("importlib").import_module("pkg.legacy_engine")'
    found = _ib(scan_trees(tmp_path, IB_VLLM, _ib_client(swap=swap), version="0.32.0"))
    assert found == {"pkg/legacy_engine.py": "error", "pkg/scheduler.py": "error"}


# ----------------------------------------------------------------------------------------- IC
# xinference 4.1.0 @ 0.32.0: model/llm/vllm/core.py binds `VLLM_VERSION = version.parse(vllm.__version__)` in a try
# whose `except ImportError:` binds None (no vLLM installed), and imports the V0 executor module only under `if not
# self._is_vllm_v1():`, a method whose first test returns True above 0.11.0, and in the `else` of `if VLLM_VERSION >
# version.parse("0.11.0")` (4 errors in distributed_executor.py).
IC_SHAPE = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "IC_executor_loaded_under_a_version_method"
IC_VLLM = {"vllm/__init__.py": "from vllm._version import __version__\n",
           "vllm/v1/__init__.py": "", "vllm/v1/executor/__init__.py": "class Executor:\n    pass\n"}
IC_TEST = "        if VLLM_VERSION is not None and VLLM_VERSION > version.parse(\"0.11.0\"):\n"


def _ic_client(caught: str = "ImportError", first: str = "") -> dict[str, str]:
    """The shape's client (tests/fixtures/plugin_shapes/IC_...), its `except ImportError:` and the start of
    `_is_vllm_v1` changed."""
    pkg = IC_SHAPE / "client" / "pkg"
    core = (pkg / "core.py").read_text()
    assert "except ImportError:" in core and IC_TEST in core
    core = core.replace("except ImportError:", f"except {caught}:").replace(IC_TEST, first + IC_TEST)
    return {"pkg/__init__.py": "", "pkg/core.py": core,
            "pkg/distributed_executor.py": (pkg / "distributed_executor.py").read_text(),
            "pkg/distributed_executor_v1.py": (pkg / "distributed_executor_v1.py").read_text()}


def _ic(result) -> dict[str, str]:
    return {f.client.path: f.severity for f in result.findings if f.rule == "DC001"}


def test_ic_the_v0_executor_runs_only_where_the_version_method_answers_false(tmp_path):
    assert _ic(scan_trees(tmp_path, IC_VLLM, _ic_client(), version="0.32.0")) == {"pkg/distributed_executor.py": "warning"}


def test_ic_on_an_older_release_the_v0_executor_runs(tmp_path):
    assert _ic(scan_trees(tmp_path, IC_VLLM, _ic_client(), version="0.10.0")) == {"pkg/distributed_executor.py": "error"}


def test_ic_a_none_bound_when_something_else_fails_is_a_value_the_version_may_have(tmp_path):
    # `except Exception:` may also catch a vLLM that imports but fails: the name may hold None on the target
    found = _ic(scan_trees(tmp_path, IC_VLLM, _ic_client(caught="Exception"), version="0.32.0"))
    assert found == {"pkg/distributed_executor.py": "error"}


def test_ic_a_method_that_may_answer_before_its_version_test_decides_nothing(tmp_path):
    first = "        if vllm.envs.VLLM_USE_V0:\n            return False\n"
    found = _ic(scan_trees(tmp_path, IC_VLLM, _ic_client(first=first), version="0.32.0"))
    assert found == {"pkg/distributed_executor.py": "error"}


# ----------------------------------------------------------------------------------------- ID
# xinference 4.1.0 @ 0.32.0 thirdparty/navidc_ocr/__init__.py: `MODEL_CLASS = "...navidc_ocr.qwen2_5_vl:..."` is
# returned by `_get_model_class()` only after `try: if Version(package_version("vllm")) >= Version("0.23.0"): return
# COMPAT_MODEL_CLASS` (except `PackageNotFoundError, InvalidVersion`): on 0.32.0 the vendored model is never loaded,
# yet its 6 findings were errors. The shape is tests/fixtures/plugin_shapes/ID_...; these are its broken variants.
ID_CASE = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / \
    "ID_vendored_model_named_by_a_constant_returned_below_a_release"


def _id_errors(tmp_path, edit=None, version: str | None = None) -> list[str]:
    import shutil

    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    root = tmp_path / "case"
    shutil.copytree(ID_CASE, root)
    if version is not None:  # the release the vendored model was written for
        (root / "vllm_src" / "vllm" / "_version.py").write_text(f'__version__ = "{version}"\n')
        meta = root / "vllm_src" / "vllm-0.32.0.dist-info" / "METADATA"
        meta.write_text(meta.read_text().replace("0.32.0", version))
    if edit is not None:
        edit(root / "client" / "pkg" / "navi")
    result = scan(resolve_vllm(str(root / "vllm_src"), tmp_path), [resolve_client(str(root / "client"), tmp_path)],
                  ScanOptions(cache_dir=tmp_path, use_cache=False))
    return [f"{f.rule} {f.client.path}:{f.client.line}" for f in result.findings if f.severity == "error"]


def test_id_the_constant_of_the_branch_not_taken_loads_nothing(tmp_path):
    assert _id_errors(tmp_path) == []


def test_id_below_the_release_the_vendored_model_is_loaded(tmp_path):
    assert _id_errors(tmp_path, version="0.22.0") == ["DC001 pkg/navi/qwen2_5_vl.py:2"]


def test_id_a_constant_read_outside_the_branch_is_a_load(tmp_path):
    def also_read(navi: Path) -> None:
        init = navi / "__init__.py"
        init.write_text(init.read_text() + "\n\ndef default_class() -> str:\n    return MODEL_CLASS\n")

    assert _id_errors(tmp_path, also_read) == ["DC001 pkg/navi/qwen2_5_vl.py:2"]


def test_id_a_constant_another_file_imports_is_a_load(tmp_path):
    def imported(navi: Path) -> None:
        (navi / "other.py").write_text("from pkg.navi import MODEL_CLASS\n\nPATH = MODEL_CLASS\n")

    assert _id_errors(tmp_path, imported) == ["DC001 pkg/navi/qwen2_5_vl.py:2"]


def test_id_a_raise_the_try_may_catch_does_not_leave_it(tmp_path):
    def raising(navi: Path) -> None:
        init = navi / "__init__.py"
        init.write_text(init.read_text().replace("            return COMPAT_MODEL_CLASS",
                                                 "            raise RuntimeError(COMPAT_MODEL_CLASS)").replace(
            "except (PackageNotFoundError, InvalidVersion):", "except Exception:"))

    assert _id_errors(tmp_path, raising) == ["DC001 pkg/navi/qwen2_5_vl.py:2"]
