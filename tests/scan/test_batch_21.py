"""Seventeenth session (batch 21): a rename DC003 guesses from a name alone is no certain fix.

Q2 of batch 20h: vllm-ascend 0.11.0's `SchedulerOutput(..., structured_output_request_ids={}, ...)` at vLLM 0.33.0,
where the close name is `has_structured_output_requests: bool = False`: drop-keyword renamed the keyword and passed a
dict to a bool field. A rename now needs the types to allow it: the close name's annotation must take a literal the
call passes, and share a type with what the client's own vLLM annotated the keyword with. Otherwise the finding says
the type differs and `fix` leaves the call for a person. Twins: the same rename where the types agree is still made.
"""

from __future__ import annotations

from conftest import run_cli
from scan.helpers import scan_trees, vllm_tree, write_tree

_NEW = ("from dataclasses import dataclass\n\n\n@dataclass\nclass SchedulerOutput:\n    total_num_scheduled_tokens: int\n"
        "    has_structured_output_requests: bool = False\n    max_tokens: int | None = None\n")
_OLD = ("from dataclasses import dataclass\n\n\n@dataclass\nclass SchedulerOutput:\n    total_num_scheduled_tokens: int\n"
        "    structured_output_request_ids: dict[str, int]\n    max_token: int = 16\n")


def _release(body: str) -> dict[str, str]:
    return {"vllm/__init__.py": "", "vllm/sched/__init__.py": "", "vllm/sched/output.py": body}


def _client(call_keywords: str) -> dict[str, str]:
    return {"plug/__init__.py": "",
            "plug/sched.py": "from vllm.sched.output import SchedulerOutput\n\n\n"
                             f"def empty(ids, n):\n    return SchedulerOutput(total_num_scheduled_tokens=0, {call_keywords})\n"}


def _scan(tmp_path, call_keywords: str, with_own: bool):
    own = vllm_tree(tmp_path / "own", _release(_OLD))
    write_tree(own, {"vllm/_version.py": '__version__ = "0.11.0"\n'})
    result = scan_trees(tmp_path, _release(_NEW), _client(call_keywords), only=["DC003"],
                        client_vllm=str(own) if with_own else None, version="0.33.0")
    assert not result.internal_errors
    return [(f.details["keyword"], f.details.get("renamed_to"), f.details.get("rename_conflict"), f.message) for f in result.findings]


def test_q2_a_literal_the_close_name_does_not_take_is_no_rename(tmp_path):
    [(kw, renamed, conflict, message)] = _scan(tmp_path, "structured_output_request_ids={}", with_own=False)
    assert (kw, renamed) == ("structured_output_request_ids", "has_structured_output_requests")
    assert conflict == "a dict is passed, 'has_structured_output_requests' takes bool"
    assert "Renamed to 'has_structured_output_requests'? Its type differs (a dict is passed" in message


def test_q2_the_client_vllms_annotation_shares_no_type_with_the_close_names(tmp_path):
    [(_kw, _renamed, conflict, _message)] = _scan(tmp_path, "structured_output_request_ids=ids", with_own=True)
    assert conflict == ("'structured_output_request_ids: dict[str, int]' in vLLM 0.11.0, "
                        "'has_structured_output_requests: bool' now")


def test_q2_twin_without_evidence_of_a_type_the_rename_stays(tmp_path):
    [(_kw, renamed, conflict, message)] = _scan(tmp_path, "structured_output_request_ids=ids", with_own=False)
    assert (renamed, conflict) == ("has_structured_output_requests", None)
    assert "Its type differs" not in message


def test_q2_twin_types_in_common_keep_the_rename(tmp_path):
    # `max_token: int` became `max_tokens: int | None`: an int is still taken, a literal 5 too
    assert [(kw, renamed, conflict) for kw, renamed, conflict, _m in _scan(tmp_path, "max_token=n", with_own=True)] == \
        [("max_token", "max_tokens", None)]
    assert [(kw, renamed, conflict) for kw, renamed, conflict, _m in _scan(tmp_path, "max_token=5", with_own=False)] == \
        [("max_token", "max_tokens", None)]


def _fix(tmp_path, call_keywords: str):
    vroot = vllm_tree(tmp_path / "v", _release(_NEW))
    write_tree(vroot, {"vllm/_version.py": '__version__ = "0.33.0"\n'})
    croot = write_tree(tmp_path / "c", _client(call_keywords))
    proc = run_cli("fix", "--vllm", str(vroot), "--client", str(croot), "--only", "drop-keyword")
    return proc.stdout, proc.stderr


def test_q2_fix_leaves_a_rename_the_types_contradict(tmp_path):
    out, err = _fix(tmp_path, "structured_output_request_ids={}, max_token=5")
    assert "+    return SchedulerOutput(total_num_scheduled_tokens=0, structured_output_request_ids={}, max_tokens=5)" in out
    assert "has_structured_output_requests" not in out
    assert "close to 'structured_output_request_ids' in name but not in type" in err
