"""A stored answer is read back only by the driftcheck code that computed it (storage/code_digest.py): after an upgrade
or an edit of the summariser or of a rule's per-tree index, the module summaries and the whole-tree text answers are
computed again instead of being read from a store the older code wrote."""

from __future__ import annotations

import hashlib

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


def _installed(tmp_path, files: dict[str, str]):
    """A package laid out as a wheel installs it, with a RECORD listing each file's hash and size."""
    import base64

    site = tmp_path / "site"
    lines = []
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        lines.append(f"{rel},sha256={digest},{len(text.encode())}")
    info = site / "driftcheck-0.1.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("\n".join([*lines, "driftcheck-0.1.0.dist-info/RECORD,,"]) + "\n")
    return site


def _digest_of(site, monkeypatch):
    import driftcheck.storage.code_digest as digest_mod

    monkeypatch.setattr(digest_mod, "__file__", str(site / "driftcheck" / "storage" / "code_digest.py"))
    digest_mod.code_digest.cache_clear()
    try:
        return digest_mod.code_digest()
    finally:
        digest_mod.code_digest.cache_clear()


INSTALLED = {"driftcheck/__init__.py": "", "driftcheck/storage/code_digest.py": "", "driftcheck/probes/rule.py": "A = 1\n"}


def test_an_installed_wheel_is_digested_from_its_record(tmp_path, monkeypatch):
    """The RECORD's hashes stand for the bytes: the same digest as reading every file, without the reads; a RECORD
    that says another content (a file edited after the install, at the same size) gives another digest."""
    import driftcheck.storage.code_digest as digest_mod

    site = _installed(tmp_path, INSTALLED)
    recorded = _digest_of(site, monkeypatch)
    root = site / "driftcheck"
    assert digest_mod._recorded_hashes(root, digest_mod._source_files(root)) is not None
    record = site / "driftcheck-0.1.0.dist-info" / "RECORD"
    record.write_text(record.read_text().replace("sha256=", "sha256=X", 1))
    assert _digest_of(site, monkeypatch) != recorded


def test_a_file_the_record_does_not_vouch_for_is_read(tmp_path, monkeypatch):
    """A rule edited after the install (its size moved) or added beside the listed ones: the bytes are read, so the
    digest changes with them."""
    site = _installed(tmp_path, INSTALLED)
    first = _digest_of(site, monkeypatch)
    rule = site / "driftcheck" / "probes" / "rule.py"
    rule.write_text("A = 22\n")
    edited = _digest_of(site, monkeypatch)
    rule.write_text("A = 23\n")
    assert len({first, edited, _digest_of(site, monkeypatch)}) == 3
    rule.write_text("A = 1\n")
    (site / "driftcheck" / "probes" / "new.py").write_text("B = 1\n")
    added = _digest_of(site, monkeypatch)
    (site / "driftcheck" / "probes" / "new.py").write_text("B = 2\n")
    assert added != first and _digest_of(site, monkeypatch) != added
