"""`driftcheck matrix`: scan many vLLM releases against the clients, in parallel, and summarise.

Each release is one task in a process pool (one process per core); a worker keeps the clients and
the clients' baseline vLLM in memory across its tasks, and takes the releases next to the one it scanned last
(`lanes.py`: what it read in a file is kept by content), and every worker shares the on-disk source
and summary caches. A cell is `ok` (no error), `fail` (errors: the rule ids), `unknown` (a probe
could not decide) or `error` (the release could not be read or fetched: `Matrix.missing` and a line on
stderr say which names were tried and why). A bar on stderr counts the releases done (a terminal only).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from driftcheck.report import progress
from driftcheck.storage import signals
from driftcheck.errors import DriftcheckError
from driftcheck.gate.lanes import Lanes
from driftcheck.vllm_model import file_memo

_WORKER: dict = {}


@dataclass
class Cell:
    vllm: str
    client: str
    status: str  # ok | fail | unknown | error
    rules: list[str] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    unknown: int = 0
    message: str | None = None
    first_error: str | None = None  # "DC003 path:line message" of the first error, for the range report
    seconds: float = 0.0


@dataclass
class Matrix:
    versions: list[str]
    clients: list[dict]  # {"spec", "name", "version", "declared"}
    cells: list[Cell]
    seconds: float
    jobs: int

    def cell(self, version: str, client: str) -> Cell | None:
        for c in self.cells:
            if c.vllm == version and c.client == client:
                return c
        return None

    def missing(self) -> list[dict]:
        """Releases that could not be checked at all (not fetched, not readable), with why."""
        out = []
        for v in self.versions:
            cells = [c for c in self.cells if c.vllm == v]
            if cells and all(c.status == "error" for c in cells):
                out.append({"vllm": v, "why": cells[0].message})
        return out

    def to_json(self) -> dict:
        return {"versions": self.versions, "clients": self.clients, "cells": [asdict(c) for c in self.cells],
                "seconds": round(self.seconds, 2), "jobs": self.jobs, "missing": self.missing()}


def _init_worker(lanes: Lanes) -> None:
    signals.worker_init()
    _WORKER["lanes"], _WORKER["number"] = lanes, lanes.join()
    file_memo.keep_across_trees()  # the worker's next release reuses what it read in files that did not change
    progress.configure(quiet=True)  # the parent draws the matrix bar; workers' fetches stay silent


def _scan_version(task: tuple) -> list[Cell]:
    with signals.task():
        return _scan_one(task)


def _scan_next(ordered: list[str], rest: tuple) -> tuple[str, list[Cell]] | None:
    """One pool task: the release this worker's lane holds next, scanned."""
    index = _WORKER["lanes"].claim(_WORKER["number"])
    if index is None:
        return None
    return ordered[index], _scan_version((ordered[index], *rest))


def _scan_one(task: tuple) -> list[Cell]:
    version, client_specs, cache_dir, client_vllm, use_cache = task
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    started = time.perf_counter()
    cache = Path(cache_dir)
    clients = _WORKER.setdefault("clients", {})
    baselines = _WORKER.setdefault("baselines", {})
    out: list[Cell] = []
    try:
        target = resolve_vllm(version, cache)
    except DriftcheckError as exc:
        return [Cell(version, spec, "error", message=exc.one_line()) for spec in client_specs]
    for spec in client_specs:
        try:
            if spec not in clients:
                clients[spec] = resolve_client(spec, cache)
            client = clients[spec]
            options = ScanOptions(cache_dir=cache, use_cache=use_cache, client_vllm=client_vllm, baseline_cache=baselines,
                                  jobs=1)  # the matrix's own processes already fill the cores
            result = scan(target, [client], options)
        except DriftcheckError as exc:
            out.append(Cell(version, spec, "error", message=exc.one_line()))
            continue
        visible = result.visible()
        errors = [f for f in visible if f.severity == "error"]
        rules = sorted({f.rule for f in errors})
        status = "fail" if errors else ("error" if result.internal_errors else ("unknown" if result.unknown else "ok"))
        first = None
        if errors:
            f = errors[0]
            first = f"{f.rule} {f.client.path if f.client else ''}:{f.client.line if f.client else ''} {f.message}"
        out.append(Cell(version, spec, status, rules, len(errors), sum(1 for f in visible if f.severity == "warning"),
                        len(result.unknown), result.internal_errors[0] if result.internal_errors else None, first,
                        round(time.perf_counter() - started, 3)))
    return out


def _vkey(v: str):
    try:
        return (0, Version(v))
    except InvalidVersion:
        return (1, v)


def run_matrix(versions: list[str], client_specs: list[str], cache_dir: Path, jobs: int | None = None,
               client_vllm: str | None = None, use_cache: bool = True) -> Matrix:
    from driftcheck.sources.targets import resolve_client

    started = time.perf_counter()
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(versions)))
    # Resolve (and fetch) the clients once up front: a bad client is a usage error, not N red cells.
    clients = []
    for spec in client_specs:
        t = resolve_client(spec, cache_dir)
        req = t.declared_vllm()
        clients.append({"spec": spec, "name": t.name, "version": t.version, "declared": str(req.specifier) if req else None})
    ordered = sorted(versions, key=_vkey)
    rest = (client_specs, str(cache_dir), client_vllm, use_cache)
    done: dict[str, list[Cell]] = {}
    with progress.bar("scanning vLLM releases", total=len(versions)) as bar:
        if jobs == 1:
            file_memo.keep_across_trees()
            for version in ordered:
                done[version] = _scan_version((version, *rest))
                bar.advance(description=f"scanning vLLM releases (done: {version})")
        else:
            ctx = multiprocessing.get_context()
            lanes = Lanes(len(ordered), jobs, ctx)
            with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                     initargs=(lanes,)) as pool:
                try:
                    futures = [pool.submit(_scan_next, ordered, rest) for _ in ordered]
                    for future in as_completed(futures):
                        scanned = future.result()
                        if scanned:
                            done[scanned[0]] = scanned[1]
                            bar.advance(description=f"scanning vLLM releases (done: {scanned[0]})")
                except BaseException:
                    _stop_workers(pool)
                    raise
    cells = [cell for v in versions for cell in done[v]]
    matrix = Matrix(ordered, clients, cells, time.perf_counter() - started, jobs)
    for gone in matrix.missing():
        progress.warn(f"vLLM {gone['vllm']} could not be checked: {gone['why']}")
    return matrix


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Interrupted: workers stop their fetch (pip and partial files) and exit; wait for that."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.join(10)
