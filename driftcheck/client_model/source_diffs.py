"""Unified diffs a client ships for vLLM's own source files (`patch/0.11.0/vllm-adapt-rerope.patch`, applied to the
installed vLLM with `git apply` as an install step): a name such a diff adds to a vLLM module exists only where the
diff was applied, which driftcheck cannot know. A diff counts for a release only where `git apply` would take all
of it: every file it changes is in the release and every hunk's old side (its context and removed lines) is found
there, in order; a diff for another release's files (a file that is gone, context that changed) adds nothing. A file
the diff creates (`--- /dev/null`) must be absent from the release (`git apply` will not create a file that exists) and
is a module the diff adds (`added_modules`). Files outside the release's packages (a `git format-patch` of a vLLM
checkout also changes `tests/`, `tools/`, `csrc/`) cannot be checked against a wheel and define nothing vLLM imports:
they are not read.
"""

from __future__ import annotations

import functools
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


def _per_pair(compute):
    """`compute(client, vllm)` asked once per pair of trees (the last eight pairs kept, each with its trees, so that an
    id is not reused while its answer is kept)."""
    memo: dict[tuple[int, int], tuple] = {}

    @functools.wraps(compute)
    def answer(client: SourceTree, vllm: SourceTree):
        key = (id(client), id(vllm))
        held = memo.get(key)
        if held is not None and held[0] is client and held[1] is vllm:
            return held[2]
        out = compute(client, vllm)
        if len(memo) >= 8:
            memo.pop(next(iter(memo)))
        memo[key] = (client, vllm, out)
        return out

    return answer


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


def _created(text: str) -> set[str]:
    """The files a unified diff creates: a `--- /dev/null` old side."""
    out: set[str] = set()
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("--- /dev/null") and lines[i + 1].startswith("+++ "):
            path = lines[i + 1][4:].split("\t", 1)[0].strip()
            out.add(path[2:] if path.startswith(("a/", "b/")) else path)
    return out


def _in_release_package(vllm: SourceTree, path: str) -> bool:
    return "/" in path and vllm.is_file(path.split("/", 1)[0] + "/__init__.py")


def _contains(lines: list[str], block: list[str]) -> bool:
    block = [b for b in block if b]
    if not block:
        return True
    first, n = block[0], len(block)
    for i, line in enumerate(lines):
        if line == first and lines[i:i + n] == block:
            return True
    return False


@_per_pair
def _series(client: SourceTree, vllm: SourceTree) -> list[tuple[str, list, str, set[str]]]:
    """(diff, its sections, its text, the files it creates) for each of the client's diffs that may apply to this
    release (asked once per pair of trees): one that applies alone (every file it changes is in the release, every
    hunk's old side found there, in order), or one of a series an install script applies in order (`git apply a.patch
    b.patch`, b's context holding lines a adds; ZW) whose files are all in the release and each of whose old-side lines
    is a line of the release's file or one another diff of the client adds to that file. A diff for another release's files never applies."""
    diffs = []
    for rel in sorted({rel for suffix in _SUFFIXES for rel in client.iter_files(suffix=suffix)}):
        try:
            text = client.read_text(rel)
        except SourceError:
            continue
        # a `git format-patch` of a vLLM checkout may also touch files no release ships (`.gitignore`, `csrc/`):
        # only its Python files can be checked against the release, and only they define names
        sections = [(p, h) for p, h in _sections(text) if p.endswith(".py") and _in_release_package(vllm, p)]
        if sections:
            diffs.append((rel, sections, text, _created(text)))
    texts: dict[str, list[str] | None] = {}

    def lines_of(path: str) -> list[str] | None:
        if path not in texts:
            try:
                texts[path] = [x for x in (y.strip() for y in vllm.read_text(path).splitlines()) if x] \
                    if vllm.is_file(path) else None
            except SourceError:
                texts[path] = None
        return texts[path]

    adds = {rel: {(p, n.strip()) for p, hunks in sections for _old, new in hunks for n in new if n.strip()}
            for rel, sections, _text, _new in diffs}
    out = []
    for rel, sections, text, created in diffs:
        # a file the diff changes is in the release; one it creates is not
        if any((lines_of(p) is None) != (p in created) for p, _h in sections):
            continue
        changed = [(p, hunks) for p, hunks in sections if p not in created]
        if all(_contains(texts[p], old) for p, hunks in changed for old, _new in hunks):
            out.append((rel, sections, text, created))
            continue
        others = set().union(*(a for r, a in adds.items() if r != rel))
        if all(line in known or (p, line) in others for p, hunks in changed
               for known in [set(texts[p])] for old, _new in hunks for line in old if line):
            out.append((rel, sections, text, created))
    return out


@_per_pair
def added_modules(client: SourceTree, vllm: SourceTree) -> dict[str, str]:
    """Dotted module name (`vllm.model_executor.layers.quantization.utils.moe_w2_delta`) -> the client's diff that
    creates its file, for the diffs that apply to this release: the module exists where the diff was applied."""
    out: dict[str, str] = {}
    for rel, sections, _text, created in _series(client, vllm):
        for path, _hunks in sections:
            if path in created:
                module = path[:-3].removesuffix("/__init__").replace("/", ".")
                out.setdefault(module, rel)
    return out


@_per_pair
def added_names(client: SourceTree, vllm: SourceTree) -> dict[str, dict[str, str]]:
    """vLLM file (`vllm/envs.py`) -> {name: the client's diff that adds it}, for the client's diffs that apply to
    this release."""
    out: dict[str, dict[str, str]] = {}
    for rel, sections, _text, _created_files in _series(client, vllm):
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
    return out


@_per_pair
def changed_files(client: SourceTree, vllm: SourceTree) -> dict[str, str]:
    """vLLM file -> the client's diff (its path) that changes it, for the diffs that apply to this release: what such
    a file defines (a function's returns, a class's methods) may be other than its text says where the diff is
    applied."""
    out: dict[str, str] = {}
    for rel, sections, _text, _created_files in _series(client, vllm):
        for path, _hunks in sections:
            out.setdefault(path, rel)
    return out


def diff_creates_module(client: SourceTree, vllm: SourceTree, module: str) -> str | None:
    """The client's diff (its path) that creates the module's file, if one applies here."""
    return added_modules(client, vllm).get(module)


def diff_may_define(client: SourceTree, vllm: SourceTree, vllm_path: str, name: str) -> str | None:
    """The client's diff (its path) that adds `name` to the release's file `vllm_path`, if one applies here."""
    return added_names(client, vllm).get(vllm_path, {}).get(name)


_MEMBER_DEF = re.compile(r"^(\s+)(?:async\s+)?def\s+(\w+)")
_MEMBER_FIELD = re.compile(r"^(\s+)(\w+)\s*(?::[^=]+)?=(?!=)")  # `    num_step: Optional[int] = 1` in a class body
_SELF_STORE = re.compile(r"^\s+self\.(\w+)\s*(?::[^=]+)?=(?!=)")  # `        self.step_num = 1` in a method
_CLASS = re.compile(r"^(\s*)class\s+(\w+)")
_HEADING = re.compile(r"^@@ [^@]* @@\s?(.*)$")


@_per_pair
def added_members(client: SourceTree, vllm: SourceTree) -> dict[tuple[str, str, str], str]:
    """(vLLM file, class, member) -> the client's diff that adds that member to the class, for the diffs that apply to
    this release, alone or in series (ZW): a method or a field its added lines define in the class body, or an
    attribute a method of the class stores on `self`. The class is the one the hunk is in: the last `class` line of
    its context or added lines, else the class git names in the hunk header (`@@ -151,3 +151,5 @@ class
    SchedulerOutput:`)."""
    out: dict[tuple[str, str, str], str] = {}
    for rel, _sections_of, text, _created_files in _series(client, vllm):
        path, cls = "", None  # the file, and the (name, indentation) of the class the current line is in
        for line in text.splitlines():
            if line.startswith("+++ "):
                path = line[4:].split("\t", 1)[0].strip()
                path, cls = (path[2:] if path.startswith(("a/", "b/")) else path), None
                continue
            heading = _HEADING.match(line)
            if heading:
                found = _CLASS.match(heading.group(1))
                cls = (found.group(2), len(found.group(1))) if found else None
                continue
            if line[:1] not in ("+", " "):
                continue
            body = line[1:]
            found = _CLASS.match(body)
            if found:
                cls = (found.group(2), len(found.group(1)))
                continue
            if cls is not None and body.strip() and len(body) - len(body.lstrip()) <= cls[1]:
                cls = None  # a line at the class's own indentation or less: out of its body
            if cls is None or not line.startswith("+"):
                continue
            member = _MEMBER_DEF.match(body) or _MEMBER_FIELD.match(body)
            if member and len(member.group(1)) == cls[1] + 4:
                out.setdefault((path, cls[0], member.group(2)), rel)
            stored = _SELF_STORE.match(body)
            if stored:
                out.setdefault((path, cls[0], stored.group(1)), rel)
    return out
