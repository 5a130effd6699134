"""Batch 29b (vLLM extension plugins taken from GitHub: quantization methods, stat loggers, logits processors, custom
ops; each at the vLLM it declares and newer; docs/triage/2026-12-05-extension-plugins-29b.md).

QB1: a test that installs a fake vLLM into `sys.modules` and then imports from it binds the fake's objects.
banana-smasher-plugin (my-other-github-account/banana-smasher d66eb68, `vllm==0.24.0`) tests its quantization
config's `get_quant_method` with a helper `_install_fake_vllm(monkeypatch)`: `ModuleType` objects carrying stub
classes, keyed by a dict literal whose items a loop hands to `monkeypatch.setitem(sys.modules, name, module)`; the
test calls it, then `from vllm.model_executor.layers.linear import LinearBase` and builds `LinearBase()` and
`RoutedExperts()`. Those are the stubs, which take no arguments; driftcheck checked them against the release's
constructors: 7 DC005 errors ("does not pass 'input_size'", ...) at 0.24.0, 0.27.1 and 0.33.0. An import that a
statement before it in the same body (or a fixture the function names, or an autouse fixture) has replaced in
`sys.modules` is now the client's own. The twins: the import before the helper's call, a module-level import of the
file, a stand-in of another module (only exact keys count), a test that does not name the fixture, and an entry the
file removes, all stay errors.

QB2: a flag the try with the new spelling sets (`patched = True` as its last statement) and an `if not patched:` after
it holding the old spelling: that branch is the try's `except` fallback (MarinFold's only-correct structured-output
backend at vLLM 0.20.1, below).
"""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {"vllm/__init__.py": "",
        "vllm/model_executor/__init__.py": "",
        "vllm/model_executor/layers/__init__.py": "",
        "vllm/model_executor/layers/linear.py": ("class LinearBase:\n"
                                                 "    def __init__(self, input_size, output_size, bias=False):\n"
                                                 "        self.input_size = input_size\n")}

LINEAR = "vllm.model_executor.layers.linear"

HELPER = ("import sys\n"
          "from types import ModuleType\n"
          "\n"
          "import pytest\n"
          "\n"
          "\n"
          "def _install_fake_vllm(monkeypatch):\n"
          "    class LinearBase:\n"
          "        pass\n"
          "\n"
          "    modules = {\n"
          "        \"MODULE\": ModuleType(\"MODULE\"),\n"
          "    }\n"
          "    modules[\"MODULE\"].LinearBase = LinearBase\n"
          "    for name, module in modules.items():\n"
          "        monkeypatch.setitem(sys.modules, name, module)\n"
          "\n"
          "\n")


def _helper(module: str = LINEAR) -> str:
    return HELPER.replace("MODULE", module)


def _dc005(result) -> list[tuple[str, str, int]]:
    return sorted({(f.severity, f.client.path, f.client.line) for f in result.findings if f.rule == "DC005"})


def _scan(tmp_path, test_text: str):
    return scan_trees(tmp_path, VLLM, {"tests/__init__.py": "", "tests/test_quant.py": test_text})


def test_import_after_the_helper_binds_the_stand_in(tmp_path):
    test = _helper() + ("def test_it(monkeypatch):\n"
                        "    _install_fake_vllm(monkeypatch)\n"
                        f"    from {LINEAR} import LinearBase\n"
                        "    assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == []


def test_twin_the_import_before_the_helper_is_vllms_class(tmp_path):
    test = _helper() + ("def test_it(monkeypatch):\n"
                        f"    from {LINEAR} import LinearBase\n"
                        "    _install_fake_vllm(monkeypatch)\n"
                        "    assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == [("error", "tests/test_quant.py", 22)]


def test_twin_a_module_level_import_is_bound_before_any_test_runs(tmp_path):
    test = f"from {LINEAR} import LinearBase\n" + _helper() + ("def test_it(monkeypatch):\n"
                                                               "    _install_fake_vllm(monkeypatch)\n"
                                                               "    assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == [("error", "tests/test_quant.py", 22)]


def test_twin_a_stand_in_of_another_module_covers_nothing_else(tmp_path):
    """Python finds a dotted module in sys.modules by its whole name: a fake parent package leaves the submodule
    vLLM's."""
    test = _helper("vllm.model_executor.layers") + ("def test_it(monkeypatch):\n"
                                                    "    _install_fake_vllm(monkeypatch)\n"
                                                    f"    from {LINEAR} import LinearBase\n"
                                                    "    assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == [("error", "tests/test_quant.py", 22)]


FIXTURE = ("@pytest.fixture\n"
           "def fake_vllm(monkeypatch):\n"
           "    _install_fake_vllm(monkeypatch)\n"
           "    yield\n"
           "\n"
           "\n")


def test_a_fixture_the_test_names_installs_it_first(tmp_path):
    test = _helper() + FIXTURE + ("def test_it(fake_vllm):\n"
                                  f"    from {LINEAR} import LinearBase\n"
                                  "    assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == []


def test_an_autouse_fixture_installs_it_for_every_test(tmp_path):
    test = _helper() + FIXTURE.replace("@pytest.fixture", "@pytest.fixture(autouse=True)") + (
        "def test_it():\n"
        f"    from {LINEAR} import LinearBase\n"
        "    assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == []


def test_twin_a_test_that_does_not_name_the_fixture_imports_vllms_module(tmp_path):
    test = _helper() + FIXTURE + ("def test_it(monkeypatch):\n"
                                  f"    from {LINEAR} import LinearBase\n"
                                  "    assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == [("error", "tests/test_quant.py", 27)]


def test_patch_dict_holds_for_the_with_body(tmp_path):
    test = ("import sys\n"
            "from types import ModuleType\n"
            "from unittest import mock\n"
            "\n"
            "\n"
            "def test_it():\n"
            f"    fake = ModuleType(\"{LINEAR}\")\n"
            "    fake.LinearBase = object\n"
            f"    with mock.patch.dict(sys.modules, {{\"{LINEAR}\": fake}}):\n"
            f"        from {LINEAR} import LinearBase\n"
            "        assert LinearBase() is not None\n")
    assert _dc005(_scan(tmp_path, test)) == []


def test_module_level_stand_in_then_import(tmp_path):
    test = ("import sys\n"
            "from types import ModuleType\n"
            "\n"
            f"sys.modules[\"{LINEAR}\"] = ModuleType(\"{LINEAR}\")\n"
            f"sys.modules[\"{LINEAR}\"].LinearBase = object\n"
            f"from {LINEAR} import LinearBase  # noqa: E402\n"
            "\n"
            "LAYER = LinearBase()\n")
    assert _dc005(_scan(tmp_path, test)) == []


def test_twin_an_entry_the_file_removes_is_no_stand_in(tmp_path):
    test = ("import sys\n"
            "\n"
            f"sys.modules.pop(\"{LINEAR}\", None)\n"
            f"from {LINEAR} import LinearBase  # noqa: E402\n"
            "\n"
            "LAYER = LinearBase()\n")
    assert _dc005(_scan(tmp_path, test)) == [("error", "tests/test_quant.py", 6)]


def test_the_package_code_is_checked_as_before(tmp_path):
    """The stand-in is the test's: the package's own import of the module (no install before it) stays vLLM's."""
    client = {"tests/__init__.py": "",
              "tests/test_quant.py": _helper() + ("def test_it(monkeypatch):\n"
                                                  "    _install_fake_vllm(monkeypatch)\n"
                                                  "    from pkg.layers import build\n"
                                                  "    build()\n"),
              "pkg/__init__.py": "",
              "pkg/layers.py": f"def build():\n    from {LINEAR} import LinearBase\n    return LinearBase()\n"}
    assert _dc005(scan_trees(tmp_path, VLLM, client)) == [("error", "pkg/layers.py", 3)]


# ------------------------------------------------------------------------------------------------------------- QB2
# MarinFold's only-correct backend (Open-Athena/MarinFold 19f81b6, exp100 only_correct_backend.py) at vLLM 0.20.1 (its
# README's TPU stack): `patched = False; try: <SamplingParams._validate_structured_outputs>; patched = True / except
# (ImportError, AttributeError): pass; if not patched: from vllm.v1.engine.processor import Processor`. The try
# succeeds on 0.20.1-0.33.0, so the old import never runs; it was a DC001 error. The branch under `if not patched:` is
# now an `except` fallback of that try: a warning, and an error again where the try body certainly fails.
SO_VLLM = {"vllm/__init__.py": "",
           "vllm/v1/__init__.py": "",
           "vllm/v1/engine/__init__.py": "",
           "vllm/new_layout.py": "VALIDATE = 1\n",
           "vllm/sampling_params.py": ("class SamplingParams:\n"
                                       "    def _validate_structured_outputs(self, config, tokenizer):\n"
                                       "        return None\n")}

FLAG = ("def register():\n"
        "    patched = False\n"
        "    try:\n"
        "        from vllm.NEW import VALIDATE\n"
        "        patched = True\n"
        "    except (ImportError, AttributeError):\n"
        "        pass\n"
        "REST"
        "    if not patched:\n"
        "        from vllm.v1.engine.processor import Processor\n"
        "        return Processor\n"
        "    return VALIDATE\n")


def _dc001(result) -> list[tuple[str, int]]:
    return sorted((f.severity, f.client.line) for f in result.findings if f.rule == "DC001")


def _flag(tmp_path, new: str = "new_layout", rest: str = "", text: str = FLAG):
    client = {"plug/__init__.py": "", "plug/backend.py": text.replace("NEW", new).replace("REST", rest)}
    return scan_trees(tmp_path, SO_VLLM, client)


def test_the_old_spelling_under_the_unset_flag_is_a_fallback(tmp_path):
    result = _flag(tmp_path)
    assert _dc001(result) == [("warning", 9)]
    message = next(f.message for f in result.findings if f.rule == "DC001")
    assert "under `if not patched:` (line 8), which holds only where the try at line 3 failed" in message


def test_the_flag_spelled_as_a_comparison_or_an_else(tmp_path):
    assert _dc001(_flag(tmp_path / "is", text=FLAG.replace("if not patched:", "if patched is False:"))) == \
        [("warning", 9)]
    orelse = FLAG.replace("    if not patched:\n", "    if patched:\n        pass\n    else:\n")
    assert _dc001(_flag(tmp_path / "else", text=orelse)) == [("warning", 11)]


def test_twin_where_the_try_body_certainly_fails_the_fallback_runs(tmp_path):
    """The new spelling's module is missing too: the try fails, `patched` stays False and the old import runs."""
    assert _dc001(_flag(tmp_path, new="newer_layout")) == [("error", 9), ("warning", 4)]


def test_twin_a_flag_stored_again_after_the_try_says_nothing_of_it(tmp_path):
    assert _dc001(_flag(tmp_path, rest="    patched = check()\n")) == [("error", 10)]


def test_twin_the_branch_where_the_flag_is_set_runs_after_the_try_succeeded(tmp_path):
    text = FLAG.replace("if not patched:", "if patched:")
    assert _dc001(_flag(tmp_path, text=text)) == [("error", 9)]


MODULE_LEVEL = ("import sys\n"
                "from types import ModuleType\n"
                "\n"
                f"_FAKE = ModuleType(\"{LINEAR}\")\n"
                "_FAKE.LinearBase = object\n"
                f"sys.modules[\"{LINEAR}\"] = _FAKE\n"
                "\n"
                "\n"
                "def test_it():\n"
                f"    from {LINEAR} import LinearBase\n"
                "    assert LinearBase() is not None\n")


def test_a_module_level_stand_in_covers_the_imports_of_the_files_functions(tmp_path):
    """29b's open item: a test function runs after its module's top level has put the fake in `sys.modules`, so its
    import binds the fake (`LinearBase()` is `object()`), not the release's constructor that needs two arguments."""
    assert _dc005(_scan(tmp_path, MODULE_LEVEL)) == []


def test_twin_a_function_the_top_level_calls_may_run_before_the_stand_in(tmp_path):
    # (here the call comes after the install; driftcheck does not order them: a top-level call keeps vLLM's class)
    test = MODULE_LEVEL + "\n\ntest_it()\n"
    assert _dc005(_scan(tmp_path, test)) == [("error", "tests/test_quant.py", 11)]


def test_twin_a_stand_in_installed_only_inside_another_function_covers_nothing_else(tmp_path):
    install = f"sys.modules[\"{LINEAR}\"] = _FAKE\n"
    test = MODULE_LEVEL.replace(install, "\n\ndef test_install():\n    " + install)
    assert _dc005(_scan(tmp_path, test)) == [("error", "tests/test_quant.py", 14)]


CONFTEST_TOP = ("import sys\n"
                "from types import ModuleType\n"
                "\n"
                f"_FAKE = ModuleType(\"{LINEAR}\")\n"
                "_FAKE.LinearBase = object\n"
                f"sys.modules[\"{LINEAR}\"] = _FAKE\n")
CONFTEST_FIXTURE = _helper() + ("@pytest.fixture(AUTOUSE)\n"
                                "def fake_vllm(monkeypatch):\n"
                                "    _install_fake_vllm(monkeypatch)\n")
TOP_IMPORT = f"from {LINEAR} import LinearBase\n\nLAYER = LinearBase()\n"
IN_TEST = "def test_it(PARAM):\n" f"    from {LINEAR} import LinearBase\n" "    assert LinearBase() is not None\n"


def _conftest_scan(tmp_path, conftest: str, test: str, where: str = "tests/unit/test_quant.py"):
    client = {"tests/__init__.py": "", "tests/conftest.py": conftest, "tests/unit/__init__.py": "", where: test,
              "pkg/__init__.py": "", "pkg/layers.py": f"from {LINEAR} import LinearBase\n\nLAYER = LinearBase()\n"}
    return _dc005(scan_trees(tmp_path, VLLM, client))


def test_a_conftest_fake_vllm_covers_the_tests_below_it(tmp_path):
    """29b's other open item: pytest imports `conftest.py` (and runs its fixtures) before the tests of its folder and
    those below it; what it puts in `sys.modules` is what their imports bind. The package's own module is imported
    without pytest: its call stays an error."""
    package_error = [("error", "pkg/layers.py", 3)]
    assert _conftest_scan(tmp_path / "a", CONFTEST_TOP, TOP_IMPORT) == package_error
    assert _conftest_scan(tmp_path / "b", CONFTEST_TOP, IN_TEST.replace("PARAM", "")) == package_error
    assert _conftest_scan(tmp_path / "c", CONFTEST_FIXTURE.replace("AUTOUSE", ""), IN_TEST.replace("PARAM", "fake_vllm")) \
        == package_error
    assert _conftest_scan(tmp_path / "d", CONFTEST_FIXTURE.replace("AUTOUSE", "autouse=True"), IN_TEST.replace("PARAM", "")) \
        == package_error


def test_twins_a_conftest_fake_vllm_that_does_not_reach_the_test(tmp_path):
    # a test outside the conftest's folder; a fixture the test does not name; a fixture the test file's own hides;
    # a module-level import in a test file when the conftest installs its fake only in a fixture
    outside = _conftest_scan(tmp_path / "a", CONFTEST_TOP, TOP_IMPORT, where="other/test_quant.py")
    assert ("error", "other/test_quant.py", 3) in outside
    unnamed = _conftest_scan(tmp_path / "b", CONFTEST_FIXTURE.replace("AUTOUSE", ""), IN_TEST.replace("PARAM", ""))
    assert ("error", "tests/unit/test_quant.py", 3) in unnamed
    hidden = _conftest_scan(tmp_path / "c", CONFTEST_FIXTURE.replace("AUTOUSE", ""),
                            "import pytest\n\n\n@pytest.fixture\ndef fake_vllm():\n    return None\n\n\n"
                            + IN_TEST.replace("PARAM", "fake_vllm"))
    assert ("error", "tests/unit/test_quant.py", 11) in hidden
    top = _conftest_scan(tmp_path / "d", CONFTEST_FIXTURE.replace("AUTOUSE", "autouse=True"), TOP_IMPORT)
    assert ("error", "tests/unit/test_quant.py", 3) in top
