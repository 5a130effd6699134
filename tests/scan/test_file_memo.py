"""Answers kept by file content across releases (`vllm_model/file_memo.py`, the summary cache's decoded entries):
a matrix worker scans release after release in one process; what it found in a file an earlier release shipped
unchanged is reused, and never what it found in a file that changed."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from conftest import CACHE_DIR
from driftcheck.sources.sources import FolderTree
from driftcheck.storage import cache as summary_cache
from driftcheck.vllm_model import class_scanner, file_memo
from driftcheck.vllm_model.text_index import TextIndex

from scan.helpers import vllm_tree

SHARED = """
class Kept:
    def forward(self, x):
        self.kept = x
"""


@pytest.fixture(autouse=True)
def _memo_on(monkeypatch):
    monkeypatch.setattr(file_memo, "_ON", True)  # as in a matrix worker
    file_memo.forget()


def test_an_unchanged_file_is_read_once_and_a_changed_one_again(tmp_path, monkeypatch):
    calls = []
    real = class_scanner.classes_fast

    def counting(rel, text):
        calls.append(rel)
        return real(rel, text)

    monkeypatch.setattr("driftcheck.vllm_model.text_index.classes_fast", counting)
    old = TextIndex(FolderTree(vllm_tree(tmp_path / "old", {"vllm/a.py": SHARED, "vllm/b.py": "class B:\n    x = 1\n"})))
    new = TextIndex(FolderTree(vllm_tree(tmp_path / "new", {"vllm/a.py": SHARED, "vllm/b.py": "class B:\n    y = 1\n"})))
    assert [c.members for c in old.classes_in("vllm/a.py")] == [{"forward": 2, "kept": 3}]
    assert old.classes_in("vllm/b.py")[0].members == {"x": 2}
    assert new.classes_in("vllm/a.py") == old.classes_in("vllm/a.py")
    assert new.classes_in("vllm/b.py")[0].members == {"y": 2}  # changed: read again, not the old answer
    assert calls == ["vllm/a.py", "vllm/b.py", "vllm/b.py"]


def test_a_single_scan_keeps_nothing_and_hashes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(file_memo, "_ON", False)  # a process that is not a matrix's
    monkeypatch.setattr(file_memo, "content_key", lambda _data: pytest.fail("hashed a file"))
    index = TextIndex(FolderTree(vllm_tree(tmp_path, {"vllm/a.py": SHARED})))
    assert index.classes_in("vllm/a.py")[0].name == "Kept"
    assert file_memo._ANSWERS == {}


def test_the_same_content_at_another_path_is_asked_again(tmp_path):
    index = TextIndex(FolderTree(vllm_tree(tmp_path, {"vllm/a.py": SHARED, "vllm/c.py": SHARED})))
    assert [c.path for c in index.classes_in("vllm/a.py")] == ["vllm/a.py"]
    assert [c.path for c in index.classes_in("vllm/c.py")] == ["vllm/c.py"]  # answers name their file


def test_a_summary_read_once_is_not_decoded_again(tmp_path, monkeypatch):
    from driftcheck.vllm_model.pysummary import summarise_source

    store = summary_cache.SummaryCache(tmp_path)
    data = b"X = 1\n"
    info = summarise_source("vllm.m", "vllm/m.py", False, data.decode())
    store.put(data, "vllm.m", False, info)
    summary_cache._DECODED.clear()
    first = store.get(data, "vllm.m", False)
    with monkeypatch.context() as patch:
        patch.setattr(summary_cache, "_codec", lambda: (_ for _ in ()).throw(AssertionError("decoded again")))
        assert store.get(data, "vllm.m", False) is first
        assert store.get(b"X = 2\n", "vllm.m", False) is None  # other content: a miss, never the kept summary
    store._key(data, "vllm.m", False).write_bytes(b"{not json")  # rewritten since it was read: read again
    assert store.get(data, "vllm.m", False) is None


def _findings(versions: list[str], cache: Path) -> dict:
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    client = resolve_client("speculators==0.3.0", cache)
    baselines: dict = {}
    out = {}
    for version in versions:
        doc = scan(resolve_vllm(version, cache), [client], ScanOptions(cache_dir=cache, baseline_cache=baselines, jobs=1)).to_json()
        out[version] = json.dumps([doc["findings"], doc["unknown"]], sort_keys=True)
    return out


def _fresh_cache() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="driftcheck-memo-"))
    (folder / "sources").symlink_to(CACHE_DIR / "sources", target_is_directory=True)
    return folder


def test_a_release_scanned_after_another_in_one_process_reports_what_it_reports_alone():
    """The seed client (a replaced model forward, vendored functions, an engine built by hand) at 0.16.0, after
    0.15.1 in the same process (as a matrix worker scans them), and alone with nothing remembered."""
    summary_cache._DECODED.clear()
    after = _findings(["0.15.1", "0.16.0"], _fresh_cache())
    file_memo.forget()
    summary_cache._DECODED.clear()
    alone = _findings(["0.16.0"], _fresh_cache())
    assert '"DC106"' in alone["0.16.0"] and '"DC104"' in alone["0.16.0"]  # the memoised rules did report
    assert after["0.16.0"] == alone["0.16.0"]
