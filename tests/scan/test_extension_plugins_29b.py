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
