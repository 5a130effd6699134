"""Root causes of false errors from the eleventh batch of untriaged plugins, names m-z
(docs/triage/2026-12-03-unseen-plugins-11b.md), one group each: the shape that runs (no error), and the same shape
where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


# ----------------------------------------------------------------------------------------- DM
VLLM = {
    "vllm/envs.py": """
        import os

        environment_variables = {"VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", "")}


        def __getattr__(name):
            if name in environment_variables:
                return environment_variables[name]()
            raise AttributeError(name)
    """,
    "vllm/v1/engine/async_llm.py": """
        class AsyncLLM:
            def __init__(self):
                self.engine_core = None

            def collective_rpc(self, method):
                return [method]
    """,
}


def _actor(body: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/service.py": f"""
        from vllm import envs
        from vllm.v1.engine.async_llm import AsyncLLM


        class Actor:
            def __init__(self):
                self.engine = AsyncLLM()

            def rpc(self, method):
{body}
    """}


def _indent(text: str) -> str:
    return "\n".join("                " + line if line else line for line in text.strip("\n").splitlines())


def test_the_branch_for_a_false_value_of_a_getattr_with_a_true_default_is_guarded(tmp_path):
    """torchrl 0.14.1 modules/llm/backends/vllm/vllm_async.py:355-358: `if getattr(envs, "VLLM_USE_V1", True):`
    new call, `else:` the V0 engine's `self.engine.engine...`. Where `VLLM_USE_V1` is missing (0.17.0 on) getattr
    answers True, so the else runs only on a vLLM that has the flag: it is the client's branch for that vLLM."""
    shapes = (
        """
        if getattr(envs, "VLLM_USE_V1", True):
            return self.engine.collective_rpc(method)
        else:
            return self.engine.engine.collective_rpc(method)
        """,
        """
        if not getattr(envs, "VLLM_USE_V1", True):
            return self.engine.engine.collective_rpc(method)
        return self.engine.collective_rpc(method)
        """,
        """
        if getattr(envs, "VLLM_USE_V1", 1):
            return self.engine.collective_rpc(method)
        return self.engine.engine.collective_rpc(method)
        """,
    )
    for n, body in enumerate(shapes):
        found = _found(scan_trees(tmp_path / str(n), VLLM, _actor(_indent(body))), "DC006")
        assert [f[1] for f in found] == ["warning"], (body, found)


def test_a_getattr_with_a_false_default_still_leaves_its_else_an_error(tmp_path):
    """`getattr(envs, "VLLM_USE_V1", None)` answers None where the flag is missing: the else runs there."""
    for n, default in enumerate(("None", "False", "0")):
        body = f"""
        if getattr(envs, "VLLM_USE_V1", {default}):
            return self.engine.collective_rpc(method)
        else:
            return self.engine.engine.collective_rpc(method)
        """
        found = _found(scan_trees(tmp_path / str(n), VLLM, _actor(_indent(body))), "DC006")
        assert found == [("DC006", "error", "pkg/service.py", 13)], (default, found)


def test_the_branch_for_a_true_value_of_a_getattr_with_a_true_default_is_not_guarded(tmp_path):
    """The body of `if getattr(envs, "VLLM_USE_V1", True):` runs where the flag is missing too: what fails there is
    an error (it was taken for the branch of a vLLM that has the flag)."""
    body = """
        if getattr(envs, "VLLM_USE_V1", True):
            return self.engine.engine.collective_rpc(method)
        return self.engine.collective_rpc(method)
        """
    found = _found(scan_trees(tmp_path, VLLM, _actor(_indent(body))), "DC006")
    assert found == [("DC006", "error", "pkg/service.py", 11)]


def test_a_getattr_with_a_true_default_guards_its_own_attribute_in_either_branch(tmp_path):
    """`if getattr(envs, "VLLM_USE_V1", True): ... envs.VLLM_USE_V1 ...`: the probed name stays guarded."""
    body = """
        if getattr(envs, "VLLM_USE_V1", True):
            return envs.VLLM_USE_V1
        return self.engine.collective_rpc(method)
        """
    found = [f for f in scan_trees(tmp_path, VLLM, _actor(_indent(body))).findings if f.severity == "error"]
    assert found == []
