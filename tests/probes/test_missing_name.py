"""DC002 missing-name: the module exists but no longer has the imported name."""

from __future__ import annotations

import shutil

from scan.helpers import MINIVLLM, scan_client


def test_present_with_similar_names(tmp_path):
    result = scan_client(tmp_path, {"c.py": "from vllm.v1.request import Request, RequestState\n"}, only=["DC002"])
    [f] = result.findings
    assert (f.rule, f.severity, f.when, f.symbol) == ("DC002", "error", "import", "vllm.v1.request.RequestState")
    assert (f.client.line, f.vllm.path) == (1, "vllm/v1/request.py")
    assert "RequestStatus" in f.details["similar"]


def test_present_with_the_module_it_moved_to(tmp_path):
    # KVCacheConfig is defined in vllm/v1/core/kv_cache_utils.py, not in vllm.v1.core.sched.output
    result = scan_client(tmp_path, {"c.py": "from vllm.v1.core.sched.output import KVCacheConfig\n"}, only=["DC002"])
    [f] = result.findings
    assert f.details["moved_to"] == "vllm.v1.core.kv_cache_utils" and f.fix == "move-import"


def test_present_through_a_closed_module_getattr(tmp_path):
    # vllm/utils/__init__.py has a __getattr__ that raises for anything but its deprecated names
    result = scan_client(tmp_path, {"c.py": "from vllm.utils import get_closed_port\n"}, only=["DC002"])
    assert [f.symbol for f in result.findings] == ["vllm.utils.get_closed_port"]


def test_module_attribute_read_is_checked_too(tmp_path):
    client = {"c.py": "import vllm.v1.request as r\n\n\ndef f():\n    return r.RequestState.WAITING\n"}
    [f] = scan_client(tmp_path, client, only=["DC002"]).findings
    assert (f.symbol, f.client.line, f.when) == ("vllm.v1.request.RequestState", 5, "call")


def test_absent_for_defined_reexported_and_lazy_names(tmp_path):
    client = {"c.py": """
        from vllm import LLM, SamplingParams
        from vllm.config import CacheConfig, SchedulerConfig
        from vllm.utils import random_uuid
        from vllm.v1.request import Request, RequestStatus
        from vllm.v1 import request
    """}
    result = scan_client(tmp_path, client, only=["DC002"])
    assert result.findings == [] and result.unknown == []


def test_open_module_getattr_is_unknown_not_missing(tmp_path):
    root = tmp_path / "vllm-open"
    shutil.copytree(MINIVLLM, root)
    (root / "vllm/plugins.py").write_text("def __getattr__(name):\n    return _load(name)\n")
    result = scan_client(tmp_path, {"c.py": "from vllm.plugins import anything\n"}, only=["DC002"], vllm_root=root)
    assert result.findings == []
    [u] = result.unknown
    assert u.rule == "DC002" and u.symbol == "vllm.plugins.anything" and "__getattr__" in u.message


def test_a_guarded_import_whose_handler_raises_says_the_client_refuses(tmp_path):
    # a missing name under try/except ImportError whose handler raises, in a function: a precondition of that path the
    # client checks on purpose (28b, 9b): a warning with the same sentence as DC001's
    code = ("def f():\n    try:\n        from vllm.v1.request import NothingLikeIt\n    except ImportError as e:\n"
            "        raise RuntimeError('needs a newer vLLM') from e\n    return NothingLikeIt\n")
    [f] = [f for f in scan_client(tmp_path, {"c.py": code}, only=["DC002"]).findings]
    assert f.severity == "warning" and "handler raises an error of the client's own" in f.message


def test_at_a_modules_top_an_import_whose_handler_raises_again_is_an_error(tmp_path):
    # the module cannot be imported on this vLLM at all (22b's S1, lm-format-enforcer at 0.26.0)
    code = ("try:\n    from vllm.v1.request import NothingLikeIt\nexcept ImportError as e:\n"
            "    raise RuntimeError('needs a newer vLLM') from e\n")
    [f] = [f for f in scan_client(tmp_path, {"c.py": code}, only=["DC002"]).findings]
    assert f.severity == "error" and "catches the ImportError only to raise an error of the client's own" in f.message
