"""Batch 34e (clients that plug into vLLM's engine loop: stat loggers, custom executors, schedulers and engine-core
launchers; docs/triage/2026-12-05-metrics-executors-34e.md).

FE1: tenstorrent/vllm-tt-plugin (e3fc849) at vLLM 0.25.1 (docs/install-vllm-tt.sh) and newer. Its
`launcher.py` imports `CoreEngineLauncher, EngineLaunchPlan` from `vllm.v1.engine.utils`, names no release of vLLM
has: they exist only in Tenstorrent's vLLM fork. Nothing imports the module on stock vLLM: `platform.py` hands vLLM
its name (`parallel_config.engine_core_launcher_cls = "vllm_tt_plugin.launcher.TTCoreEngineLauncher"`) only past
`if not hasattr(parallel_config, "engine_core_launcher_cls"): raise NotImplementedError(...)`, its test imports it
inside `try: ... except ImportError` and skips itself, and another test only compares the name with `==`. DC002
said "ImportError at import time" (two errors at every release). Now (a) `hasattr(x, "NAME")` on a parameter
annotated with a vLLM class, or on a local bound once to such a parameter's attribute (whose annotated class is
taken), is decided False where the target's class lacks NAME and no file of its tree spells NAME, so what follows
`if not hasattr(...): raise` does not run there; (b) a module loaded that way and otherwise only imported inside a try
that catches ImportError has its import-time ImportErrors guarded (its other findings are not); (c) a string compared
(`==`) is no load of the module it names. The twins keep the error: a vLLM whose class has the hook, another
unguarded import, a try that catches something else, a runtime error in the module, and a module loaded by
`import_module` instead of compared.

FE2: the same plugin at its `compat/vllm-0.24.0` tag (bd150c7) at vLLM 0.24.0 stores the launcher's name into
`parallel_config.engine_core_launcher_cls` with no hasattr test at all: DC006 already says the store "creates a new
attribute that vLLM never reads", and nothing else of vLLM loads the module, yet DC002 said the module's imports fail.
A store `x.NAME = ...` on such a typed receiver, where the target's class lacks NAME and its tree never spells it,
now counts as a load that never happens. Twins: a vLLM that declares the attribute, and one that reads it by name
(`getattr(config, "engine_core_launcher_cls", None)`), keep the error.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

FE1_VLLM, FE1_CLIENT = plugin_shape("FE1")
LAUNCHER = "plug/launcher.py"
PLATFORM = "plug/platform.py"
TEST_LAUNCHER = "tests/test_launcher.py"
TEST_PLATFORM = "tests/test_platform.py"


def _findings(tmp_path, client, vllm=None):
    result = scan_trees(tmp_path, vllm or FE1_VLLM, client)
    return [(f.rule, f.severity, f.client.path, f.client.line) for f in result.findings
            if f.severity in ("error", "warning") and f.rule != "DC006"]


def test_fe1_module_loaded_only_where_the_hook_exists_is_a_warning(tmp_path):
    result = scan_trees(tmp_path, FE1_VLLM, FE1_CLIENT)
    found = [f for f in result.findings if f.client.path == LAUNCHER]
    assert [(f.rule, f.severity, f.client.line) for f in found] == [("DC002", "warning", 1)]
    assert "a test of whether vLLM's `ParallelConfig` has `engine_core_launcher_cls`, which it lacks here" in found[0].message
    assert "plug/platform.py:13" in found[0].message and "a try that catches ImportError" in found[0].message
    assert [f for f in result.findings if f.severity == "error"] == []


@pytest.mark.parametrize("rel, old, new", [
    # another client module imports it unguarded
    ("plug/__init__.py", "", "from plug import launcher  # noqa: F401\n"),
    # a try that does not catch ImportError
    (TEST_LAUNCHER, "except ImportError as exc:", "except ValueError as exc:"),
    # a test that loads the module by name instead of comparing it
    (TEST_PLATFORM, "from types import SimpleNamespace\n",
     'import importlib\nfrom types import SimpleNamespace\n\nLOADED = importlib.import_module("plug.launcher")\n'),
])
def test_fe1_twins_keep_the_import_error(tmp_path, rel, old, new):
    client = edited(FE1_CLIENT, rel, (old, new)) if old else {**FE1_CLIENT, rel: new}
    assert ("DC002", "error", LAUNCHER, 1) in _findings(tmp_path, client)


def test_fe1_twin_a_vllm_whose_class_has_the_hook_keeps_the_error(tmp_path):
    vllm = edited(FE1_VLLM, "vllm/config/parallel.py",
                  ('distributed_executor_backend: str = "uni"\n',
                   'distributed_executor_backend: str = "uni"\n    engine_core_launcher_cls: str = "auto"\n'))
    assert ("DC002", "error", LAUNCHER, 1) in _findings(tmp_path, FE1_CLIENT, vllm)


def test_fe1_twin_a_runtime_error_of_the_module_stays_an_error(tmp_path):
    # the test's try guards the module's import-time ImportErrors only, not a call that fails once it is imported
    client = edited(FE1_CLIENT, LAUNCHER, ("return [CoreEngine(0)]", "return [CoreEngine(index=0, rank=0)]"))
    found = _findings(tmp_path, client)
    assert ("DC002", "warning", LAUNCHER, 1) in found
    assert ("DC003", "error", LAUNCHER, 6) in found


# ----------------------------------------------------------------------------------------- FE2

FE2_VLLM, FE2_CLIENT = plugin_shape("FE2")


def test_fe2_module_named_only_to_an_attribute_vllm_never_reads_is_a_warning(tmp_path):
    result = scan_trees(tmp_path, FE2_VLLM, FE2_CLIENT)
    found = [f for f in result.findings if f.client.path == LAUNCHER]
    assert [(f.rule, f.severity, f.client.line) for f in found] == [("DC002", "warning", 1)]
    assert "a store into `ParallelConfig.engine_core_launcher_cls`, an attribute this vLLM neither has nor reads" \
        in found[0].message
    assert [f for f in result.findings if f.severity == "error"] == []


@pytest.mark.parametrize("rel, old, new", [
    # vLLM declares the attribute: it may read it, and load the module
    ("vllm/config/parallel.py", 'distributed_executor_backend: str = "uni"\n',
     'distributed_executor_backend: str = "uni"\n    engine_core_launcher_cls: str = "auto"\n'),
    # vLLM reads it by name from the object it is handed
    ("vllm/v1/engine/utils.py", "class CoreEngine:",
     'def launcher_of(config):\n    return getattr(config, "engine_core_launcher_cls", None)\n\n\nclass CoreEngine:'),
])
def test_fe2_twins_a_vllm_that_may_read_the_attribute_keeps_the_error(tmp_path, rel, old, new):
    assert ("DC002", "error", LAUNCHER, 1) in _findings(tmp_path, FE2_CLIENT, edited(FE2_VLLM, rel, (old, new)))


def test_fe2_twin_a_module_loaded_while_computing_the_stored_value_keeps_the_error(tmp_path):
    # the store is never read, but what it stores is computed first: the load runs
    client = edited(FE2_CLIENT, PLATFORM, (
        'parallel_config.engine_core_launcher_cls = "plug.launcher.PlugLauncher"',
        'parallel_config.engine_core_launcher_cls = importlib.import_module("plug.launcher")'),
        ("from typing import TYPE_CHECKING\n", "import importlib\nfrom typing import TYPE_CHECKING\n"))
    assert ("DC002", "error", LAUNCHER, 1) in _findings(tmp_path, client)
