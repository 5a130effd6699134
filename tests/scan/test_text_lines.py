"""TextLines: a client file's lines, sliced from its text on demand, are `str.splitlines()`'s, line for line."""

from __future__ import annotations

import random

import pytest
from conftest import vllm_sources

from driftcheck.client_model.client import parse_client_file
from driftcheck.sources.sources import FolderTree, ZipTree
from driftcheck.text_lines import TextLines


def _same(text: str) -> None:
    want, got = text.splitlines(), TextLines(text)
    assert len(got) == len(want)
    assert list(got) == want
    assert got == want
    assert [got.code(n) for n in range(len(want) + 2)] == ["", *(line.strip() for line in want), ""]
    assert got[:] == want and got[1:-1] == want[1:-1]
    if want:
        assert got[-1] == want[-1] and got[0] == want[0]


def test_every_file_of_a_release():
    # vLLM 0.16.0's .py files: CRLF-free mostly, some with form feeds and non-ASCII text
    tree = ZipTree(vllm_sources("0.16.0"))
    rels = [r for r in tree.iter_files("") if r.endswith(".py")]
    assert len(rels) > 1000
    for rel in rels:
        _same(tree.read_bytes(rel).decode("utf-8", "replace"))


@pytest.mark.parametrize("text", ["", "\n", "a", "a\n", "a\r\nb", "a\rb\r", "\r\n\r\n", "a\n\n", "\n\r",
                                  "x\x0cy\x1cz\u2028w\x85v", "é\r\n\u2029", "tail without an end"])
def test_every_line_end_splitlines_knows(text):
    _same(text)


def test_random_texts_of_line_ends():
    rng = random.Random(7)
    for _ in range(5000):
        _same("".join(rng.choice("ab \n\r\x0b\x0c\x1e\x85\u2028") for _ in range(rng.randint(0, 14))))


def test_equal_where_the_lines_are():
    assert TextLines("a\r\nb") == TextLines("a\nb") == ["a", "b"]
    assert TextLines("a\nb") != TextLines("a\nc") and TextLines("a") != ("a",) and TextLines("") == []


def test_out_of_range_and_the_client_file_code(tmp_path):
    lines = TextLines("one\ntwo\r\nthree")
    with pytest.raises(IndexError):
        lines[3]
    with pytest.raises(IndexError):
        lines[-4]
    (tmp_path / "m.py").write_text("import vllm\r\nx = 1  \n")
    f = parse_client_file(FolderTree(tmp_path), "m.py", (tmp_path / "m.py").read_bytes())
    assert isinstance(f.lines, TextLines) and f.lines == ["import vllm", "x = 1  "]
    assert f.code(2) == "x = 1" and f.code(3) == "" and f.code(0) == ""
