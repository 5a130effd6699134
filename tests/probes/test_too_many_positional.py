"""DC004 too-many-positional: more positional arguments than the target accepts, or one slot
given twice (a parameter was inserted before a keyword the client also passes)."""

from __future__ import annotations

from scan.helpers import scan_client, vline


def test_present_too_many(tmp_path):
    client = {"c.py": "import vllm\nfrom vllm.sampling_params import SamplingParams\n\nSamplingParams(1, 2, 3)\n"}
    [f] = scan_client(tmp_path, client, only=["DC004"]).findings
    assert (f.rule, f.client.line, f.severity) == ("DC004", 4, "error")
    assert "takes 2 positional argument(s) but 3 were given" in f.message
    assert (f.vllm.path, f.vllm.line) == ("vllm/sampling_params.py", vline("vllm/sampling_params.py", "def __init__"))


def test_present_duplicate_binding(tmp_path):
    # the 4th positional now lands in `block_size`, which is also passed by keyword
    client = {"c.py": "from vllm.v1.core.sched.scheduler import Scheduler\n\n\ndef f(c, k, m):\n"
                      "    return Scheduler(c, k, m, True, block_size=16)\n"}
    [f] = scan_client(tmp_path, client, only=["DC004"]).findings
    assert "both by position and by keyword" in f.message
    rel = "vllm/v1/core/sched/scheduler.py"
    assert (f.vllm.path, f.vllm.line) == (rel, vline(rel, "block_size: int,"))


def test_absent_within_limits_and_with_star_args(tmp_path):
    client = {"c.py": """
        from vllm.sampling_params import SamplingParams
        from vllm.v1.core.sched.scheduler import Scheduler


        def f(args, c, k, m):
            SamplingParams(1, 2)
            SamplingParams(*args)
            Scheduler(c, k, m, 16, False, False)
            s = Scheduler(c, k, m, 16)
            s.schedule()
    """}
    assert scan_client(tmp_path, client, only=["DC004"]).findings == []


def test_bound_method_does_not_count_self(tmp_path):
    client = {"c.py": """
        from vllm.v1.core.sched.scheduler import Scheduler


        def f(c, k, m):
            s = Scheduler(c, k, m, 16)
            s.finish_requests(["a"], 1)
            s.finish_requests(["a"], 1, 2)
    """}
    [f] = scan_client(tmp_path, client, only=["DC004"]).findings
    assert f.client.line == 7 and "takes 2 positional argument(s) but 3 were given" in f.message
