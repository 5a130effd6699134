"""`driftcheck scan`: one scan of the client(s) against one vLLM, its reports, accepted findings and `--since`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from driftcheck.cli.common import (args_cache_dir, client_specs, client_vllm_of, emit, exit_code_for, require_analysed,
                                   require_checked, resolve_targets, write_output)
from driftcheck.errors import EXIT_OK, EXIT_USAGE, DriftcheckError


def cmd_scan(args: argparse.Namespace) -> int:
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.report import render
    from driftcheck.rules.selection import resolve_rules

    only = resolve_rules(args.select)
    client_vllm = client_vllm_of(args)  # a typo is exit 2 before anything is fetched
    cache_dir = args_cache_dir(args)
    vllm, clients = resolve_targets(args.vllm, client_specs(args.client), cache_dir)
    coverage = require_checked(clients, args.allow_empty)
    accepted = None
    if args.baseline:  # the flag users know; in the code, the file is "accepted findings" (a baseline is the client's vLLM)
        from driftcheck.scan.suppress import load_accepted

        accepted = load_accepted(args.baseline)
    if args.jobs is not None and args.jobs < 1:
        raise DriftcheckError("--jobs must be at least 1")
    options = ScanOptions(cache_dir=cache_dir, use_cache=not args.no_cache, only=only, client_vllm=client_vllm,
                          accepted_findings=accepted, jobs=args.jobs)
    result = scan(vllm, clients, options)
    require_analysed(result, coverage, args.allow_empty)
    result.stats["coverage"] = coverage  # what each client held, and what was skipped and why
    if args.since:
        from driftcheck.gate.compare import apply_since, render_text, since_label

        since = _since_scan(args.since, clients, cache_dir, options)
        cmp = apply_since(result, since)
        sys.stderr.write(render_text(cmp, since_label(since), vllm.version or vllm.source))
    if args.write_baseline:
        import json

        from driftcheck.scan.suppress import accepted_document

        doc = accepted_document(result.findings, vllm.version)
        write_output(args.write_baseline, json.dumps(doc, indent=2) + "\n")
        sys.stderr.write(f"driftcheck: wrote {len(doc['entries'])} accepted finding(s) to {args.write_baseline}\n")
        return EXIT_USAGE if result.internal_errors else EXIT_OK
    if args.report_dir:
        folder = Path(args.report_dir)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DriftcheckError(f"cannot create {folder}: {exc.strerror}") from None
        reports = (("json", "driftcheck.json"), ("sarif", "driftcheck.sarif"), ("junit", "driftcheck.junit.xml"),
                   ("markdown", "driftcheck.md"))
        for _fmt, name in reports:  # refused before any is written: no new JSON beside last run's others (22c's P16)
            if (folder / name).is_dir():
                raise DriftcheckError(f"--report-dir {folder}: {name} there is a folder", "remove it or pick another folder")
        for fmt, name in reports:
            write_output(str(folder / name), render(fmt, result))
    color = args.color if args.color is not None else (args.output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    text = render(args.format, result, color=color)
    emit(args, text)
    if args.output:
        s = result.to_json()["summary"]
        sys.stderr.write(f"driftcheck: {s['error']} error(s), {s['warning']} warning(s), {s['unknown']} unknown -> {args.output}\n")
    return exit_code_for(result, args.fail_on, args.accept_unknown)


def _since_scan(spec: str, clients, cache_dir: Path, options):
    """The scan of the same clients on the --since vLLM ('declared': the one the first declaring client names)."""
    from driftcheck.scan.pipeline import scan
    from driftcheck.sources.package_metadata import declared_vllm_version
    from driftcheck.sources.targets import resolve_vllm

    if spec == "declared":
        reqs = [c.declared_vllm() for c in clients]
        versions = [declared_vllm_version(r) for r in reqs if r is not None]
        if not any(versions):
            raise DriftcheckError("--since declared: the client declares no vLLM requirement", "pass --since VERSION")
        spec = next(v for v in versions if v)
    return scan(resolve_vllm(spec, cache_dir), clients, options)
