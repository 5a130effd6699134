"""vLLM's own tests, examples and benchmarks as a client (docs/triage/2026-12-05-vllm-own-tests-tk.md).

The sdist of a release (`vllm-X.tar.gz` on PyPI) carries `tests/`, `examples/` and `benchmarks/` next to `vllm/`:
code written for that very release, a second oracle beside the self-scan. Most of its errors are real (stale
benchmarks, tests for GPUs the CI of that release did not run); these were false, each fixed at its cause:

- TK1 (DC111): a test's `["vllm", "serve", ...]` list that is only inspected: handed to vLLM's sweep helper, which
  edits it, and compared (`launches.only_inspected`). A warning now; the list handed to `subprocess`, to a client
  helper or set as `sys.argv` stays certain, and so does a list in package code.
- TK2 (DC005, DC006): a call inside `with pytest.raises(E):` (the test expects E) or `with contextlib.suppress(E):`
  guards what E catches, as `except E:` does (`guards._expected_failures`).
- TK3 (DC006): `monkeypatch.setattr("vllm.m.Cls", Fake)` / `mock.patch("vllm.m.Cls", Fake)` puts the test's class in
  the place of a vLLM class in the module that builds it; a value typed as that class may be the fake (`_replaced`
  now also reads the file's own patch of the name in a module that imports the class; another test file's patch
  lasts only for its own test, and what the client builds through its own import is vLLM's class). A patch of a name the release lacks makes
  nothing exist: the import of such a name stays an error.
- TK4 (DC006): `w = object.__new__(cls); w.x = ...` in a classmethod (or `w = C(...)` in any function) gives the class
  the member `x` (`client_classes._set_on_built_instances`).
- TK5 (DC007): `worker_extension_cls=f"{__name__}.Probe"` names the class `Probe` of the file's own module.
- TK6 (DC006): `scheduler.client = _Stub(...)` then `scheduler.client.num_tokens` in the same function: the read
  holds what the function stored, not what vLLM annotates (`inference.STORED`; one function, any order, as locals).
- TK7 (DC006): a client helper annotated `-> EagleProposer` that returns a DFlashProposer (a sibling) for one method:
  its annotation types its calls only where its own returns agree with it (`inference._returns_one_class`).
- TK8 (DC005): a test function that defines `class FusedMoE3DWithLoRA(...)` over the name it imports from vLLM builds
  its own class: a class or function a body defines binds its name there (`build_env`).
- DC001: a module under a package the sources lack but vLLM's own code imports (`vllm.third_party.deep_gemm`, which
  a CUDA build copies in and the CPU wheel lacks) is provided by that build, as the package is: a warning.
- DC102: with no CacheConfig of the client's, a call that passes `enable_prefix_caching=False` (to `LLM`, or to a
  test helper that forwards it) turns prefix caching off for an in-process capture.
"""

from __future__ import annotations

from scan.helpers import by_rule, edited, errors, plugin_shape, scan_trees

TK1_VLLM, TK1_CLIENT = plugin_shape("TK1")
TK2_VLLM, TK2_CLIENT = plugin_shape("TK2")
TK3_VLLM, TK3_CLIENT = plugin_shape("TK3")
TK4_VLLM, TK4_CLIENT = plugin_shape("TK4")
TK5_VLLM, TK5_CLIENT = plugin_shape("TK5")
TK6_VLLM, TK6_CLIENT = plugin_shape("TK6")
TK7_VLLM, TK7_CLIENT = plugin_shape("TK7")
TK8_VLLM, TK8_CLIENT = plugin_shape("TK8")


def _severities(result, rule: str) -> list[str]:
    return [f.severity for f in by_rule(result, rule)]


# ----------------------------------------------------------------------------------------------------------- TK1
def test_tk1_a_test_command_only_inspected_is_a_warning_that_says_why(tmp_path):
    result = scan_trees(tmp_path, TK1_VLLM, TK1_CLIENT, only=["DC111"])
    assert errors(result) == []
    assert _severities(result, "DC111") == ["warning", "warning"]  # the edited list and the expected one
    assert all("driftcheck does not see it run" in f.message for f in by_rule(result, "DC111"))


def test_tk1_twin_a_test_command_that_runs_stays_an_error(tmp_path):
    rel = "tests/test_sweep.py"
    run = edited(TK1_CLIENT, rel, ('    cmd = item.apply_to_cmd(["vllm", "serve", "--max-tokens", "100", "model"])\n',
                                   '    cmd = item.apply_to_cmd(["vllm", "serve", "--max-tokens", "100", "model"])\n'
                                   '    import subprocess\n'
                                   '    launch = ["vllm", "serve", "--max-tokens", "10", "model"]\n'
                                   '    subprocess.run(launch)\n'))
    assert [f.client.line for f in errors(scan_trees(tmp_path / "run", TK1_VLLM, run, only=["DC111"]))] == [10]
    argv = edited(TK1_CLIENT, rel, ('    expected = ["vllm", "serve", "--max-tokens", "200", "model"]\n',
                                    '    import sys\n    sys.argv = ["vllm", "serve", "--max-tokens", "200", "model"]\n'
                                    '    expected = sys.argv\n'))
    assert len(errors(scan_trees(tmp_path / "argv", TK1_VLLM, argv, only=["DC111"]))) == 1
    helper = edited(TK1_CLIENT, rel, ('    expected = ["vllm", "serve", "--max-tokens", "200", "model"]\n',
                                      '    expected = start_server(["vllm", "serve", "--max-tokens", "200", "model"])\n'))
    assert len(errors(scan_trees(tmp_path / "helper", TK1_VLLM, helper, only=["DC111"]))) == 1
    # the same list in the package's own code is certain wherever it goes
    package = {"main.py": "", "pkg/__init__.py": "", "pkg/sweep.py": TK1_CLIENT[rel]}
    assert len(errors(scan_trees(tmp_path / "package", TK1_VLLM, package, only=["DC111"]))) == 2


# ----------------------------------------------------------------------------------------------------------- TK2
def test_tk2_calls_a_test_expects_to_fail_or_suppresses_are_warnings(tmp_path):
    result = scan_trees(tmp_path, TK2_VLLM, TK2_CLIENT, only=["DC005", "DC006"])
    assert errors(result) == []
    messages = [f.message for f in result.findings if f.rule in ("DC005", "DC006")]
    assert any("inside `pytest.raises(TypeError)` (line 13), where the test expects TypeError to be raised" in m
               for m in messages)
    assert any("inside `contextlib.suppress(AttributeError, RuntimeError)` (line 23), which suppresses AttributeError"
               in m for m in messages)


def test_tk2_twin_an_exception_the_context_does_not_catch_stays_an_error(tmp_path):
    rel = "tests/test_config.py"
    other = edited(TK2_CLIENT, rel, ("pytest.raises(TypeError)", "pytest.raises(ValueError)"),
                   ("contextlib.suppress(AttributeError, RuntimeError)", "contextlib.suppress(KeyError)"))
    result = scan_trees(tmp_path / "other", TK2_VLLM, other, only=["DC005", "DC006"])
    assert sorted(f.rule for f in errors(result)) == ["DC005", "DC005", "DC006"]
    bare = edited(TK2_CLIENT, rel, ("    with pytest.raises(TypeError):\n        SchedulerConfig()\n",
                                    "    SchedulerConfig()\n"))
    assert sorted(f.rule for f in errors(scan_trees(tmp_path / "bare", TK2_VLLM, bare, only=["DC005"]))) == ["DC005"] * 2
    # assertRaises and a tuple of exceptions read the same way
    unit = edited(TK2_CLIENT, rel, ("    with pytest.raises(TypeError):\n", "    with self.assertRaises((KeyError, TypeError)):\n"))
    assert errors(scan_trees(tmp_path / "unit", TK2_VLLM, unit, only=["DC005"])) == []


# ----------------------------------------------------------------------------------------------------------- TK3
def test_tk3_a_class_a_test_replaces_by_path_where_it_is_built(tmp_path):
    assert errors(scan_trees(tmp_path, TK3_VLLM, TK3_CLIENT, only=["DC006"])) == []
    rel = "tests/test_eplb.py"
    monkeypatched = edited(TK3_CLIENT, rel, ("def test_registration():\n    with mock.patch(",
                                             "def test_registration(monkeypatch):\n    monkeypatch.setattr("),
                           ('FakeEplbState):\n        controller', 'FakeEplbState)\n    if True:\n        controller'))
    assert errors(scan_trees(tmp_path / "mp", TK3_VLLM, monkeypatched, only=["DC006"])) == []


def test_tk3_twin_a_patch_of_another_name_or_a_missing_one_changes_nothing(tmp_path):
    rel = "tests/test_eplb.py"
    # a method of the controller patched: the state it builds is still vLLM's class
    other = edited(TK3_CLIENT, rel, ('mock.patch("vllm.worker.eplb_utils.EplbState", FakeEplbState)',
                                     'mock.patch("vllm.worker.eplb_utils.EPLBController.register", lambda s, m: True)'))
    assert [f.rule for f in errors(scan_trees(tmp_path / "other", TK3_VLLM, other, only=["DC006"]))] == ["DC006"]
    # another test file's patch lasts for that file's test: this file's read of the real class stays an error
    unpatched = edited(TK3_CLIENT, rel, ('    with mock.patch("vllm.worker.eplb_utils.EplbState", FakeEplbState):\n',
                                         "    if True:\n"))
    unpatched["tests/test_other.py"] = ("from unittest import mock\n\n\ndef test_other():\n"
                                        '    with mock.patch("vllm.worker.eplb_utils.EplbState", object):\n        pass\n')
    assert [f.rule for f in errors(scan_trees(tmp_path / "unpatched", TK3_VLLM, unpatched, only=["DC006"]))] == ["DC006"]
    # a test's patch of a method by path lasts for that test: the package's own call of it is still checked (tpu-inference's
    # test mocks `MLAAttention.process_weights_after_loading`, its layer calls it with an argument the release refuses)
    package = {**TK3_CLIENT, "pkg/__init__.py": "", "pkg/layer.py": ("from vllm.worker.eplb_utils import EPLBController\n\n\n"
                                                                    "def build():\n    return EPLBController(None).register()\n")}
    package["tests/test_mocked.py"] = ('from unittest import mock\n\n\n@mock.patch("vllm.worker.eplb_utils.EPLBController.register")\n'
                                       "def test_mocked(register):\n    pass\n")
    assert [f.rule for f in errors(scan_trees(tmp_path / "package", TK3_VLLM, package, only=["DC005"]))] == ["DC005"]
    # a package replacing the class by name with its subclass: the subclass's own `super().__init__` reaches vLLM's
    # (vllm-gcu's AsyncWorkerProc at 0.34.0)
    subclass = {"main.py": "", "pkg/__init__.py": "", "pkg/proc.py": (
        "from unittest.mock import patch\n\nfrom vllm.worker.eplb_utils import EPLBController\n\n\n"
        "class Mine(EPLBController):\n    def __init__(self):\n        super().__init__()\n\n\n"
        'patch("vllm.worker.eplb_utils.EPLBController", Mine).start()\n')}
    [f] = errors(scan_trees(tmp_path / "subclass", TK3_VLLM, subclass, only=["DC005"]))
    assert (f.client.path, f.client.line) == ("pkg/proc.py", 8)
    # patching a name the release lacks fails itself (mock raises AttributeError): the name does not come to exist
    missing = edited(TK3_CLIENT, rel, ("from vllm.worker.eplb_utils import EPLBController\n",
                                       "from vllm.worker.eplb_utils import EPLBController\n"
                                       "from vllm.worker.eplb_utils import GoneHelper\n"),
                     ("    with mock.patch(", '    mock.patch("vllm.worker.eplb_utils.GoneHelper", None).start()\n'
                                            "    with mock.patch("))
    # (the patch of the missing name is itself a DC002 error since 26f M4: mock's lookup raises AttributeError)
    found = errors(scan_trees(tmp_path / "missing", TK3_VLLM, missing, only=["DC002"]))
    assert sorted((f.rule, f.client.code.lstrip()[:10]) for f in found) == [("DC002", "from vllm."), ("DC002", "mock.patch")]


# ----------------------------------------------------------------------------------------------------------- TK4
def test_tk4_members_set_on_an_instance_built_without_init(tmp_path):
    assert errors(scan_trees(tmp_path, TK4_VLLM, TK4_CLIENT, only=["DC006"])) == []
    rel = "tests/test_push.py"
    # a test function that builds the instance and sets the member gives it too
    outside = edited(TK4_CLIENT, rel, ("        w.start_push_calls = calls\n", ""),
                     ("    w = _StubWriterWorker.fresh()\n", "    w = object.__new__(_StubWriterWorker)\n"
                                                           "    w._pending = {}\n    w.start_push_calls = []\n"))
    assert errors(scan_trees(tmp_path / "outside", TK4_VLLM, outside, only=["DC006"])) == []


def test_tk4_twin_a_member_nobody_sets_stays_an_error(tmp_path):
    rel = "tests/test_push.py"
    unset = edited(TK4_CLIENT, rel, ("        w.start_push_calls = calls\n", ""))
    [f] = errors(scan_trees(tmp_path, TK4_VLLM, unset, only=["DC006"]))
    assert "start_push_calls" in f.message
    # a name bound twice in the function is no one instance
    twice = edited(unset, rel, ("        return w\n", "        w = object()\n        w.start_push_calls = []\n"
                                                    "        return w\n"))
    assert len(errors(scan_trees(tmp_path / "twice", TK4_VLLM, twice, only=["DC006"]))) == 1


# ----------------------------------------------------------------------------------------------------------- TK5
def test_tk5_extension_named_by_its_own_module_name(tmp_path):
    assert errors(scan_trees(tmp_path, TK5_VLLM, TK5_CLIENT, only=["DC007"])) == []


def test_tk5_twin_a_method_the_named_class_lacks_stays_an_error(tmp_path):
    lacking = edited(TK5_CLIENT, "pkg/probe.py", ('llm.collective_rpc("mono_layers")', 'llm.collective_rpc("mono_layer")'))
    [f] = errors(scan_trees(tmp_path, TK5_VLLM, lacking, only=["DC007"]))
    assert "mono_layer" in f.message
    other = edited(TK5_CLIENT, "pkg/probe.py", ('f"{__name__}.MonoProbe"', 'f"{__name__}.Missing"'))
    assert len(errors(scan_trees(tmp_path / "other", TK5_VLLM, other, only=["DC007"]))) == 2


# ----------------------------------------------------------------------------------------------------------- TK6
def test_tk6_a_member_read_back_after_the_test_stored_its_stub(tmp_path):
    assert errors(scan_trees(tmp_path, TK6_VLLM, TK6_CLIENT, only=["DC006"])) == []


def test_tk6_twin_without_the_store_or_storing_vllms_class_stays_an_error(tmp_path):
    rel = "tests/test_store.py"
    unstored = edited(TK6_CLIENT, rel, ("    scheduler.client = _StubLookupClient(hit_tokens=32)\n", ""))
    [f] = errors(scan_trees(tmp_path / "unstored", TK6_VLLM, unstored, only=["DC006"]))
    assert "num_tokens" in f.message
    real = edited(TK6_CLIENT, rel, ("from vllm.store.scheduler import StoreScheduler\n",
                                    "from vllm.store.scheduler import LookupKeyClient, StoreScheduler\n"),
                  ("scheduler.client = _StubLookupClient(hit_tokens=32)", "scheduler.client = LookupKeyClient()"))
    [f] = errors(scan_trees(tmp_path / "real", TK6_VLLM, real, only=["DC006"]))
    assert "num_tokens" in f.message
    # a store in another function says nothing about this one's reads
    elsewhere = edited(TK6_CLIENT, rel, ("    scheduler.client = _StubLookupClient(hit_tokens=32)\n", ""),
                       ("def test_full_hit():", "def other(scheduler):\n    scheduler.client = _StubLookupClient(1)\n\n\n"
                                               "def test_full_hit():"))
    assert len(errors(scan_trees(tmp_path / "elsewhere", TK6_VLLM, elsewhere, only=["DC006"]))) == 1


# ----------------------------------------------------------------------------------------------------------- TK7
def test_tk7_a_helper_whose_returns_disagree_with_its_annotation(tmp_path):
    assert errors(scan_trees(tmp_path, TK7_VLLM, TK7_CLIENT, only=["DC006"])) == []


def test_tk7_twin_a_helper_that_returns_the_annotated_class_types_its_calls(tmp_path):
    rel = "tests/test_eagle.py"
    one = edited(TK7_CLIENT, rel, ("        proposer = DFlashProposer(num_tokens)\n",
                                   "        proposer = EagleProposer(num_tokens)\n"))
    [f] = errors(scan_trees(tmp_path / "one", TK7_VLLM, one, only=["DC006"]))
    assert "_context_positions_buffer" in f.message
    direct = edited(TK7_CLIENT, rel, ("    return proposer\n", "    return EagleProposer(num_tokens)\n"))
    assert len(errors(scan_trees(tmp_path / "direct", TK7_VLLM, direct, only=["DC006"]))) == 1


# ----------------------------------------------------------------------------------------------------------- TK8
def test_tk8_a_class_the_function_defines_over_an_imported_name(tmp_path):
    assert errors(scan_trees(tmp_path, TK8_VLLM, TK8_CLIENT, only=["DC003", "DC005"])) == []


def test_tk8_twin_the_imported_class_built_without_its_argument_stays_an_error(tmp_path):
    rel = "tests/test_lora_manager.py"
    imported = edited(TK8_CLIENT, rel, ('FusedMoE3DWithLoRA(base_layer="experts")', "FusedMoE3DWithLoRA()"))
    [f] = errors(scan_trees(tmp_path, TK8_VLLM, imported, only=["DC005"]))
    assert f.client.line == 16  # the module-level test, not the one with its own class
    # a local class of another name leaves the imported one as it is
    renamed = edited(imported, rel, ("    class FusedMoE3DWithLoRA(BaseLayerWithLoRA):", "    class Local(BaseLayerWithLoRA):"),
                     ("    assert FusedMoE3DWithLoRA().global_num_experts == 6", "    assert FusedMoE3DWithLoRA().x == 6"))
    assert len(errors(scan_trees(tmp_path / "renamed", TK8_VLLM, renamed, only=["DC005"]))) == 2


# ---------------------------------------------------------------------------------------------- DC001, DC102
BUILD_COPIED = {
    "vllm/__init__.py": "",
    "vllm/third_party/__init__.py": "",
    "vllm/ops.py": "def per_block(x):\n    import vllm.third_party.deep_gemm as deep_gemm\n    return deep_gemm.cast(x)\n",
}


def test_a_module_under_a_package_a_build_copies_in_is_a_warning(tmp_path):
    client = {"tests/test_moe.py": "def test_cast():\n    from vllm.third_party.deep_gemm.utils import cast\n    cast(1)\n"}
    [f] = by_rule(scan_trees(tmp_path, BUILD_COPIED, client, only=["DC001"]), "DC001")
    assert f.severity == "warning"
    assert "vLLM's own code imports `vllm.third_party.deep_gemm`, the package above it, which is absent too" in f.message


def test_twin_a_module_under_a_package_the_sources_have_stays_an_error(tmp_path):
    client = {"tests/test_moe.py": "def test_cast():\n    from vllm.third_party.gone import cast\n    cast(1)\n"}
    assert _severities(scan_trees(tmp_path, BUILD_COPIED, client, only=["DC001"]), "DC001") == ["error"]
    # nobody imports the package above: an error as before
    unimported = {**BUILD_COPIED, "vllm/ops.py": "def per_block(x):\n    return x\n"}
    client = {"tests/test_moe.py": "def test_cast():\n    from vllm.third_party.deep_gemm.utils import cast\n    cast(1)\n"}
    assert _severities(scan_trees(tmp_path / "u", unimported, client, only=["DC001"]), "DC001") == ["error"]
