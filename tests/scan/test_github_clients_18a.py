"""Batch 18a (real vLLM clients taken from GitHub, docs/triage/2026-12-04-github-clients-18a.md): no false error in
its scans; one cause found while triaging a warning, where a `try` guard was credited with catching an exception the
drift does not raise here (a real error was demoted): MA, fixed since (`pipeline.raised_by`, DC005's `raises`).
"""

from __future__ import annotations

import pytest

from scan.helpers import line_of, scan_trees

# ----------------------------------------------------------------------------------------- MA (open)
# api-for-open-llm (xusenlinzy/api-for-open-llm @ tag api-for-open-llm-vllm0.4.3, docker/Dockerfile.vllm
# `pip install vllm==0.4.3`), api/vllm_routes/chat.py:121 and completion.py:160: `await
# get_guided_decoding_logits_processor(request, engine.tokenizer)`, the pre-0.4.3 call, which misses 0.4.3's third
# required parameter `tokenizer` (vllm/model_executor/guided_decoding/__init__.py:12-15). The line is in the `else` of
# `if vllm_version >= "0.4.3":` (`vllm_version = vllm.__version__`), so it never runs on 0.4.3 and a warning is right;
# but the reason given was the enclosing `try: ... except ValueError` (chat.py:83). A plain function's missing
# argument raises TypeError, which `except ValueError` does not catch: DC005 declares
# raises=("TypeError", "ValueError", "ValidationError") for every finding (ValidationError, a ValueError, is what a
# pydantic @config class raises), and the guard is matched against the rule's tuple, not the finding's exception.
# Without the version check the line is a certain TypeError that the client does not handle, reported as a warning.
# The fix needs driftcheck/scan/ (units.py `_run_probes` and pipeline.py `_apply_guard` pass `rule.raises` to
# guards.guard_at / running_fallback and to `failing`): a per-finding tuple, e.g. `finding.details.get("raises") or
# rule.raises`, which DC005 would set to ("TypeError",) for a call that is not a pydantic construction.
VLLM = {
    "vllm/__init__.py": "",
    "vllm/guided.py": '''
        async def get_processor(backend: str, request, tokenizer):
            return None
    ''',
}


def _dc005(tmp_path, handler: str) -> list[tuple[int, str]]:
    main = (
        "from vllm.guided import get_processor\n\n\n"
        "async def route(request, tokenizer):\n"
        "    try:\n"
        "        proc = await get_processor(request, tokenizer)\n"
        f"    except {handler}:\n"
        "        proc = None\n"
        "    return proc\n"
    )
    result = scan_trees(tmp_path, VLLM, {"client/__init__.py": "", "client/main.py": main})
    assert line_of(main, "await get_processor") == 6
    return sorted((f.client.line, f.severity) for f in result.findings if f.rule == "DC005")


def test_ma_except_value_error_does_not_handle_a_plain_functions_missing_argument(tmp_path):
    assert _dc005(tmp_path, "ValueError") == [(6, "error")]


def test_ma_except_type_error_handles_it(tmp_path):
    # the handler catches what the call raises: the client handles the drift, a warning
    assert _dc005(tmp_path, "TypeError") == [(6, "warning")]


def test_ma_a_handler_that_catches_neither_leaves_the_error(tmp_path):
    assert _dc005(tmp_path, "KeyError") == [(6, "error")]


# The same for DC002, whose rule declares ImportError and AttributeError: an import of a missing name raises ImportError
# (an `except AttributeError` around it handles nothing), a read of a missing module attribute AttributeError.
def _dc002(tmp_path, body: str, handler: str) -> list[tuple[int, str]]:
    main = f"import vllm.guided\n\ntry:\n    {body}\nexcept {handler}:\n    pass\n"
    result = scan_trees(tmp_path, VLLM, {"client/__init__.py": "", "client/main.py": main})
    return sorted((f.client.line, f.severity) for f in result.findings if f.rule == "DC002")


@pytest.mark.parametrize("body, handler, severity", [
    ("from vllm.guided import gone", "ImportError", "warning"),
    ("from vllm.guided import gone", "AttributeError", "error"),
    ("x = vllm.guided.gone", "AttributeError", "warning"),
    ("x = vllm.guided.gone", "ImportError", "error"),
])
def test_ma_dc002_a_handler_must_catch_what_the_line_raises(tmp_path, body, handler, severity):
    assert _dc002(tmp_path, body, handler) == [(4, severity)]
