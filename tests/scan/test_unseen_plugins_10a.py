"""Root causes of false errors from the tenth batch of untuned plugins, names a-l (docs/triage/2026-12-03-unseen-plugins-10a.md),
one group each: the shape that runs (no error, or a warning with the reason where the client guards the use), and
the same shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


# ----------------------------------------------------------------------------------------- CC
LLM = {"vllm/__init__.py": """
    class LLM:
        def __init__(self, model: str):
            self.model = model

        def generate(self, prompts, sampling_params=None, *, use_tqdm=True):
            return []
"""}


def _server(load_other: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/server.py": f"""
        import other_backend


        class Server:
            def __init__(self, backend: str):
                self.backend = backend
                self._model = None

            def load(self):
                if self.backend == "vllm":
                    from vllm import LLM
                    self._model = LLM(model="m")
                else:
                    {load_other}

            def generate_other(self, ids):
                return self._model.generate(input_ids=ids, max_new_tokens=8)
    """}


def test_cc_an_attribute_unpacked_from_another_backend_is_not_vllms(tmp_path):
    # alignrl 0.3.0 inference.py:55, 73, 93: `self._model, self._tokenizer = FastLanguageModel.from_pretrained(...)`
    # in the unsloth branch, `self._model = LLM(**kwargs)` in the vLLM one; the unsloth model's generate() is called
    for load in ("self._model, self._tokenizer = other_backend.load()",
                 "(self._model, [self._tokenizer]) = other_backend.load()",
                 "self._tokenizer, *self._model = other_backend.load()"):
        result = scan_trees(tmp_path / str(len(load)), LLM, _server(load), only=["DC003", "DC005"])
        assert _found(result, "DC003", "DC005") == [], load


def test_cc_an_attribute_only_vllm_sets_still_errors(tmp_path):
    # the unpacking sets other attributes: `self._model` holds vLLM's LLM wherever it is set
    result = scan_trees(tmp_path, LLM, _server("self._other, self._tokenizer = other_backend.load()"),
                        only=["DC003", "DC005"])
    assert _found(result, "DC003", "DC005") == [("DC003", "error", "pkg/server.py", 17)] * 2 + \
        [("DC005", "error", "pkg/server.py", 17)]


# ----------------------------------------------------------------------------------------- CD
OPS = {"vllm/__init__.py": "", "vllm/_custom_ops.py": """
    def awq_marlin_repack(qweight):
        return qweight

    def marlin_gemm(x, qweight):
        return x
"""}


def _kernel(probe: str, catches: str = "(ImportError, AttributeError, AssertionError)") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/marlin.py": f"""
        AVAILABLE = False
        try:
            from vllm import _custom_ops as ops
            {probe}
            AVAILABLE = True
        except {catches}:
            pass


        class Marlin:
            def is_available(self):
                return AVAILABLE

            def gemm(self, x, w):
                return ops.gptq_marlin_gemm(x, w)
    """}


def test_cd_a_use_behind_an_import_time_assert_hasattr_is_guarded(tmp_path):
    # llm-infer 0.8.0 awq_marlin.py:30-46: `assert hasattr(ops, "gptq_marlin_gemm")` in a try that catches
    # AssertionError sets the flag `is_available()` returns; the registry uses the backend only when it says yes
    for n, (probe, catches) in enumerate([
            ('assert hasattr(ops, "gptq_marlin_gemm"), "gptq_marlin_gemm not found"', "(ImportError, AssertionError)"),
            ('assert hasattr(ops, "awq_marlin_repack") and hasattr(ops, "gptq_marlin_gemm")', "Exception"),
            ('assert hasattr(ops, "gptq_marlin_gemm")', "")]):
        result = scan_trees(tmp_path / str(n), OPS, _kernel(probe, catches), only=["DC002"])
        assert _found(result, "DC002") == [("DC002", "warning", "pkg/marlin.py", 15)], probe
        [finding] = result.findings
        assert "import-time probe `assert hasattr(ops, \"gptq_marlin_gemm\")` (line 4)" in finding.message


def test_cd_an_assertion_nothing_catches_or_of_another_name_is_no_guard(tmp_path):
    for n, (probe, catches) in enumerate([
            ('assert hasattr(ops, "awq_marlin_repack")', "(ImportError, AssertionError)"),  # another name
            ('assert hasattr(ops, "gptq_marlin_gemm")', "ImportError"),  # the assertion escapes the import
            ('if not hasattr(ops, "marlin_gemm"): raise ImportError("old vLLM")', "ImportError")]):
        result = scan_trees(tmp_path / str(n), OPS, _kernel(probe, catches), only=["DC002"])
        assert _found(result, "DC002") == [("DC002", "error", "pkg/marlin.py", 15)], probe
