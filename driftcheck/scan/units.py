"""The client's analysis in per-file units: parallel on all cores, cached per file content and target.

`usage.prepare_client` runs the phases that need every file (imports, patches, client classes and their
vLLM bases, members client subclasses add, worker extensions). Then every file is visited once per
process (`FileAnalyzer.analyse`, `visit_all`; a pool forks after the visits). What is left is one *unit*
per client file: every per-file rule on a `Usage` that holds only that file's uses next to the global facts,
and the whole-client rules, once, on every file's uses. A unit reads the global facts, its own file's uses,
the target and (through `ctx.client`) the client's tree; it never reads another unit's uses, so units run in
any order, in forked worker processes, and their results are merged per rule in file order: the same report
however many processes ran it (tests/scan/test_units.py compares a serial and a parallel scan byte for byte).

Two caches (unit_cache.py), both JSON through `datacodec` and written atomically (`safe_write`), never pickles:

* a unit's result, keyed by (the file's content, a digest of the global facts and of what rules read
  outside the file, the target tree, the rule selection, driftcheck's own code, `SCHEMA`); a changed file
  re-runs its unit, and a change to the global facts (a new patch, a new client subclass) re-runs all;
* the whole client's result, keyed by the content of every file of the client's tree: a scan where nothing
  changed parses nothing.

`DRIFTCHECK_JOBS` (or `--jobs`) sets the worker count; the default is every core, and one core runs in this
process. A client too small to pay for a pool (under MIN_FILES_FOR_POOL files) gets one worker for its
whole-client rules, which on a first scan of a release are the slower half (DC106, DC108 and DC110 read the
whole release), while this process runs the per-file units and then takes the rules the worker has not; there
the fork comes first and each process visits the few files itself, in parallel.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools
import json
import os
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftcheck.client_model.dead_methods import dead_methods_of
from driftcheck.client_model.cross_file_guards import dispatched_modules, imported_version_aliases, replaced_elsewhere
from driftcheck.client_model.guards import guards_of, reached_names, runs_where_probed
from driftcheck.client_model.preconditions import passing_probes
from driftcheck.client_model.refusals import refused_modules
from driftcheck.client_model.usage import finish_client, prepare_client
from driftcheck.client_model.uses import Usage
from driftcheck.errors import DriftcheckError
from driftcheck.report import progress
from driftcheck.rules.findings import Finding, UnknownResult
from driftcheck.scan.preload import preload_text
from driftcheck.scan.unit_cache import UnitCache, UnitResult, codec_for, global_digest, sha


# Behaviour rules that pair facts from several client files (an LLM built in one file, a worker extension that
# captures hidden states in another) run once over the whole client; the rest run per file. DC109 reads only
# the file that defines each override (tests/scan/test_units.py holds it to the whole-client answer).
PER_FILE_BEHAVIOUR = {"override-signature-drift"}


def per_file(probe) -> bool:
    return (probe.RULE.kind == "generic" and not probe.RULE.whole_client) or probe.RULE.name in PER_FILE_BEHAVIOUR
MIN_FILES_FOR_POOL = 48  # below this, forking workers costs more than it saves


def default_jobs() -> int:
    env = os.environ.get("DRIFTCHECK_JOBS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _plain(value):
    """JSON data as the report will hold it (tuples become lists)."""
    return json.loads(json.dumps(value))


# ------------------------------------------------------------------------------------ one unit
@dataclass
class _Run:
    """Everything a unit needs; set before the workers fork, so they inherit it without copying."""

    api: Any
    source: Any
    usage: Usage
    analyzers: dict
    by_path: dict
    probes: list
    make_ctx: Any
    dispatched: dict = field(default_factory=dict)  # dispatched_modules, refused_modules: a file's guard from other files
    guards: dict = field(default_factory=dict)
    reached: frozenset = frozenset()  # guards.reached_names: what other files may call of a file
    replaced: dict = field(default_factory=dict)  # guards.replaced_elsewhere: method bodies other files replace
    version_imports: dict = field(default_factory=dict)  # imported_version_aliases: version checks other files define
    dead: dict = field(default_factory=dict)  # dead_methods_of: methods only a file's unreachable code names
    visited: Usage | None = None  # every file visited once, into one Usage (see visit_all)
    own: dict = field(default_factory=dict)  # file -> its lists: its global-phase entries, then its visit's


_RUN: _Run | None = None
_CLAIM = None  # the worker's claim() while it and this process split the whole-client rules
WHOLE = -1  # the task number of the whole-client rules
_LISTS = ("imports", "calls", "attrs", "module_attrs", "rpcs", "bound", "patch_paths", "name_probes")


def _partition(usage: Usage) -> dict[str, dict[str, list]]:
    """The global phases' per-file entries (imports, files not analysed), by file."""
    out: dict[str, dict[str, list]] = {}

    def slot(path: str) -> dict[str, list]:
        return out.setdefault(path, {name: [] for name in (*_LISTS, "unanalysed")})

    for name in _LISTS:
        for item in getattr(usage, name):
            slot(item.loc.path)[name].append(item)
    for item in usage.unanalysed:
        slot(item[0])["unanalysed"].append(item)
    return out


_PER_FILE = (*_LISTS, "unanalysed")  # worker_extensions is global: one file names the class, another calls it
_VISIT_TIME = ("passed", "unbound_called")  # filled by the visits themselves


def _with_global_facts(g: Usage, lists: dict, files: list) -> Usage:
    """A Usage holding `lists` and `files`, sharing every fact of the global phases (whatever fields they add)."""
    shared = {f.name: getattr(g, f.name) for f in dataclasses.fields(Usage)
              if f.name not in _PER_FILE and f.name not in _VISIT_TIME and f.name != "files"}
    return Usage(**lists, files=files, **shared)


def _unit_usage(run: _Run, file) -> Usage:
    visit_all(run)
    own = run.own.get(file.rel) or run.by_path.get(file.rel) or {}
    return _with_global_facts(run.usage, {name: list(own.get(name, ())) for name in _PER_FILE}, [file])


def visit_all(run: _Run) -> None:
    """Every file's visit, once per process, into one Usage (a pool forks after it: the workers inherit it, and the
    vLLM modules the visits summarised). The whole-client rules read it; a unit reads its own file's part: the file's
    global-phase entries, then what its visit added, which is what a visit of that file alone gives (the visitor
    reads only the global facts, never another file's uses; the visit-time tables `passed` and `unbound_called`,
    which only whole-client rules read, stay out of a unit)."""
    if run.visited is not None:
        return
    g = run.usage
    usage = _with_global_facts(g, {name: list(getattr(g, name)) for name in _PER_FILE}, g.files)
    lists = [(name, getattr(usage, name)) for name in _PER_FILE]
    for analyzer in list(run.analyzers.values()):
        before = [len(items) for _name, items in lists]
        _analyse(analyzer, usage)
        phase = run.by_path.get(analyzer.file.rel) or {}
        run.own[analyzer.file.rel] = {name: [*phase.get(name, ()), *items[start:]]
                                      for (name, items), start in zip(lists, before)}
    run.visited = usage


def run_unit(run: _Run, index: int) -> UnitResult:
    file = run.source.files[index]
    usage = _unit_usage(run, file)
    items: list[list[Any]] = []
    for rel, why in usage.unanalysed:
        items.append([-1, "u", UnknownResult("DC000", f"{rel} was not analysed: {why}", client_name=run.make_ctx.client_name).to_json()])
    return _run_probes(run, usage, [(slot, p) for slot, p in enumerate(run.probes) if per_file(p)], items,
                       usage.checked())


def run_whole(run: _Run, claim=None) -> UnitResult:
    """The whole-client rules on every file's visit (`visit_all`). `claim()` hands out the number of the next rule
    to run (the count of rules when none is left); two processes sharing the claims each run the rules they get (the
    merge orders items by rule, so the report does not depend on who ran which). Without `claim`, every rule runs
    here."""
    # the release-wide rules last: the worker, which claims from the back, takes them first (on the seed, the three
    # of them are 0.47 s of a 0.9 s first scan; taken in rule order, the last one ran alone after the other process
    # had finished)
    whole = sorted(((slot, p) for slot, p in enumerate(run.probes) if not per_file(p)),
                   key=lambda sp: sp[1].RULE.reads_release)
    claim = claim or itertools.count().__next__
    first = claim()
    if first >= len(whole):
        return UnitResult(0, [])  # the other process ran them all: no need to visit the files here
    visit_all(run)
    # finish_client rewrites what some reads hold (members the client sets): on copies, so the units, which may
    # run after this in the same worker, read the visit's own records
    usage = dataclasses.replace(run.visited, attrs=[copy.copy(a) for a in run.visited.attrs])
    finish_client(usage, run.api)

    def claimed():  # one rule at a time: the next is claimed when this one is done
        k = first
        while k < len(whole):
            yield whole[k]
            k = claim()

    return _run_probes(run, usage, claimed(), [], 0)


def _analyse(analyzer, usage: Usage) -> None:
    """One file's visit into `usage` (a RecursionError makes the file unanalysed, never a crash)."""
    shared, analyzer.usage = analyzer.usage, usage
    analyzer.reported = set()
    try:
        analyzer.analyse()
    except RecursionError:
        usage.unanalysed.append((analyzer.file.rel, "expressions nested too deeply to follow"))
    finally:
        analyzer.usage = shared


def _run_probes(run: _Run, usage: Usage, probes: list, items: list, uses: int) -> UnitResult:
    from driftcheck.scan.pipeline import _apply_guard, raised_by  # pipeline imports this module

    ctx = run.make_ctx(usage)
    guards = _Guards(run)
    errors: list[str] = []
    found: list[tuple[int, int, Finding, object]] = []  # guarded once every rule has run: see guards.guard_at
    open_questions: list[tuple[int, int, UnknownResult, object]] = []  # unknowns at a client line: guarded likewise
    for slot, probe in probes:
        try:
            for item in probe.check(ctx):
                if isinstance(item, Finding):
                    found.append((len(items), slot, item, probe.RULE))
                    items.append(None)
                elif isinstance(item, UnknownResult) and item.client is not None and probe.RULE.guardable \
                        and probe.RULE.kind == "generic":  # a use that raises if missing (a behaviour's question is no use)
                    open_questions.append((len(items), slot, item, probe.RULE))
                    items.append(None)
                else:
                    items.append([slot, "u1" if getattr(item, "once", False) else "u", _plain(item.to_json())])
        except DriftcheckError:
            raise
        except Exception as exc:  # a probe bug must never turn into a silent pass
            where = traceback.extract_tb(exc.__traceback__)[-1]
            message = (f"internal error in {probe.RULE.id} {probe.RULE.name}: {type(exc).__name__}: {exc} "
                       f"({Path(where.filename).name}:{where.lineno})")
            errors.append(message)
            items.append([slot, "u", UnknownResult(probe.RULE.id, message, client_name=run.make_ctx.client_name).to_json()])
    failing: dict[str, list] = {}
    for _i, _slot, item, rule in found:
        if (item.severity == "error" or item.details.get("fails")) and item.client is not None:
            failing.setdefault(item.client.path, []).append((item.client.line, raised_by(item, rule)))
    for i, slot, item, rule in found:
        guard = _apply_guard(item, guards, rule, failing)
        if item.details.get("may_be_absent") and _absence_handled(guards, guard, item):
            continue  # a member the object may lack (a subclass's, one set under a condition), where the client handles that
        items[i] = [slot, "f", _plain(item.to_json())]
    for i, slot, item, rule in open_questions:
        items[i] = _guarded_question(item, rule, slot, guards, failing, _apply_guard)
    return UnitResult(uses, [item for item in items if item is not None], errors,
                      {k: v for k, v in run.make_ctx.baselines.items() if k == run.make_ctx.baseline_key})


def _guarded_question(item: UnknownResult, rule, slot: int, guards, failing: dict, apply_guard) -> list | None:
    """An unknown at a line the client guards against what the rule's drift raises (a try that catches it, a hasattr
    of the name) is a warning: whichever way the question goes, the client handles it (batch 19d's U1: avp reads
    `_ctx.requests` under `hasattr(_ctx, "requests")` inside `try/except Exception`, and an unread package "may set"
    it). Under a hasattr / getattr probe of the very name the question is about, there is nothing left to say: the
    use runs only where the name is there (None; 28c FW1: `if hasattr(self.worker, "device"): return
    self.worker.device` in vLLM's own executor). Only the usage rules' questions (does this name exist?); a behaviour
    rule's unknown is no use a guard handles. Anything else stays the unknown it was."""
    message = item.message if item.message.endswith(".") else item.message + "."
    probe = Finding(rule.id, rule.name, "error", message, item.symbol, item.client, None, client_name=item.client_name)
    guard = apply_guard(probe, guards, rule, failing)
    if probe.severity != "warning" or "guarded" not in probe.details:
        return [slot, "u1" if getattr(item, "once", False) else "u", _plain(item.to_json())]
    if guard is not None and guard.kind == "hasattr" and _probes_the_use(guards, guard, item):
        return None
    probe.fix = None
    return [slot, "f", _plain(probe.to_json())]


def _absence_handled(guards, guard, item: Finding) -> bool:
    """Whether the client handles the member's absence where the finding says the object may lack it: a `try` that
    catches what the line raises (the guard `_apply_guard` found), or a hasattr / getattr test of the very object and
    name around it, whichever guard was found first (29d R4: `hasattr(qc, "x") and qc.x and torchao_version_at_least(...)`,
    where the version call is found first; tri28c FW1: `elif hasattr(self.base_layer, "B"): return self.base_layer.B`)."""
    if guard is None:
        return False
    if guard.kind == "try":
        return True
    line = item.client.line
    return any(g.kind == "hasattr" and g.start <= line <= g.end and _probes_the_use(guards, g, item)
               for g in guards.get(item.client.path, []) or [])


def _probes_the_use(guards, guard, item: UnknownResult | Finding) -> bool:
    """Whether `guard`'s hasattr / getattr test probes the very object and name the item is about, where the use
    runs only when the name is there (`guards.runs_where_probed`)."""
    f = guards.run.source.file_at(item.client.path)
    return f is not None and runs_where_probed(f.tree, guard, guards.expression(item.client).strip(),
                                               (item.symbol or "").rpartition(".")[2], item.client.line, item.client.col)


class _Guards:
    """guards_of(file) for the files findings point at, computed on first use (once per process)."""

    def __init__(self, run: _Run):
        self.run = run

    def get(self, path: str, default=None):
        cache = self.run.guards
        if path not in cache:
            f = self.run.source.file_at(path)
            cache[path] = guards_of(f.tree, self.run.reached, self.run.version_imports.get(path, frozenset()),
                                    self.run.api.version) \
                if f is not None else default
            if path in self.run.dispatched:
                cache[path] = [*(cache[path] or []), self.run.dispatched[path]]
            if path in self.run.replaced:
                cache[path] = [*(cache[path] or []), *self.run.replaced[path]]
            if path in self.run.dead:
                cache[path] = [*(cache[path] or []), *self.run.dead[path]]
            if f is not None and cache[path]:
                cache[path] = passing_probes(f.tree, cache[path], self.run.api)
        return cache[path]

    def expression(self, where) -> str:
        """The source of what a finding points at (`other.missing_here`), not its whole line: a guard of one
        object's other spelling must not cover another object's use on the same line."""
        f = self.run.source.file_at(where.path)
        if f is None or not where.col or not where.end_col or (where.end_line or where.line) != where.line \
                or not 0 < where.line <= len(f.lines):
            return where.code
        return f.lines[where.line - 1][where.col - 1:where.end_col - 1] or where.code


def _worker_started() -> None:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent stops its workers; no Terminated traceback there
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    progress.in_forked_child()


def _worker(chunk: list[int]) -> list[tuple[int, bytes]]:
    assert _RUN is not None
    out = [(i, codec_for(UnitResult).dumps(run_whole(_RUN, _CLAIM) if i == WHOLE else run_unit(_RUN, i))) for i in chunk]
    from driftcheck.vllm_model.bodies import save_text_indexes

    save_text_indexes()  # whole-tree answers this worker found, for later scans (merged on save)
    return out


def run_units(api, source, probes, make_ctx, jobs: int, cache: UnitCache | None, key_base: str,
              presummary=None, bar=progress.NO_BAR) -> tuple[list[UnitResult], dict]:
    """Every file's unit result, in file order, then the whole-client rules' results; and counters for the stats.
    `presummary` (presummarise.py) is stopped before any worker forks, and when the scan fails. `bar` (a big
    client's, on a terminal) says which step runs and counts the files checked."""
    try:
        return _run_units(api, source, probes, make_ctx, jobs, cache, key_base, presummary, bar)
    finally:
        if presummary is not None:
            presummary.stop()


def _run_units(api, source, probes, make_ctx, jobs, cache, key_base, presummary, bar) -> tuple[list[UnitResult], dict]:
    label = make_ctx.client_name
    bar.update(description=f"{label}: imports, classes and patches of {len(source.files)} files")
    preload = preload_text(api, probes, getattr(make_ctx, "loader", None))
    try:
        usage, analyzers = prepare_client(source, api)
    except BaseException:
        preload.join(quiet=True)
        raise
    preload.join()  # before any fork: the workers inherit the text it read
    run = _Run(api, source, usage, analyzers, _partition(usage), probes, make_ctx)
    if jobs > 1 and len(source.files) >= MIN_FILES_FOR_POOL and _can_fork():
        # a big client: the cross-file guards and the global digest on the second core while this one visits every
        # file (every path visits them: the units, the whole-client rules); neither reads what the visits add
        bar.update(description=f"{label}: visiting {len(source.files)} files")
        with _forked_pool(run, 1) as pool:
            pending = pool.apply_async(_cross_file_facts, (cache is not None,))
            visit_all(run)
            gdigest = _adopt(run, pending.get())
    else:
        gdigest = _adopt(run, _cross_file_facts(cache is not None, run))
    results: list[UnitResult | None] = [None] * len(source.files)
    keys: list[str] = []
    todo: list[int] = []
    for i, f in enumerate(source.files):
        key = sha(f"{key_base}\0{gdigest}\0{f.rel}\0{f.module}".encode() + sha(f.text.encode()).encode()) if cache else ""
        keys.append(key)
        hit = cache.get(key, UnitResult) if cache is not None else None
        if hit is not None:
            results[i] = hit
        else:
            todo.append(i)
    wholes: list[UnitResult] = []  # the whole-client rules' results (two when two processes split them)
    workers = min(jobs, len(todo))
    if workers > 1 and len(todo) >= MIN_FILES_FOR_POOL and _can_fork():
        size = max(1, min(16, len(todo) // (workers * 8)))
        chunks = [[WHOLE]] + [todo[i:i + size] for i in range(0, len(todo), size)]  # the longest task first
        bar.update(description=f"{label}: visiting {len(source.files)} files")
        visit_all(run)  # once, here: every worker would otherwise visit every file again for the whole-client rules
        if presummary is not None:
            presummary.stop()  # the pool has the cores now
        bar.update(description=f"{label}: checking files ({workers} processes)", total=len(todo), completed=0)
        with _forked_pool(run, workers) as pool:
            for done in pool.imap_unordered(_worker, chunks):
                for i, raw in done:
                    if i == WHOLE:
                        wholes.append(codec_for(UnitResult).loads(raw))
                    else:
                        results[i] = codec_for(UnitResult).loads(raw)
                        bar.advance()
    elif jobs > 1 and todo and any(not per_file(p) for p in probes) and _can_fork():
        workers = 2
        if presummary is not None:
            presummary.stop()
        wholes = _whole_beside_units(run, todo, results)
    else:
        workers = 1
        bar.update(description=f"{label}: checking files", total=len(todo), completed=0)
        for i in todo:
            results[i] = _in_process(run_unit(run, i))
            bar.advance()
        bar.update(description=f"{label}: whole-client rules")
        wholes = [_in_process(run_whole(run))]
    if cache is not None:
        for i in todo:
            if not any(v.startswith("unavailable") for v in results[i].baselines.values()):
                cache.put(keys[i], results[i])
    return [*results, *wholes], {"jobs": workers, "units_run": len(todo), "units_cached": len(source.files) - len(todo)}  # type: ignore[return-value]


def _cross_file_facts(digest: bool, run: _Run | None = None) -> tuple:
    """What one client file says of another (`_Run.dispatched`, `reached`, `replaced`, `version_imports`, `dead`) and the
    global digest of the unit cache's keys ("" without a cache): from the parsed files and the global phases only."""
    run = run or _RUN
    assert run is not None
    api, source = run.api, run.source
    dispatched = {**refused_modules(source.files, source, api.version, api.package, api),
                  **dispatched_modules(source.files, source, api.version, api.package)}
    reached = reached_names(f.tree for f in source.files)
    replaced = replaced_elsewhere(source.files)
    version_imports = imported_version_aliases(source.files, source)
    dead = dead_methods_of(source.files, api, run.usage, source, _baseline(run))
    bodies = {rel: [*replaced.get(rel, ()), *dead.get(rel, ())] for rel in {*replaced, *dead}}  # both: bodies that never run
    gdigest = global_digest(run.usage, source, [f.rel for f in source.files], dispatched, reached, bodies, api,
                            version_imports) if digest else ""
    return dispatched, reached, replaced, version_imports, dead, gdigest


def _baseline(run: _Run):
    """The client's own vLLM as preload_text loaded it (before any fork), or None."""
    loader = getattr(run.make_ctx, "loader", None)
    found = loader() if loader is not None else None
    return None if isinstance(found, str) else found


def _adopt(run: _Run, facts: tuple) -> str:
    """Set `_cross_file_facts`' answers on `run`; the global digest."""
    run.dispatched, run.reached, run.replaced, run.version_imports, run.dead, gdigest = facts
    return gdigest


def _in_process(result: UnitResult) -> UnitResult:
    """A result as a worker's would come back (through JSON): the same report whichever process ran it."""
    return codec_for(UnitResult).decode(codec_for(UnitResult).encode(result))


def _whole_beside_units(run: _Run, todo: list[int], results: list) -> list[UnitResult]:
    """A client too small for a pool: one forked worker starts on the whole-client rules (the slower part of a first
    scan: DC108's, DC110's and DC106's questions over the whole release) while this process runs the per-file units,
    then joins it; each claims its next whole-client rule from one shared pair of ends."""
    import multiprocessing

    n = sum(1 for p in run.probes if not per_file(p))
    ends = multiprocessing.get_context("fork").Array("i", [0, n])  # [front, back): made before the fork, shared

    def claim(from_back: bool) -> int:
        with ends.get_lock():
            if ends[0] >= ends[1]:
                return n
            if from_back:
                ends[1] -= 1
                return ends[1]
            ends[0] += 1
            return ends[0] - 1

    # The worker takes the rules from the end of the scan order (where the release-wide ones are: DC106, DC108,
    # DC110), this process from the front once its units are done; they meet wherever the work runs out.
    with _forked_pool(run, 1, lambda: claim(True)) as pool:
        pending = pool.apply_async(_worker, ([WHOLE],))
        for i in todo:
            results[i] = _in_process(run_unit(run, i))
        here = _in_process(run_whole(run, lambda: claim(False)))
        [(_i, raw)] = pending.get()
    return [codec_for(UnitResult).loads(raw), here]


@contextlib.contextmanager
def _forked_pool(run: _Run, workers: int, claim=None):
    """Forked workers that inherit `run` (and `claim`) without copying; stopped when this process fails (Ctrl-C,
    SIGTERM, an error), joined when it is done."""
    import multiprocessing

    global _RUN, _CLAIM
    _RUN, _CLAIM = run, claim
    try:
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_started)
        try:
            yield pool
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()
    finally:
        _RUN, _CLAIM = None, None


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def merge(results: list[UnitResult], n_probes: int) -> tuple[list[dict], list[dict], list[str], int, dict]:
    """(findings, unknowns, internal errors, uses) in the serial order: DC000 first, then rule by rule, each
    rule's items file by file."""
    findings: list[dict] = []
    unknown: list[dict] = []
    errors: list[str] = []
    for slot in range(-1, n_probes):
        once: set = set()  # "u1": asked once per client by the rule, at the first file that raises it
        for r in results:
            for s, kind, item in r.items:
                if s != slot:
                    continue
                if kind == "u1":
                    if item.get("symbol") in once:
                        continue
                    once.add(item.get("symbol"))
                (findings if kind == "f" else unknown).append(item)
    for r in results:
        errors.extend(r.errors)
    baselines: dict[str, str] = {}
    for r in results:
        baselines.update(r.baselines)
    return findings, unknown, list(dict.fromkeys(errors)), sum(r.uses for r in results), baselines
