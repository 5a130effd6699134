"""The verbs over many vLLMs: `matrix`, `range`, `bisect`, and `compare` of two JSON reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftcheck.cli.common import args_cache_dir, client_specs, client_vllm_of, emit, require_checked, write_output
from driftcheck.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, DriftcheckError


def cmd_bisect(args: argparse.Namespace) -> int:
    import json

    from driftcheck.gate.bisect import render_text, run_bisect
    from driftcheck.sources.releases import expand

    client_vllm = client_vllm_of(args)  # a typo is exit 2 before anything is fetched
    cache_dir = args_cache_dir(args)
    specs = client_specs(args.client) or [n for n in ("speculators",) if _installed(n)]
    if not specs:
        raise DriftcheckError("no --client given and speculators is not installed", "pass --client speculators==0.4.0")
    builds = expand(args.vllm, cache_dir)
    from driftcheck.sources.targets import resolve_clients

    require_checked(resolve_clients(specs, cache_dir), args.allow_empty)
    report = run_bisect(builds, specs, cache_dir, args.good, args.bad, args.fail_on, client_vllm, not args.no_cache)
    emit(args, json.dumps(report.to_json(), indent=2) + "\n" if args.format == "json" else render_text(report))
    return EXIT_FINDINGS if any(e.change == "appeared" for c in report.clients for e in c.edges) else EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    import json

    from driftcheck.gate.compare import compare_reports, load_report, new_at_or_above, render_text, report_label

    old, new = load_report(args.old), load_report(args.new)
    cmp = compare_reports(old, new)
    emit(args, json.dumps(cmp, indent=2) + "\n" if args.format == "json" else render_text(cmp, report_label(old), report_label(new)))
    return EXIT_FINDINGS if new_at_or_above(cmp, args.fail_on) else EXIT_OK


def _run_matrix(args):
    from driftcheck.gate.matrix import run_matrix
    from driftcheck.gate.ranges import compute_range
    from driftcheck.sources.declared import SPEC as DECLARED, declared_releases
    from driftcheck.sources.releases import expand
    from driftcheck.sources.targets import DEFAULT_CLIENTS, resolve_clients

    client_vllm = client_vllm_of(args)
    cache_dir = args_cache_dir(args)
    specs = client_specs(args.client) or [n for n in DEFAULT_CLIENTS if _installed(n)]
    if not specs:
        raise DriftcheckError("no --client given and speculators is not installed", "pass --client speculators==0.4.0")
    if args.jobs is not None and args.jobs < 1:
        raise DriftcheckError("--jobs must be at least 1")
    if args.vllm == DECLARED:  # the releases the clients' own requirements admit: read the clients first
        clients = resolve_clients(specs, cache_dir)
        require_checked(clients, args.allow_empty)
        versions = declared_releases(clients, cache_dir)
    else:
        versions = expand(args.vllm, cache_dir)
        require_checked(resolve_clients(specs, cache_dir), args.allow_empty)  # an empty client fits every release
    matrix = run_matrix(versions, specs, cache_dir, args.jobs, client_vllm, use_cache=not args.no_cache)
    ranges = [compute_range(matrix, c) for c in matrix.clients]
    return matrix, ranges


def _installed(name: str) -> bool:
    import importlib.metadata as md

    try:
        md.distribution(name)
        return True
    except md.PackageNotFoundError:
        return False


def cmd_matrix(args: argparse.Namespace) -> int:
    from driftcheck.sources.provenance import provenance
    from driftcheck.report import matrix_report

    matrix, ranges = _run_matrix(args)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DriftcheckError(f"cannot create {out}: {exc.strerror}") from None
    as_json = matrix_report.to_json(matrix, ranges, provenance())
    write_output(str(out / "matrix.json"), as_json)
    write_output(str(out / "matrix.md"), matrix_report.to_markdown(matrix, ranges))
    write_output(str(out / "matrix.html"), matrix_report.to_html(matrix, ranges))
    try:
        drew = matrix_report.to_png(matrix, ranges, out / "matrix.png")
    except OSError as exc:
        raise DriftcheckError(f"cannot write {out / 'matrix.png'}: {exc.strerror or exc}") from None
    emit(args, as_json if args.format == "json" else matrix_report.to_markdown(matrix, ranges))
    sys.stderr.write(f"driftcheck: wrote {out}/matrix.json, .md, .html" + (", .png" if drew else " (no .png: pip install matplotlib)")
                     + f" in {matrix.seconds:.1f} s\n")
    return EXIT_USAGE if any(c.status == "error" for c in matrix.cells) else EXIT_OK


def cmd_range(args: argparse.Namespace) -> int:
    import json

    matrix, ranges = _run_matrix(args)
    if args.format == "json":
        emit(args, json.dumps([r.to_json() for r in ranges], indent=2) + "\n")
    else:
        lines = []
        for r in ranges:
            lines.append(f"{r.client}: computed vllm{r.computed or ' (no compatible release)'}; declared {r.declared or '(none)'}"
                         + ("" if r.agrees is None else (" -> agrees" if r.agrees else " -> differs")))
            if r.first_break_above:
                lines.append(f"  breaks at {r.first_break_above}: {', '.join(r.rules_above)} {('- ' + r.reason_above) if r.reason_above else ''}")
            lines += [f"  {note}" for note in r.notes]
        emit(args, "".join(line + "\n" for line in lines))
    if matrix.cells and all(c.status == "error" for c in matrix.cells):
        return EXIT_USAGE  # nothing could be read: no range was computed, not "none compatible" (22c's P9)
    return EXIT_OK if all(r.computed for r in ranges) else EXIT_FINDINGS
