"""Batch 23b (GitHub clients that drive vLLM's engine internals: model runners, schedulers, speculative-decoding
plugins; docs/triage/2026-12-05-engine-internals-clients-23b.md).

KB1: a private function of a file handed out as a value inside a try (`try: direct_register_custom_op(op_name=...,
op_func=_impl) except Exception: ...`) is not guarded by that try: the try catches only what the registration itself
raises, and the function runs later, when whoever it was handed to calls it. vllm-ctsd (CarloCetrone/vllm-ctsd, vLLM
0.17.1) registers `_ctsd_unified_attention_impl` that way, and the function imports `get_attention_context` from
`vllm.forward_context`, which 0.17.1 moved to `vllm.model_executor.layers.attention.attention`: driftcheck said
"in a function called only from line 29, which is inside a try (line 26) that catches everything, so the client handles
it" and made the ImportError a warning. It is an error now. The twins: the same function called (not handed out)
inside the try stays a warning, and one handed out under a version check stays guarded by the check (said as "in a
function handed out only at line N", no longer "called only from"). Only a hand-out to something that keeps the function
for later (a callee whose name says `register`, a thread's `target=`, a store on an object) leaves the try: one handed
to `map(...)` inside the try may run inside it, and the try still guards it.
"""

from __future__ import annotations

import pytest

from scan.helpers import scan_trees

VLLM = {
    "vllm/__init__.py": "__version__ = '0.99.0'\n",
    "vllm/forward_context.py": "def get_forward_context():\n    return None\n",
    "vllm/utils.py": ("def direct_register_custom_op(op_name, op_func, fake_impl=None):\n"
                      "    return op_func\n"),
}


def _dc002(result) -> list[tuple[str, int, str]]:
    return sorted((f.severity, f.client.line, f.message) for f in result.findings if f.rule == "DC002")


IMPL = ("import vllm\n\n\ndef _impl(layer_name):\n"
        "    from vllm.forward_context import get_attention_context\n"  # line 5
        "    return get_attention_context(layer_name)\n\n\n")
REGISTER = "direct_register_custom_op(op_name='tree_attention', op_func=_impl)"
CHECKED = "which is under a vLLM version check (line 11)"

CASES = {
    # handed out inside a try: runs later, outside it -> the error it is
    "handed_out_in_try": ("def register_ops():\n    from vllm.utils import direct_register_custom_op\n"
                          f"    try:\n        {REGISTER}\n    except Exception:\n        pass\n",
                          "error", None),
    # twin: called inside the try -> guarded by it
    "called_in_try": ("def register_ops():\n    try:\n        return _impl('x')\n"
                      "    except Exception:\n        return None\n",
                      "warning", "called only from line 11, which is inside a try"),
    # twin: handed out under a version check -> guarded by the check
    "handed_out_under_version_check": ("def register_ops():\n    from vllm.utils import direct_register_custom_op\n"
                                       f"    if vllm.__version__ >= '1.0.0':\n        {REGISTER}\n",
                                       "warning", f"handed out only at line 12, {CHECKED}"),
    # twin: handed to something that may call it at once (`list(map(_impl, ...))`), inside a try -> the try guards it
    "handed_to_map_in_try": ("def register_ops():\n    try:\n        return list(map(_impl, ['x']))\n"
                             "    except Exception:\n        return None\n",
                             "warning", "inside a try"),
    # handed out inside a try to a thread, or stored for later: runs outside the try -> the error it is
    "thread_target_in_try": ("def register_ops():\n    import threading\n    try:\n"
                             "        threading.Thread(target=_impl, args=('x',)).start()\n    except Exception:\n        pass\n",
                             "error", None),
    "stored_in_try": ("class Ops:\n    def setup(self):\n        try:\n            self.impl = _impl\n"
                      "        except Exception:\n            pass\n",
                      "error", None),
    # twin: handed out inside a try nested in a version check -> the check still guards it
    "handed_out_in_try_under_version_check": ("def register_ops():\n    from vllm.utils import direct_register_custom_op\n"
                                              "    if vllm.__version__ >= '1.0.0':\n        try:\n"
                                              f"            {REGISTER}\n        except Exception:\n            pass\n",
                                              "warning", f"handed out only at line 13, {CHECKED}"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kb1_function_handed_out_inside_a_try_is_not_guarded_by_it(tmp_path, case):
    register, severity, reason = CASES[case]
    found = _dc002(scan_trees(tmp_path, VLLM, {"plug/__init__.py": "", "plug/ops.py": IMPL + register}))
    assert [(sev, line) for sev, line, _ in found] == [(severity, 5)], found
    if reason is None:
        assert "called only from" not in found[0][2]
    else:
        assert reason in found[0][2], found
