"""What the verbs share: the cache folder, writing an output (through safe_write), the client specs, the
check that something was checked at all, and the exit code a result earns.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from driftcheck.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, DriftcheckError


def args_cache_dir(args: argparse.Namespace) -> Path:
    from driftcheck.storage.cache import default_cache_dir

    return Path(args.cache_dir).expanduser() if getattr(args, "cache_dir", None) else default_cache_dir()


def client_vllm_of(args: argparse.Namespace) -> str | None:
    """--client-vllm, refused at once when it can name no build (a typo is exit 2, not rules gone quiet)."""
    spec = getattr(args, "client_vllm", None)
    if spec is not None:
        from driftcheck.sources.targets import check_vllm_spec

        check_vllm_spec(spec)
    return spec


def write_output(path: str, text: str) -> None:
    """-o, --report-dir, baselines, matrix files: through safe_write (a symlink is written through, a device
    or FIFO as a stream, never replaced)."""
    from driftcheck.storage.safe_write import write_bytes

    target = Path(path).expanduser()
    if target.is_dir():
        raise DriftcheckError(f"-o {path} is a folder", "give a file name")
    if target.suffix in (".py", ".pyi") and target.exists():
        # no report is Python: `-o plug.py` for `-o plug.json` would replace the user's source (batch 22c's P3)
        raise DriftcheckError(f"{path} is an existing Python source file: a report would replace it",
                              "give another file name (a report is JSON, SARIF, JUnit, Markdown or text)")
    try:
        write_bytes(target, text.encode())
    except OSError as exc:
        raise DriftcheckError(f"cannot write {path}: {exc.strerror or exc}") from None


def emit(args: argparse.Namespace, text: str) -> None:
    """A verb's report: to -o FILE when given, else stdout."""
    if getattr(args, "output", None):
        write_output(args.output, text)
    else:
        sys.stdout.write(text)


def client_specs(specs: list[str] | None) -> list[str] | None:
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


def resolve_targets(vllm_spec: str | None, specs: list[str] | None, cache_dir: Path):
    """The vLLM target and the clients; `--vllm declared` reads the clients first (the release their requirement
    lets pip install: sources/declared.py)."""
    from driftcheck.sources.declared import SPEC, declared_release
    from driftcheck.sources.targets import resolve_clients, resolve_vllm

    if vllm_spec == SPEC:
        clients = resolve_clients(specs, cache_dir)
        return resolve_vllm(declared_release(clients, cache_dir), cache_dir), clients
    vllm = resolve_vllm(vllm_spec, cache_dir)
    return vllm, resolve_clients(specs, cache_dir)


MAX_SKIP_LINES = 10


def require_checked(clients, allow_empty: bool) -> dict:
    """Say what will not be checked, and why; exit 2 when nothing at all would be (unless --allow-empty).

    A gate that reports "0 findings" for a client with no file importing vLLM (an empty folder, the
    wrong package, a file over the size limit, files naming vLLM only in a docstring) has checked nothing; that is not
    a pass. Every verb that scans asks this before it fetches a release."""
    from driftcheck.client_model.client import survey

    notes = {}
    total = 0
    for client in clients:
        found = survey(client.tree, client.prefixes or None, scripts=True)
        name = client.name or client.location
        named_only = bool(found.importing) and not found.imports_any()  # every match a docstring's or a comment's
        checked = (0 if named_only else len(found.importing)) + found.scripts + found.launchers
        total += checked
        for where, why in found.skipped[:MAX_SKIP_LINES]:
            sys.stderr.write(f"driftcheck: skipped {where}: {why}\n")
        if len(found.skipped) > MAX_SKIP_LINES:
            sys.stderr.write(f"driftcheck: skipped {len(found.skipped) - MAX_SKIP_LINES} more file(s) of {name}\n")
        if not checked:
            sys.stderr.write(f"driftcheck: {name}: none of its {found.looked_at} .py file(s) imports vLLM"
                             + (f" ({len(found.importing)} name it only in text: a docstring, a comment or a string)"
                                if named_only else "")
                             + (f" ({len(found.skipped)} could not be read)" if found.skipped else "") + "\n")
        notes[name] = {"py_files": found.looked_at, "importing_vllm": len(found.importing), "scripts": found.scripts, "launchers": found.launchers,
                       "skipped": [{"path": w, "why": y} for w, y in found.skipped]}
    if not total and not allow_empty:
        named = sum(n["importing_vllm"] for n in notes.values())  # (nothing checked: each a docstring's or comment's)
        raise DriftcheckError("nothing to check: no client file imports vLLM"
                              + (f" ({named} file(s) name it only in text: a docstring, a comment or a string)" if named else ""),
                              "pass the code that uses vLLM, or --allow-empty to accept this")
    return notes


def require_analysed(result, coverage: dict, allow_empty: bool) -> None:
    """After the scan, the same promise as `require_checked`, on what was read: files the survey took for importing
    vLLM may only name it in a docstring or comment (batch 22c's P6), and those are dropped once parsed. No file
    that imports vLLM and no command line that runs it is nothing checked (exit 2, unless --allow-empty)."""
    commands = sum(c.get("scripts", 0) + c.get("launchers", 0) for c in coverage.values())
    if allow_empty or result.stats.get("client_files", 0) or commands or result.unknown:
        return  # (files that could not be parsed are unknowns: those fail the gate unless accepted)
    named = sum(c.get("importing_vllm", 0) for c in coverage.values())
    raise DriftcheckError(f"nothing to check: no client file imports vLLM ({named} file(s) name it only in text: a "
                          "docstring, a comment or a string)", "pass the code that uses vLLM, or --allow-empty to accept this")


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
