"""DC001 missing-module: an imported vLLM module that the target does not have."""

from __future__ import annotations

from scan.helpers import scan_client


def test_present_with_where_it_moved(tmp_path):
    # the old pre-v1 path: vllm/worker/ does not exist, vllm/v1/worker/gpu_worker.py does
    result = scan_client(tmp_path, {"c.py": "import os\nfrom vllm.worker.gpu_worker import Worker\n"}, only=["DC001"])
    [f] = result.findings
    assert (f.rule, f.name, f.severity, f.when) == ("DC001", "missing-module", "error", "import")
    assert (f.client.path, f.client.line, f.client.code) == ("c.py", 2, "from vllm.worker.gpu_worker import Worker")
    assert f.symbol == "vllm.worker.gpu_worker"
    assert f.details["moved_to"] == "vllm.v1.worker.gpu_worker" and f.fix == "move-import"
    assert f.vllm.path == "vllm/__init__.py"  # the nearest package that does exist


def test_present_without_a_same_named_module_has_no_fix(tmp_path):
    result = scan_client(tmp_path, {"c.py": "import vllm.v1.spec_decode.nothing_like_it\n"}, only=["DC001"])
    [f] = result.findings
    assert f.fix is None and "moved_to" not in f.details
    assert f.details["nearest_package"] == "vllm.v1"


def test_absent_for_existing_modules_and_packages(tmp_path):
    client = {"c.py": """
        import vllm
        import vllm.v1.request as req
        from vllm.v1.worker import gpu_worker
        from vllm.v1.core.sched.scheduler import Scheduler
        from vllm.config import SchedulerConfig
    """}
    assert scan_client(tmp_path, client, only=["DC001"]).findings == []
