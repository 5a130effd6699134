"""DC103 two-phase-execution: execute_model() without sample_tokens() (probes/two_phase_execution.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

from conftest import real_scan, source_line, vllm_sources
from behaviour import _by_rule, _client_line, pinned, scan_files, seed
from scan.helpers import scan_trees


def test_dc103_off_when_sample_tokens_follows(tmp_path):
    src = """
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def step(executor: MultiprocExecutor, out):
            if executor.execute_model(out) is None:
                executor.sample_tokens(None)
    """
    assert scan_files(tmp_path, {"c.py": src}, only=["DC103"]).findings == []


def test_dc103_on_for_an_untyped_executor_too(tmp_path):
    src = """
        import vllm


        def step(executor, out):
            executor.execute_model(out)
            executor.execute_model(out)
    """
    found = scan_files(tmp_path, {"c.py": src}, only=["DC103"]).findings
    assert [f.client.line for f in found] == [5, 6]


def test_dc103_two_phase_present_on_016(seed):
    [f] = _by_rule(seed, "DC103")
    assert f.client.line == _client_line("self.executor.execute_model(scheduler_output)")
    assert f.vllm.path == "vllm/v1/worker/gpu_model_runner.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "State error: sample_tokens() must be called")


def test_dc103_absent_on_011_and_when_client_calls_sample_tokens(pinned):
    assert _by_rule(pinned, "DC103") == []
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC103") == []


# ---------------------------------------------------------------------------- the anchor: the state error text
EXECUTOR = """
    class Executor:
        def execute_model(self, scheduler_output):
            return None

        def sample_tokens(self, grammar_output):
            return None
"""
RUNNER_WITH_ERROR = """
    class GPUModelRunner:
        def execute_model(self, scheduler_output):
            if self.execute_model_state is not None:
                raise RuntimeError("State error: sample_tokens() must be called after execute_model() returns None.")
"""
DRIVER = {"c.py": """
    from vllm.v1.executor.abstract import Executor


    def step(executor: Executor, scheduler_output):
        return executor.execute_model(scheduler_output)
"""}


def test_dc103_found_when_the_state_error_is_there(tmp_path):
    result = scan_trees(tmp_path, {"vllm/v1/executor/abstract.py": EXECUTOR,
                                   "vllm/v1/worker/gpu_model_runner.py": RUNNER_WITH_ERROR}, DRIVER, only=["DC103"])
    [f] = result.findings
    assert f.rule == "DC103" and f.vllm.path == "vllm/v1/worker/gpu_model_runner.py" and result.unknown == []


def test_dc103_unknown_when_sample_tokens_exists_but_the_state_error_moved(tmp_path):
    """The two-phase protocol is there (sample_tokens) but its error text is not: that is not a pass."""
    result = scan_trees(tmp_path, {"vllm/v1/executor/abstract.py": EXECUTOR}, DRIVER, only=["DC103"])
    assert result.findings == []
    [u] = result.unknown
    assert u.rule == "DC103" and "sample_tokens" in u.message and "vllm/v1/executor/abstract.py" in u.message


def test_dc103_absent_when_the_target_has_no_two_phase_protocol(tmp_path):
    single = EXECUTOR.replace("def sample_tokens", "def other")
    result = scan_trees(tmp_path, {"vllm/v1/executor/abstract.py": single}, DRIVER, only=["DC103"])
    assert result.findings == [] and result.unknown == []


def test_dc103_off_for_the_clients_own_worker_built_in_another_file(tmp_path):
    """tpu-inference 0.32.0 tests: `worker = TPUWorker(...); worker.execute_model(x)`, where the client's TPUWorker
    (another file) defines execute_model itself; an untyped executor in the same test is still reported."""
    files = {"pkg/worker.py": """
        from vllm.v1.worker.worker_base import WorkerBase


        class TPUWorker(WorkerBase):
            def execute_model(self, scheduler_output):
                return self.runner(scheduler_output)
    """, "pkg/test_worker.py": """
        from pkg.worker import TPUWorker
        import vllm


        def test_execute(out, executor):
            worker = TPUWorker()
            worker.execute_model(out)
            executor.execute_model(out)
    """}
    found = scan_files(tmp_path, files, only=["DC103"]).findings
    assert [(f.client.path, f.client.line) for f in found] == [("pkg/test_worker.py", 8)]


def test_dc103_untyped_receiver_is_a_warning_where_another_runner_keeps_no_state(tmp_path):
    """vLLM 0.33.0 benchmarks/forward: `runner: Any = ...model_runner; runner.execute_model(...)` with the V2 runner
    selected by an environment variable: its execute_model keeps no state, so only the V1 runner would fail."""
    vllm = {
        "vllm/v1/executor/multiproc_executor.py": """
            class MultiprocExecutor:
                def execute_model(self, out):
                    pass

                def sample_tokens(self, grammar):
                    pass
        """,
        "vllm/v1/worker/gpu_model_runner.py": """
            class GPUModelRunner:
                def execute_model(self, out):
                    if self.execute_model_state is not None:
                        raise RuntimeError("State error: sample_tokens() must be called after execute_model() returns None.")

                def sample_tokens(self, grammar):
                    pass
        """,
        "vllm/v1/worker/gpu/model_runner.py": """
            class GPUModelRunner:
                def execute_model(self, out):
                    self.execute_model_state = out
        """,
    }
    client = {"bench.py": """
        from typing import Any
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def run(runner: Any, executor: MultiprocExecutor, out):
            runner.execute_model(out)

        def drive(executor: MultiprocExecutor, out):
            executor.execute_model(out)
    """}
    found = scan_trees(tmp_path, vllm, client, only=["DC103"]).findings
    assert [(f.client.line, f.severity) for f in found] == [(6, "warning"), (9, "error")]
