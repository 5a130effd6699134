"""Batch 23a (vLLM KV-cache connectors and offloading specs taken from GitHub, each at the vLLM it declares;
docs/triage/2026-12-05-github-clients-23a.md).

KA1: a stand-in a test file puts in `sys.modules` for a vLLM module (certus-connector's tests/test_manager.py: "Runs
WITHOUT vllm/torch - mocks the vllm imports", `sys.modules["vllm.v1.kv_offload.abstract"] = MagicMock()`) exists only
while the tests run. It may provide the module to the test's own import (a warning: the shape runs), but not to the
package's files, which vLLM loads without the tests: certus-connector's `from vllm.v1.kv_offload.abstract import ...`
in certus_connector/spec.py, manager.py, mediums.py, native_manager.py, handler.py on vLLM 0.22.0, which has no such
module, is a ModuleNotFoundError when vLLM loads the spec, and was 7 warnings ("it may register the module itself"),
the scan passing (0 errors) for a plugin none of whose files import. The twins: the package's import of a module only a
test file names is an error; one the package's own code names (a `sys.modules` entry it sets itself) stays a warning.

Also: DC111's message for a key a pydantic config refuses read "passing it (--kv-transfer-config) is pydantic refuses
it (...): ValidationError when vLLM starts" (cpumemconnector's run_p.sh at vLLM 0.33.0); it reads "is a
ValidationError when vLLM starts: pydantic refuses it (...)" now (tests/probes/test_serve_config_drift.py).
"""

from __future__ import annotations

from driftcheck.client_model.client import is_test_path
from scan.helpers import scan_trees

VLLM = {"vllm/__init__.py": "", "vllm/config.py": "class VllmConfig:\n    pass\n"}

STAND_IN = ("import sys\n"
            "import types\n"
            "\n"
            "for _name in ('vllm.v1', 'vllm.v1.kv_offload', 'vllm.v1.kv_offload.abstract'):\n"
            "    sys.modules.setdefault(_name, types.ModuleType(_name))\n")

USES = "from vllm.v1.kv_offload.abstract import OffloadingManager\n\n\nclass Manager(OffloadingManager):\n    pass\n"


def _found(result, rule="DC001") -> list[tuple[str, str, int]]:
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings if f.rule == rule)


def test_a_test_files_stand_in_covers_the_tests_own_import(tmp_path):
    """The test function runs after its module's top level put the stand-in in place: its import finds it (a warning
    until 2026-12-05's sixth session, when module_stand_ins.py began to carry top-level stand-ins into functions)."""
    client = {"tests/__init__.py": "",
              "tests/test_manager.py": STAND_IN + "\n\ndef test_it():\n    from vllm.v1.kv_offload.abstract import OffloadingManager\n"}
    assert _found(scan_trees(tmp_path, VLLM, client)) == []


def test_twin_the_packages_import_of_a_module_only_a_test_file_provides_is_an_error(tmp_path):
    for n, tests in enumerate(({"tests/__init__.py": "", "tests/test_manager.py": STAND_IN},
                               {"conftest.py": STAND_IN},
                               {"pkg/manager_test.py": STAND_IN})):
        client = {"pkg/__init__.py": "", "pkg/manager.py": USES, **tests}
        found = _found(scan_trees(tmp_path / str(n), VLLM, client))
        assert found == [("error", "pkg/manager.py", 1)], tests


def test_twin_a_module_the_package_itself_registers_stays_a_warning(tmp_path):
    """The package's own code names the module (it may put it in sys.modules when vLLM loads it); a test file naming it
    too changes nothing: the place a non-test file spells it is the one that counts."""
    client = {"pkg/__init__.py": STAND_IN, "pkg/manager.py": USES,
              "tests/__init__.py": "", "tests/test_manager.py": STAND_IN}
    result = scan_trees(tmp_path, VLLM, client)
    assert _found(result) == [("warning", "pkg/manager.py", 1)]
    assert "pkg/__init__.py:4" in [f for f in result.findings if f.rule == "DC001"][0].message


def test_which_paths_are_tests():
    for rel in ("tests/test_manager.py", "tests/helpers.py", "pkg/test/utils.py", "conftest.py", "pkg/conftest.py",
                "test_all.py", "pkg/spec_test.py"):
        assert is_test_path(rel), rel
    for rel in ("pkg/manager.py", "pkg/testing.py", "contest.py", "pkg/latest/x.py", "pkg/tests.py", "main.py"):
        assert not is_test_path(rel), rel



# ----------------------------------------------------------------------------------------- DC001's hint
NIXL_VLLM = {"vllm/__init__.py": "",
             "vllm/kv/__init__.py": "",
             "vllm/kv/nixl/__init__.py": "from vllm.kv.nixl.connector import NixlConnector\n",
             "vllm/kv/nixl/connector.py": "class NixlConnector:\n    pass\n",
             "vllm/kv/nixl/stats.py": "class NixlPromMetrics:\n    pass\n"}


def test_a_module_become_a_package_of_another_name_names_where_its_names_are(tmp_path):
    """ai-dynamo's nixl_with_pending_metrics.py (vLLM 0.19.0) at 0.20.0, where `...v1.nixl_connector` became the
    package `...v1.nixl`: the message said only that the module does not exist."""
    client = {"pkg/__init__.py": "",
              "pkg/conn.py": "from vllm.kv.nixl_connector import (\n    NixlConnector,\n    NixlPromMetrics,\n)\n"}
    found = [f for f in scan_trees(tmp_path, NIXL_VLLM, client).findings if f.rule == "DC001"]
    assert [(f.severity, f.client.line) for f in found] == [("error", 1)]
    assert found[0].message.endswith("Where what the client takes from it is defined now: `NixlConnector` in "
                                      "`vllm.kv.nixl.connector`, `NixlPromMetrics` in `vllm.kv.nixl.stats`.")


def test_no_hint_when_a_name_has_no_home_or_a_module_of_that_name_has_them(tmp_path):
    client = {"pkg/__init__.py": "", "pkg/conn.py": "from vllm.kv.nixl_connector import NixlConnector, Gone\n"}
    found = [f for f in scan_trees(tmp_path / "a", NIXL_VLLM, client).findings if f.rule == "DC001"]
    assert found[0].message.endswith("ModuleNotFoundError at import time.")
    client = {"pkg/__init__.py": "", "pkg/conn.py": "from vllm.connector import NixlConnector\n"}
    found = [f for f in scan_trees(tmp_path / "b", NIXL_VLLM, client).findings if f.rule == "DC001"]
    assert "Where what the client takes" not in found[0].message
