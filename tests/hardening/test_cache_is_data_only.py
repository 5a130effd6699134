"""Issue 13 item 2: the cache holds data, never code. A crafted pickle planted where the summary or text
cache lives is never unpickled (unpickling it would create a marker file); a garbage or foreign JSON entry
is a miss and is rebuilt; the codec follows the summary dataclasses' fields, so a new field needs no change."""

from __future__ import annotations

import enum
import json
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import CACHE_DIR, run_cli, vllm_sources
from driftcheck.storage.cache import SummaryCache, _codec
from driftcheck.storage.datacodec import Codec, CodecError
from driftcheck.vllm_model.pysummary import summarise_source


class _Trap:
    """Unpickling this opens (creates) the marker file: proof that pickle ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _fresh_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "sources").symlink_to(CACHE_DIR / "sources")  # releases already fetched; nothing here writes into them
    return cache


def _scan(cache: Path):
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-f", "json", "--cache-dir", str(cache))
    assert proc.returncode == 1, proc.stderr
    return [(f["rule"], f["symbol"], f["client"]["line"]) for f in json.loads(proc.stdout)["findings"]]


def test_planted_pickles_never_run_and_garbage_entries_are_rebuilt(tmp_path):
    cache = _fresh_cache(tmp_path)
    fresh = _scan(cache)
    summaries = sorted((cache / "summaries").rglob("*.json"))
    texts = sorted((cache / "text").glob("*.json"))
    results = sorted((cache / "units").rglob("*.json"))  # per-file and whole-client results (units.py)
    assert summaries and texts and results, "the scan cached nothing"
    assert not list(cache.rglob("*.pkl"))
    marker = tmp_path / "PICKLE-RAN"
    trap = pickle.dumps(_Trap(marker), protocol=pickle.HIGHEST_PROTOCOL)
    for entry in summaries + texts + results:
        entry.write_bytes(trap)  # under the name driftcheck reads now
        entry.with_suffix(".pkl").write_bytes(trap)  # and under the name older versions read
    assert _scan(cache) == fresh
    assert not marker.exists(), "a cache entry was unpickled"
    for entry in summaries + texts + results:
        json.loads(entry.read_bytes())  # rebuilt as data
    # garbage JSON, JSON of the wrong shape and a foreign layout are misses too, and are rewritten
    for i, entry in enumerate(summaries + results):
        entry.write_bytes([b"{not json", b'["0000", [1, 2]]', json.dumps([_codec().layout, ["x"]]).encode()][i % 3])
    assert _scan(cache) == fresh
    for entry in summaries:
        assert json.loads(entry.read_bytes())[0] == _codec().layout


def test_summary_cache_never_calls_pickle(tmp_path, monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("pickle used by the cache")

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    cache = SummaryCache(tmp_path)
    src = b"import os\nclass A:\n    def f(self, x: int = 1) -> str: ...\n"
    info = summarise_source("m", "m.py", False, src.decode())
    assert cache.get(src, "m", False) is None
    cache.put(src, "m", False, info)
    assert cache.get(src, "m", False) == info
    path = cache._key(src, "m", False)
    path.write_bytes(pickle.dumps(info))  # a pickle under the entry's name: a miss
    assert cache.get(src, "m", False) is None
    assert cache.get(src, "other-name", False) is None


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Leaf:
    name: str
    line: int = 0
    default: str | None = None


@dataclass
class Node:
    """Stands for a summary class that another change extends: every kind of field the codec must follow."""

    leaves: list[Leaf]
    by_name: dict[str, Leaf] = field(default_factory=dict)
    by_line: dict[int, str] = field(default_factory=dict)
    spans: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    pair: tuple[int, ...] = ()
    tags: set[str] = field(default_factory=set)
    frozen: frozenset[int] = frozenset()
    colour: Colour = Colour.RED
    either: int | str = 0
    ratio: float = 0.5
    parent: Node | None = None
    anything: object = None


def test_codec_follows_fields_it_was_never_told_about():
    codec = Codec(Node)
    leaf = Leaf("a", 3, "x")
    tree = Node([leaf, Leaf("b")], {"a": leaf}, {7: "seven"}, {"s": (1, None)}, (1, 2, 3), {"t"}, frozenset({4}),
                Colour.BLUE, "s", 2.0, Node([]), {"k": [1, "v", None]})
    back = codec.loads(codec.dumps(tree))
    assert back == tree
    assert isinstance(back.pair, tuple) and isinstance(back.spans["s"], tuple) and isinstance(back.tags, set)
    assert back.colour is Colour.BLUE and back.parent.parent is None


def test_codec_refuses_what_does_not_match_the_types():
    codec = Codec(Node)
    good = json.loads(codec.dumps(Node([Leaf("a")])))
    for bad in (
        [good[0], good[1][:-1]],  # a field missing
        [good[0], [[["a", "1", None]]] + good[1][1:]],  # a str where an int is declared
        [good[0], [[["a", True, None]]] + good[1][1:]],  # a bool is not an int
        [good[0], [{"a": 1}] + good[1][1:]],  # an object where a list is declared
        ["0123456789abcdef", good[1]],  # another layout
    ):
        with pytest.raises(CodecError):
            codec.loads(json.dumps(bad).encode())
    with pytest.raises(CodecError):
        codec.dumps(Node([Leaf("a", line="3")]))  # a value of the wrong type is never stored


def test_a_new_field_changes_the_layout_so_old_entries_are_misses():
    @dataclass
    class V1:
        a: int

    @dataclass
    class V2:
        a: int
        b: str = ""

    V2.__qualname__ = V1.__qualname__
    old = Codec(V1).dumps(V1(1))
    with pytest.raises(CodecError):
        Codec(V2).loads(old)


@pytest.mark.parametrize("version", ["0.16.0", "0.32.0"])
def test_real_summaries_round_trip_exactly(version):
    """Every summary of a real release is stored and read back equal (a value off its declared type would
    silently never be cached)."""
    import zipfile

    codec = _codec()
    with zipfile.ZipFile(vllm_sources(version)) as z:
        names = [n for n in z.namelist() if n.startswith("vllm/") and n.endswith(".py")]
        assert len(names) > 1000
        for n in names:
            info = summarise_source(n[:-3].replace("/", "."), n, n.endswith("__init__.py"), z.read(n).decode("utf-8", "replace"))
            assert codec.loads(codec.dumps(info)) == info, n
