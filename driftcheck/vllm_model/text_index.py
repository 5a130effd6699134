"""Fast whole-tree text queries, for the few questions that need every file of a vLLM release.

Parsing all ~1,300-2,600 files of a release takes seconds; these questions ("which classes define
a method named X?", "where is a top-level `X` defined now?") are answered with byte regexes over
the files that contain the name at all, and a light line scanner for class membership. Results are
kept per tree for the life of the process.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from driftcheck.storage.datacodec import Codec, CodecError
from driftcheck.errors import SourceError
from driftcheck.sources.sources import SourceTree

_CLASS = re.compile(r"^class\s+(\w+)")
_CLASS_WITH_BASES = re.compile(rb"^[ \t]*class\s+(\w+)\s*\(([^)]*)\)", re.M)
_STATEMENT_START = re.compile(r"^(class\s|def\s|async\s+def\s|@|if\s|try:|for\s|while\s|with\s|from\s|import\s|[A-Za-z_]\w*\s*[:=(\[.])")
_DEF = re.compile(r"^(\s+)(?:async\s+)?def\s+(\w+)")
_SELF_ATTR = re.compile(r"\bself\.(\w+)\s*(?::[^=\n]+)?=(?!=)")
_SELF_NAME = re.compile(r"\bself\.(\w+)")
_CLASS_ATTR = re.compile(r"^(\s+)(\w+)\s*(?::[^=\n]+)?(?:=(?!=)|$)")


@dataclass(frozen=True)
class ClassMembers:
    path: str
    name: str
    line: int
    members: dict[str, int]  # member name -> line


class TextIndex:
    """Whole-tree text queries over one vLLM tree. For an immutable tree (a wheel or fetched sources zip) the
    answers are kept on disk between runs (`store`), so a warm scan reads only the few files it needs."""

    STORE_FORMAT = 2  # 2: JSON (1 was a pickle, which a crafted cache file could use to run code)

    def __init__(self, tree: SourceTree, package: str = "vllm", store: Path | None = None):
        self.tree = tree
        self.package = package
        self._blobs: dict[str, bytes] | None = None
        self._single: dict[str, bytes] = {}
        self._classes: dict[str, list[ClassMembers]] = {}
        self._mentions: dict[str, list[str]] = {}
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
        from driftcheck.storage.safe_write import write_bytes

        # Another scan of this tree may have saved answers since ours were loaded: keep them too.
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

    def blobs(self) -> dict[str, bytes]:
        if self._blobs is None:
            blobs: dict[str, bytes] = {}
            for rel in self.tree.iter_files(self.package):
                try:
                    blobs[rel] = self.tree.read_bytes(rel)
                except SourceError:
                    continue
            self._blobs = blobs
        return self._blobs

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

    def files_mentioning(self, name: str) -> list[str]:
        if name not in self._mentions:
            needle = name.encode()
            self._mentions[name] = [rel for rel, data in self.blobs().items() if needle in data]
            self.dirty = True
        return self._mentions[name]

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
        text = self.blob(rel).decode("utf-8", errors="replace")
        out = _classes_by_line(rel, text) if _odd_line_breaks(text) else _classes_fast(rel, text)
        self._classes[rel] = out
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
            word = re.compile(rb"\b" + re.escape(base.encode()) + rb"\b")
            found = []
            for rel in self.files_mentioning(base):
                for m in _CLASS_WITH_BASES.finditer(self.blob(rel)):
                    if word.search(m.group(2)):
                        found.append(f"{rel}\0{m.group(1).decode()}")
            self._mentions[key] = found
            self.dirty = True
        return [tuple(item.split("\0", 1)) for item in self._mentions[key]]

    def class_by_name(self, rel: str, name: str) -> ClassMembers | None:
        for cls in self.classes_in(rel):
            if cls.name == name:
                return cls
        return None

    def top_level_definitions(self, name: str) -> list[tuple[str, int, str]]:
        """Where `class name`, `def name` or `name = ...` is defined at module level."""
        pattern = re.compile(rb"^(class|def|async def)\s+" + re.escape(name.encode()) + rb"\b|^" + re.escape(name.encode()) + rb"\s*[:=]", re.M)
        out = []
        for rel in self.files_mentioning(name):
            data = self.blob(rel)
            for m in pattern.finditer(data):
                line = data.count(b"\n", 0, m.start()) + 1
                kind = (m.group(1) or b"assign").decode()
                out.append((rel, line, kind))
        return out


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


def _classes_by_line(rel: str, text: str) -> list[ClassMembers]:
    """The line-by-line scanner: the reference semantics of `TextIndex.classes_in`."""
    out: list[ClassMembers] = []
    current: ClassMembers | None = None
    body_indent: int | None = None
    in_string: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
        if not stripped or stripped.startswith("#"):
            continue
        if not line[0].isspace():
            m = _CLASS.match(line)
            if m:
                current = ClassMembers(rel, m.group(1), lineno, {})
                out.append(current)
                body_indent = None
                continue
            if _STATEMENT_START.match(line):
                current = None
            continue
        if current is None:
            continue
        indent = len(line) - len(line.lstrip())
        if body_indent is None:
            body_indent = indent
        m = _DEF.match(line)
        if m and len(m.group(1)) == body_indent:
            current.members.setdefault(m.group(2), lineno)
        elif indent == body_indent:
            m = _CLASS_ATTR.match(line)
            if m:
                current.members.setdefault(m.group(2), lineno)
        for m in _SELF_ATTR.finditer(line):
            current.members.setdefault(m.group(1), lineno)
        if stripped.startswith("self.") and "," in stripped.split("=", 1)[0]:
            # Tuple targets: `self.start_layer, self.end_layer, self.layers = make_layers(...)`.
            for m in _SELF_NAME.finditer(stripped.split("=", 1)[0]):
                current.members.setdefault(m.group(1), lineno)
    return out


# ------------------------------------------------------------------------ the fast class scanner
# `_classes_fast` answers exactly like `_classes_by_line`, with a few regex searches over the whole
# text instead of Python work per line (classes_in dominated DC008 and DC106 on the 1,300-2,600 files
# of a release). Every pattern starts with a literal ("\n", "def", "self.") so that `re` can skip
# ahead instead of trying each position. Lines are "\n"-separated here; a text with another break
# that str.splitlines() honours takes the reference path, so line numbers never differ.
_ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LONE_CR = re.compile(r"\r(?!\n)")
_TRIPLE = re.compile(r"\"\"\"|'''")
_TOP_LINE = re.compile(r"\n([^\s#].*)")
_FIRST_CODE = re.compile(r"\n([^\S\n]+)[^\s#]")
_DEF_NAME = re.compile(r"def[^\S\n]+(\w+)")
_DEF_LEAD = re.compile(r"([^\S\n]+)(?:async[^\S\n]+)?")
_SELF_ATTR_M = re.compile(r"self\.(\w+)[^\S\n]*(?::[^=\n]+)?=(?!=)")
# a line starting `self.` whose part before the first "=" holds a comma (tuple targets)
_SELF_TUPLE_M = re.compile(r"\n[^\S\n]+(self\.[^=\n,]*,[^=\n]*)")


@functools.lru_cache(maxsize=None)
def _class_attr_at(indent: int) -> re.Pattern:
    """Class-attribute lines indented by exactly `indent` characters (the class body's indent)."""
    return re.compile(rf"(?m)\n[^\S\n]{{{indent}}}(\w+)[^\S\n]*(?::[^=\n]+)?(?:=(?!=)|$)")


def _odd_line_breaks(text: str) -> bool:
    """Line breaks other than \\n and \\r\\n (substring tests: a regex over the text costs more)."""
    return any(c in text for c in _ODD_BREAKS) or ("\r" in text and _LONE_CR.search(text) is not None)


class _LineCounter:
    """Line numbers of offsets visited in increasing order (counts newlines once per gap)."""

    def __init__(self, text: str, pos: int = 0, line: int = 1):
        self.text, self.pos, self.line = text, pos, line

    def __call__(self, offset: int) -> int:
        if offset < self.pos:
            self.pos, self.line = 0, 1
        self.line += self.text.count("\n", self.pos, offset)
        self.pos = offset
        return self.line


def _line_at(text: str, offset: int) -> tuple[int, str]:
    """(start offset, text) of the line holding `offset`."""
    begin = text.rfind("\n", 0, offset) + 1
    finish = text.find("\n", offset)
    return begin, text[begin:finish if finish >= 0 else len(text)]


def _string_ranges(text: str) -> list[tuple[int, int]]:
    """(first, last) lines that the line scanner skips as inside a triple-quoted string."""
    ranges: list[tuple[int, int]] = []
    line_of = _LineCounter(text)
    in_string: str | None = None
    opened = last = 0
    for m in _TRIPLE.finditer(text):
        line = line_of(m.start())
        if line == last:
            continue  # one decision per line, on the whole line, as the line scanner makes it
        last = line
        body = _line_at(text, m.start())[1]
        if in_string:
            if body.count(in_string) % 2 == 1:
                ranges.append((opened + 1, line))
                in_string = None
            continue
        for quote in ('"""', "'''"):
            if body.count(quote) % 2 == 1:
                in_string = quote
        if in_string:
            opened = line
    if in_string:
        ranges.append((opened + 1, 1 << 62))
    return ranges


def _classes_fast(rel: str, text: str) -> list[ClassMembers]:
    ranges = _string_ranges(text)
    firsts = [a for a, _b in ranges]

    def skipped(line: int) -> bool:
        i = bisect.bisect_right(firsts, line) - 1
        return i >= 0 and ranges[i][1] >= line

    # A class runs from its `class` line to the next top-level statement; other top-level lines
    # (a closing bracket) neither end it nor belong to it.
    regions: list[tuple[ClassMembers, int, int]] = []  # class, body start (the class line's "\n"), body end
    line_of = _LineCounter(text)
    current: tuple[ClassMembers, int] | None = None
    first = [(0, text[: text.find("\n") if "\n" in text else len(text)])] if text[:1] and not text[0].isspace() and text[0] != "#" else []
    for begin, body in first + [(m.start(1), m.group(1)) for m in _TOP_LINE.finditer(text)]:
        line = line_of(begin)
        if skipped(line):
            continue
        cm = _CLASS.match(body)
        if cm or _STATEMENT_START.match(body):
            if current is not None:
                regions.append((*current, begin))
                current = None
            if cm:
                current = (ClassMembers(rel, cm.group(1), line, {}), begin + len(body))
    if current is not None:
        regions.append((*current, len(text)))

    for cls, start, end in regions:
        line_of = _LineCounter(text, start, cls.line)
        body_indent = next((len(m.group(1)) for m in _FIRST_CODE.finditer(text, start, end) if not skipped(line_of(m.start() + 1))), None)
        if body_indent is None:
            continue
        found: list[tuple[int, int, int, str]] = []  # line, order within the line, offset, member
        line_of = _LineCounter(text, start, cls.line)
        for m in _DEF_NAME.finditer(text, start, end):
            begin, _body = _line_at(text, m.start())
            lead = _DEF_LEAD.fullmatch(text, begin, m.start())
            if lead and len(lead.group(1)) == body_indent:
                line = line_of(m.start())
                if not skipped(line):
                    found.append((line, 0, m.start(), m.group(1)))
        # a `def` line never matches the attribute pattern (`def` is followed by a name, not `=`/`:`)
        line_of = _LineCounter(text, start, cls.line)
        for m in _class_attr_at(body_indent).finditer(text, start, end):
            line = line_of(m.start() + 1)
            if not skipped(line):
                found.append((line, 0, m.start(), m.group(1)))
        line_of = _LineCounter(text, start, cls.line)
        for m in _SELF_ATTR_M.finditer(text, start, end):
            at = m.start()
            if at and (text[at - 1].isalnum() or text[at - 1] == "_"):
                continue  # `\bself`: not the end of a longer name
            begin, _body = _line_at(text, at)
            if not text[begin].isspace() or text[begin:at].lstrip().startswith("#"):
                continue  # a top-level line, or a comment line
            line = line_of(at)
            if not skipped(line):
                found.append((line, 1, at, m.group(1)))
        line_of = _LineCounter(text, start, cls.line)
        for m in _SELF_TUPLE_M.finditer(text, start, end):  # `self.start_layer, self.end_layer, self.layers = ...`
            line = line_of(m.start() + 1)
            if not skipped(line):
                found.extend((line, 2, m.start(1) + n.start(), n.group(1)) for n in _SELF_NAME.finditer(m.group(1)))
        for line, _order, _offset, member in sorted(found):
            cls.members.setdefault(member, line)
    return [cls for cls, _start, _end in regions]
