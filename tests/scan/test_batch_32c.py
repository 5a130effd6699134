"""Batch 32c (RL / post-training frameworks that drive vLLM in process, at their stored GitHub commits,
docs/triage/2026-12-05-rl-integrations-32c.md).

VC1: async-grpo-nccl (engineerA314/async-grpo-nccl 6d74c19) hands AsyncLLM its `ExternalProcessExecutor`, a subclass
of vLLM's `vllm.v1.executor.abstract.Executor` with its own `collective_rpc`, which sends each method to the client's
Ray actors (`worker.execute_method.remote(method, ...)`); its `_init_executor` calls
`self.collective_rpc("init_vllm_worker", all_kwargs)`, a method of those actors (gpu_process_worker.py:1813), which
builds vLLM's worker wrapper only then. DC007 looked the name up on vLLM's workers and gave an error at every
release. A client class that defines `collective_rpc` and derives from no vLLM class was skipped already
(A_own_executor); one with a vLLM base was not, since its `collective_rpc` may well be vLLM's. Now a
`self.collective_rpc(...)` reaches the client's own override when the class (or a client base of the file, before
any vLLM base that has one) defines it and the override hands the call on to no other `collective_rpc`: a method
the client defines outside the sending class (and its client bases of that file) is served; any other goes on to
vLLM's worker, as async-grpo-nccl's actors hand it on, and is checked as before. The twins: an override that calls
`super().collective_rpc(...)` or an object's, no override, a vLLM base listed before the client mixin that has one,
a method no client worker defines, and one only the executor itself defines (verl's ZeroMQ executor's
`def sample_tokens(self): return self.collective_rpc("sample_tokens")`) keep the error.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees

VC1_VLLM, VC1_CLIENT = plugin_shape("VC1")
EXECUTOR = "rollout/executor.py"
OVERRIDE = """    def collective_rpc(self, method, *args, **kwargs):
        return [w.execute_method(method, *args, **kwargs) for w in self.workers]
"""


def _dc007(tmp_path, client_files):
    result = scan_trees(tmp_path, VC1_VLLM, client_files, only=["DC007"])
    return ([(f.severity, f.client.line, f.symbol) for f in result.findings],
            [(u.client.line, u.symbol) for u in result.unknown])


def test_vc1_rpc_through_the_clients_own_override_reaches_its_own_workers(tmp_path):
    assert _dc007(tmp_path, VC1_CLIENT) == ([], [])


def test_vc1_twin_an_override_that_calls_vllms_keeps_the_error(tmp_path):
    client = edited(VC1_CLIENT, EXECUTOR, (OVERRIDE, """    def collective_rpc(self, method, *args, **kwargs):
        return super().collective_rpc(method, *args, **kwargs)
"""))
    assert _dc007(tmp_path, client) == ([("error", 21, "init_vllm_worker")], [])


def test_vc1_twin_an_override_that_hands_on_to_an_object_it_holds_keeps_the_error(tmp_path):
    client = edited(VC1_CLIENT, EXECUTOR, (OVERRIDE, """    def collective_rpc(self, method, *args, **kwargs):
        return self.inner.collective_rpc(method, *args, **kwargs)
"""))
    assert _dc007(tmp_path, client) == ([("error", 21, "init_vllm_worker")], [])


def test_vc1_twin_without_an_override_vllms_collective_rpc_is_checked(tmp_path):
    client = edited(VC1_CLIENT, EXECUTOR, (OVERRIDE, ""))
    assert _dc007(tmp_path, client) == ([("error", 21, "init_vllm_worker")], [])


def test_vc1_twin_a_vllm_base_before_the_clients_mixin_wins(tmp_path):
    client = edited(VC1_CLIENT, EXECUTOR, (
        "class ExternalProcessExecutor(Executor):",
        "class SendsToOwnWorkers:\n" + OVERRIDE + "\n\nclass ExternalProcessExecutor(Executor, SendsToOwnWorkers):"), (
        "    def _init_executor(self):\n        self.workers = [RolloutWorker()]\n"
        "        self.collective_rpc(\"init_vllm_worker\", [{\"rank\": 0}])\n\n" + OVERRIDE,
        "    def _init_executor(self):\n        self.workers = [RolloutWorker()]\n"
        "        self.collective_rpc(\"init_vllm_worker\", [{\"rank\": 0}])\n"))
    (findings, unknown) = _dc007(tmp_path, client)
    assert [(sev, symbol) for sev, _, symbol in findings] == [("error", "init_vllm_worker")] and unknown == []


def test_vc1_a_client_mixin_listed_first_is_the_override(tmp_path):
    client = edited(VC1_CLIENT, EXECUTOR, (
        "class ExternalProcessExecutor(Executor):",
        "class SendsToOwnWorkers:\n" + OVERRIDE + "\n\nclass ExternalProcessExecutor(SendsToOwnWorkers, Executor):"), (
        "        self.collective_rpc(\"init_vllm_worker\", [{\"rank\": 0}])\n\n" + OVERRIDE,
        "        self.collective_rpc(\"init_vllm_worker\", [{\"rank\": 0}])\n"))
    assert _dc007(tmp_path, client) == ([], [])


def test_vc1_twin_a_method_no_client_worker_defines_goes_on_to_vllms_worker(tmp_path):
    # the client's workers hand what they do not define to vLLM's worker (async-grpo-nccl's `execute_method`)
    client = edited(VC1_CLIENT, EXECUTOR, ('self.collective_rpc("init_vllm_worker"', 'self.collective_rpc("warm_up"'))
    assert _dc007(tmp_path, client) == ([("error", 21, "warm_up")], [])


def test_vc1_twin_the_executors_own_method_of_that_name_serves_no_rpc(tmp_path):
    # verl's ZeroMQ executor: `def sample_tokens(self): return self.collective_rpc("sample_tokens")`
    client = edited(VC1_CLIENT, EXECUTOR, (
        'self.collective_rpc("init_vllm_worker"', 'self.collective_rpc("warm_up"'), (
        "    def collective_rpc(self, method, *args, **kwargs):",
        "    def warm_up(self):\n        return self.collective_rpc(\"warm_up\")\n\n"
        "    def collective_rpc(self, method, *args, **kwargs):"))
    assert _dc007(tmp_path, client) == ([("error", 21, "warm_up"), ("error", 24, "warm_up")], [])


def test_vc1_a_method_of_another_client_class_in_the_senders_file_serves(tmp_path):
    client = edited(VC1_CLIENT, EXECUTOR, ('self.collective_rpc("init_vllm_worker"', 'self.collective_rpc("warm_up"'), (
        "    def execute_method(self, method, *args, **kwargs):",
        "    def warm_up(self, all_kwargs):\n        self.kwargs = all_kwargs[0]\n\n"
        "    def execute_method(self, method, *args, **kwargs):"))
    assert _dc007(tmp_path, client) == ([], [])
