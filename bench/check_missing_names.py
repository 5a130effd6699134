#!/usr/bin/env python
"""Check DC001 / DC002 errors of scan reports against a vLLM tree, independently of driftcheck's resolver.

    python bench/check_missing_names.py --vllm-src DIR REPORT.json [REPORT.json ...]

DIR holds the release's `vllm/` package (a sources zip unpacked). A DC001 error is confirmed when its module is
neither a `.py`, a package nor a folder there; a DC002 error when its name is not defined, assigned or imported in
its module's text and no submodule has its name. What the text search cannot decide (a module with a `__getattr__`,
a name that appears in an import line) is printed for reading by hand. Nothing here is a test: it prints counts.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re


def module_path(src: str, module: str) -> str | None:
    p = os.path.join(src, *module.split("."))
    for candidate in (p + ".py", os.path.join(p, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return p if os.path.isdir(p) else None


def defined_in(path: str, name: str) -> bool:
    """The name may be bound by the module's text (def, class, assignment, import, `as`, `__getattr__`)."""
    if os.path.isdir(path):
        return os.path.exists(os.path.join(path, name + ".py")) or os.path.isdir(os.path.join(path, name))
    text = open(path, encoding="utf-8", errors="replace").read()
    n = re.escape(name)
    if re.search(rf"^\s*(?:async\s+def|def|class)\s+{n}\b|^\s*{n}\s*[:=]|\bimport\b[^\n]*\b{n}\b|\bas\s+{n}\b|^\s*{n}\s*,"
                 r"|def __getattr__", text, re.M):
        return True
    sub = os.path.join(os.path.dirname(path), name)
    return path.endswith("__init__.py") and (os.path.isfile(sub + ".py") or os.path.isdir(sub))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vllm-src", required=True, help="folder holding the release's vllm/ package")
    ap.add_argument("reports", nargs="+")
    args = ap.parse_args()
    counts: collections.Counter = collections.Counter()
    undecided = []
    for report in args.reports:
        for f in json.load(open(report))["findings"]:
            if f["severity"] != "error" or f["rule"] not in ("DC001", "DC002"):
                continue
            symbol = f["symbol"] or ""
            if f["rule"] == "DC001":
                absent = module_path(args.vllm_src, symbol) is None
            else:
                module, _, name = symbol.rpartition(".")
                path = module_path(args.vllm_src, module)
                absent = path is None or not defined_in(path, name)
            counts[f"{f['rule']} {'confirmed absent' if absent else 'read by hand'}"] += 1
            if not absent:
                undecided.append(f"{os.path.basename(report)} {f['rule']} {symbol} {f['client']['path']}:{f['client']['line']}")
    for key, n in sorted(counts.items()):
        print(f"{key}: {n}")
    for line in undecided:
        print("  " + line)


if __name__ == "__main__":
    main()
