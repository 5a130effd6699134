"""`driftcheck fix`: turn findings into edits, one codemod at a time, with a rescan in between.

The client's files are edited in memory (an overlay over the client tree); after each codemod
the client is scanned again against the same target, so every codemod sees fresh line numbers and
the effect of the previous ones (unwrapping a reply changes what the truthiness probe sees). The
loop ends when no selected codemod has anything left to do. `--apply` then writes each changed
file atomically (temp file in the same folder, fsync, rename), keeps a backup, refuses a file that
changed since it was read or is not writable, and checks that the result parses.
"""

from __future__ import annotations

import ast
import difflib
import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .cache import atomic_write_bytes
from .codemod import UNSAFE, FixContext
from .engine import ScanOptions, ScanResult, make_api, scan
from .errors import DriftcheckError
from .findings import Finding
from .sources import FolderTree, SourceTree
from .targets import Target

MAX_ROUNDS = 24
BACKUP_SUFFIX = ".driftcheck.bak"


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


@dataclass
class FixOptions:
    only: list[str] | None = None  # rule ids/names or fix ids
    unsafe: bool = False
    guard: bool = False
    where: Callable[[Finding], bool] | None = None  # API only: fix just the findings this accepts


def _selected(modules, opts: FixOptions):
    """(fix modules to run, rule filter or None)."""
    if not opts.only:
        return modules, None
    fix_ids = {m.FIX.id for m in modules}
    chosen_fixes = [m for m in modules if m.FIX.id in opts.only]
    rules = [o for o in opts.only if o not in fix_ids]
    if chosen_fixes and not rules:
        return chosen_fixes, None
    return modules, set(rules)


def _matches(module, finding: Finding, explicit: bool) -> bool:
    if explicit:
        return finding.rule in module.FIX.rules
    return finding.fix == module.FIX.id


def plan_fixes(vllm: Target, client: Target, scan_options: ScanOptions, opts: FixOptions) -> FixPlan:
    from driftcheck.fixes import load_fixes

    modules, rule_filter = _selected(load_fixes(), opts)
    explicit = bool(opts.only) and rule_filter is None
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
        candidates = [f for f in result.findings if f.client is not None and (f.rule, f.fingerprint()) not in attempted
                      and (rule_filter is None or f.rule in rule_filter or f.name in rule_filter)
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
                source = overlay.read_bytes(rel).decode("utf-8")
                ctx = FixContext(api=api, client_file=rel, guard=opts.guard)
                outcome = module.transform(source, mine, ctx)
                notes += ctx.extras.get("notes", [])
                skipped += outcome.skipped
                if outcome.source != source and outcome.applied:
                    _check_parses(rel, outcome.source, module.FIX.id)
                    overlay.edits[rel] = outcome.source.encode("utf-8")
                    applied.setdefault(rel, []).extend((module.FIX.id, f) for f in outcome.applied)
                    progressed = True
                    break  # one codemod per file per round: the next round rescans
        if not progressed:
            break
        result = scan(vllm, [overlay_client], scan_options, api=api)
    # Findings left without a fix, or whose fix was not attempted, are what a person must look at.
    changes = []
    for rel, data in sorted(overlay.edits.items()):
        original = overlay.originals.get(rel, client.tree.read_bytes(rel)).decode("utf-8")
        new = data.decode("utf-8")
        if new != original:
            changes.append(FileChange(rel, client.tree.display_path(rel), original, new, applied.get(rel, [])))
    still_skipped = [(f, why) for f, why in skipped if any(f.fingerprint() == g.fingerprint() for g in result.findings)]
    return FixPlan(changes, still_skipped, notes, initial, result, overlay)


def _check_parses(rel: str, source: str, fix_id: str) -> None:
    try:
        ast.parse(source)
    except SyntaxError as exc:  # a codemod bug: never write it
        raise DriftcheckError(f"internal error: fix {fix_id} produced code that does not parse in {rel} (line {exc.lineno})",
                              "please report it; nothing was written") from None


def apply_plan(plan: FixPlan, client: Target, backup: bool = True) -> list[Path]:
    """Write every change atomically. Refuses (before writing anything) a file that changed or is read-only."""
    if not isinstance(client.tree, FolderTree):
        raise DriftcheckError(f"cannot --apply to {client.source}: it is an archive",
                              "extract it or pass a folder / installed package as --client")
    root = client.tree.root
    targets: list[tuple[FileChange, Path]] = []
    for change in plan.changes:
        path = root / change.rel
        try:
            current = path.read_bytes()
        except OSError as exc:
            raise DriftcheckError(f"cannot read {path}: {exc.strerror}") from None
        if current != plan.overlay.originals.get(change.rel, current):
            raise DriftcheckError(f"{path} changed since driftcheck read it", "run driftcheck fix again; nothing was written")
        # Mode bits, not only os.access: root may write anything, but a file marked read-only means "don't".
        if not (path.stat().st_mode & 0o222) or not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
            raise DriftcheckError(f"{path} is read-only", "make it writable (or use a copy); nothing was written")
        targets.append((change, path))
    written = []
    for change, path in targets:
        mode = stat.S_IMODE(path.stat().st_mode)
        if backup:
            _atomic_write(path.with_name(path.name + BACKUP_SUFFIX), plan.overlay.originals[change.rel], mode)
        _atomic_write(path, change.new.encode("utf-8"), mode)
        written.append(path)
    return written


def _atomic_write(path: Path, data: bytes, mode: int) -> None:
    try:
        atomic_write_bytes(path, data, durable=True, mode=mode)
    except OSError as exc:
        raise DriftcheckError(f"cannot write {path}: {exc.strerror or exc}", "is the folder writable?") from None
