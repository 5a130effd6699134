"""Root causes of false errors from the thirteenth batch of untriaged plugins
(docs/triage/2026-12-03-unseen-plugins-13a.md): the shape that runs (unknown, no error), and the same shape where
the code really fails, which must stay an error.
"""

from __future__ import annotations

from pathlib import Path

from driftcheck.client_model.source_diffs import _sections
from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- EA
# uc-manager 0.8.1 ships ucm/integration/vllm/patch/0.11.0/vllm-adapt-rerope.patch (a `git format-patch` of vLLM
# 0.11.0's source, applied as an install step) and reads the env flags it adds (ucm/sparse/rerope/attn_forward_utils.py)
_ENVS = {
    "vllm/__init__.py": "",
    "vllm/envs.py": """
        import os

        environment_variables = {
            "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),
        }


        def __getattr__(name):
            if name in environment_variables:
                return environment_variables[name]()
            raise AttributeError(name)
    """,
    "vllm/utils.py": "def cdiv(a, b):\n    return -(a // -b)\n",
}


def _diff(context: str, path: str = "vllm/envs.py") -> str:
    return (
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "Subject: [PATCH] rerope\n---\n"
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        "@@ -3,3 +3,5 @@\n"
        " environment_variables = {\n"
        f"{context}\n"
        '+    "VLLM_USE_REROPE": lambda: bool(int(os.getenv("VLLM_USE_REROPE", "0"))),\n'
        "+REROPE_HELPER = 1\n"
        " }\n"
        "-- \n2.34.1\n"
    )


_APPLIES = '     "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),'
_ROPE = {
    "pkg/__init__.py": "",
    "pkg/rope.py": """
        from vllm import envs


        def window():
            return envs.VLLM_USE_REROPE
    """,
    "pkg/imports.py": """
        def helper():
            from vllm.envs import REROPE_HELPER
            return REROPE_HELPER
    """,
}


def _dc002(result) -> list[tuple[str, str, int]]:
    found = [("error", f.client.path, f.client.line) for f in result.findings if f.rule == "DC002"]
    return sorted(found + [("unknown", u.client.path, u.client.line) for u in result.unknown if u.rule == "DC002"])


def test_ea_a_name_the_clients_shipped_diff_adds_is_unknown(tmp_path):
    result = scan_trees(tmp_path, _ENVS, {**_ROPE, "pkg/patch/0.11.0/rerope.patch": _diff(_APPLIES)}, only=["DC002"])
    assert _dc002(result) == [("unknown", "pkg/imports.py", 2), ("unknown", "pkg/rope.py", 5)]
    message = next(u.message for u in result.unknown if u.client.path == "pkg/rope.py")
    assert "pkg/patch/0.11.0/rerope.patch" in message and "vllm/envs.py" in message


def test_ea_a_diff_that_does_not_apply_to_the_release_adds_nothing(tmp_path):
    # the context changed (a diff for another release): `git apply` refuses it, the names are not there
    other = '     "VLLM_PORT": lambda: os.getenv("VLLM_PORT"),'
    result = scan_trees(tmp_path / "ctx", _ENVS, {**_ROPE, "pkg/x.patch": _diff(other)}, only=["DC002"])
    assert _dc002(result) == [("error", "pkg/imports.py", 2), ("error", "pkg/rope.py", 5)]
    # a diff that also changes a file the release lacks does not apply at all
    two = _diff(_APPLIES) + _diff(_APPLIES, "vllm/attention/layer.py").split("---\n", 1)[1]
    result = scan_trees(tmp_path / "gone", _ENVS, {**_ROPE, "pkg/y.diff": two}, only=["DC002"])
    assert _dc002(result) == [("error", "pkg/imports.py", 2), ("error", "pkg/rope.py", 5)]
    # no diff: errors, as before
    result = scan_trees(tmp_path / "none", _ENVS, _ROPE, only=["DC002"])
    assert _dc002(result) == [("error", "pkg/imports.py", 2), ("error", "pkg/rope.py", 5)]


def test_ea_a_name_the_diff_binds_only_inside_a_function_stays_an_error(tmp_path):
    # an indented assignment the diff adds is a local of some function, not a name of the module
    diff = _diff(_APPLIES).replace("+REROPE_HELPER = 1", "+    REROPE_HELPER = 1")
    result = scan_trees(tmp_path, _ENVS, {**_ROPE, "pkg/patch/z.patch": diff}, only=["DC002"])
    assert _dc002(result) == [("error", "pkg/imports.py", 2), ("unknown", "pkg/rope.py", 5)]


def test_ea_hunks_are_read_by_their_counts():
    # the `-- ` line of git format-patch's footer is not a removed line
    sections = _sections(_diff(_APPLIES))
    assert [p for p, _h in sections] == ["vllm/envs.py"]
    (old, new), = sections[0][1]
    assert old == ["environment_variables = {", _APPLIES.strip(), "}"]
    assert [n.strip()[:17] for n in new] == ['"VLLM_USE_REROPE"', "REROPE_HELPER = 1"]


# ----------------------------------------------------------------------------------------- EB
# mh-llm 0.0.1 (written for vLLM 0.11.0) @ 0.12.0: vLLM's only call of `_bookkeeping_sync` moved into `sample_tokens`
# (gpu_model_runner.py:3187), past `if self.execute_model_state is None: return` (:3081); only `execute_model` (:3061)
# stores that state, and the client replaces `execute_model` without super()
_PKG = {"vllm/__init__.py": "", "vllm/v1/__init__.py": "", "vllm/v1/worker/__init__.py": ""}
_OLD_RUNNER = {**_PKG, "vllm/v1/worker/gpu_model_runner.py": """
    class GPUModelRunner:
        def execute_model(self, scheduler_output):
            return self._bookkeeping_sync(scheduler_output, 1)

        def _bookkeeping_sync(self, scheduler_output, num_tokens):
            return [scheduler_output, num_tokens]
"""}
_NEW_RUNNER = (Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"  # the EB shape's runner
               / "EB_override_call_past_a_none_guard_only_replaced_methods_set" / "vllm_src" / "vllm" / "v1" / "worker"
               / "gpu_model_runner.py").read_text()
_CLIENT_RUNNER = """
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner as Base


    class GPUModelRunner(Base):
        def execute_model(self, scheduler_output):
            {body}
            return self._bookkeeping_sync(scheduler_output, 2)

        def _bookkeeping_sync(self, scheduler_output, num_tokens):
            return [scheduler_output, num_tokens]
"""


def _dc109(tmp_path, new_runner: str, body: str = "pass") -> list[tuple[str, int]]:
    from scan.helpers import vllm_tree

    old = vllm_tree(tmp_path / "old", {**_OLD_RUNNER, "vllm/_version.py": '__version__ = "0.11.0"\n'})
    result = scan_trees(tmp_path / "scan", {**_PKG, "vllm/v1/worker/gpu_model_runner.py": new_runner},
                        {"plug/__init__.py": "", "plug/runner.py": _CLIENT_RUNNER.replace("{body}", body)},
                        only=["DC109"], client_vllm=str(old), version="0.12.0")
    return [(f.severity, f.client.line) for f in result.findings if f.rule == "DC109"]


def test_eb_a_call_past_a_none_guard_only_replaced_methods_fill_is_not_reached(tmp_path):
    assert _dc109(tmp_path, _NEW_RUNNER) == []


def test_eb_the_call_stays_an_error_where_the_state_may_be_set(tmp_path):
    # the client stores the state itself: sample_tokens may reach the call
    assert _dc109(tmp_path / "own", _NEW_RUNNER, "self.execute_model_state = (scheduler_output, 2)") == [("error", 9)]
    # no guard before the call
    unguarded = _NEW_RUNNER.replace("        if self.execute_model_state is None:\n            return None\n", "")
    assert "is None" not in unguarded
    assert _dc109(tmp_path / "bare", unguarded) == [("error", 9)]
    # another vLLM method the client does not replace also stores it
    more = _NEW_RUNNER.replace("    def sample_tokens", "    def prepare(self):\n"
                                "        self.execute_model_state = ('warm', 0)\n\n    def sample_tokens")
    assert _dc109(tmp_path / "more", more) == [("error", 9)]


# ----------------------------------------------------------------------------------------- EC
# uc-manager 0.8.1 ucm_connector.py:3504: `hasattr(pc, "prefill_context_parallel_size") and pc.prefill_...` in an
# assignment: the read runs only where the probe held (guards.py `_probe_fallbacks`)
_PARALLEL = {"vllm/__init__.py": "", "vllm/config.py": "class ParallelConfig:\n    def __init__(self):\n"
             "        self.decode_context_parallel_size = 1\n"}


def _connector(expr: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/connector.py": f"""
        from vllm.config import ParallelConfig


        def uses_cp(pc: ParallelConfig) -> bool:
            ok = ({expr})
            return ok
    """}


def _dc006(result) -> list[tuple[str, int]]:
    return [(f.severity, f.client.line) for f in result.findings if f.rule == "DC006"]


def test_ec_a_read_after_hasattr_in_an_and_chain_is_guarded(tmp_path):
    for n, expr in enumerate(('hasattr(pc, "prefill_context_parallel_size")\n'
                              '                  and pc.prefill_context_parallel_size > 1',
                              'not hasattr(pc, "prefill_context_parallel_size") or pc.prefill_context_parallel_size > 1')):
        found = _dc006(scan_trees(tmp_path / str(n), _PARALLEL, _connector(expr)))
        assert found and all(severity == "warning" for severity, _line in found), (expr, found)


def test_ec_a_probe_after_the_read_or_a_plain_and_guards_nothing(tmp_path):
    for n, expr in enumerate(('pc.prefill_context_parallel_size > 1 and hasattr(pc, "prefill_context_parallel_size")',
                              'pc is not None and pc.prefill_context_parallel_size > 1')):
        found = _dc006(scan_trees(tmp_path / str(n), _PARALLEL, _connector(expr)))
        assert found and all(severity == "error" for severity, _line in found), (expr, found)
