"""Fast whole-tree text queries, for the few questions that need every file of a vLLM release.

Parsing all ~1,300-2,600 files of a release takes seconds; these questions ("which classes define
a method named X?", "where is a top-level `X` defined now?") are answered with byte regexes over
the files that contain the name at all, and a light line scanner for class membership. Results are
kept per tree for the life of the process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SourceError
from .sources import SourceTree

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


class TextIndex:
    def __init__(self, tree: SourceTree, package: str = "vllm"):
        self.tree = tree
        self.package = package
        self._blobs: dict[str, bytes] | None = None
        self._classes: dict[str, list[ClassMembers]] = {}

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

    def files_mentioning(self, name: str) -> list[str]:
        needle = name.encode()
        return [rel for rel, data in self.blobs().items() if needle in data]

    def classes_in(self, rel: str) -> list[ClassMembers]:
        """Top-level classes of one file with their members (methods, self.attrs, class attrs)."""
        if rel in self._classes:
            return self._classes[rel]
        text = self.blobs().get(rel, b"").decode("utf-8", errors="replace")
        out = _classes_by_line(rel, text) if _ODD_LINE_BREAK.search(text) else _classes_fast(rel, text)
        self._classes[rel] = out
        return out

    def classes_defining(self, name: str) -> list[ClassMembers]:
        out = []
        for rel in self.files_mentioning(name):
            for cls in self.classes_in(rel):
                if name in cls.members:
                    out.append(cls)
        return out

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
            data = self.blobs()[rel]
            for m in pattern.finditer(data):
                line = data.count(b"\n", 0, m.start()) + 1
                kind = (m.group(1) or b"assign").decode()
                out.append((rel, line, kind))
        return out


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
