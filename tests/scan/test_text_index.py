"""TextIndex: whole-tree text queries (DC002's "moved to", DC008's duck typing, DC106).

`classes_in` has a fast regex scanner and the original line scanner as its reference; they must
agree on every file, including the awkward ones below and every file of a real release.
"""

from __future__ import annotations

import re
import textwrap
import zipfile

import pytest

from conftest import vllm_sources
from driftcheck.sources.sources import FolderTree
from driftcheck.vllm_model.class_scanner import classes_by_line as _classes_by_line, classes_fast as _classes_fast
from driftcheck.vllm_model.text_index import TextIndex

from scan.helpers import line_of, write_tree

AWKWARD = textwrap.dedent('''\
    """Module docstring mentioning
    class NotAClass:
        def not_a_method(self): ...
    """
    import torch.nn as nn


    class Model(nn.Module):
        """Doc with a fake member:
            self.fake = 1
        """

        kind: str = "x"
        count = 0
        CONST: int
        # self.commented = 1

        def __init__(self, config):
            super().__init__()
            self.layers = []  # self.trailing_comment = 2 counts (code on the line)
            self.start_layer, self.end_layer, self.layers = (0, 1, [])
            self.norm: nn.Module = None
            if self.layers == []:
                self.compared = 1
            x = f"""
    self.in_fstring = 1
    """

        async def forward(self, x):
            return x

        @property
        def embed(self):
            return self.layers
    )


    def top_level(self):
        self.not_a_member = 1


    class Second:
        def m(self): self.inline = 1
    ''')


def test_members_of_an_awkward_file():
    [model, second] = _classes_fast("m.py", AWKWARD)
    assert (model.name, model.line) == ("Model", line_of(AWKWARD, "class Model"))
    expected = {"kind", "count", "CONST", "__init__", "layers", "start_layer", "end_layer", "norm", "compared",
                "forward", "embed", "trailing_comment"}
    assert set(model.members) == expected
    assert model.members["layers"] == line_of(AWKWARD, "self.layers = []")
    assert model.members["start_layer"] == line_of(AWKWARD, "self.start_layer, self.end_layer")
    assert model.members["forward"] == line_of(AWKWARD, "async def forward")
    assert second.members == {"m": line_of(AWKWARD, "def m(self)"), "inline": line_of(AWKWARD, "def m(self)")}


@pytest.mark.parametrize("text", [
    AWKWARD,
    AWKWARD.replace("\n", "\r\n"),
    "class A:\n    x = '''\n    y = 1\n'''\n    z = 2\n",
    "class A:\n\tdef f(self):\n\t\tself.a = 1\n\tb = 2\n",
    "class A: pass\nclass B:\n    def f(self): pass\nX = 1\n    y = 2\n",
    "class Unterminated:\n    s = '''\n    def hidden(self): ...\n",
    "",
    "\n\n",
])
def test_fast_scanner_matches_the_line_scanner(text):
    assert _classes_fast("f.py", text) == _classes_by_line("f.py", text)


UG_TEXT = """class Runner:
    def execute(self, n):
        self.set_active_loras(self.input_batch, n)
        self.update(self.a_state, key=n)
        self.seen, self.count = n, 0
        self.x, other == self.y
        self.low, high <= self.top
        self.pair, self.rest = (
            1, 2)
"""


def test_a_calls_arguments_are_not_tuple_targets():
    """UG (sample 20d): `self.set_active_loras(self.input_batch, n)` assigns nothing, so neither name is a member (vLLM
    0.10.2's GPUModelRunner seemed to define `set_active_loras`, which its mixin base does); a comparison neither. A
    tuple target still gives every name it assigns, in both scanners."""
    [fast], [by_line] = _classes_fast("r.py", UG_TEXT), _classes_by_line("r.py", UG_TEXT)
    assert fast == by_line
    assert set(fast.members) == {"execute", "seen", "count", "pair", "rest"}


def test_odd_line_breaks_take_the_reference_path(tmp_path):
    # a form feed is a line break for str.splitlines(): the reference numbering must be kept
    text = "class A:\n    a = 1\x0c\n    def f(self):\n        self.b = 2\n"
    root = write_tree(tmp_path, {"vllm/__init__.py": "", "vllm/m.py": ""})
    (root / "vllm/m.py").write_text(text)
    index = TextIndex(FolderTree(root))
    assert index.classes_in("vllm/m.py") == _classes_by_line("vllm/m.py", text)


def test_classes_defining_and_top_level_definitions(tmp_path):
    root = write_tree(tmp_path, {
        "vllm/__init__.py": "",
        "vllm/a.py": "class A:\n    def get_input_embeddings(self):\n        pass\n",
        "vllm/b.py": "def get_input_embeddings():\n    pass\n\nclass B:\n    pass\n",
    })
    index = TextIndex(FolderTree(root))
    assert [(c.path, c.name) for c in index.classes_defining("get_input_embeddings")] == [("vllm/a.py", "A")]
    assert index.top_level_definitions("get_input_embeddings") == [("vllm/b.py", 1, "def")]
    assert index.files_mentioning("get_input_embeddings") == ["vllm/a.py", "vllm/b.py"]


def _mentions_both_ways(tmp_path, monkeypatch, files: dict[str, str], names: list[str]) -> tuple[list, list]:
    """files_mentioning each name by searching every file, then with the word table from the first name on."""
    from driftcheck.vllm_model import text_index

    root = write_tree(tmp_path, files)
    searched = [TextIndex(FolderTree(root)).files_mentioning(n) for n in names]
    monkeypatch.setattr(text_index, "SEARCHES_BEFORE_WORD_INDEX", 0)
    index = TextIndex(FolderTree(root))
    tabled = [index.files_mentioning(n) for n in names]
    assert index._word_index is not None  # the table answered (the ASCII words at least)
    return searched, tabled


def test_the_word_table_answers_as_a_search_of_every_file(tmp_path, monkeypatch):
    """A name inside a longer word, at a file's start or end, beside non-ASCII letters, in a string or a comment:
    each found in the same files, in the tree's order; a name that is no ASCII word is searched for as before."""
    files = {"vllm/__init__.py": "", "vllm/a.py": "x = get_kv_cache_shape_impl(1)\n# forward\n",
             "vllm/b.py": "s = 'select_experts'\nforwardé = 1\n", "vllm/c.py": "éforward\n",
             "vllm/d.py": "class ForwardContext:\n    pass\nend_forward"}
    names = ["get_kv_cache_shape", "forward", "select_experts", "shape_impl", "end_forward", "x", "absent_name",
             "forwardé", "vllm.a", "Forward"]
    searched, tabled = _mentions_both_ways(tmp_path, monkeypatch, files, names)
    assert tabled == searched
    assert tabled[1] == ["vllm/a.py", "vllm/b.py", "vllm/c.py", "vllm/d.py"] and tabled[6] == [] and tabled[7] == ["vllm/b.py"]


@pytest.mark.network
def test_the_word_table_answers_as_a_search_on_a_release(monkeypatch):
    from driftcheck.vllm_model.text_index import WordIndex

    with zipfile.ZipFile(vllm_sources("0.16.0")) as zf:
        blobs = {n: zf.read(n) for n in zf.namelist() if n.startswith("vllm/") and n.endswith(".py")}
    words = WordIndex(blobs)
    names = [b"forward", b"get_input_embeddings", b"kv_cache", b"_", b"Scheduler", b"embed_input_ids", b"zz_absent"]
    assert [words.files_holding(n, blobs) for n in names] == [[r for r, d in blobs.items() if n in d] for n in names]


@pytest.mark.network
def test_fast_scanner_matches_on_every_file_of_a_release():
    with zipfile.ZipFile(vllm_sources("0.16.0")) as zf:
        names = [n for n in zf.namelist() if n.startswith("vllm/") and n.endswith(".py")]
        differ = [n for n in names if _classes_fast(n, t := zf.read(n).decode("utf-8", "replace")) != _classes_by_line(n, t)]
    assert len(names) > 1000 and differ == []


def test_workers_saving_at_once_keep_every_answer(tmp_path):
    """A scan's forked workers (and two scans sharing a cache) save the same tree's store at once: each merges what
    is on disk under a lock, so no save writes over another's answers."""
    import multiprocessing

    write_tree(tmp_path / "tree", {"vllm/a.py": "x = 1\n"})
    store = tmp_path / "cache" / "index.json"
    store.parent.mkdir()
    ctx = multiprocessing.get_context("fork")
    start = ctx.Event()

    def save_one(n: int) -> None:
        index = TextIndex(FolderTree(tmp_path / "tree"), store=store)
        index.remember(f"answer-{n}", lambda: list(range(2000)))  # a store big enough that writing it takes a while
        start.wait()
        index.save()

    workers = [ctx.Process(target=save_one, args=(n,)) for n in range(8)]
    for w in workers:
        w.start()
    start.set()
    for w in workers:
        w.join()
        assert w.exitcode == 0
    saved = TextIndex(FolderTree(tmp_path / "tree"), store=store)
    assert sorted(saved.extra) == sorted(f"answer-{n}" for n in range(8))


def test_top_level_definitions_match_a_line_anchored_search_on_a_release():
    """`top_level_definitions` searches after a "\\n" (fast); on a real release it must find what the `^`-anchored
    reference finds, line for line, for names defined as classes, functions and assignments."""
    import re

    from driftcheck.sources.targets import resolve_vllm
    from conftest import CACHE_DIR

    index = TextIndex(resolve_vllm("0.23.0", CACHE_DIR).tree)

    def reference(name: str) -> list:
        pattern = re.compile(rb"^(class|def|async def)\s+" + re.escape(name.encode()) + rb"\b|^" + re.escape(name.encode())
                             + rb"\s*[:=]", re.M)
        return [(rel, index.blob(rel).count(b"\n", 0, m.start()) + 1, (m.group(1) or b"assign").decode())
                for rel in index.files_mentioning(name) for m in pattern.finditer(index.blob(rel))]

    names = set()
    for rel in sorted(index.blobs())[:150]:
        for groups in re.findall(rb"^(?:async def|def|class)\s+(\w+)|^(\w+)\s*[:=]", index.blob(rel), re.M):
            names |= {g.decode() for g in groups if g}
    names = sorted(names)[:300]
    assert len(names) == 300
    found = 0
    for name in names:
        assert index.top_level_definitions(name) == reference(name), name
        found += len(reference(name))
    assert found > 300


def _naming_base_by_search(index: TextIndex, base: str) -> list[tuple[str, str]]:
    """The answer as one search a base computes it: the files mentioning it, their headers whose list has the word."""
    word = re.compile(rb"\b" + re.escape(base.encode()) + rb"\b")
    header = re.compile(rb"^[ \t]*class\s+(\w+)\s*\(([^)]*)\)", re.M)
    return [(rel, m.group(1).decode()) for rel, data in index.blobs().items() if base.encode() in data
            for m in header.finditer(data) if word.search(m.group(2))]


@pytest.mark.parametrize("version", ["0.16.0", "0.32.0"])
def test_classes_naming_base_from_one_pass_equals_a_search_per_base(version):
    from driftcheck.sources.sources import ZipTree

    index = TextIndex(ZipTree(vllm_sources(version)))
    words = sorted({w for _rel, _name, bases in _all_headers(index) for w in re.findall(r"\w+", bases)})
    assert len(words) > 500
    words = words[::4]  # a quarter of them, spread over the alphabet
    # base words of the release, words that are only parts of base words, and names no base list holds
    asked = [*words, "Module", "nn", "Base", "Config", "object", "NoSuchBaseAnywhere", "nn.Module", "torch.nn.Module", "_"]
    for base in asked:
        assert index.classes_naming_base(base) == _naming_base_by_search(index, base), base
    assert index.classes_naming_base("nn.Module")  # a dotted base takes the search, and finds torch.nn.Module users


def _all_headers(index: TextIndex):
    header = re.compile(rb"^[ \t]*class\s+(\w+)\s*\(([^)]*)\)", re.M)
    return [(rel, m.group(1).decode(), m.group(2).decode("utf-8", "replace"))
            for rel, data in index.blobs().items() for m in header.finditer(data)]


def test_classes_naming_base_on_awkward_headers(tmp_path):
    root = write_tree(tmp_path, {"vllm/a.py": "class A(Base): pass\nclass B(\n    mod.Base,\n    Mixin):\n    pass\n",
                                 "vllm/b.py": "x = 'class C(Base)'\n  class D(Base2, Base): pass\nclass E(BaseX): pass\n",
                                 "vllm/c.py": "# Base mentioned, no header\n"})
    index = TextIndex(FolderTree(root))
    for base in ("Base", "Mixin", "mod", "Base2", "BaseX", "mod.Base"):
        assert index.classes_naming_base(base) == _naming_base_by_search(index, base), base
    assert index.classes_naming_base("Base") == [("vllm/a.py", "A"), ("vllm/a.py", "B"), ("vllm/b.py", "D")]


def test_class_headers_are_the_regex_matches_on_real_release_files_and_odd_texts():
    # class_headers finds from the occurrences of `class` what the regex tried at every line found, a base list that
    # runs over later lines hiding the headers inside it as finditer's matches do
    from driftcheck.vllm_model.text_index import _CLASS_HEADER_AFTER_NEWLINE, class_headers

    def spans(matches) -> list:
        return [(m.group(1), m.group(2)) for m in matches]

    odd = [b"class A(B):\n", b"  class A (B, C):\n", b"class A(B,\nclass B(C):\n", b"class A:\nclass B(C)\n",
           b"subclass D(E):\n", b"x = 'class F(G)'\nclass\nH(I):\n", b"\tclass J(\n    K,\n):\n", b"class L(M)class N(O)"]
    for data in odd:
        assert spans(class_headers(data)) == spans(_CLASS_HEADER_AFTER_NEWLINE.finditer(b"\n" + data)), data
    with zipfile.ZipFile(vllm_sources("0.16.0")) as zf:
        blobs = [zf.read(n) for n in zf.namelist() if n.endswith(".py")]
    assert sum(len(class_headers(b)) for b in blobs) > 3000
    assert all(spans(class_headers(b)) == spans(_CLASS_HEADER_AFTER_NEWLINE.finditer(b"\n" + b)) for b in blobs)


def test_tuple_targets_searched_from_self_are_the_line_regex_matches():
    # `_indented_tuple_targets` (a search from `self.`) finds what `_SELF_TUPLE_M` (tried at every line) finds
    from driftcheck.vllm_model.class_scanner import _SELF_TUPLE_M, _indented_tuple_targets

    def both(text: str, start: int = 0, end: int | None = None) -> tuple[list, list]:
        end = len(text) if end is None else end
        return ([(m.start(1), m.group(1)) for m in _indented_tuple_targets(text, start, end)],
                [(m.start(1), m.group(1)) for m in _SELF_TUPLE_M.finditer(text, start, end)])

    odd = ["\n    self.a, self.b = f()\n", "\nself.a, self.b = 1\n", "\n    x = self.a, self.b = y\n",
           "\n    self.a == (self.b, c)\n", "\n\t self.x,  self.y  = 1, 2\n", "\n    f(self.a, self.b)\n",
           "\n    self.a, b = self.c, d = 1\n", "\n    self.a, self.b != 1\n", "\n    # self.a, self.b = 1\n"]
    for text in odd:
        mine, ref = both(text)
        assert mine == ref, text
    with zipfile.ZipFile(vllm_sources("0.16.0")) as zf:
        texts = [zf.read(n).decode("utf-8", "replace") for n in zf.namelist() if n.endswith(".py")]
    assert sum(len(both(t)[1]) for t in texts) > 500
    assert all(both(t)[0] == both(t)[1] for t in texts)
    text = texts[0] + "\n    self.p, self.q = 1\n"
    assert both(text, len(texts[0]) + 1)[0] == both(text, len(texts[0]) + 1)[1]  # a region starting past the "\n"
