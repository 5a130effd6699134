"""`driftcheck fix`: the codemods for what a scan found (a dry-run diff, or written with `--apply`)."""

from __future__ import annotations

import argparse
import os
import sys

from driftcheck.cli.common import args_cache_dir, client_specs, client_vllm_of, emit, require_checked, resolve_targets
from driftcheck.errors import EXIT_FINDINGS, EXIT_OK


def _why_left(finding, skipped_ids: set) -> str:
    """Why an error is still there, when no `not fixed:` line above says it: no codemod repairs its rule, or the
    scan found nothing for one to use (no module of that name, no value in vLLM's code)."""
    from driftcheck.rules.registry import registry

    if (finding.fingerprint(), finding.client.line if finding.client else None) in skipped_ids:
        return ""  # a `not fixed:` line says why
    entry = registry().get(finding.rule)
    fixes = [m.FIX.id for m in entry.fixes] if entry is not None else []
    if not fixes:
        return f"  [no codemod repairs {finding.rule}]"
    return f"  [{'/'.join(fixes)}: the scan found no replacement in this vLLM to rewrite it with]"


def cmd_fix(args: argparse.Namespace) -> int:
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.rules.findings import SEVERITY_RANK
    from driftcheck.fix.fixer import FixOptions, apply_locked, plan_fixes
    from driftcheck.rules.selection import resolve_only

    if args.only:
        resolve_only(args.only)  # a typo is exit 2 before anything is fetched or read
    client_vllm = client_vllm_of(args)
    cache_dir = args_cache_dir(args)
    vllm, clients = resolve_targets(args.vllm, client_specs([args.client] if args.client is not None else None), cache_dir)
    require_checked(clients, args.allow_empty)
    options = ScanOptions(cache_dir=cache_dir, use_cache=not args.no_cache, client_vllm=client_vllm)
    fix_options = FixOptions(only=args.only, unsafe=args.unsafe, guard=args.guard, warnings=args.warnings)
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
        for note in dict.fromkeys(plan.notes):  # two calls given the same value: one line
            sys.stderr.write(f"  value: {note}\n")
        for finding, why in plan.skipped:
            where = f"{finding.client.path}:{finding.client.line}" if finding.client else ""
            sys.stderr.write(f"  not fixed: {finding.rule} {where}: {why}\n")
            entry["not_fixed"].append({"rule": finding.rule, "path": finding.client.path if finding.client else None,
                                       "line": finding.client.line if finding.client else None, "why": why})
        if plan.demoted:
            shown = ", ".join(f"{f.rule} {f.client.path}:{f.client.line}" for f in plan.demoted[:5])
            more = f" and {len(plan.demoted) - 5} more" if len(plan.demoted) > 5 else ""
            sys.stderr.write(f"  left alone: {len(plan.demoted)} guarded finding(s) the client already handles "
                             f"(try/except, a feature test, a version branch): {shown}{more}\n")
        if plan.held:
            shown = ", ".join(f"{f.rule} {f.client.path}:{f.client.line}" for f in plan.held[:5])
            more = f" and {len(plan.held) - 5} more" if len(plan.held) > 5 else ""
            rules = ",".join(sorted({f.rule for f in plan.held}))
            sys.stderr.write(f"  left alone: {len(plan.held)} warning(s) with a fix, which would change what code that "
                             f"runs does (`fix` rewrites errors only; `--warnings` or `--only {rules}` applies them): {shown}{more}\n")
        entry["left_alone"] = [{"rule": f.rule, "path": f.client.path, "line": f.client.line, "severity": f.severity}
                               for f in plan.demoted]
        entry["warnings_left"] = [{"rule": f.rule, "path": f.client.path, "line": f.client.line, "fix": f.fix}
                                  for f in plan.held]
        if written:
            sys.stderr.write(f"wrote {len(written)} file(s)" + ("" if args.no_backup else " (backups: *.driftcheck.bak)") + "\n")
            for path in written:
                if path.is_symlink():  # the link stays; what it names is what changed, wherever that lies
                    sys.stderr.write(f"  {path} is a link: the fix went to {os.path.realpath(path)}\n")
            after = scan(vllm, [client], options)
        else:
            after = plan.final
        left = [f for f in after.visible() if SEVERITY_RANK[f.severity] >= SEVERITY_RANK["error"]]
        remaining_errors += len(left) + len(after.unknown)
        verb = "after --apply" if args.apply else "after these changes"
        sys.stderr.write(f"{client.name or client.location}: {len(left)} error(s) and {len(after.unknown)} unknown left "
                         f"{verb} against vLLM {vllm.version or '?'}\n")
        skipped_ids = {(f.fingerprint(), f.client.line if f.client else None) for f, _why in plan.skipped}
        for f in left:
            sys.stderr.write(f"  {f.rule} {f.client.path if f.client else ''}:{f.client.line if f.client else ''} {f.message[:140]}"
                             f"{_why_left(f, skipped_ids)}\n")
        for u in after.unknown:
            sys.stderr.write(f"  unknown {u.rule}: {u.message[:160]}\n")
        entry["left"] = {"errors": [f.to_json() for f in left], "unknown": [u.to_json() for u in after.unknown]}
        report["clients"].append(entry)
    if args.format == "json":
        import json

        emit(args, json.dumps(report, indent=2) + "\n")
    elif diffs or args.output:
        emit(args, "".join(diffs))
    if args.apply:
        return EXIT_FINDINGS if remaining_errors else EXIT_OK
    return EXIT_FINDINGS if changed or remaining_errors else EXIT_OK  # a dry run leaving errors is no pass (22c's P5)
