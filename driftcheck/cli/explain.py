"""`driftcheck explain`: the vLLM drift behind a pasted traceback."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftcheck.cli.common import args_cache_dir, emit
from driftcheck.errors import EXIT_FINDINGS, EXIT_OK, DriftcheckError


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

        target = resolve_vllm(args.vllm, args_cache_dir(args))
        api = make_api(target, ScanOptions(cache_dir=args_cache_dir(args)))
    diagnoses = explain_parsed(tb, api)
    if args.format == "json":
        emit(args, json.dumps({"exception": {"type": tb.exc_type, "message": tb.message, "inner": tb.inner},
                                "diagnoses": [d.to_json() for d in diagnoses]}, indent=2) + "\n")
    elif not diagnoses:
        emit(args, f"no known drift: {tb.exc_type}: {tb.message.splitlines()[0] if tb.message else ''}".rstrip(": ") + "\n")
    else:
        lines = []
        for d in diagnoses:
            lines.append(f"{d.rule} {d.name}: {d.message}")
            if d.frame:
                lines.append(f"  at {d.frame.file}:{d.frame.line} in {d.frame.func}" + (f": {d.frame.code}" if d.frame.code else ""))
            lines.append(f"  vLLM change: {d.vllm_change}")
            if d.confirmed is not None:
                lines.append(f"  {'confirmed' if d.confirmed else 'NOT confirmed'} against vLLM {api.version or ''}: {d.evidence}")
            lines.append(f"  fix: {_fix_hint(d, api)}")
        emit(args, "".join(line + "\n" for line in lines))
    if not diagnoses:
        return EXIT_FINDINGS
    if api is not None and all(d.confirmed is False for d in diagnoses):
        return EXIT_FINDINGS
    return EXIT_OK


def _fix_hint(d, api) -> str:
    """The codemod for the diagnosed rule, as a command to run on the client's code, with what it does: a traceback
    names one line, so the hint says the codemod rewrites only what a scan of that code proves (a rename it finds,
    the module that defines the name), never the traceback's guess."""
    if not d.fix:
        return f"no codemod; see driftcheck rules {d.rule}"
    from driftcheck.rules.registry import fix_modules

    title = next((m.FIX.title for m in fix_modules() if m.FIX.id == d.fix), "")
    what = f": {title[0].lower()}{title[1:]}" if title else ""
    target = f"--vllm {api.version} " if api is not None and api.version else ""
    return (f"driftcheck fix {target}--client <your code> --only {d.rule} ({d.fix}{what}); it rewrites only what a "
            "scan of your code proves")
