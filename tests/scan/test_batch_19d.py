"""Batch 19d (runtime patchers of vLLM: cpu_serving, dgx-vllm, msserviceprofiler 1.1.4, avp-python;
docs/triage/2026-12-06-runtime-patchers-19d.md): 3 errors, all real; one wrong unknown.

U1: avp-python (VectorArc/avp-python e71453a) at vLLM 0.18.1 reads `_ctx.requests` under `hasattr(_ctx, "requests")`
inside `try: ... except Exception:`; 0.18.1's `ForwardContext` has no `requests`, and because the client imports a
package driftcheck does not read (`modal`), which "may set" the attribute, DC006 said unknown, failing a default gate
on a line that cannot raise. An unknown at a line the client guards against what the rule's drift raises is a warning
now, naming the guard (units._guarded_question); an unguarded use of the same name stays the unknown.
"""

from __future__ import annotations

from scan.helpers import scan_trees

_VLLM = {
    "vllm/__init__.py": "",
    "vllm/forward_context.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass ForwardContext:\n"
                               "    no_compile_layers: dict\n    attn_metadata: dict\n\n\n"
                               "def get_forward_context() -> ForwardContext:\n    return ForwardContext({}, {})\n",
}
_PLUGIN = '''import modal  # a cloud SDK driftcheck does not read


def request_id():
    rid = ""
    try:
        from vllm.forward_context import get_forward_context
        ctx = get_forward_context()
        if not rid and hasattr(ctx, "requests") and ctx.requests:
            rid = str(getattr(ctx.requests[0], "request_id", ""))
    except Exception:
        pass
    return rid
'''


def _dc006(tmp_path, text):
    result = scan_trees(tmp_path, _VLLM, {"pkg/__init__.py": text}, only=["DC006"])
    assert not result.internal_errors
    return ([(f.severity, f.client.line, f.message) for f in result.findings],
            [(u.client.line, u.message) for u in result.unknown])


def test_u1_a_guarded_open_question_is_a_warning_naming_the_guard(tmp_path):
    findings, unknown = _dc006(tmp_path, _PLUGIN)
    assert unknown == []
    assert [(s, line) for s, line, _m in findings] == [("warning", 9), ("warning", 10)]
    assert all(m.startswith("cannot tell whether `vllm.forward_context.ForwardContext.requests` exists:")
               and "may set 'requests'" in m and "so the client handles it" in m for _s, _l, m in findings)


def test_u1_twin_an_unguarded_use_stays_the_unknown(tmp_path):
    unguarded = _PLUGIN.replace("    try:\n", "    if True:\n").replace("    except Exception:\n        pass\n", "")
    unguarded = unguarded.replace('hasattr(ctx, "requests") and ', "")
    findings, unknown = _dc006(tmp_path, unguarded)
    assert findings == [] and [line for line, _m in unknown] == [9]
    assert "may set 'requests'" in unknown[0][1]
