"""A constructor call through a class name that an `if` of vLLM's rebinds (vLLM 0.8-0.10's `AsyncLLMEngine = AsyncLLM`
under `if envs.VLLM_USE_V1`, batch 14's FB leftover): which class the call builds is decided at run time, so a call
only one of the two constructors rejects is a warning, and a call both reject stays an error; with the rebinding
unconditional the name holds one class and the call is checked against it alone."""

from __future__ import annotations

from scan.helpers import scan_trees


def _engine(conditional: bool) -> dict[str, str]:
    rebind = ("if envs.VLLM_USE_V1:\n    from vllm.v1.engine.async_llm import AsyncLLM\n\n    AsyncLLMEngine = AsyncLLM\n"
              if conditional else "from vllm.v1.engine.async_llm import AsyncLLM\n\nAsyncLLMEngine = AsyncLLM\n")
    return {
        "vllm/__init__.py": "__version__ = '0.10.0'\n",
        "vllm/envs.py": "import os\n\nVLLM_USE_V1 = os.environ.get('VLLM_USE_V1', '1') == '1'\n",
        "vllm/v1/__init__.py": "", "vllm/v1/engine/__init__.py": "", "vllm/engine/__init__.py": "",
        "vllm/v1/engine/async_llm.py": "class AsyncLLM:\n    def __init__(self, config):\n        self.config = config\n",
        "vllm/engine/async_llm_engine.py": "import vllm.envs as envs\n\n\nclass AsyncLLMEngine:\n"
                                           "    def __init__(self, config, log_stats):\n        self.engine = config\n\n\n"
                                           + rebind,
    }


CLIENT = {"pkg/__init__.py": "", "pkg/build.py": """from vllm.engine.async_llm_engine import AsyncLLMEngine


def v0_engine(config):
    return AsyncLLMEngine(config, log_stats=True)  # V0's constructor takes it, V1's does not


def broken(config):
    return AsyncLLMEngine(config, no_such_flag=True)  # neither takes it
"""}


def _dc003(result) -> list[tuple[str, int]]:
    return sorted((f.severity, f.client.line) for f in result.findings if f.rule == "DC003")


def test_a_call_the_other_class_accepts_is_a_warning_and_one_both_reject_an_error(tmp_path):
    result = scan_trees(tmp_path, _engine(True), CLIENT, only=["DC003"], version="0.10.0")
    assert _dc003(result) == [("error", 9), ("warning", 5)]
    warning = next(f for f in result.findings if f.rule == "DC003" and f.severity == "warning")
    assert "vllm.engine.async_llm_engine.AsyncLLMEngine" in warning.message and not warning.fix


def test_an_unconditional_rebinding_checks_the_one_class(tmp_path):
    result = scan_trees(tmp_path, _engine(False), CLIENT, only=["DC003"], version="0.10.0")
    assert _dc003(result) == [("error", 5), ("error", 9)]
