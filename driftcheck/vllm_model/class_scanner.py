"""The classes of one file and their members (methods, `self.x` attributes, class attributes) read from its
text, without parsing: a fast scanner over top-level lines, and a line-by-line one for files with line
breaks Python's `splitlines` sees and the scanner does not.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass



_CLASS = re.compile(r"^class\s+(\w+)")


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


def classes_by_line(rel: str, text: str) -> list[ClassMembers]:
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
        head, eq, rest = stripped.partition("=")
        if stripped.startswith("self.") and eq and "," in head and "(" not in head and head[-1:] not in "!<>" \
                and not rest.startswith("="):
            # Tuple targets: `self.start_layer, self.end_layer, self.layers = make_layers(...)`; not a call's arguments
            # (`self.set_active_loras(self.input_batch, n)` assigns nothing: UG) nor a comparison
            for m in _SELF_NAME.finditer(head):
                current.members.setdefault(m.group(1), lineno)
    return out


# ------------------------------------------------------------------------ the fast class scanner
# `classes_fast` answers exactly like `classes_by_line`, with a few regex searches over the whole
# text instead of Python work per line (classes_in dominated DC008 and DC106 on the 1,300-2,600 files
# of a release). Every pattern starts with a literal ("\n", "def", "self.") so that `re` can skip
# ahead instead of trying each position. Lines are "\n"-separated here; a text with another break
# that str.splitlines() honours takes the reference path, so line numbers never differ.
_ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LONE_CR = re.compile(r"\r(?!\n)")
_TOP_LINE = re.compile(r"\n([^\s#].*)")
_FIRST_CODE = re.compile(r"\n([^\S\n]+)[^\s#]")
_DEF_NAME = re.compile(r"def[^\S\n]+(\w+)")
_DEF_LEAD = re.compile(r"([^\S\n]+)(?:async[^\S\n]+)?")
_SELF_ATTR_M = re.compile(r"self\.(\w+)[^\S\n]*(?::[^=\n]+)?=(?!=)")
# a line starting `self.` whose part before its first "=", an assignment's (not `==`, `<=`, `>=`, `!=`), holds a comma
# and no "(" (tuple targets; a call's arguments assign nothing: UG)
_SELF_TUPLE_M = re.compile(r"\n[^\S\n]+(self\.[^=\n,(]*,[^=\n(]*)(?<![!<>])=(?!=)")  # the reference for the next
# the same targets searched from `self.` (which `re` skips ahead to, where a pattern starting "\n" then blanks was
# tried at every line); a match counts where only blanks stand before it on its line (`_indented_tuple_targets`)
_SELF_TUPLE_AT = re.compile(r"(self\.[^=\n,(]*,[^=\n(]*)(?<![!<>])=(?!=)")


@functools.lru_cache(maxsize=None)
def _class_attr_at(indent: int) -> re.Pattern:
    """Class-attribute lines indented by exactly `indent` characters (the class body's indent)."""
    return re.compile(rf"(?m)\n[^\S\n]{{{indent}}}(\w+)[^\S\n]*(?::[^=\n]+)?(?:=(?!=)|$)")


def odd_line_breaks(text: str) -> bool:
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


def _triple_quotes(text: str) -> list[int]:
    """The offsets where `re.finditer(r'\"\"\"|\'\'\'', text)` matches, found by two substring searches: the regex
    tried every quote character of the text (a quarter of classes_fast's time), `str.find` skips ahead. The two
    quotes cannot overlap, and each search steps past its own match as finditer does."""
    out: list[int] = []
    for quote in ('"""', "'''"):
        at = text.find(quote)
        while at >= 0:
            out.append(at)
            at = text.find(quote, at + 3)
    out.sort()
    return out


def _string_ranges(text: str) -> list[tuple[int, int]]:
    """(first, last) lines that the line scanner skips as inside a triple-quoted string."""
    ranges: list[tuple[int, int]] = []
    line_of = _LineCounter(text)
    in_string: str | None = None
    opened = last = 0
    for at in _triple_quotes(text):
        line = line_of(at)
        if line == last:
            continue  # one decision per line, on the whole line, as the line scanner makes it
        last = line
        body = _line_at(text, at)[1]
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


def _indented_tuple_targets(text: str, start: int, end: int) -> list[re.Match]:
    """The matches of `_SELF_TUPLE_AT` in text[start:end] that `_SELF_TUPLE_M` finds (group 1 alike): those whose line
    holds only blanks before them (a match starts at its line's first `self.`, and runs over no line break)."""
    out = []
    for m in _SELF_TUPLE_AT.finditer(text, start, end):
        at = m.start()
        lead = text[text.rfind("\n", 0, at) + 1:at]
        if lead and lead.isspace() and text.rfind("\n", 0, at) >= start:
            out.append(m)
    return out


def classes_fast(rel: str, text: str) -> list[ClassMembers]:
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
        for m in _indented_tuple_targets(text, start, end):  # `self.start_layer, self.end_layer, self.layers = ...`
            line = line_of(m.start())
            if not skipped(line):
                found.extend((line, 2, m.start(1) + n.start(), n.group(1)) for n in _SELF_NAME.finditer(m.group(1)))
        for line, _order, _offset, member in sorted(found):
            cls.members.setdefault(member, line)
    return [cls for cls, _start, _end in regions]
