"""`driftcheck fix`: turn findings into edits, one codemod at a time, with a rescan in between.

The client's files are edited in memory (an overlay over the client tree); after each codemod
the client is scanned again against the same target, so every codemod sees fresh line numbers and
the effect of the previous ones (unwrapping a reply changes what the truthiness probe sees). The
loop ends when no selected codemod has anything left to do. `--apply` then locks the client folder,
re-plans if a file changed since it was read (another `fix --apply`), writes each changed file through
`safe_write` (temp file, fsync, rename; through a symlink to its target), keeps a backup, refuses a file
that is not writable, and checks that the result parses. Every byte but the fixed ones is kept: a BOM,
the file's coding and its line endings.
"""

from __future__ import annotations

import ast
import difflib
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from driftcheck.fix.codemod import UNSAFE, FixContext
from driftcheck.scan.pipeline import ScanOptions, ScanResult, make_api, scan
from driftcheck.errors import DriftcheckError
from driftcheck.storage.filelock import folder_lock
from driftcheck.rules.findings import SEVERITY_RANK, Finding
from driftcheck.storage.safe_write import write_bytes
from driftcheck.rules.selection import resolve_only
from driftcheck.sources.sources import FolderTree, SourceTree
from driftcheck.sources.targets import Target

MAX_ROUNDS = 24
BACKUP_SUFFIX = ".driftcheck.bak"
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Encoding:
    """How a file's bytes became the text a codemod edits, so the edit is written back byte for byte:
    a UTF-8 BOM, a declared coding, and (for scripts) bytes that are not UTF-8 all survive."""

    codec: str = "utf-8"
    bom: bytes = b""
    errors: str = "strict"
    crlf: bool = False  # every line ends in \r\n: lines a codemod adds get \r\n too

    def encode(self, text: str) -> bytes:
        if self.crlf:
            text = _LONE_LF.sub("\r\n", text)
        return self.bom + text.encode(self.codec, self.errors)


_LONE_LF = re.compile(r"(?<!\r)\n")


def _crlf(text: str) -> bool:
    return "\r\n" in text and _LONE_LF.search(text) is None


def kept_line_endings(before: str, after: str) -> str:
    """`after` with every line it kept from `before` ending as it did there: a codemod that inserts a line after a
    `\n` line of a file that mixes `\r\n` and `\n` gave that line the other ending, and a CR-only file lost its
    last `\r` (batch 22c's P14). Lines the codemod wrote are left as it wrote them."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in old]
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, bare, [line.rstrip("\r\n") for line in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out += old[i1:i2] if tag == "equal" else new[j1:j2]
    return "".join(out)


def decode_source(rel: str, data: bytes) -> tuple[str, Encoding]:
    """(text without the BOM, how to encode it back). Line endings are kept as they are (libcst keeps them)."""
    bom = BOM if data.startswith(BOM) else b""
    body = data[len(bom):]
    if not rel.endswith(".py"):
        text = body.decode("utf-8", "surrogateescape")
        return text, Encoding("utf-8", bom, "surrogateescape", _crlf(text))
    codec = "utf-8"
    if not bom:
        try:
            codec = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        except SyntaxError:
            codec = "utf-8"
    text = body.decode(codec)
    return text, Encoding(codec, bom, crlf=_crlf(text))


class OverlayTree(SourceTree):
    """A client tree with some files replaced in memory; remembers what it read from disk."""

    def __init__(self, base: SourceTree):
        self.base = base
        self.label = base.label
        self.edits: dict[str, bytes] = {}
        self.originals: dict[str, bytes] = {}

    def iter_files(self, prefix: str = "", suffix: str = ".py"):
        return self.base.iter_files(prefix, suffix)

    def is_file(self, rel: str) -> bool:
        return rel in self.edits or self.base.is_file(rel)

    def is_dir(self, rel: str) -> bool:
        return self.base.is_dir(rel)

    def read_bytes(self, rel: str) -> bytes:
        if rel in self.edits:
            return self.edits[rel]
        data = self.base.read_bytes(rel)
        self.originals.setdefault(rel, data)
        return data

    def fingerprint(self) -> str:
        return self.base.fingerprint() + str(hash(tuple(sorted(self.edits.items()))))

    def display_path(self, rel: str) -> str:
        return self.base.display_path(rel)


@dataclass
class FileChange:
    rel: str
    display: str
    original: str
    new: str
    applied: list[tuple[str, Finding]] = field(default_factory=list)
    new_bytes: bytes = b""  # what --apply writes: `new` in the file's own encoding, BOM included

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.original.splitlines(keepends=True), self.new.splitlines(keepends=True),
            fromfile=f"a/{self.rel}", tofile=f"b/{self.rel}"))


@dataclass
class FixPlan:
    changes: list[FileChange]
    skipped: list[tuple[Finding, str]]
    notes: list[str]
    initial: ScanResult
    final: ScanResult
    overlay: OverlayTree
    demoted: list[Finding] = field(default_factory=list)  # left alone: guarded findings of rules a fix repairs
    held: list[Finding] = field(default_factory=list)  # left alone: warnings with a fix that `--only` did not name


@dataclass
class FixOptions:
    only: list[str] | None = None  # rule ids/names or fix ids
    unsafe: bool = False
    guard: bool = False
    warnings: bool = False  # also fix warnings (every one; `only` naming a rule or fix asks for its warnings too)
    where: Callable[[Finding], bool] | None = None  # API only: fix just the findings this accepts


def _selected(modules, opts: FixOptions):
    """(fix modules to run, rule ids to fix or None, explicit): every --only word must name a rule or a fix."""
    if not opts.only:
        return modules, None, False
    rule_ids, fix_ids = resolve_only(opts.only)
    chosen = [m for m in modules if m.FIX.id in fix_ids] if fix_ids else modules
    return chosen, set(rule_ids) or None, bool(fix_ids)


def _matches(module, finding: Finding, explicit: bool) -> bool:
    """`--only FIX` picks a fix other than the rule's own (add-block-hasher for DC101), never a finding the rule
    declared unfixable (`fix` None: guarded, handled by pydantic, a name found nowhere): `--only move-import` once
    rewrote `try: from vllm.old import X / except ImportError: from vllm.new import X`."""
    if explicit:
        return finding.rule in module.FIX.rules and finding.fix is not None
    return finding.fix == module.FIX.id


def _certain_or_asked(finding: Finding, rule_filter: set | None, explicit: bool, opts: FixOptions) -> bool:
    """An error is fixed; a warning (DC102: a silent change of results where prompts repeat, not a certain failure) only
    with `--warnings` or where `--only` names its rule or its fix: a rewrite that changes what a working program does is
    asked for, never assumed (vLLM 0.34.0's own tests: prefix caching turned off in a test's `SimpleNamespace` config)."""
    return SEVERITY_RANK.get(finding.severity, 0) >= SEVERITY_RANK["error"] or opts.warnings or explicit \
        or (rule_filter is not None and finding.rule in rule_filter)


def _guarded(finding: Finding) -> bool:
    """A finding the client already handles (a try/except, a feature test, a version branch): the scan gave it no fix,
    and it is left alone, whatever `--only` names."""
    return finding.fix is None and bool(finding.details.get("guarded"))


def plan_fixes(vllm: Target, client: Target, scan_options: ScanOptions, opts: FixOptions) -> FixPlan:
    from driftcheck.rules.registry import fix_modules

    modules, rule_filter, explicit = _selected(fix_modules(), opts)
    overlay = OverlayTree(client.tree)
    overlay_client = replace(client, tree=overlay)
    api = make_api(vllm, scan_options)
    scan_options = replace(scan_options, baseline_cache=scan_options.baseline_cache if scan_options.baseline_cache is not None else {})
    result = initial = scan(vllm, [overlay_client], scan_options, api=api)
    applied: dict[str, list[tuple[str, Finding]]] = {}
    skipped: list[tuple[Finding, str]] = []
    notes: list[str] = []
    attempted: set[tuple[str, str]] = set()
    for _round in range(MAX_ROUNDS):
        progressed = False
        # a finding the user suppressed (`# driftcheck: ignore[...]`, accepted findings) is theirs: never rewritten (22c's P4)
        candidates = [f for f in result.findings if f.client is not None and not f.suppressed
                      and (f.rule, f.fingerprint()) not in attempted
                      and (rule_filter is None or f.rule in rule_filter)
                      and _certain_or_asked(f, rule_filter, explicit, opts)
                      and (opts.where is None or opts.where(f))]
        by_file: dict[str, list[Finding]] = {}
        for f in candidates:
            by_file.setdefault(f.client.path, []).append(f)
        for rel, findings in sorted(by_file.items()):
            for module in modules:
                mine = [f for f in findings if _matches(module, f, explicit)]
                if not mine:
                    continue
                for f in mine:
                    attempted.add((f.rule, f.fingerprint()))
                if module.FIX.applicability == UNSAFE and not opts.unsafe:
                    skipped += [(f, f"fix {module.FIX.id} is unsafe: pass --unsafe to apply it") for f in mine]
                    continue
                python = rel.endswith(".py")
                transform = module.transform if python else getattr(module, "transform_text", None)
                if transform is None:  # e.g. a finding in a shell script for a codemod that edits Python
                    skipped += [(f, f"no codemod for this file: {module.FIX.id} edits Python code only") for f in mine]
                    continue
                try:
                    source, encoding = decode_source(rel, overlay.read_bytes(rel))
                except (UnicodeDecodeError, LookupError) as exc:
                    skipped += [(f, f"cannot decode {rel} ({exc})") for f in mine]
                    continue
                ctx = FixContext(api=api, client_file=rel, guard=opts.guard)
                outcome = transform(source, mine, ctx)
                notes += outcome.notes
                skipped += outcome.skipped
                if outcome.source != source and outcome.applied:
                    if python:
                        _check_parses(rel, outcome.source, module.FIX.id)
                    try:
                        overlay.edits[rel] = encoding.encode(kept_line_endings(source, outcome.source))
                    except UnicodeEncodeError:
                        skipped += [(f, f"the fix needs characters that {encoding.codec} cannot hold") for f in outcome.applied]
                        continue
                    applied.setdefault(rel, []).extend((module.FIX.id, f) for f in outcome.applied)
                    progressed = True
                    break  # one codemod per file per round: the next round rescans
        if not progressed:
            break
        result = scan(vllm, [overlay_client], scan_options, api=api)
    # Findings left without a fix, or whose fix was not attempted, are what a person must look at.
    changes = []
    for rel, data in sorted(overlay.edits.items()):
        before = overlay.originals.get(rel, client.tree.read_bytes(rel))
        if data != before:
            original, new = decode_source(rel, before)[0], decode_source(rel, data)[0]
            changes.append(FileChange(rel, client.tree.display_path(rel), original, new, applied.get(rel, []), data))
    left = {g.fingerprint() for g in result.findings}
    still_skipped, seen = [], set()
    for f, why in skipped:
        # a finding skipped in two rounds: once (two lines of the same code share a fingerprint, not a line)
        key = (f.fingerprint(), f.client.line if f.client else None, why)
        if f.fingerprint() in left and key not in seen:
            seen.add(key)
            still_skipped.append((f, why))
    demoted = [f for f in result.findings if f.client is not None and _guarded(f) and any(f.rule in m.FIX.rules for m in modules)
               and (rule_filter is None or f.rule in rule_filter)]
    held = [f for f in result.findings if f.client is not None and f.fix is not None and not _guarded(f)
            and not _certain_or_asked(f, rule_filter, explicit, opts) and any(_matches(m, f, explicit) for m in modules)]
    return FixPlan(changes, still_skipped, notes, initial, result, overlay, demoted, held)


def _check_parses(rel: str, source: str, fix_id: str) -> None:
    try:
        ast.parse(source)
    except SyntaxError as exc:  # a codemod bug: never write it
        raise DriftcheckError(f"internal error: fix {fix_id} produced code that does not parse in {rel} (line {exc.lineno})",
                              "please report it; nothing was written") from None


def stale_files(plan: FixPlan, client: Target) -> list[str]:
    """Files the plan read that are no longer what it read (another fix, an editor)."""
    if not isinstance(client.tree, FolderTree):
        return []
    out = []
    for rel, data in plan.overlay.originals.items():
        try:
            current = (client.tree.root / rel).read_bytes()
        except OSError:
            current = None
        if current != data:
            out.append(rel)
    return out


def apply_locked(vllm: Target, client: Target, scan_options: ScanOptions, opts: FixOptions, plan: FixPlan,
                 backup: bool = True) -> tuple[FixPlan, list[Path], bool]:
    """Lock the client folder, re-plan if a file the plan read changed meanwhile, then write.

    Two `fix --apply` on one tree used to both read the old file and each write a version without the
    other's fix; under the lock the second one sees the first one's result. (plan written, paths, re-planned?)"""
    _writable_tree(client)
    replanned = False
    with folder_lock(client.tree.root, scan_options.cache_dir / "locks", "driftcheck fix --apply"):
        if stale_files(plan, client):
            plan = plan_fixes(vllm, client, scan_options, opts)
            replanned = True
        written = apply_plan(plan, client, backup)
    return plan, written, replanned


def _writable_tree(client: Target) -> None:
    if not isinstance(client.tree, FolderTree):
        raise DriftcheckError(f"cannot --apply to {client.source}: it is an archive",
                              "extract it or pass a folder / installed package as --client")


def apply_plan(plan: FixPlan, client: Target, backup: bool = True) -> list[Path]:
    """Write every change atomically. Refuses (before writing anything) a file that changed or is read-only.

    A symlinked file is written through the link (the link stays, its target gets the fix)."""
    _writable_tree(client)
    root = client.tree.root
    targets: list[tuple[FileChange, Path, Path | None]] = []
    for change in plan.changes:
        path = root / change.rel
        try:
            current = path.read_bytes()
        except OSError as exc:
            raise DriftcheckError(f"cannot read {path}: {exc.strerror}") from None
        if current != plan.overlay.originals.get(change.rel, current):
            raise DriftcheckError(f"{path} changed since driftcheck read it", "run driftcheck fix again; nothing was written")
        # Mode bits, not only os.access: root may write anything, but a file marked read-only means "don't".
        real = Path(os.path.realpath(path))
        if not (path.stat().st_mode & 0o222) or not os.access(path, os.W_OK) or not os.access(real.parent, os.W_OK):
            raise DriftcheckError(f"{path} is read-only", "make it writable (or use a copy); nothing was written")
        # where each backup goes, decided before anything is written (no free name stops the whole apply)
        targets.append((change, path, _backup_path(path, current) if backup else None))
    written = []
    for change, path, where in targets:
        mode = stat.S_IMODE(path.stat().st_mode)
        original = plan.overlay.originals[change.rel]
        _unchanged(path, original, written)
        if where is not None:
            _write(where, original, mode)
            _unchanged(path, original, written)  # the backup took a while (fsync): look again just before the rename
        _write(path, change.new_bytes, mode)
        written.append(path)
    return written


def _backup_path(path: Path, original: bytes) -> Path | None:
    """Where this run keeps `original`: `<name>.driftcheck.bak`, or the first free `<name>.driftcheck.bak.N` when an
    earlier run's backup is there (a second `fix --apply` wrote the first run's output over the first backup, which
    held the file as the person had written it: batch 21a); None when a backup there already holds these bytes.
    Nothing that exists is replaced, whatever it is."""
    first = path.with_name(path.name + BACKUP_SUFFIX)
    for n in range(1000):
        candidate = first if n == 0 else first.with_name(f"{first.name}.{n}")
        if not os.path.lexists(candidate):
            return candidate
        if candidate.is_file() and not candidate.is_symlink() and candidate.read_bytes() == original:
            return None
    raise DriftcheckError(f"no free backup name next to {path} ({first.name}.1 to .999 are taken)",
                          "remove old backups, or pass --no-backup")


def _unchanged(path: Path, original: bytes, written: list[Path]) -> None:
    """Stop before writing a file another program changed after it was checked: its edit would be lost (batch 20h: a
    line appended while the first backups were written was in neither the fixed file nor its backup)."""
    try:
        current = path.read_bytes()
    except OSError as exc:
        raise DriftcheckError(f"cannot read {path}: {exc.strerror}") from None
    if current != original:
        done = f"{len(written)} file(s) were written before it, each with its backup" if written else "nothing was written"
        raise DriftcheckError(f"{path} changed while driftcheck was writing the fixes; it was left as it is",
                              f"{done}; run driftcheck fix again")


def _write(path: Path, data: bytes, mode: int) -> None:
    try:
        write_bytes(path, data, durable=True, mode=mode)
    except OSError as exc:
        raise DriftcheckError(f"cannot write {path}: {exc.strerror or exc}", "is the folder writable?") from None
