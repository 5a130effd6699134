"""Root causes of false errors from the eleventh batch of untriaged plugins, names a-l
(docs/triage/2026-12-03-unseen-plugins-11a.md), one group each: the shape that runs (no error), and the same shape
where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


# ----------------------------------------------------------------------------------------- DA
def _param(new: str) -> dict[str, str]:
    # vLLM 0.28.0 model_executor/parameter.py:39-40 (torch.nn.Parameter stood in for by a plain class)
    return {"vllm/__init__.py": "", "vllm/model_executor/__init__.py": "", "vllm/model_executor/parameter.py": f"""
        class _Tensor:
            def __new__(cls, data=None, requires_grad=True):
                return object.__new__(cls)


        class BasevLLMParameter(_Tensor):
            def __new__({new}):
                return super().__new__(cls, data=data, requires_grad=False)

            def __init__(self, data, weight_loader):
                self._weight_loader = weight_loader
    """}


def _client(call: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/parameter.py": f"""
        from vllm.model_executor.parameter import BasevLLMParameter


        class PackedParameter(BasevLLMParameter):
            def __new__(cls, data, **kwargs):
                return {call}
    """}


RUNS = ("super().__new__(cls, data=data, **kwargs)",  # dynquant-core 0.5.3 integration/vllm_plugin/parameter.py:56
        "super().__new__(cls, data, **kwargs)",
        "super(PackedParameter, cls).__new__(cls, data=data)",
        "BasevLLMParameter.__new__(cls, data=data, **kwargs)")


def test_da_super_new_takes_cls_as_its_first_argument(tmp_path):
    # `__new__` is a static method without a decorator: `super().__new__(cls, data=data)` binds cls to vLLM's `cls`
    for n, call in enumerate(RUNS):
        result = scan_trees(tmp_path / str(n), _param("cls, data, **kwargs"), _client(call),
                            only=["DC002", "DC003", "DC004", "DC005"])
        assert _found(result, "DC002", "DC003", "DC004", "DC005") == [], call


def test_da_a_super_new_call_that_really_fails_stays_an_error(tmp_path):
    for n, (new, call, rule) in enumerate([
            ("cls, data, **kwargs", "super().__new__(cls, data, data=data)", "DC004"),  # data twice
            ("cls, data", "super().__new__(cls, data=data, weight_loader=None)", "DC003"),  # no **kwargs to take it
            ("cls, data, **kwargs", "super().__new__(cls)", "DC005"),  # data missing
            ("cls, data, **kwargs", "super().__new__(data=data)", "DC005")]):  # cls missing
        result = scan_trees(tmp_path / str(n), _param(new), _client(call), only=["DC003", "DC004", "DC005"])
        assert ("error", "pkg/parameter.py", 6) in [(s, p, ln) for r, s, p, ln in _found(result, rule)], (call, result.findings)


# ------------------------------------------------------------------------ the DC001 hint (wording, not severity)
def test_a_moved_module_is_hinted_at_its_closest_namesake(tmp_path):
    # ftllm 1.9.0 @ 0.32.0 tool_parsers/granite_tool_parser.py:12, 19: the hints named the first file of the tree
    # with the same last part (`vllm.benchmarks.datasets.utils`, `vllm.distributed.ec_transfer...cpu.protocol`)
    vllm = {"vllm/__init__.py": "", "vllm/benchmarks/__init__.py": "", "vllm/benchmarks/datasets/__init__.py": "",
            "vllm/benchmarks/datasets/utils.py": "", "vllm/benchmarks/datasets/protocol.py": "",
            "vllm/tool_parsers/__init__.py": "", "vllm/tool_parsers/utils.py": "def consume_space(i, s):\n    return i\n",
            "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/openai/__init__.py": "",
            "vllm/entrypoints/openai/chat_completion/__init__.py": "",
            "vllm/entrypoints/openai/chat_completion/protocol.py": "class ChatCompletionRequest:\n    pass\n"}
    client = {"pkg/__init__.py": "", "pkg/parser.py": """
        from vllm.entrypoints.openai.protocol import ChatCompletionRequest
        from vllm.entrypoints.openai.tool_parsers.utils import consume_space
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC001"])
    hints = sorted((f.client.line, f.severity, f.message.split("A module of that name is at ")[1]) for f in result.findings)
    assert hints == [(1, "error", "`vllm.entrypoints.openai.chat_completion.protocol`."),
                     (2, "error", "`vllm.tool_parsers.utils`.")]
