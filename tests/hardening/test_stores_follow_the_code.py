"""A stored answer is read back only by the driftcheck code that computed it (storage/code_digest.py): after an upgrade
or an edit of the summariser or of a rule's per-tree index, the module summaries and the whole-tree text answers are
computed again instead of being read from a store the older code wrote."""

from __future__ import annotations

import driftcheck.storage.cache as cache_mod
import driftcheck.vllm_model.bodies as bodies
from driftcheck.storage.cache import SummaryCache
from driftcheck.vllm_model.module_summary import ModuleInfo

SOURCE = b"def f(x):\n    return x\n"


def test_a_summary_is_read_back_by_the_same_code_only(tmp_path, monkeypatch):
    info = ModuleInfo(name="vllm.m", path="vllm/m.py", is_package=False)
    monkeypatch.setattr(cache_mod, "code_digest", lambda: "a" * 40)
    SummaryCache(tmp_path).put(SOURCE, "vllm.m", False, info)
    assert SummaryCache(tmp_path).get(SOURCE, "vllm.m", False) is not None  # same code: a hit
    monkeypatch.setattr(cache_mod, "code_digest", lambda: "b" * 40)
    assert SummaryCache(tmp_path).get(SOURCE, "vllm.m", False) is None  # other code: not read


def test_text_answers_are_stored_per_tree_and_per_code(tmp_path, monkeypatch):
    class Tree:  # a fetched release's zip, as _store_for sees it
        def fingerprint(self):
            return "release"

    class Api:
        cache = SummaryCache(tmp_path)
        tree = Tree()

    import driftcheck.sources.sources as sources

    monkeypatch.setattr(sources, "ZipTree", Tree)
    monkeypatch.setattr(bodies, "code_digest", lambda: "a" * 40)
    first = bodies._store_for(Api())
    monkeypatch.setattr(bodies, "code_digest", lambda: "b" * 40)
    second = bodies._store_for(Api())
    assert first.parent == second.parent == tmp_path / "text" and first != second



def test_a_rule_linked_into_the_package_is_part_of_the_digest(tmp_path, monkeypatch):
    """A worktree that links the rules into the package (driftcheck/probes -> ../probes): editing a rule there changes
    the digest (rglob does not follow a link below where it starts, so the link is walked from itself)."""
    import driftcheck.storage.code_digest as digest_mod

    pkg = tmp_path / "driftcheck"
    (pkg / "storage").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    module = pkg / "storage" / "code_digest.py"
    module.write_text("")
    (tmp_path / "probes").mkdir()
    rule = tmp_path / "probes" / "rule.py"
    rule.write_text("A = 1\n")
    (pkg / "probes").symlink_to("../probes", target_is_directory=True)
    monkeypatch.setattr(digest_mod, "__file__", str(module))
    digest_mod.code_digest.cache_clear()
    try:
        before = digest_mod.code_digest()
        digest_mod.code_digest.cache_clear()
        rule.write_text("A = 2\n")
        assert digest_mod.code_digest() != before
    finally:
        digest_mod.code_digest.cache_clear()
