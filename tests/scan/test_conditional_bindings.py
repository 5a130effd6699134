"""Names an `if` rebinds at import, and members defined under `with` in a class body.

From the self-scans of vLLM 0.8.5 and 0.10.2: `vllm/engine/llm_engine.py` defines the V0 `class LLMEngine`, then
`if envs.is_set("VLLM_USE_V1") and envs.VLLM_USE_V1: LLMEngine = V1LLMEngine`. Which class the name holds is decided
when the module is imported, so a member only one of the two has is unknown, never an error (19 false errors in
`async_llm_engine.py`, which subclasses it). `RayDistributedExecutor` sets `non_carry_over_env_vars` inside
`if os.path.exists(...): with open(...) as f:` in its class body (2 false errors).
"""

from __future__ import annotations

import textwrap

from driftcheck.storage.cache import SummaryCache
from driftcheck.vllm_model.pysummary import summarise_source

from scan.helpers import scan_trees

ENGINE = {
    "vllm/envs.py": "VLLM_USE_V1 = False\n",
    "vllm/v1/engine/llm_engine.py": """
        class LLMEngine:
            def __init__(self):
                self.processor = None

            def add_request(self, request_id):
                return request_id
    """,
    "vllm/engine/llm_engine.py": """
        from vllm import envs


        class LLMEngine:
            def __init__(self):
                self.scheduler = []

            def add_request(self, request_id):
                return request_id

            def _process_model_outputs(self, ctx):
                return ctx


        if envs.VLLM_USE_V1:
            from vllm.v1.engine.llm_engine import LLMEngine as V1LLMEngine
            LLMEngine = V1LLMEngine
    """,
}

CLIENT = {"pkg/__init__.py": "", "pkg/engine.py": """
    from vllm.engine.llm_engine import LLMEngine


    class AsyncEngine(LLMEngine):
        def step(self, ctx):
            self.scheduler.append(ctx)           # V0's only: unknown
            self._process_model_outputs(ctx)     # V0's only: unknown
            self.add_request("r")                # both have it
            return self.no_such_member           # neither has it: error
"""}


def test_a_member_only_one_of_the_rebound_classes_has_is_unknown(tmp_path):
    result = scan_trees(tmp_path, ENGINE, CLIENT, only=["DC006"])
    errors = [(f.client.line, f.symbol) for f in result.findings if f.severity == "error"]
    assert errors == [(9, "vllm.v1.engine.llm_engine.LLMEngine.no_such_member")], errors
    unknown = sorted(u.message for u in result.unknown if u.rule == "DC006")
    assert len(unknown) == 2 and all("vllm.engine.llm_engine.LLMEngine" in m and "run time" in m for m in unknown), unknown


def test_without_the_conditional_rebinding_the_missing_members_are_errors(tmp_path):
    unconditional = dict(ENGINE)
    unconditional["vllm/engine/llm_engine.py"] = ENGINE["vllm/engine/llm_engine.py"].replace(
        "        if envs.VLLM_USE_V1:\n            from", "        from").replace("            LLMEngine = V1", "        LLMEngine = V1")
    assert "if envs" not in unconditional["vllm/engine/llm_engine.py"]
    result = scan_trees(tmp_path, unconditional, CLIENT, only=["DC006"])
    assert sorted(f.client.line for f in result.findings if f.severity == "error") == [6, 7, 9]


def test_a_class_attribute_set_under_with_in_the_class_body_is_a_member(tmp_path):
    executor = {"vllm/executor/ray.py": """
        import json
        import os


        class RayExecutor:
            path = os.path.join("/etc", "carry.json")
            if os.path.exists(path):
                with open(path) as f:
                    non_carry_over = set(json.load(f))
    """}
    client = {"pkg/__init__.py": "", "pkg/ex.py": """
        from vllm.executor.ray import RayExecutor


        class MyExecutor(RayExecutor):
            def env(self):
                return [v for v in ("A", "B") if v not in self.non_carry_over] + [self.missing_one]
    """}
    result = scan_trees(tmp_path, executor, client, only=["DC006"])
    assert [f.symbol.rsplit(".", 1)[-1] for f in result.findings if f.severity == "error"] == ["missing_one"]
    # the same class in the client (a vLLM tree scanned as a client, or a plugin's own executor): its body's
    # `if`/`with` members are its own
    client["pkg/ex.py"] = """
        import json
        import os

        from vllm.executor.base import ExecutorBase


        class RayExecutor(ExecutorBase):
            path = os.path.join("/etc", "carry.json")
            if os.path.exists(path):
                with open(path) as f:
                    non_carry_over = set(json.load(f))

            def env(self):
                return [v for v in ("A", "B") if v not in self.non_carry_over] + [self.missing_one]
    """
    base = {"vllm/executor/base.py": "class ExecutorBase:\n    def __init__(self):\n        self.config = None\n"}
    result = scan_trees(tmp_path / "client-side", base, client, only=["DC006"])
    assert [f.symbol.rsplit(".", 1)[-1] for f in result.findings if f.severity == "error"] == ["missing_one"]


def test_a_rebinding_in_an_except_handler_is_summarised_and_cached_without_a_loop(tmp_path):
    """`try: from a import X / except ImportError: if cond: X = Y / else: X = None`: the try body's binding has the
    handler's as its fallback, and the handler's has the try body's as what it holds otherwise; the cached summary
    must not nest them into each other."""
    source = textwrap.dedent("""
        try:
            from vllm.fast import Kernel
        except ImportError:
            if FLAG:
                Kernel = object
            else:
                Kernel = None
        for i in range(3):
            pass
    """)
    for n in range(200):  # a name rebound by one `if` after another
        source += f"if FLAG{n}:\n    Kernel = {n}\n"
    info = summarise_source("vllm.ops", "vllm/ops.py", False, source)
    binding = info.bindings["Kernel"]
    assert binding.otherwise is not None and binding.otherwise.otherwise is None
    cache = SummaryCache(tmp_path)
    cache.put(source.encode(), "vllm.ops", False, info)
    again = cache.get(source.encode(), "vllm.ops", False)
    assert again is not None and again.bindings["Kernel"].line == binding.line
