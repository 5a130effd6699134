"""Batch 30b (speculative-decoding and hidden-state projects other than speculators, at their stored GitHub HEAD,
docs/triage/2026-12-05-spec-decode-30b.md).

SB1 (a DC102 warning, no shape: no error either way): TorchSpec (lightseekorg/TorchSpec 6f21829,
torchspec/inference/engine/vllm_engine.py:229-321) builds `engine_kwargs = {..., "speculative_config": {"method":
"extract_hidden_states", ...}, "kv_transfer_config": {"kv_connector": "MooncakeHiddenStatesConnector", ...}}`, merges
the user's extra arguments into it, then sets `engine_kwargs["enable_prefix_caching"] = False` at the same level of the
same function before `LLM(**engine_kwargs)`. DC102 read only the statement holding the marker string and warned three
times that prefix caching was left on. A later statement of the same block that stores False into the name the config
is bound to (a subscript store, `.update(enable_prefix_caching=False)` or `.update({...: False})`) now turns it off;
the last store decides. The twins: a store under an `if`, a store of True or of a value not known, a store that a later
store of True undoes, a store after the name is bound anew, and no store at all still warn.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

ENGINE = '''\
from vllm import LLM


def build(extra, layers):
    engine_kwargs = {
        "model": "m",
        "speculative_config": {"method": "extract_hidden_states", "num_speculative_tokens": 1},
        "kv_transfer_config": {"kv_connector": "MyHiddenStatesConnector", "kv_role": "kv_producer"},
    }
    engine_kwargs.update(extra)
    engine_kwargs["enable_prefix_caching"] = False
    return LLM(**engine_kwargs)
'''
STORE = '    engine_kwargs["enable_prefix_caching"] = False\n'
BOTH = [("engine.py", 7), ("engine.py", 8)]


def _dc102(tmp_path: Path, engine: str) -> list[tuple[str, int]]:
    result = scan_trees(tmp_path, {"vllm/__init__.py": "class LLM:\n    def __init__(self, **kw):\n        pass\n"},
                        {"engine.py": engine}, only=["DC102"])
    return sorted((f.client.path, f.client.line) for f in result.findings)


def test_sb1_later_store_of_false_into_the_config_dict_is_no_warning(tmp_path):
    assert _dc102(tmp_path, ENGINE) == []


def test_sb1_update_with_a_keyword_or_a_dict_is_no_warning(tmp_path):
    for store in ('    engine_kwargs.update(enable_prefix_caching=False)\n',
                  '    engine_kwargs.update({"enable_prefix_caching": False, "max_num_seqs": 8})\n'):
        assert _dc102(tmp_path, ENGINE.replace(STORE, store)) == [], store


def test_sb1_twin_no_store_warns(tmp_path):
    assert _dc102(tmp_path, ENGINE.replace(STORE, "")) == BOTH


def test_sb1_twin_store_under_an_if_warns(tmp_path):
    engine = ENGINE.replace(STORE, "    if layers:\n    " + STORE)
    assert _dc102(tmp_path, engine) == BOTH


def test_sb1_twin_store_of_true_or_of_a_value_not_known_warns(tmp_path):
    for value in ("True", "extra.get('cache', True)"):
        assert _dc102(tmp_path, ENGINE.replace(STORE, STORE.replace("False", value))) == BOTH, value


def test_sb1_twin_later_store_of_true_undoes_it(tmp_path):
    engine = ENGINE.replace(STORE, STORE + STORE.replace("False", "True"))
    assert _dc102(tmp_path, engine) == BOTH


def test_sb1_twin_store_after_the_name_is_bound_anew_warns(tmp_path):
    engine = ENGINE.replace(STORE, "    engine_kwargs = dict(extra)\n" + STORE)
    assert _dc102(tmp_path, engine) == BOTH
