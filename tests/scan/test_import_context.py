"""Where a client import sits decides when it bites and how severe it is.

Module level -> `when == "import"`; inside a function -> `"call"`; inside try/except ImportError
-> warning (the client has a fallback); under `if TYPE_CHECKING:` -> never runs, no finding.
"""

from __future__ import annotations

from scan.helpers import line_of, scan_client, vline

CLIENT = """
    from typing import TYPE_CHECKING

    from vllm.v1.gone_module import A
    from vllm.v1.request import GoneName

    try:
        from vllm.v1.gone_guarded import B
    except ImportError:
        B = None

    try:
        from vllm.v1.request import GoneGuarded
    except (ImportError, AttributeError):
        GoneGuarded = None

    if TYPE_CHECKING:
        from vllm.v1.gone_typed import C
        from vllm.v1.request import GoneTyped


    def lazy():
        from vllm.v1.gone_in_function import D
        from vllm.v1.request import GoneInFunction
        import vllm.v1.gone_plain_import

        return D, GoneInFunction
"""


def _scan(tmp_path):
    result = scan_client(tmp_path, {"client.py": CLIENT}, only=["DC001", "DC002"])
    text = (tmp_path / "client/client.py").read_text()
    got = {f.symbol: (f.rule, f.client.line, f.when, f.severity) for f in result.findings}
    return result, text, got


def test_module_level_imports_bite_at_import_time(tmp_path):
    _result, text, got = _scan(tmp_path)
    assert got["vllm.v1.gone_module"] == ("DC001", line_of(text, "gone_module"), "import", "error")
    assert got["vllm.v1.request.GoneName"] == ("DC002", line_of(text, "import GoneName"), "import", "error")


def test_imports_inside_functions_bite_when_called(tmp_path):
    _result, text, got = _scan(tmp_path)
    assert got["vllm.v1.gone_in_function"] == ("DC001", line_of(text, "gone_in_function"), "call", "error")
    assert got["vllm.v1.request.GoneInFunction"] == ("DC002", line_of(text, "import GoneInFunction"), "call", "error")
    assert got["vllm.v1.gone_plain_import"][:3] == ("DC001", line_of(text, "import vllm.v1.gone_plain_import"), "call")


def test_guarded_imports_are_warnings(tmp_path):
    _result, text, got = _scan(tmp_path)
    assert got["vllm.v1.gone_guarded"] == ("DC001", line_of(text, "gone_guarded"), "import", "warning")
    assert got["vllm.v1.request.GoneGuarded"] == ("DC002", line_of(text, "import GoneGuarded"), "import", "warning")


def test_type_checking_imports_are_not_reported(tmp_path):
    result, _text, got = _scan(tmp_path)
    assert "vllm.v1.gone_typed" not in got and "vllm.v1.request.GoneTyped" not in got
    # and nothing else slipped in: exactly the seven gone names above
    assert len(result.findings) == 7


def test_dc001_and_dc002_point_at_the_vllm_module_they_looked_in(tmp_path):
    result, _text, _got = _scan(tmp_path)
    by_symbol = {f.symbol: f for f in result.findings}
    # DC001: the nearest existing package; DC002: the module that lacks the name
    assert by_symbol["vllm.v1.gone_module"].vllm.path == "vllm/v1/__init__.py"
    assert by_symbol["vllm.v1.request.GoneName"].vllm.path == "vllm/v1/request.py"


def test_runtime_import_of_a_type_checking_only_name_is_an_error(tmp_path):
    # vllm/v1/core/sched/scheduler.py imports Request only under TYPE_CHECKING: ImportError at runtime
    client = {"c.py": "from vllm.v1.core.sched.scheduler import Request\n"
                      "from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n"
                      "    from vllm.v1.core.sched.scheduler import Request as R2\n"}
    result = scan_client(tmp_path, client, only=["DC002"])
    [finding] = result.findings
    assert (finding.client.line, finding.severity, finding.when) == (1, "error", "import")
    rel = "vllm/v1/core/sched/scheduler.py"
    assert (finding.vllm.path, finding.vllm.line) == (rel, vline(rel, "from vllm.v1.request import Request"))
    assert finding.details["moved_to"] == "vllm.v1.request"


def test_type_checking_name_also_served_by_a_lazy_getattr_is_fine(tmp_path):
    # vLLM's own __init__ binds LLM under TYPE_CHECKING *and* serves it through MODULE_ATTRS at runtime
    result = scan_client(tmp_path, {"c.py": "from vllm import LLM, SamplingParams\n"}, only=["DC002"])
    assert result.findings == [] and result.unknown == []
