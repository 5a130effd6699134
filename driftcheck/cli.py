"""The `driftcheck` command: one sub-command per verb, thin (parse, call, render, exit code).

Exit codes (all commands): 0 = nothing at or above --fail-on, 1 = findings (or unknowns, unless
--accept-unknown), 2 = usage or tool error. A crash never exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from driftcheck import __version__
from driftcheck.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, DriftcheckError

FORMATS = ["text", "json", "sarif", "junit", "markdown", "github"]
FAIL_ON = ["error", "warning", "info", "never"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit 2), not a usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"driftcheck: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(EXIT_USAGE)


class _Once(argparse.Action):
    """A single-valued option given twice is an error, not "the last one wins" (`--vllm 0.11.0 --vllm 0.16.0`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest, None) is not None and getattr(namespace, f"_seen_{self.dest}", False):
            parser.error(f"{option_string} given twice (once is enough: {getattr(namespace, self.dest)!r}, then {values!r})")
        setattr(namespace, f"_seen_{self.dest}", True)
        setattr(namespace, self.dest, values)


def _add_output_args(p: argparse.ArgumentParser, formats: list[str], default: str) -> None:
    p.add_argument("-f", "--output-format", "--format", dest="format", choices=formats, default=default, action=_Once,
                   help=f"what goes to stdout (or -o): {', '.join(formats)} (default: {default})")
    p.add_argument("-o", "--output", metavar="FILE", action=_Once, help="write that output here (atomically) instead of stdout")


def _add_target_args(p: argparse.ArgumentParser, vllm_help: str, client_help: str, many_clients: bool = True,
                     vllm_required: bool = False, vllm_default: str | None = None) -> None:
    p.add_argument("--vllm", metavar="TARGET", action=_Once, help=vllm_help, required=vllm_required, default=vllm_default)
    p.add_argument("--client", metavar="TARGET", action="append" if many_clients else _Once, help=client_help)
    p.add_argument("--client-vllm", metavar="VERSION", action=_Once, help="the vLLM the client was written for (default: from the client's declared requirement)")
    p.add_argument("--allow-empty", action="store_true", help="do not fail when no client file imports vLLM (nothing to check)")
    p.add_argument("--cache-dir", metavar="DIR", action=_Once, help="cache folder (default: $DRIFTCHECK_CACHE_DIR or ~/.cache/driftcheck)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the per-file summary cache")


CLIENTS_HELP = ("client code: a folder, a .py file, a .whl, NAME==VERSION, or an installed distribution "
                "(repeatable; default: installed speculators + hs_connectors)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="driftcheck", description="Check code that reaches into vLLM internals against any vLLM release.")
    parser.add_argument("--version", action="version", version=f"driftcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    scan = sub.add_parser("scan", help="report where the client's use of vLLM no longer matches a vLLM release")
    _add_target_args(scan, "vLLM to check against: omitted = installed; a folder, a .whl, a version such as 0.16.0 (fetched, sources only), nightly, nightly@2026-09-17",
                     CLIENTS_HELP)
    scan.add_argument("--select", metavar="RULE", action="append", help="only run these rules (id or name, any case; repeatable)")
    scan.add_argument("--jobs", "-j", type=int, action=_Once, help="processes for the client's files (default: $DRIFTCHECK_JOBS or one per core)")
    _add_output_args(scan, FORMATS, "text")
    scan.add_argument("--report-dir", metavar="DIR", action=_Once, help="also write driftcheck.{json,sarif,junit.xml,md} there (for CI)")
    scan.add_argument("--fail-on", choices=FAIL_ON, default="error", action=_Once, help="lowest severity that makes the exit code 1 (default: error)")
    scan.add_argument("--accept-unknown", action="store_true", help="do not fail when a probe could not decide")
    scan.add_argument("--baseline", metavar="FILE", action=_Once, help="hide the findings accepted in this baseline (until their vLLM side changes)")
    scan.add_argument("--write-baseline", metavar="FILE", action=_Once, help="accept today's findings: write them to FILE and exit 0")
    scan.add_argument("--since", metavar="VLLM", action=_Once,
                      help="show only findings new compared with this vLLM (a version, a nightly, a folder; 'declared' = the client's own), and list those gone")
    scan.add_argument("--color", dest="color", action="store_true", default=None, help="force colour in text output")
    scan.add_argument("--no-color", dest="color", action="store_false", help="no colour in text output")

    fix = sub.add_parser("fix", help="repair what scan found with codemods (dry run: a unified diff)")
    _add_target_args(fix, "vLLM to fix against (as for scan)",
                     "client code to fix: a folder, a .py file or an installed distribution (default: installed speculators)",
                     many_clients=False)
    fix.add_argument("--only", metavar="RULE_OR_FIX", action="append", help="only these rules (DC003, unknown-keyword) or fixes (drop-keyword, add-block-hasher)")
    fix.add_argument("--apply", action="store_true", help="write the changes (atomically, keeping a .driftcheck.bak backup)")
    fix.add_argument("--no-backup", action="store_true", help="with --apply, do not keep backups")
    fix.add_argument("--unsafe", action="store_true", help="also apply fixes that need review (ruff's unsafe fixes)")
    fix.add_argument("--guard", action="store_true", help="emit a compatibility guard instead of a rewrite where possible, so one client runs on old and new vLLM")
    _add_output_args(fix, ["text", "json"], "text")

    matrix = sub.add_parser("matrix", help="scan many vLLM releases against the client(s) and compute compatible ranges")
    _add_target_args(matrix, "0.11.0..0.32.0, 0.11.0,0.16.0, or all-releases", "client(s), as for scan (default: installed speculators)",
                     vllm_required=True)
    matrix.add_argument("--jobs", "-j", type=int, action=_Once, help="processes (default: one per core)")
    matrix.add_argument("--out", metavar="DIR", default="reports", action=_Once, help="where matrix.{json,md,html,png} go (default: reports/)")
    _add_output_args(matrix, ["markdown", "json", "text"], "markdown")

    rng = sub.add_parser("range", help="the tightest vllm>=a,<b the client is compatible with (runs a matrix)")
    _add_target_args(rng, "releases to consider (default: all-releases)", "client(s), as for scan", vllm_default="all-releases")
    rng.add_argument("--jobs", "-j", type=int, action=_Once)
    rng.add_argument("--json", action="store_const", dest="format", const="json", help="same as -f json")
    _add_output_args(rng, ["text", "json"], "text")

    bis = sub.add_parser("bisect", help="the first nightly where each finding appears, and the last where it did not (bisection)")
    _add_target_args(bis, "the builds, oldest first: nightlies:0.28..0.30, nightlies:2026-09-01..2026-09-20, or a list",
                     "client(s), as for scan", vllm_required=True)
    bis.add_argument("--good", metavar="VERSION", action=_Once, help="the old end (default: the oldest build of the range)")
    bis.add_argument("--bad", metavar="VERSION", action=_Once, help="the new end (default: the newest build of the range)")
    bis.add_argument("--fail-on", choices=FAIL_ON[:3], default="error", action=_Once, help="lowest severity bisected (default: error)")
    _add_output_args(bis, ["text", "json"], "text")

    cmp = sub.add_parser("compare", help="findings new in one JSON report compared with another, and those gone")
    cmp.add_argument("old", help="the report of the vLLM the client runs today (driftcheck scan -f json)")
    cmp.add_argument("new", help="the report of the target (e.g. a nightly)")
    cmp.add_argument("--fail-on", choices=FAIL_ON, default="error", action=_Once, help="exit 1 when a new finding is at least this (default: error)")
    _add_output_args(cmp, ["text", "json"], "text")

    explain = sub.add_parser("explain", help="name the vLLM drift behind a pasted traceback")
    explain.add_argument("file", nargs="?", default="-", help="a file holding the traceback, or - for stdin (default)")
    explain.add_argument("--vllm", metavar="TARGET", action=_Once, help="confirm the diagnosis against this vLLM's sources")
    explain.add_argument("--json", action="store_const", dest="format", const="json", help="same as -f json")
    _add_output_args(explain, ["text", "json"], "text")
    explain.add_argument("--cache-dir", metavar="DIR", action=_Once, help="cache folder for fetched vLLM sources")

    rules = sub.add_parser("rules", help="list the rules, or print one rule's documentation")
    rules.add_argument("rule", nargs="?", help="rule id or name (e.g. DC003 or unknown-keyword)")

    smoke = sub.add_parser("smoke", help="run a real hidden-state extraction on a tiny local model (see docs/smoke.md)", add_help=False)
    smoke.add_argument("args", nargs=argparse.REMAINDER)
    for verb in (scan, fix, matrix, rng, explain, bis):
        verb.add_argument("-q", "--quiet", action="store_true", help="no progress bars or progress notes on stderr (warnings and errors still print)")
    return parser


def _cache_dir(args: argparse.Namespace) -> Path:
    from driftcheck.storage.cache import default_cache_dir

    return Path(args.cache_dir).expanduser() if getattr(args, "cache_dir", None) else default_cache_dir()


def _write_output(path: str, text: str) -> None:
    """-o, --report-dir, baselines, matrix files: through safe_write (a symlink is written through, a device
    or FIFO as a stream, never replaced)."""
    from driftcheck.storage.safe_write import write_bytes

    target = Path(path).expanduser()
    if target.is_dir():
        raise DriftcheckError(f"-o {path} is a folder", "give a file name")
    try:
        write_bytes(target, text.encode())
    except OSError as exc:
        raise DriftcheckError(f"cannot write {path}: {exc.strerror or exc}") from None


def _emit(args: argparse.Namespace, text: str) -> None:
    """A verb's report: to -o FILE when given, else stdout."""
    if getattr(args, "output", None):
        _write_output(args.output, text)
    else:
        sys.stdout.write(text)


def _client_specs(specs: list[str] | None) -> list[str] | None:
    """Refuse at once what can never be a client (`--client ""` used to scan the current folder)."""
    import stat

    for spec in specs or []:
        if not spec.strip():
            raise DriftcheckError("--client is empty", "give a folder, a .py file, a .whl, NAME==VERSION or a distribution name")
        try:
            mode = os.stat(Path(spec).expanduser()).st_mode
        except OSError:
            continue  # not a path: a NAME==VERSION or a distribution, resolved later
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file or folder"
            raise DriftcheckError(f"--client {spec} is {kind}", "give a folder, a .py file or a .whl")
    return specs


MAX_SKIP_LINES = 10


def _require_checked(clients, allow_empty: bool) -> dict:
    """Say what will not be checked, and why; exit 2 when nothing at all would be (unless --allow-empty).

    A gate that reports "0 findings" for a client with no file importing vLLM (an empty folder, the
    wrong package, a file over the size limit) has checked nothing; that is not a pass."""
    from driftcheck.client_model.client import survey

    notes = {}
    total = 0
    for client in clients:
        found = survey(client.tree, client.prefixes or None, scripts=True)
        name = client.name or client.location
        checked = len(found.importing) + found.scripts + found.launchers
        total += checked
        for where, why in found.skipped[:MAX_SKIP_LINES]:
            sys.stderr.write(f"driftcheck: skipped {where}: {why}\n")
        if len(found.skipped) > MAX_SKIP_LINES:
            sys.stderr.write(f"driftcheck: skipped {len(found.skipped) - MAX_SKIP_LINES} more file(s) of {name}\n")
        if not checked:
            sys.stderr.write(f"driftcheck: {name}: none of its {found.looked_at} .py file(s) imports vLLM"
                             + (f" ({len(found.skipped)} could not be read)" if found.skipped else "") + "\n")
        notes[name] = {"py_files": found.looked_at, "importing_vllm": len(found.importing), "scripts": found.scripts, "launchers": found.launchers,
                       "skipped": [{"path": w, "why": y} for w, y in found.skipped]}
    if not total and not allow_empty:
        raise DriftcheckError("nothing to check: no client file imports vLLM", "pass the code that uses vLLM, or --allow-empty to accept this")
    return notes


def exit_code_for(result, fail_on: str, accept_unknown: bool) -> int:
    from driftcheck.rules.findings import SEVERITY_RANK

    if result.internal_errors:
        return EXIT_USAGE
    if fail_on == "never":
        return EXIT_OK
    threshold = SEVERITY_RANK[fail_on]
    if any(SEVERITY_RANK[f.severity] >= threshold for f in result.visible()):
        return EXIT_FINDINGS
    if result.unknown and not accept_unknown:
        return EXIT_FINDINGS
    return EXIT_OK


def cmd_scan(args: argparse.Namespace) -> int:
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.report import render
    from driftcheck.rules.selection import resolve_rules
    from driftcheck.sources.targets import resolve_clients, resolve_vllm

    only = resolve_rules(args.select)
    cache_dir = _cache_dir(args)
    vllm = resolve_vllm(args.vllm, cache_dir)
    clients = resolve_clients(_client_specs(args.client), cache_dir)
    coverage = _require_checked(clients, args.allow_empty)
    baseline = None
    if args.baseline:
        from driftcheck.scan.suppress import load_baseline

        baseline = load_baseline(args.baseline)
    if args.jobs is not None and args.jobs < 1:
        raise DriftcheckError("--jobs must be at least 1")
    options = ScanOptions(cache_dir=cache_dir, use_cache=not args.no_cache, only=only, client_vllm=args.client_vllm,
                          baseline_file=baseline, jobs=args.jobs)
    result = scan(vllm, clients, options)
    result.stats["coverage"] = coverage  # what each client held, and what was skipped and why
    if args.since:
        from driftcheck.gate.compare import apply_since, render_text, since_label

        since = _since_scan(args.since, clients, cache_dir, options)
        cmp = apply_since(result, since)
        sys.stderr.write(render_text(cmp, since_label(since), vllm.version or vllm.source))
    if args.write_baseline:
        import json

        from driftcheck.scan.suppress import baseline_document

        doc = baseline_document(result.findings, vllm.version)
        _write_output(args.write_baseline, json.dumps(doc, indent=2) + "\n")
        sys.stderr.write(f"driftcheck: wrote {len(doc['entries'])} accepted finding(s) to {args.write_baseline}\n")
        return EXIT_USAGE if result.internal_errors else EXIT_OK
    if args.report_dir:
        folder = Path(args.report_dir)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DriftcheckError(f"cannot create {folder}: {exc.strerror}") from None
        for fmt, name in (("json", "driftcheck.json"), ("sarif", "driftcheck.sarif"), ("junit", "driftcheck.junit.xml"),
                          ("markdown", "driftcheck.md")):
            _write_output(str(folder / name), render(fmt, result))
    color = args.color if args.color is not None else (args.output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    text = render(args.format, result, color=color)
    _emit(args, text)
    if args.output:
        s = result.to_json()["summary"]
        sys.stderr.write(f"driftcheck: {s['error']} error(s), {s['warning']} warning(s), {s['unknown']} unknown -> {args.output}\n")
    return exit_code_for(result, args.fail_on, args.accept_unknown)


def _since_scan(spec: str, clients, cache_dir: Path, options):
    """The scan of the same clients on the --since vLLM ('declared': the one the first declaring client names)."""
    from driftcheck.scan.pipeline import scan
    from driftcheck.sources.targets import baseline_version, resolve_vllm

    if spec == "declared":
        reqs = [c.declared_vllm() for c in clients]
        versions = [baseline_version(r) for r in reqs if r is not None]
        if not any(versions):
            raise DriftcheckError("--since declared: the client declares no vLLM requirement", "pass --since VERSION")
        spec = next(v for v in versions if v)
    return scan(resolve_vllm(spec, cache_dir), clients, options)


def cmd_bisect(args: argparse.Namespace) -> int:
    import json

    from driftcheck.gate.bisect import render_text, run_bisect
    from driftcheck.sources.releases import expand

    cache_dir = _cache_dir(args)
    specs = _client_specs(args.client) or [n for n in ("speculators",) if _installed(n)]
    if not specs:
        raise DriftcheckError("no --client given and speculators is not installed", "pass --client speculators==0.4.0")
    builds = expand(args.vllm, cache_dir)
    from driftcheck.sources.targets import resolve_clients

    _require_checked(resolve_clients(specs, cache_dir), args.allow_empty)
    report = run_bisect(builds, specs, cache_dir, args.good, args.bad, args.fail_on, args.client_vllm, not args.no_cache)
    _emit(args, json.dumps(report.to_json(), indent=2) + "\n" if args.format == "json" else render_text(report))
    return EXIT_FINDINGS if any(e.change == "appeared" for c in report.clients for e in c.edges) else EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    import json

    from driftcheck.gate.compare import compare_reports, load_report, new_at_or_above, render_text, report_label

    old, new = load_report(args.old), load_report(args.new)
    cmp = compare_reports(old, new)
    _emit(args, json.dumps(cmp, indent=2) + "\n" if args.format == "json" else render_text(cmp, report_label(old), report_label(new)))
    return EXIT_FINDINGS if new_at_or_above(cmp, args.fail_on) else EXIT_OK


def cmd_rules(args: argparse.Namespace) -> int:
    from driftcheck.rules.registry import entries, entry, signature_fix
    from driftcheck.rules.selection import resolve_rules

    if args.rule:
        resolve_rules([args.rule], option="rules")  # a word that names nothing: the usual one-line error, exit 2
        e = entry(args.rule)
        r = e.rule
        print(f"{r.id} {r.name} [{r.severity}, {r.kind}{', fix: ' + r.fix if r.fix else ''}]\n")
        print(e.docs)
        print(f"\ndetector: {e.detector.__name__} ({e.detector.__file__})")
        print("fixes: " + (", ".join(f"{m.FIX.id} ({m.FIX.applicability}: {m.FIX.title})" for m in e.fixes) or "none"))
        if e.signatures:
            print("traceback signatures (driftcheck explain):")
            for sig in e.signatures:
                what = " ".join(filter(None, [
                    "/".join(sig.exc_types) or "any exception",
                    f"message ~ /{sig.message}/" if sig.message else "",
                    f"in {sig.needs_frame}()" if sig.needs_frame else "",
                    f"client line ~ /{sig.code}/" if sig.code else ""]))
                print(f"  - [{sig.priority}] {what}; fix: {signature_fix(e, sig) or 'none'}")
                for fact in sig.facts:
                    print(f"      fact{' when /' + fact.when + '/' if fact.when else ''}: {fact.text}")
        else:
            print("traceback signatures: none (this drift does not raise, or is not matched by explain)")
        return EXIT_OK
    rows = [("id", "name", "severity", "kind", "fix", "title")]
    rows += [(e.id, e.name, e.rule.severity, e.rule.kind, e.rule.fix or "-", e.rule.title) for e in entries()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]  # every column as wide as its longest cell
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    return EXIT_OK


def cmd_fix(args: argparse.Namespace) -> int:
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.rules.findings import SEVERITY_RANK
    from driftcheck.fix.fixer import FixOptions, apply_locked, plan_fixes
    from driftcheck.rules.selection import resolve_only
    from driftcheck.sources.targets import resolve_clients, resolve_vllm

    if args.only:
        resolve_only(args.only)  # a typo is exit 2 before anything is fetched or read
    cache_dir = _cache_dir(args)
    vllm = resolve_vllm(args.vllm, cache_dir)
    clients = resolve_clients(_client_specs([args.client] if args.client is not None else None), cache_dir)
    _require_checked(clients, args.allow_empty)
    options = ScanOptions(cache_dir=cache_dir, use_cache=not args.no_cache, client_vllm=args.client_vllm)
    fix_options = FixOptions(only=args.only, unsafe=args.unsafe, guard=args.guard)
    changed = 0
    remaining_errors = 0
    report = {"vllm": vllm.to_json(), "applied": bool(args.apply), "clients": []}
    diffs = []
    for client in clients:
        plan = plan_fixes(vllm, client, options, fix_options)
        written, replanned = [], False
        if args.apply and plan.changes:
            plan, written, replanned = apply_locked(vllm, client, options, fix_options, plan, backup=not args.no_backup)
            if replanned:
                sys.stderr.write(f"driftcheck: files of {client.name or client.location} changed while planning "
                                 "(another fix?): planned again from what is on disk now\n")
        entry = {"client": client.to_json(), "changes": [], "not_fixed": [], "notes": list(plan.notes),
                 "written": [str(p) for p in written], "replanned": replanned}
        for change in plan.changes:
            changed += 1
            if not args.apply:
                diffs.append(change.diff())
            ids = sorted({fix_id for fix_id, _f in change.applied})
            sys.stderr.write(f"{change.display}: {len(change.applied)} fix(es) [{', '.join(ids)}]\n")
            entry["changes"].append({"path": change.rel, "fixes": [{"fix": fix_id, "rule": f.rule, "line": f.client.line if f.client else None}
                                                                   for fix_id, f in change.applied],
                                     **({} if args.apply else {"diff": change.diff()})})
        for note in plan.notes:
            sys.stderr.write(f"  value: {note}\n")
        for finding, why in plan.skipped:
            where = f"{finding.client.path}:{finding.client.line}" if finding.client else ""
            sys.stderr.write(f"  not fixed: {finding.rule} {where}: {why}\n")
            entry["not_fixed"].append({"rule": finding.rule, "path": finding.client.path if finding.client else None,
                                       "line": finding.client.line if finding.client else None, "why": why})
        if written:
            sys.stderr.write(f"wrote {len(written)} file(s)" + ("" if args.no_backup else " (backups: *.driftcheck.bak)") + "\n")
            after = scan(vllm, [client], options)
        else:
            after = plan.final
        left = [f for f in after.visible() if SEVERITY_RANK[f.severity] >= SEVERITY_RANK["error"]]
        remaining_errors += len(left) + len(after.unknown)
        verb = "after --apply" if args.apply else "after these changes"
        sys.stderr.write(f"{client.name or client.location}: {len(left)} error(s) and {len(after.unknown)} unknown left "
                         f"{verb} against vLLM {vllm.version or '?'}\n")
        for f in left:
            sys.stderr.write(f"  {f.rule} {f.client.path if f.client else ''}:{f.client.line if f.client else ''} {f.message[:140]}\n")
        for u in after.unknown:
            sys.stderr.write(f"  unknown {u.rule}: {u.message[:160]}\n")
        entry["left"] = {"errors": [f.to_json() for f in left], "unknown": [u.to_json() for u in after.unknown]}
        report["clients"].append(entry)
    if args.format == "json":
        import json

        _emit(args, json.dumps(report, indent=2) + "\n")
    elif diffs or args.output:
        _emit(args, "".join(diffs))
    if args.apply:
        return EXIT_FINDINGS if remaining_errors else EXIT_OK
    return EXIT_FINDINGS if changed else EXIT_OK


def _run_matrix(args):
    from driftcheck.gate.matrix import run_matrix
    from driftcheck.gate.ranges import compute_range
    from driftcheck.sources.releases import expand
    from driftcheck.sources.targets import DEFAULT_CLIENTS, resolve_clients

    cache_dir = _cache_dir(args)
    specs = _client_specs(args.client) or [n for n in DEFAULT_CLIENTS if _installed(n)]
    if not specs:
        raise DriftcheckError("no --client given and speculators is not installed", "pass --client speculators==0.4.0")
    if args.jobs is not None and args.jobs < 1:
        raise DriftcheckError("--jobs must be at least 1")
    versions = expand(args.vllm, cache_dir)
    _require_checked(resolve_clients(specs, cache_dir), args.allow_empty)  # an empty client fits every release
    matrix = run_matrix(versions, specs, cache_dir, args.jobs, args.client_vllm, use_cache=not args.no_cache)
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
    _write_output(str(out / "matrix.json"), as_json)
    _write_output(str(out / "matrix.md"), matrix_report.to_markdown(matrix, ranges))
    _write_output(str(out / "matrix.html"), matrix_report.to_html(matrix, ranges))
    try:
        drew = matrix_report.to_png(matrix, ranges, out / "matrix.png")
    except OSError as exc:
        raise DriftcheckError(f"cannot write {out / 'matrix.png'}: {exc.strerror or exc}") from None
    _emit(args, as_json if args.format == "json" else matrix_report.to_markdown(matrix, ranges))
    sys.stderr.write(f"driftcheck: wrote {out}/matrix.json, .md, .html" + (", .png" if drew else " (no .png: pip install matplotlib)")
                     + f" in {matrix.seconds:.1f} s\n")
    return EXIT_USAGE if any(c.status == "error" for c in matrix.cells) else EXIT_OK


def cmd_range(args: argparse.Namespace) -> int:
    import json

    matrix, ranges = _run_matrix(args)
    if args.format == "json":
        _emit(args, json.dumps([r.to_json() for r in ranges], indent=2) + "\n")
    else:
        lines = []
        for r in ranges:
            lines.append(f"{r.client}: computed vllm{r.computed or ' (no compatible release)'}; declared {r.declared or '(none)'}"
                         + ("" if r.agrees is None else (" -> agrees" if r.agrees else " -> differs")))
            if r.first_break_above:
                lines.append(f"  breaks at {r.first_break_above}: {', '.join(r.rules_above)} {('- ' + r.reason_above) if r.reason_above else ''}")
            lines += [f"  {note}" for note in r.notes]
        _emit(args, "".join(line + "\n" for line in lines))
    return EXIT_OK if all(r.computed for r in ranges) else EXIT_FINDINGS


MAX_TRACEBACK_BYTES = 16 * 1024 * 1024


def _read_input(path: str) -> str:
    if path == "-":
        if sys.stdin.isatty():
            raise DriftcheckError("no traceback given", "paste one on stdin or pass a file: driftcheck explain crash.log")
        data = sys.stdin.buffer.read(MAX_TRACEBACK_BYTES + 1)
    else:
        p = Path(path).expanduser()
        try:
            if p.is_dir():
                raise DriftcheckError(f"{path} is a folder, not a traceback file")
            with open(p, "rb") as fh:
                data = fh.read(MAX_TRACEBACK_BYTES + 1)
        except FileNotFoundError:
            raise DriftcheckError(f"{path} does not exist") from None
        except PermissionError:
            raise DriftcheckError(f"cannot read {path}: permission denied") from None
        except OSError as exc:
            raise DriftcheckError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_TRACEBACK_BYTES:
        raise DriftcheckError(f"{path} is larger than 16 MB: not a traceback", "pass the log's traceback only")
    if b"\x00" in data:
        raise DriftcheckError(f"{path} is binary, not a traceback")
    return data.decode("utf-8", errors="replace")


def cmd_explain(args: argparse.Namespace) -> int:
    import json

    from driftcheck.report.explain import NotATraceback, explain_parsed, parse_traceback

    text = _read_input(args.file)
    try:
        tb = parse_traceback(text)
    except NotATraceback as exc:
        raise DriftcheckError(f"{exc}", "paste the whole traceback, from 'Traceback (most recent call last):' on") from None
    api = None
    if args.vllm:
        from driftcheck.scan.pipeline import ScanOptions, make_api
        from driftcheck.sources.targets import resolve_vllm

        target = resolve_vllm(args.vllm, _cache_dir(args))
        api = make_api(target, ScanOptions(cache_dir=_cache_dir(args)))
    diagnoses = explain_parsed(tb, api)
    if args.format == "json":
        _emit(args, json.dumps({"exception": {"type": tb.exc_type, "message": tb.message, "inner": tb.inner},
                                "diagnoses": [d.to_json() for d in diagnoses]}, indent=2) + "\n")
    elif not diagnoses:
        _emit(args, f"no known drift: {tb.exc_type}: {tb.message.splitlines()[0] if tb.message else ''}".rstrip(": ") + "\n")
    else:
        lines = []
        for d in diagnoses:
            lines.append(f"{d.rule} {d.name}: {d.message}")
            if d.frame:
                lines.append(f"  at {d.frame.file}:{d.frame.line} in {d.frame.func}" + (f": {d.frame.code}" if d.frame.code else ""))
            lines.append(f"  vLLM change: {d.vllm_change}")
            if d.confirmed is not None:
                lines.append(f"  {'confirmed' if d.confirmed else 'NOT confirmed'} against vLLM {api.version or ''}: {d.evidence}")
            lines.append(f"  fix: {'driftcheck fix --only ' + d.rule + ' (' + d.fix + ')' if d.fix else 'no codemod; see driftcheck rules ' + d.rule}")
        _emit(args, "".join(line + "\n" for line in lines))
    if not diagnoses:
        return EXIT_FINDINGS
    if api is not None and all(d.confirmed is False for d in diagnoses):
        return EXIT_FINDINGS
    return EXIT_OK


def cmd_smoke(args: argparse.Namespace) -> int:
    try:
        from driftcheck.runner.cli import main as smoke_main
    except ImportError as exc:
        raise DriftcheckError(f"the smoke runner is not available ({exc})") from None
    return smoke_main(args.args)


COMMANDS = {"scan": cmd_scan, "fix": cmd_fix, "matrix": cmd_matrix, "range": cmd_range, "explain": cmd_explain, "rules": cmd_rules,
            "smoke": cmd_smoke, "bisect": cmd_bisect, "compare": cmd_compare}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["smoke"]:
        # the runner owns its options (argparse's REMAINDER cannot pass leading --flags through)
        return _guarded("smoke", lambda: cmd_smoke(argparse.Namespace(args=argv[1:])))
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from driftcheck.report.progress import configure

    configure(quiet=getattr(args, "quiet", False))
    return _guarded(args.command, lambda: COMMANDS[args.command](args))


def _guarded(command: str, run) -> int:
    """Run a command; every failure becomes one line and a non-zero exit code."""
    try:
        return run()
    except DriftcheckError as exc:
        sys.stderr.write(f"driftcheck: error: {exc.one_line()}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("driftcheck: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK if command != "scan" else EXIT_FINDINGS
    except Exception as exc:  # a bug: say so in one line, never exit 0
        if os.environ.get("DRIFTCHECK_DEBUG"):
            raise
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        sys.stderr.write(f"driftcheck: internal error: {type(exc).__name__}: {exc} "
                         f"({Path(frame.filename).name}:{frame.lineno}; set DRIFTCHECK_DEBUG=1 for the traceback)\n")
        return EXIT_USAGE


def entry() -> None:
    from driftcheck.storage.signals import terminate_cleanly

    with terminate_cleanly():  # SIGTERM: children stopped, partial downloads removed, one line, exit 143
        sys.exit(main())


if __name__ == "__main__":
    entry()
