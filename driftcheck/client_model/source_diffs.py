"""Unified diffs a client ships for vLLM's own source files (`patch/0.11.0/vllm-adapt-rerope.patch`, applied to the
installed vLLM with `git apply` as an install step): a name such a diff adds to a vLLM module exists only where the
diff was applied, which driftcheck cannot know. A diff counts for a release only where `git apply` would take all
of it: every file it changes is in the release and every hunk's old side (its context and removed lines) is found
there, in order; a diff for another release's files (a file that is gone, context that changed) adds nothing.
"""

from __future__ import annotations

import re

from driftcheck.sources.sources import SourceError, SourceTree

_SUFFIXES = (".patch", ".diff")
_DEFINES = (  # module-level bindings (an unindented line) and the keys of a table a module `__getattr__` reads
    re.compile(r"^(?:async\s+)?def\s+(\w+)"),
    re.compile(r"^class\s+(\w+)"),
    re.compile(r"^(\w+)\s*(?::[^=]+)?=(?!=)"),  # NAME = ... / NAME: T = ...
    re.compile(r"^\s*[\"'](\w+)[\"']\s*:"),  # "NAME": ... (vllm/envs.py's `environment_variables`)
)
_IMPORT = re.compile(r"^(?:from\s+[\w.]+\s+)?import\s+([^#]+)")
_memo: dict[tuple[int, int], tuple[SourceTree, SourceTree, dict[str, dict[str, str]]]] = {}  # holds the trees: no reused id


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _sections(text: str) -> list[tuple[str, list[tuple[list[str], list[str]]]]]:
    """(target path, [(old-side lines, added lines) per hunk]) for each file a unified diff changes. A hunk takes
    the lines its `@@ -a,n +b,m @@` header counts, so what follows it (a `git format-patch` footer) is not read."""
    out: list[tuple[str, list[tuple[list[str], list[str]]]]] = []
    hunks: list[tuple[list[str], list[str]]] | None = None
    old: list[str] = []
    new: list[str] = []
    left_old = left_new = 0
    for line in text.splitlines():
        if left_old > 0 or left_new > 0:
            if line.startswith("\\"):
                continue  # "\ No newline at end of file"
            tag, body = line[:1], line[1:]
            if tag == "+":
                new.append(body)
                left_new -= 1
            elif tag == "-":
                old.append(body.strip())
                left_old -= 1
            else:  # context (an empty line is a context line whose leading space was stripped)
                old.append(body.strip())
                left_old -= 1
                left_new -= 1
            continue
        if line.startswith("+++ "):
            path = line[4:].split("\t", 1)[0].strip()
            path = path[2:] if path.startswith(("a/", "b/")) else path
            hunks = []
            out.append((path, hunks))
            continue
        m = _HUNK.match(line)
        if m and hunks is not None:
            left_old = int(m.group(1)) if m.group(1) is not None else 1
            left_new = int(m.group(2)) if m.group(2) is not None else 1
            old, new = [], []
            hunks.append((old, new))
    return [(p, h) for p, h in out if p != "/dev/null" and h]


def _contains(lines: list[str], block: list[str]) -> bool:
    block = [b for b in block if b]
    if not block:
        return True
    first, n = block[0], len(block)
    for i, line in enumerate(lines):
        if line == first and lines[i:i + n] == block:
            return True
    return False


def _applies(vllm: SourceTree, sections) -> bool:
    for path, hunks in sections:
        if not vllm.is_file(path):
            return False
        try:
            lines = [x.strip() for x in vllm.read_text(path).splitlines()]
        except SourceError:
            return False
        lines = [x for x in lines if x]
        if not all(_contains(lines, old) for old, _new in hunks):
            return False
    return True


def added_names(client: SourceTree, vllm: SourceTree) -> dict[str, dict[str, str]]:
    """vLLM file (`vllm/envs.py`) -> {name: the client's diff that adds it}, for the client's diffs that apply to
    this release."""
    key = (id(client), id(vllm))
    held = _memo.get(key)
    if held is not None and held[0] is client and held[1] is vllm:
        return held[2]
    out: dict[str, dict[str, str]] = {}
    diffs = sorted({rel for suffix in _SUFFIXES for rel in client.iter_files(suffix=suffix)})
    for rel in diffs:
        try:
            sections = _sections(client.read_text(rel))
        except SourceError:
            continue
        if not sections or not all(p.endswith(".py") for p, _h in sections) or not _applies(vllm, sections):
            continue
        for path, hunks in sections:
            names = out.setdefault(path, {})
            for _old, new in hunks:
                for line in new:
                    imported = _IMPORT.match(line)
                    if imported:  # an unindented import binds its names (`from x import a, b as c` -> a, c)
                        for part in imported.group(1).strip("() ").split(","):
                            bound = part.split(" as ")[-1].strip().split(".")[0]
                            if bound.isidentifier():
                                names.setdefault(bound, rel)
                        continue
                    for pattern in _DEFINES:
                        m = pattern.match(line)
                        if m:
                            names.setdefault(m.group(1), rel)
                            break
    if len(_memo) >= 8:
        _memo.pop(next(iter(_memo)))
    _memo[key] = (client, vllm, out)
    return out


def diff_may_define(client: SourceTree, vllm: SourceTree, vllm_path: str, name: str) -> str | None:
    """The client's diff (its path) that adds `name` to the release's file `vllm_path`, if one applies here."""
    return added_names(client, vllm).get(vllm_path, {}).get(name)
