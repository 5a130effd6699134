"""The command line's grammar: every verb's arguments (`build_parser`)."""

from __future__ import annotations

import argparse
import sys

from driftcheck import __version__
from driftcheck.errors import EXIT_USAGE


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


def add_output_args(p: argparse.ArgumentParser, formats: list[str], default: str) -> None:
    p.add_argument("-f", "--output-format", "--format", dest="format", choices=formats, default=default, action=_Once,
                   help=f"what goes to stdout (or -o): {', '.join(formats)} (default: {default})")
    p.add_argument("-o", "--output", metavar="FILE", action=_Once, help="write that output here (atomically) instead of stdout")


def add_target_args(p: argparse.ArgumentParser, vllm_help: str, client_help: str, many_clients: bool = True,
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
    add_target_args(scan, "vLLM to check against: omitted = installed; a folder, a .whl, a version such as 0.16.0 (fetched, sources only), nightly, nightly@2026-09-17, declared (the release the client's own requirement lets pip install)",
                     CLIENTS_HELP)
    scan.add_argument("--select", metavar="RULE", action="append", help="only run these rules (id or name, any case; repeatable or comma-separated)")
    scan.add_argument("--jobs", "-j", type=int, action=_Once, help="processes for the client's files (default: $DRIFTCHECK_JOBS or one per core)")
    add_output_args(scan, FORMATS, "text")
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
    add_target_args(fix, "vLLM to fix against (as for scan, declared too)",
                     "client code to fix: a folder, a .py file or an installed distribution (default: installed speculators)",
                     many_clients=False)
    fix.add_argument("--only", metavar="RULE_OR_FIX", action="append", help="only these rules (DC003, unknown-keyword) or fixes (drop-keyword, add-block-hasher); repeatable or comma-separated")
    fix.add_argument("--apply", action="store_true", help="write the changes (atomically, keeping a .driftcheck.bak backup)")
    fix.add_argument("--no-backup", action="store_true", help="with --apply, do not keep backups")
    fix.add_argument("--unsafe", action="store_true", help="also apply fixes that need review (ruff's unsafe fixes)")
    fix.add_argument("--warnings", action="store_true", help="also apply the fixes of warnings (DC102 prefix caching, DC106 "
                     "replayed layer arguments): they change what running code computes, so they are never assumed")
    fix.add_argument("--guard", action="store_true", help="emit a compatibility guard instead of a rewrite where possible, so one client runs on old and new vLLM")
    add_output_args(fix, ["text", "json"], "text")

    matrix = sub.add_parser("matrix", help="scan many vLLM releases against the client(s) and compute compatible ranges")
    add_target_args(matrix, "0.11.0..0.32.0, 0.11.0,0.16.0, all-releases, or declared (every release the clients' requirements admit)", "client(s), as for scan (default: installed speculators)",
                     vllm_required=True)
    matrix.add_argument("--jobs", "-j", type=int, action=_Once, help="processes (default: one per core)")
    matrix.add_argument("--out", metavar="DIR", default="reports", action=_Once, help="where matrix.{json,md,html,png} go (default: reports/)")
    add_output_args(matrix, ["markdown", "json", "text"], "markdown")

    rng = sub.add_parser("range", help="the tightest vllm>=a,<b the client is compatible with (runs a matrix)")
    add_target_args(rng, "releases to consider (default: all-releases; declared: those the clients' requirements admit)", "client(s), as for scan", vllm_default="all-releases")
    rng.add_argument("--jobs", "-j", type=int, action=_Once)
    rng.add_argument("--json", action="store_const", dest="format", const="json", help="same as -f json")
    add_output_args(rng, ["text", "json"], "text")

    bis = sub.add_parser("bisect", help="the first nightly where each finding appears, and the last where it did not (bisection)")
    add_target_args(bis, "the builds, oldest first: nightlies:0.28..0.30, nightlies:2026-09-01..2026-09-20, or a list",
                     "client(s), as for scan", vllm_required=True)
    bis.add_argument("--good", metavar="VERSION", action=_Once, help="the old end (default: the oldest build of the range)")
    bis.add_argument("--bad", metavar="VERSION", action=_Once, help="the new end (default: the newest build of the range)")
    bis.add_argument("--fail-on", choices=FAIL_ON[:3], default="error", action=_Once, help="lowest severity bisected (default: error)")
    add_output_args(bis, ["text", "json"], "text")

    cmp = sub.add_parser("compare", help="findings new in one JSON report compared with another, and those gone")
    cmp.add_argument("old", help="the report of the vLLM the client runs today (driftcheck scan -f json)")
    cmp.add_argument("new", help="the report of the target (e.g. a nightly)")
    cmp.add_argument("--fail-on", choices=FAIL_ON, default="error", action=_Once, help="exit 1 when a new finding is at least this (default: error)")
    add_output_args(cmp, ["text", "json"], "text")

    explain = sub.add_parser("explain", help="name the vLLM drift behind a pasted traceback")
    explain.add_argument("file", nargs="?", default="-", help="a file holding the traceback, or - for stdin (default)")
    explain.add_argument("--vllm", metavar="TARGET", action=_Once, help="confirm the diagnosis against this vLLM's sources")
    explain.add_argument("--json", action="store_const", dest="format", const="json", help="same as -f json")
    add_output_args(explain, ["text", "json"], "text")
    explain.add_argument("--cache-dir", metavar="DIR", action=_Once, help="cache folder for fetched vLLM sources")

    rules = sub.add_parser("rules", help="list the rules, or print one rule's documentation")
    rules.add_argument("rule", nargs="?", help="rule id or name (e.g. DC003 or unknown-keyword)")

    smoke = sub.add_parser("smoke", help="run a real hidden-state extraction on a tiny local model (see docs/smoke.md)", add_help=False)
    smoke.add_argument("args", nargs=argparse.REMAINDER)
    for verb in (scan, fix, matrix, rng, explain, bis):
        verb.add_argument("-q", "--quiet", action="store_true", help="no progress bars or progress notes on stderr (warnings and errors still print)")
    return parser
