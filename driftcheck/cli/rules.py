"""`driftcheck rules`: the registry listed, or one rule's whole entry."""

from __future__ import annotations

import argparse

from driftcheck.errors import EXIT_OK


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
