"""Fast whole-tree text queries, for the few questions that need every file of a vLLM release.

Parsing all ~1,300-2,600 files of a release takes seconds; these questions ("which classes define
a method named X?", "where is a top-level `X` defined now?") are answered with byte regexes over
the files that contain the name at all, and a light line scanner for class membership. Results are
kept per tree for the life of the process.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from driftcheck.errors import SourceError
from driftcheck.sources.sources import SourceTree, module_name_for
from driftcheck.storage.datacodec import Codec, CodecError
from driftcheck.vllm_model import file_memo
from driftcheck.vllm_model.class_scanner import ClassMembers, classes_by_line, classes_fast, odd_line_breaks


_CLASS_WITH_BASES = re.compile(rb"^[ \t]*class\s+(\w+)\s*\(([^)]*)\)", re.M)
# the same headers searched after a "\n" (a literal `re` skips ahead to; `^` under re.M tries every position)
_CLASS_HEADER_AFTER_NEWLINE = re.compile(rb"\n[ \t]*class\s+(\w+)\s*\(([^)]*)\)")  # the reference for class_headers
_CLASS_HEADER = re.compile(rb"class\s+(\w+)\s*\(([^)]*)\)")
_BASE_WORD = re.compile(rb"\w+")
_WORD = re.compile(r"[A-Za-z0-9_]+")
_FOREIGN_LOGGER = re.compile(rb"""=\s*(?:[\w.]+\.)?(?:getLogger|init_logger)\(\s*(['"])([\w.-]+)\1\s*[,)]""")  # a named logger
_OWN_CALL_START = re.compile(rb"[A-Za-z_]\w*\s*(?::[^=\n]*)?=\s*[A-Za-z_][\w.]*\s*\(")  # `name = f.g(`


def class_headers(data: bytes) -> list[re.Match]:
    """The matches `_CLASS_HEADER_AFTER_NEWLINE.finditer(b"\\n" + data)` gives (their groups: the class's name and
    base list), found from the occurrences of `class` that start a line after blanks: the regex was tried at every
    line of every file of a release. A match that runs over later lines (a base list without its `)`) hides the
    headers inside it, as finditer's do."""
    out: list[re.Match] = []
    end = 0
    at = data.find(b"class")
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        if start >= end and not data[start:at].strip(b" \t"):
            m = _CLASS_HEADER.match(data, at)
            if m is not None:
                out.append(m)
                end = m.end()
        at = data.find(b"class", at + 1)
    return out


# After this many names searched for in one process, the next are answered from a table of the tree's words: one
# search of every file costs ~14 ms on 0.32.0 (39 MB), the table ~0.8 s once and ~1 ms a name; a whole-platform
# client asks hundreds of names, a plugin a few dozen (which the table would only slow down).
SEARCHES_BEFORE_WORD_INDEX = 64
_ASCII_WORD = re.compile(rb"[A-Za-z0-9_]+")


class WordIndex:
    """Every maximal run of ASCII word characters of a tree's files -> the files holding it. An ASCII word occurs in
    a file exactly where it lies inside one of the file's runs, so the files holding it are those of the runs
    containing it: the same answer as searching every file's bytes, from one search of the runs' text."""

    def __init__(self, blobs: dict[str, bytes]):
        self._files: dict[bytes, list[str]] = {}
        for rel, data in blobs.items():
            for word in set(_ASCII_WORD.findall(data)):
                self._files.setdefault(word, []).append(rel)
        self._text = b"\n".join(self._files)  # one run a line

    def files_holding(self, needle: bytes, blobs: dict[str, bytes]) -> list[str]:
        hit: set[str] = set()
        text = self._text
        at = text.find(needle)
        while at != -1:
            start = text.rfind(b"\n", 0, at) + 1
            end = text.find(b"\n", at)
            end = len(text) if end == -1 else end
            hit.update(self._files[text[start:end]])
            at = text.find(needle, end)
        return [rel for rel in blobs if rel in hit]


class TextIndex:
    """Whole-tree text queries over one vLLM tree. For an immutable tree (a wheel or fetched sources zip) the
    answers are kept on disk between runs (`store`), so a warm scan reads only the few files it needs."""

    STORE_FORMAT = 3  # 2: JSON (1 was a pickle, which a crafted cache file could use to run code); 3: class members no longer
    # taken from a call's arguments (UG), so answers stored by format 2 are not read

    def __init__(self, tree: SourceTree, package: str = "vllm", store: Path | None = None):
        self.tree = tree
        self.package = package
        self._blobs: dict[str, bytes] | None = None
        self._single: dict[str, bytes] = {}
        self._content_keys: dict[str, bytes] = {}
        self._classes: dict[str, list[ClassMembers]] = {}
        self._mentions: dict[str, list[str]] = {}
        self._searched = 0  # names searched for in this process (the answers read from the store not counted)
        self._word_index: WordIndex | None = None
        self._headers: dict[str, list[tuple[str, str]]] | None = None  # _base_words, this process only
        self.extra: dict[str, object] = {}  # other per-tree answers probes keep here (plain data: see encode_plain)
        # The store is JSON whatever name the caller gave it (older versions wrote pickles as *.pkl, never read now).
        self.store = store.with_suffix(".json") if store is not None else None
        self.dirty = False
        if store is not None:
            self._load()

    def _load(self) -> None:
        stored = self._read()
        if stored is not None:
            self._classes, self._mentions, self.extra = stored

    def _read(self):
        """(classes, mentions, extra) from the store, or None when it is absent, damaged or foreign."""
        try:
            with open(self.store, "rb") as fh:
                doc = json.loads(fh.read())
        except (OSError, ValueError, RecursionError):  # absent, corrupt or not JSON: start empty
            return None
        try:
            if not (isinstance(doc, dict) and doc.get("format") == self.STORE_FORMAT and doc.get("layout") == _codec().layout):
                raise CodecError("another format")
            stored = _codec().decode(doc["index"])
            extra = decode_plain(doc["extra"])
            if type(extra) is not dict:
                raise CodecError("extra is not an object")
        except (CodecError, KeyError, RecursionError):
            return None  # a foreign or damaged store is ignored and rewritten by the next save
        return stored.classes, stored.mentions, extra

    def save(self) -> None:
        if self.store is None or not self.dirty:
            return
        from driftcheck.storage.filelock import merge_lock

        with merge_lock(self.store):
            self._merge_and_write()

    def _merge_and_write(self) -> None:
        from driftcheck.storage.safe_write import write_bytes

        # Another scan of this tree (or a worker of this one) may have saved answers since ours were loaded.
        disk = self._read()
        if disk is not None:
            self._classes = {**disk[0], **self._classes}
            self._mentions = {**disk[1], **self._mentions}
            self.extra = {**disk[2], **self.extra}
        extra = {}
        for key, value in self.extra.items():
            try:
                extra[key] = encode_plain(value)
            except CodecError:
                continue  # an answer that is not plain data stays in memory for this process only
        doc = {"format": self.STORE_FORMAT, "layout": _codec().layout,
               "index": _codec().encode(_Stored(self._classes, self._mentions)), "extra": extra}
        try:
            write_bytes(self.store, json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), durable=False)
            self.dirty = False
        except OSError:
            self.store = None  # read-only or full cache: keep answering from memory

    def cold(self) -> bool:
        """Nothing answered yet, in memory or from the store: the first question will read the whole text."""
        return self._blobs is None and not self._mentions and not self._classes and not self.extra

    def blobs(self) -> dict[str, bytes]:
        if self._blobs is None:
            self._blobs = self.tree.read_many(list(self.tree.iter_files(self.package)))
        return self._blobs

    def adopt_blobs(self, blobs: dict[str, bytes]) -> None:
        """The whole text, read by someone else (scan/preload.py); what this index read itself is kept."""
        if self._blobs is None:
            self._blobs = blobs

    def blob(self, rel: str) -> bytes:
        """One file's bytes, without reading the whole tree when it was not read yet."""
        if self._blobs is not None:
            return self._blobs.get(rel, b"")
        if rel not in self._single:
            try:
                self._single[rel] = self.tree.read_bytes(rel)
            except SourceError:
                self._single[rel] = b""
        return self._single[rel]

    def per_content(self, question: str, rel: str, compute, *args):
        """`compute()` for one file, answered once per content in this process (`file_memo`): a release's
        unchanged files reuse what an earlier release's scan found in them."""
        if not file_memo.on():
            return compute()
        key = self._content_keys.get(rel)
        if key is None:
            key = self._content_keys[rel] = file_memo.content_key(self.blob(rel))
        return file_memo.answer(question, rel, key, compute, *args)

    def knows(self, name: str) -> bool:
        """Whether `files_mentioning(name)` is already answered (in memory or from the store): free to ask."""
        return name in self._mentions

    def files_mentioning(self, name: str) -> list[str]:
        """The files whose bytes hold `name` anywhere (a substring, not only a whole word), in the tree's order."""
        if name not in self._mentions:
            needle = name.encode()
            self._searched += 1
            if self._searched > SEARCHES_BEFORE_WORD_INDEX and _ASCII_WORD.fullmatch(needle):
                self._mentions[name] = self._words().files_holding(needle, self.blobs())
            else:
                self._mentions[name] = [rel for rel, data in self.blobs().items() if needle in data]
            self.dirty = True
        return self._mentions[name]

    def set_on_module_elsewhere(self, name: str, rel: str) -> bool:
        """Whether a file other than `rel` stores `.name = ...` (`q.QUANTIZATION_METHODS = {}`): what a module-level
        value holds then depends on whether that ran."""
        setter = re.compile(rf"\.{re.escape(name)}\s*=[^=]".encode())
        return any(setter.search(self.blob(other)) for other in self.files_mentioning(name) if other != rel)

    def _words(self) -> "WordIndex":
        if self._word_index is None:
            self._word_index = WordIndex(self.blobs())
        return self._word_index

    def remember(self, key: str, compute):
        """A per-tree answer kept with the index (computed once per tree, ever)."""
        if key not in self.extra:
            self.extra[key] = compute()
            self.dirty = True
        return self.extra[key]

    def classes_in(self, rel: str) -> list[ClassMembers]:
        """Top-level classes of one file with their members (methods, self.attrs, class attrs)."""
        if rel in self._classes:
            return self._classes[rel]
        out = self._classes[rel] = self.per_content("classes", rel, lambda: _scan_classes(rel, self.blob(rel)))
        self.dirty = True
        return out

    def classes_defining(self, name: str) -> list[ClassMembers]:
        out = []
        for rel in self.files_mentioning(name):
            for cls in self.classes_in(rel):
                if name in cls.members:
                    out.append(cls)
        return out

    def classes_naming_base(self, base: str) -> list[tuple[str, str]]:
        """(file, class) for every `class X(...)` whose base list names `base` (nested classes too)."""
        key = f"bases:{base}"
        if key not in self._mentions:
            if _WORD.fullmatch(base) and (self._blobs is not None or base not in self._mentions):
                found = [f"{rel}\0{name}" for rel, name in self._base_words().get(base, ())]  # the whole text is read
            else:
                word = re.compile(rb"\b" + re.escape(base.encode()) + rb"\b")
                found = []
                for rel in self.files_mentioning(base):
                    for m in _CLASS_WITH_BASES.finditer(self.blob(rel)):
                        if word.search(m.group(2)):
                            found.append(f"{rel}\0{m.group(1).decode()}")
            self._mentions[key] = found
            self.dirty = True
        return [tuple(item.split("\0", 1)) for item in self._mentions[key]]

    def _base_words(self) -> dict[str, list[tuple[str, str]]]:
        """Every word of every `class X(...)` base list in the tree -> the (file, class) naming it, in file order:
        one pass over the text (the cost of about three `files_mentioning` searches), where a whole-platform client
        asks for the subclasses of hundreds of bases, each a search of every file. For a base made of ASCII word
        characters, the word-bounded search matches a base list exactly when the base is one of the list's runs of
        word characters."""
        if self._headers is None:
            headers: dict[str, list[tuple[str, str]]] = {}
            for rel, data in self.blobs().items():
                if b"class" not in data:
                    continue
                for m in class_headers(data):
                    entry = (rel, m.group(1).decode())
                    for word in dict.fromkeys(_BASE_WORD.findall(m.group(2))):
                        headers.setdefault(word.decode(), []).append(entry)
            self._headers = headers
        return self._headers

    def class_by_name(self, rel: str, name: str) -> ClassMembers | None:
        for cls in self.classes_in(rel):
            if cls.name == name:
                return cls
        return None

    def top_level_definitions(self, name: str) -> list[tuple[str, int, str]]:
        """Where `class name`, `def name` or `name = ...` is defined at module level."""
        # searched after a "\n" (a literal `re` skips ahead to, where `^` under re.M tries every position): a match's
        # start is then the offset of its line in the file itself
        pattern = re.compile(rb"\n(?:(class|def|async def)\s+" + re.escape(name.encode()) + rb"\b|" + re.escape(name.encode())
                             + rb"\s*[:=])")
        out = []
        for rel in self.files_mentioning(name):
            data = self.blob(rel)
            for m in pattern.finditer(b"\n" + data):
                line = data.count(b"\n", 0, m.start()) + 1
                kind = (m.group(1) or b"assign").decode()
                out.append((rel, line, kind))
        return out

    def importers(self, name: str) -> dict[str, int]:
        """How many of the package's files import `name` from each module (`from vllm.x import a, name`, also in a
        parenthesised list over several lines; relative imports aside): where vLLM's own code takes a name from is
        its public home, kept once per tree."""
        def count() -> dict[str, int]:
            word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
            out: dict[str, int] = {}
            for rel in self.files_mentioning(name):
                if rel.split("/")[0] != self.package:
                    continue
                for m in _FROM_IMPORT.finditer(self.blob(rel)):
                    if word.search(m.group(2)):
                        module = m.group(1).decode()
                        out[module] = out.get(module, 0) + 1
            return out
        return self.remember(f"importers:{name}", count)

    def own_object_at(self, rel: str, line: int) -> tuple[str, str] | None:
        """The top-level assignment at `rel:line` when it binds an object made for one module, as (its source text,
        that module): a call handed `__name__` or `__file__` (`logger = init_logger(__name__)`) is made for its own
        module, one handed a dotted name of the package as a literal for the module it names (0.27.1's
        `entrypoints/serve/utils/server_utils.py`: `logger = init_logger("vllm.entrypoints.openai.server_utils")`, the
        logger of the module that code left), or a logger named for another package (`logging.getLogger("minimax")`,
        as that name). None for any other line. Every module that binds one has its own, so
        such a name is where a name of a gone module went only when it was made for that module (NA1: `from
        vllm.worker.worker import logger` is not answered by the EC connector's `worker.logger`); one shared by a name
        that is no module's (`logging.getLogger("vllm")`) is the same object everywhere."""
        lines = self.blob(rel).split(b"\n", line + 8)[:line + 8]  # the lines up to the statement's end, no further
        if not 0 < line <= len(lines) or not _OWN_CALL_START.match(lines[line - 1]):
            return None
        text = lines[line - 1]
        depth = text.count(b"(") - text.count(b")")
        for more in lines[line:line + 8]:  # the call's remaining lines, up to its closing parenthesis
            if depth <= 0:
                break
            text += b"\n" + more
            depth += more.count(b"(") - more.count(b")")
        if depth != 0:
            return None
        source = " ".join(text.decode("utf-8", errors="replace").split())
        made = re.search(rb"""[(,=]\s*(?:(__name__|__file__)|(['"])(""" + re.escape(self.package.encode())
                         + rb"""\.[\w.]+)\2)\s*[,)]""", text[text.index(b"("):])
        if made is None:
            # `logger = logging.getLogger("minimax")` in a vendored kernel (0.34.0's third_party/fmha_sm100): a logger
            # named for another package is that name's own, never a vLLM module's (30a)
            named = _FOREIGN_LOGGER.search(text)
            foreign = named.group(2).decode() if named is not None else None
            return (source, foreign) if foreign is not None and foreign.split(".")[0] != self.package else None
        module = made.group(3).decode() if made.group(3) else \
            module_name_for(rel)
        return source, module

    def defining_modules(self, name: str, near: str, *, leader: bool = False) -> list[str]:
        """The package's modules that define `name` at top level, the likeliest new home of a name that left module
        `near` first: the one sharing the most leading package parts with `near` (`from vllm.utils import cdiv` ->
        `vllm.utils.math_utils`, not an unrelated kernel file that happens to assign `cdiv = gl.cdiv`), then a `def` /
        `class` before a plain assignment (often an alias of something else: `vllm.utils.Device`, an enum, went to
        `vllm.engine.protocol`, not to `vllm.config.device`'s `Device = Literal[...]`), then the one vLLM's own files
        import it from most (itself or the package above it: `importers`), then the shallower module.

        `leader=True` (asked where a home is named: DC002's "It is defined in ... now", DC001's hint, `move-import`):
        empty when no one module leads, the first two alike on all four counts, so that only their order in the
        file list would pick one (HG1: 0.33.0-0.34.0 ship two copies of FlashAttention 4's `fa_logging.py`, under
        `third_party/tml_fa4/` and `vllm_flash_attn/cute/`, each with its own `_default_handler`; neither is where
        `vllm.logger._default_handler` went). As DC008 names no rename on a tie (TD). Empty too for a common name, one
        that three or more modules define alike, unless vLLM's own imports from the leader outnumber the other such
        modules (batch 19d's H1: `from vllm.scripts import main` was sent to `vllm.entrypoints.launchers.run_batch`'s
        batch runner, one of 25 top-level `main`s of 0.33.0, because one vLLM file imports it from there)."""
        near_parts = near.split(".")
        found: list[tuple[str, int, int, int]] = []  # (module, shared leading parts, 1 for an assignment, order)
        for order, (rel, _line, kind) in enumerate(self.top_level_definitions(name)):
            if rel.split("/")[0] != self.package:
                continue
            module = module_name_for(rel)
            shared = 0
            for mine, theirs in zip(module.split("."), near_parts):
                if mine != theirs:
                    break
                shared += 1
            own = self.own_object_at(rel, _line) if kind == "assign" else None
            if own is not None and own[1] != near:
                continue  # `logger = init_logger(__name__)`: that module's own object, no home of another's (NA1)
            found.append((module, shared, 1 if kind == "assign" else 0, order))
        # vLLM's own imports of it from a module or from the package above it that re-exports it (`from vllm.model_
        # executor.layers.attention import Attention`, defined in `.attention`): a model file's private class of the
        # same name (pixtral's vision `Attention`) is imported by none (MD1); asked only where there is a choice
        importers = self.importers(name) if len({m for m, *_ in found}) > 1 else {}
        ranked: dict[str, tuple[int, int, int, int, int]] = {}
        for module, shared, assign, order in found:
            used = importers.get(module, 0) + importers.get(module.rpartition(".")[0], 0)
            key = (-shared, assign, -used, module.count(".") + 1, order)
            if module not in ranked or key < ranked[module]:
                ranked[module] = key
        out = sorted(ranked, key=ranked.__getitem__)
        if leader and len(out) > 1 and ranked[out[0]][:4] == ranked[out[1]][:4]:
            return []
        if leader and len(out) > 2:
            # a name three or more modules define alike (as near to `near`, the same kind) is a common name: it
            # leads only where vLLM's own imports from it outnumber the others (not by one import or by depth)
            tied = [m for m in out if ranked[m][:2] == ranked[out[0]][:2]]
            if len(tied) >= 3 and -ranked[out[0]][2] < len(tied) - 1:
                return []
        return out


_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)


def _scan_classes(rel: str, data: bytes) -> list[ClassMembers]:
    text = data.decode("utf-8", errors="replace")
    return classes_by_line(rel, text) if odd_line_breaks(text) else classes_fast(rel, text)


# ------------------------------------------------------------------------------- the store's data
@dataclass
class _Stored:
    classes: dict[str, list[ClassMembers]]
    mentions: dict[str, list[str]]


@functools.lru_cache(maxsize=1)
def _codec() -> Codec:
    return Codec(_Stored)


_TUPLE = "__tuple__"


def encode_plain(value):
    """Plain data (str, int, float, bool, None, lists, tuples, str-keyed dicts) as JSON; tuples survive
    (as {"__tuple__": [...]}), anything else raises CodecError."""
    t = type(value)
    if t in (str, int, bool, type(None)) or (t is float and value == value and abs(value) != float("inf")):
        return value
    if t is list:
        return [encode_plain(v) for v in value]
    if t is tuple:
        return {_TUPLE: [encode_plain(v) for v in value]}
    if t is dict:
        if _TUPLE in value:
            raise CodecError(f"a dict key named {_TUPLE}")
        if any(type(k) is not str for k in value):
            raise CodecError("a dict key that is not a str")
        return {k: encode_plain(v) for k, v in value.items()}
    raise CodecError(f"not plain data: {t.__name__}")


def decode_plain(value):
    t = type(value)
    if t is list:
        return [decode_plain(v) for v in value]
    if t is dict:
        if len(value) == 1 and _TUPLE in value:
            items = value[_TUPLE]
            if type(items) is not list:
                raise CodecError("a bad tuple")
            return tuple(decode_plain(v) for v in items)
        return {k: decode_plain(v) for k, v in value.items()}
    return value
