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

SB2: DeepSpec's `MooncakeHiddenStatesConnector(ExampleHiddenStatesConnector)` (xlm-research/DeepSpec,
deepspec/pipeline/connector.py @ 589c8b8) overrides `_submit_async_write`, `_on_write_done` and `_write_tensors`,
written for the asynchronous writer of vLLM's connector (0.27.1 and 0.33.0 have it; the client fits both). Scanned at
0.19.1 and 0.23.0, DC006 called `self._is_tp_rank_zero` at :38 (in `_submit_async_write`, which neither release defines
nor calls) and at :91 (in `_write_tensors`, which 0.19.1 neither defines nor calls) errors: those bodies never run. A
private method of a class with a vLLM base that the client names nowhere outside its own body, no other client file
names, and the target's vLLM names only as `self.<name>` in classes outside the client class's vLLM bases (whose MROs
are read whole and define no method of that name) is now a method that never runs
(`dead_methods.uncalled_private_overrides`): its findings are warnings that say so. The twins stay errors: the vLLM
base calls it or defines it, a base outside vLLM (`torch.nn.Module`, which calls private hooks) is in the MRO, another
client file calls it, the same file names it outside its body, vLLM calls it on another receiver, and a public name
(the client's users may call it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

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


SB2_VLLM, SB2_CLIENT = plugin_shape("SB2")
BASE = "vllm/connectors/hidden_states.py"
CONNECTOR = "plug/connector.py"


def _sb2(tmp_path: Path, vllm: dict[str, str] = SB2_VLLM, client: dict[str, str] = SB2_CLIENT) -> list:
    """(severity, client file, line) of each DC006 finding."""
    findings = scan_trees(tmp_path, vllm, client, only=["DC006"]).findings
    return sorted((f.severity, f.client.path, f.client.line) for f in findings)


# JC3 (2026-12-06): `super()._submit_async_write(...)` (line 18) and `super()._on_write_done(...)` (line 22) read
# members the vLLM base lacks, as `self._is_tp_rank_zero` (line 15) does: each follows whether its method runs.
DEAD = [("warning", CONNECTOR, 15), ("warning", CONNECTOR, 18), ("warning", CONNECTOR, 22)]
ALIVE = [("error", CONNECTOR, 15), ("error", CONNECTOR, 18), ("warning", CONNECTOR, 22)]  # `_on_write_done`: still dead


def test_sb2_read_in_a_private_override_the_vllm_base_neither_has_nor_calls_is_a_warning(tmp_path):
    assert _sb2(tmp_path) == DEAD


def test_sb2_twin_the_vllm_base_calls_it_stays_error(tmp_path):
    vllm = edited(SB2_VLLM, BASE, ("        self.saved.append(len(self.cache_layers))",
                                   "        self.saved.append(len(self.cache_layers))\n        self._submit_async_write(None)"))
    assert _sb2(tmp_path, vllm) == ALIVE


def test_sb2_twin_vllm_calls_it_on_another_receiver_stays_error(tmp_path):
    vllm = {**SB2_VLLM, "vllm/connectors/writer.py": "def flush(connector):\n    connector._submit_async_write(None)\n"}
    assert _sb2(tmp_path, vllm) == ALIVE


def test_sb2_twin_another_client_file_calls_it_stays_error(tmp_path):
    client = {**SB2_CLIENT, "plug/driver.py": "import vllm\n\n\ndef drain(connector):\n    connector._submit_async_write(None)\n"}
    assert _sb2(tmp_path, client=client) == ALIVE


def test_sb2_twin_the_same_file_names_it_outside_its_body_stays_error(tmp_path):
    client = edited(SB2_CLIENT, CONNECTOR, ("        self.write_slots = threading.BoundedSemaphore(2)",
                                            "        self.write_slots = threading.BoundedSemaphore(2)\n"
                                            "        self.flush = self._submit_async_write"))
    assert _sb2(tmp_path, client=client) == [("error", CONNECTOR, 16), ("error", CONNECTOR, 19), ("warning", CONNECTOR, 23)]


def test_sb2_twin_a_public_override_stays_error(tmp_path):
    client = edited(SB2_CLIENT, CONNECTOR,
                    ("    def _submit_async_write(self, pending):", "    def submit_async_write(self, pending):"))
    assert _sb2(tmp_path, client=client) == ALIVE


def test_sb2_a_public_method_extending_a_base_method_the_base_lacks_is_dead_where_nothing_calls_it(tmp_path):
    # JC3: `submit_async_write` calls `super().submit_async_write(...)`, written as an override; the vLLM base (read
    # whole) lacks it and no file of vLLM or the client calls it
    client = edited(SB2_CLIENT, CONNECTOR,
                    ("    def _submit_async_write(self, pending):", "    def submit_async_write(self, pending):"),
                    ("super()._submit_async_write(pending)", "super().submit_async_write(pending)"))
    assert _sb2(tmp_path, client=client) == DEAD


@pytest.mark.parametrize("edit", [
    ("    def wait_for_save(self):", "    def _submit_async_write(self, pending):\n        pass\n\n    def wait_for_save(self):"),
    ("class HiddenStatesConnector:", "import torch\n\n\nclass HiddenStatesConnector(torch.nn.Module):"),
], ids=["the vLLM base defines it", "a base outside vLLM may call private hooks"])
def test_sb2_twin_base_that_defines_it_or_is_not_read_whole_stays_error(tmp_path, edit):
    found = _sb2(tmp_path, edited(SB2_VLLM, BASE, edit))
    assert found[0] == ("error", CONNECTOR, 15)
    # where the base defines `_submit_async_write`, `super()` finds it (no line 18); `_on_write_done` follows its method
    assert found[1:] == ([("warning", CONNECTOR, 22)] if "def _submit_async_write" in edit[1] else
                         [("error", CONNECTOR, 18), ("error", CONNECTOR, 22)])
