"""Each codemod on the seed client end to end (speculators 0.3.0 files, real vLLM releases).

The seed's files are kept once (fixtures/seed/); each fix's folder holds what the fix makes of them. Small
cases from other clients, by rule id, are in test_cases_by_rule.py.

For every fix: before -> after exactly (every other byte untouched), after -> after (no-op), and
applying twice changes nothing. The `--guard` forms have their own pairs.
"""

from __future__ import annotations

import pytest

from codemods.fixture_util import FIXTURES, fixture, run_fix

# fix id -> vLLM release the fixture was written against
CASES = {
    "drop-keyword": "0.32.0",  # kv_cache_specs= (0.12) and Request(eos_token_id=) (later)
    "add-argument": "0.16.0",  # Scheduler(block_size=), SchedulerConfig(is_encoder_decoder=)
    "rename-method": "0.16.0",  # get_input_embeddings -> embed_input_ids
    "move-import": "0.16.0",  # vllm.utils.get_open_port -> vllm.utils.network_utils
    "disable-prefix-caching": "0.16.0",
    "unwrap-unique-reply": "0.16.0",
    "tensor-truthiness": "0.16.0",
    "call-sample-tokens": "0.16.0",
    "replay-engine-setup": "0.32.0",  # resolve_kv_cache_layout, as EngineCore does from 0.29
}
GUARDED = {"drop-keyword": "0.32.0", "add-argument": "0.16.0", "rename-method": "0.16.0"}


@pytest.mark.parametrize("fix_id", sorted(CASES))
def test_before_becomes_after(tmp_path, fix_id):
    before, after = fixture(fix_id, "before.py"), fixture(fix_id, "after.py")
    assert before != after, "a fixture pair must show a change"
    assert run_fix(tmp_path, before, fix_id, CASES[fix_id]) == after


@pytest.mark.parametrize("fix_id", sorted(CASES))
def test_after_is_a_no_op(tmp_path, fix_id):
    after = fixture(fix_id, "after.py")
    assert run_fix(tmp_path, after, fix_id, CASES[fix_id]) == after


@pytest.mark.parametrize("fix_id", sorted(CASES))
def test_applying_twice_changes_nothing(tmp_path, fix_id):
    once = run_fix(tmp_path, fixture(fix_id, "before.py"), fix_id, CASES[fix_id])
    assert run_fix(tmp_path, once, fix_id, CASES[fix_id]) == once


@pytest.mark.parametrize("fix_id", sorted(GUARDED))
def test_guard_form(tmp_path, fix_id):
    guarded = fixture(fix_id, "guard_after.py")
    assert run_fix(tmp_path, fixture(fix_id, "before.py"), fix_id, GUARDED[fix_id], guard=True) == guarded
    # the guarded client is clean for that rule, so a second run leaves it alone
    assert run_fix(tmp_path, guarded, fix_id, GUARDED[fix_id], guard=True) == guarded


def test_unsafe_fix_needs_unsafe(tmp_path):
    before = fixture("add-block-hasher", "before.py")
    assert run_fix(tmp_path, before, "add-block-hasher", "0.16.0") == before
    after = run_fix(tmp_path, before, "add-block-hasher", "0.16.0", unsafe=True)
    assert after == fixture("add-block-hasher", "after.py")
    assert run_fix(tmp_path, after, "add-block-hasher", "0.16.0", unsafe=True) == after


def test_block_hasher_helper_is_read_from_the_targets_engine_core(tmp_path):
    """0.16's EngineCore builds the hasher from vllm_config alone: the helper copies it. 0.32's needs the
    KV-cache config (resolve_kv_cache_block_sizes), which a Request call site does not have: the fix
    declines rather than guess."""
    from driftcheck.vllm_model.api_index import ApiIndex
    from driftcheck.fixes.add_block_hasher import engine_recipe, helper_source
    from driftcheck.sources.targets import resolve_vllm

    from conftest import CACHE_DIR

    t16, t32 = resolve_vllm("0.16.0", CACHE_DIR), resolve_vllm("0.32.0", CACHE_DIR)
    helper = helper_source(ApiIndex(t16.tree, t16.version))
    assert "init_none_hash(caching_hash_fn)" in helper and "vllm_config.cache_config.prefix_caching_hash_algo" in helper
    assert engine_recipe(ApiIndex(t32.tree, t32.version)) is None
    before = fixture("add-block-hasher", "before.py")
    assert run_fix(tmp_path, before, "add-block-hasher", "0.32.0", unsafe=True) == before


def test_every_fix_module_has_fixtures():
    from driftcheck.fixes import load_fixes

    for module in load_fixes():
        folder = FIXTURES / module.FIX.id
        assert fixture(module.FIX.id, "before.py") and (folder / "after.py").is_file(), module.FIX.id
        assert module.__doc__ and module.FIX.rules
