"""DC112 refused-release and the refused-package guard (`client_model/refusals.py`): rlinf 0.3.0's rollout package
`__init__` accepts vLLM 0.8.5 to 0.9.0 and raises for any other, so on 0.32.0 none of its modules runs (batch 12b's
E; shape DY). A finding in such a module is a warning naming the raise; a package that accepts the target, or whose
test driftcheck cannot decide, keeps its modules checked."""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {"vllm/__init__.py": "", "vllm/core.py": "def present():\n    return 1\n"}
WORKER = "from vllm.core import gone\n"  # a name the target lacks: an error wherever the module runs


def _package(init: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/workers/__init__.py": init, "pkg/workers/worker.py": WORKER}


RLINF = """
from importlib.metadata import PackageNotFoundError, version
from packaging.version import parse


def get_version(pkg):
    try:
        return parse(version(pkg))
    except PackageNotFoundError:
        return None


package_name = "vllm"
package_version = get_version(package_name)
if package_version is None:
    raise ValueError("vllm is not installed")
elif package_version >= parse("0.8.5") and package_version < parse("0.9.0"):
    pass
else:
    raise ValueError(f"vllm version {package_version} not supported")
"""


def _worker(tmp_path, init: str, version: str) -> tuple[str, str]:
    result = scan_trees(tmp_path, VLLM, _package(init), version=version)
    [finding] = [f for f in result.findings if f.client.path == "pkg/workers/worker.py"]
    return finding.severity, finding.message


def test_a_package_that_raises_for_the_target_makes_its_modules_warnings(tmp_path):
    severity, message = _worker(tmp_path, RLINF, "0.32.0")
    assert severity == "warning"
    assert "refuses this vLLM when imported (pkg/workers/__init__.py:19 raises" in message


def test_a_package_that_accepts_the_target_keeps_its_modules_checked(tmp_path):
    assert _worker(tmp_path, RLINF, "0.8.6")[0] == "error"


def test_a_minimum_version_the_target_meets_refuses_nothing(tmp_path):
    init = 'import vllm\nfrom packaging.version import Version\n\nif Version(vllm.__version__) < Version("0.10"):\n' \
           '    raise ImportError("needs vllm>=0.10")\n'
    assert _worker(tmp_path, init, "0.32.0")[0] == "error"
    assert _worker(tmp_path / "old", init, "0.9.2")[0] == "warning"


def test_unparsed_versions_compare_as_strings_as_python_does(tmp_path):
    # "0.32.0" < "0.9" as strings: Python raises here on 0.32.0, whatever the author meant
    init = 'import vllm\n\nVLLM_VERSION = vllm.__version__\nif VLLM_VERSION < "0.9":\n    raise ImportError("old vllm")\n'
    assert _worker(tmp_path, init, "0.32.0")[0] == "warning"
    assert _worker(tmp_path / "new", init, "0.9.2")[0] == "error"


def test_a_test_driftcheck_cannot_decide_refuses_nothing(tmp_path):
    init = 'import os\nimport vllm\n\nv = vllm.__version__\nif os.environ.get("STRICT") and v != "0.8.5":\n' \
           '    raise ImportError("strict mode needs 0.8.5")\n'
    assert _worker(tmp_path, init, "0.32.0")[0] == "error"


def test_dc112_reports_the_raise_itself_as_an_error_never_guarded(tmp_path):
    # the __init__ imports vLLM itself here: its own version check must not demote the refusal to a warning
    init = 'import vllm\nfrom packaging.version import Version\n\nif Version(vllm.__version__) >= Version("0.9"):\n' \
           '    raise ImportError("this package supports vLLM before 0.9 only")\n'
    result = scan_trees(tmp_path, VLLM, _package(init), version="0.32.0")
    [refusal] = [f for f in result.findings if f.rule == "DC112"]
    assert (refusal.severity, refusal.client.path, refusal.client.line) == ("error", "pkg/workers/__init__.py", 5)
    assert refusal.symbol == "pkg.workers" and "the test at line 4 is true for 0.32.0" in refusal.message
    assert refusal.fix is None


def test_dc112_says_nothing_where_the_package_accepts_the_target(tmp_path):
    result = scan_trees(tmp_path, VLLM, _package(RLINF), version="0.8.6")
    assert [f for f in result.findings if f.rule == "DC112"] == []
    result = scan_trees(tmp_path / "refused", VLLM, _package(RLINF), version="0.32.0")
    assert [(f.rule, f.client.line) for f in result.findings if f.rule == "DC112"] == [("DC112", 19)]  # the else


def test_a_substring_test_of_the_version_string_is_decided_as_python_does(tmp_path):
    # ROLL's dispatch (batch 22b's S2): `"0.8.5" in vllm.__version__` is true on 0.8.5, so the module it loads runs
    init = 'import vllm\n\nif "0.8.4" in vllm.__version__ or "0.8.5" in vllm.__version__:\n    pass\nelse:\n' \
           '    raise NotImplementedError(f"vllm {vllm.__version__} is not supported.")\n'
    assert _worker(tmp_path, init, "0.8.5")[0] == "error"
    assert _worker(tmp_path / "other", init, "0.9.0")[0] == "warning"


def test_membership_in_a_tuple_of_releases_is_decided(tmp_path):
    init = 'import vllm\n\nif vllm.__version__ not in ("0.8.4", "0.8.5"):\n    raise ImportError("unsupported vllm")\n'
    assert _worker(tmp_path, init, "0.8.5")[0] == "error"
    assert _worker(tmp_path / "other", init, "0.32.0")[0] == "warning"


def test_twin_a_substring_that_is_no_release_is_not_decided(tmp_path):
    # `"rocm" in vllm.__version__`: the target's version string as driftcheck knows it lacks the build's local tag
    init = 'import vllm\n\nif "rocm" in vllm.__version__:\n    raise ImportError("no ROCm builds")\n'
    assert _worker(tmp_path, init, "0.32.0")[0] == "error"  # not read as a refusal: the module stays checked
