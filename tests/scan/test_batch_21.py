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


# DF1 of batch 20g: vLLM 0.8.5's `config_format: str = ConfigFormat.AUTO` (a `str` enum whose AUTO is "auto") and
# 0.33.0's `config_format: str = "auto"` are the same default: no info "changed".
_ENUM = ("import enum\n\n\nclass ConfigFormat({bases}):\n    AUTO = \"auto\"\n    HF = \"hf\"\n")
_ARGS = ("from dataclasses import dataclass\n\nfrom vllm.formats import ConfigFormat\n\n\n@dataclass\nclass EngineArgs:\n"
         "    model: str = \"m\"\n    config_format: str = {default}\n")


def _dc107(tmp_path, bases: str, old_default: str, new_default: str):
    old = {"vllm/__init__.py": "", "vllm/formats.py": _ENUM.format(bases=bases),
           "vllm/args.py": _ARGS.format(default=old_default)}
    new = {"vllm/__init__.py": "", "vllm/formats.py": _ENUM.format(bases=bases),
           "vllm/args.py": _ARGS.format(default=new_default)}
    own = vllm_tree(tmp_path / "own", old)
    write_tree(own, {"vllm/_version.py": '__version__ = "0.8.5"\n'})
    client = {"plug/__init__.py": "", "plug/run.py": "from vllm.args import EngineArgs\n\n\ndef args():\n    return EngineArgs(model=\"x\")\n"}
    result = scan_trees(tmp_path, new, client, only=["DC107"], client_vllm=str(own), version="0.33.0")
    assert not result.internal_errors
    return [f.message for f in result.findings if "config_format" in f.message]


def test_df1_a_str_enum_member_is_its_string(tmp_path):
    assert _dc107(tmp_path, "str, enum.Enum", "ConfigFormat.AUTO", '"auto"') == []


def test_df1_twin_another_member_is_a_change(tmp_path):
    [message] = _dc107(tmp_path, "str, enum.Enum", "ConfigFormat.HF", '"auto"')
    assert "changed from 'hf' (ConfigFormat.HF) in vLLM 0.8.5 to 'auto' in vLLM 0.33.0" in message, message


def test_df1_twin_a_plain_enum_member_is_no_string(tmp_path):
    [message] = _dc107(tmp_path, "enum.Enum", "ConfigFormat.AUTO", '"auto"')
    assert "ConfigFormat.AUTO" in message


# Batch 21a: add-argument took the first value vLLM's own code passes. vllm-rbln's `InputBatch(...)` got
# `max_num_blocks_per_req=[]`, the empty list `gpu_model_runner.py` starts with, not the filled one it builds the real
# batch with; vllm-omni got `max_query_len=num_tokens // num_reqs` from a dummy run. Sites that disagree give no value.
def _batch_release(second_site: str) -> dict[str, str]:
    return {"vllm/__init__.py": "", "vllm/batch.py": "class InputBatch:\n    def __init__(self, max_num_reqs, max_num_blocks_per_req):\n"
                                                       "        self.blocks = max_num_blocks_per_req\n",
            "vllm/runner.py": "from vllm.batch import InputBatch\n\n\nclass Runner:\n"
                              "    def __init__(self, n):\n        self.batch = InputBatch(max_num_reqs=n, max_num_blocks_per_req=[])\n\n"
                              f"    def reload(self, n, blocks):\n        self.batch = InputBatch(max_num_reqs=n, max_num_blocks_per_req={second_site})\n"}


def _add_argument(tmp_path, second_site: str):
    vroot = vllm_tree(tmp_path / "v", _batch_release(second_site))
    write_tree(vroot, {"vllm/_version.py": '__version__ = "0.33.0"\n'})
    croot = write_tree(tmp_path / "c", {"plug/__init__.py": "", "plug/run.py":
                                        "from vllm.batch import InputBatch\n\n\ndef make(n):\n    return InputBatch(max_num_reqs=n)\n"})
    proc = run_cli("fix", "--vllm", str(vroot), "--client", str(croot), "--only", "add-argument")
    return proc.stdout, proc.stderr


def test_21a_call_sites_that_disagree_give_no_value(tmp_path):
    out, err = _add_argument(tmp_path, "[blocks]")
    assert "max_num_blocks_per_req" not in out
    assert "no one value for 'max_num_blocks_per_req' in the target's own code" in err


def test_21a_twin_sites_that_agree_give_the_value(tmp_path):
    out, _err = _add_argument(tmp_path, "[]")
    assert "+    return InputBatch(max_num_reqs=n, max_num_blocks_per_req=[])" in out


def test_21a_replay_engine_setup_leaves_a_step_the_engine_completes_further_on(tmp_path):
    """speculators 0.4.0 at vLLM 0.33.0: once `fix` moves its imports, DC108 says `get_kv_cache_config_from_groups()`
    needs `resolve_kv_cache_layout(...)` first. 0.33.0's engine core resolves the layout, does two other steps, then
    sends it to the workers (`set_kv_cache_layout(layout.name, ...)`, core.py:294); replaying the first statement alone
    left the workers without it (batch 21a's W5). The fix now leaves it, naming the later use; on 0.16.0 and 0.32.0,
    where the use follows at once, it still replays both (test_codemods.py)."""
    import zipfile

    from conftest import client_sources

    root = tmp_path / "site-packages"
    with zipfile.ZipFile(client_sources("speculators", "0.4.0")) as z:
        z.extractall(root)
    proc = run_cli("fix", "--vllm", "0.33.0", "--client", str(root))
    assert "resolve_kv_cache_layout(" not in proc.stdout
    assert "DC108" in proc.stderr and "the engine uses what this step makes again further on" in proc.stderr
    assert "set_kv_cache_layout(layout.name" in proc.stderr


# Batch 21a's Q1-Q3: move-import pointed `from vllm.inputs import ProcessorInputs` (0.16.0: a type alias of the
# engine's inputs) at 0.33.0's unrelated dataclass `vllm.multimodal.processing.inputs.ProcessorInputs`. With the
# client's own vLLM, a same-named object of another kind, or a class sharing none of the old one's members, is no new
# home.
def _dc002(tmp_path, old_body: str, new_home: str, with_own: bool = True):
    old = {"vllm/__init__.py": "", "vllm/inputs/__init__.py": old_body}
    new = {"vllm/__init__.py": "", "vllm/inputs/__init__.py": "PromptType = str\n",
           "vllm/multimodal/__init__.py": "", "vllm/multimodal/inputs.py": new_home}
    own = vllm_tree(tmp_path / "own", old)
    write_tree(own, {"vllm/_version.py": '__version__ = "0.16.0"\n'})
    client = {"plug/__init__.py": "", "plug/p.py": "from vllm.inputs import ProcessorInputs\n\n\n"
                                                   "def check(inputs: ProcessorInputs) -> bool:\n    return bool(inputs)\n"}
    result = scan_trees(tmp_path, new, client, only=["DC002"], client_vllm=str(own) if with_own else None,
                        version="0.33.0")
    assert not result.internal_errors
    return [(f.details.get("moved_to"), f.message) for f in result.findings]


_DATACLASS = "from dataclasses import dataclass\n\n\n@dataclass\nclass ProcessorInputs:\n    prompt: str\n    mm_data_items: list\n"


def test_q1_another_kind_of_object_is_no_new_home(tmp_path):
    [(moved, message)] = _dc002(tmp_path, "from typing import Union\n\nProcessorInputs = Union[dict, list]\n", _DATACLASS)
    assert moved is None
    assert "`vllm.multimodal.inputs` defines a `ProcessorInputs` too, but another one (a class there" in message


def test_q1_a_class_with_none_of_the_old_members_is_no_new_home(tmp_path):
    old = "class ProcessorInputs:\n    def __init__(self):\n        self.prompt_token_ids = []\n        self.encoder = None\n"
    [(moved, message)] = _dc002(tmp_path, old, _DATACLASS)
    assert moved is None and "a class with none of the members vLLM 0.16.0's had" in message


def test_q1_twin_a_class_keeping_a_member_moved(tmp_path):
    old = "from dataclasses import dataclass\n\n\n@dataclass\nclass ProcessorInputs:\n    prompt: str\n"
    [(moved, _message)] = _dc002(tmp_path, old, _DATACLASS)
    assert moved == "vllm.multimodal.inputs"


def test_q1_twin_without_the_clients_vllm_the_name_alone_decides(tmp_path):
    [(moved, _message)] = _dc002(tmp_path, "ProcessorInputs = dict\n", _DATACLASS, with_own=False)
    assert moved == "vllm.multimodal.inputs"
