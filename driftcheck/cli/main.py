"""The `driftcheck` command: one sub-command per verb, thin (parse, call, render, exit code).

Exit codes (all commands): 0 = nothing at or above --fail-on, 1 = findings (or unknowns, unless
--accept-unknown), 2 = usage or tool error. A crash never exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from driftcheck.cli.explain import cmd_explain
from driftcheck.cli.fix import cmd_fix
from driftcheck.cli.gate import cmd_bisect, cmd_compare, cmd_matrix, cmd_range
from driftcheck.cli.parser import build_parser
from driftcheck.cli.rules import cmd_rules
from driftcheck.cli.scan import cmd_scan
from driftcheck.cli.smoke import cmd_smoke
from driftcheck.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, DriftcheckError


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

    if sys.argv[1:2] in (["scan"], ["fix"]):  # one scan, then exit: no collection at its end (gc_pause.py)
        from driftcheck.gc_pause import until_exit

        until_exit()
    with terminate_cleanly():  # SIGTERM: children stopped, partial downloads removed, one line, exit 143
        code = main()
    _exit_now(code if isinstance(code, int) else 0 if code is None else 1)  # as sys.exit would map it


def _exit_now(code: int) -> None:
    """Exit without tearing the heap down: after a big scan, the interpreter's final collection and the freeing of
    millions of syntax-tree objects took 5 s of a 27 s run (vLLM 0.11.0's tree as a client), for nothing the OS
    does not do at once. Output is flushed and exit handlers run first, so nothing written is lost."""
    import atexit

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # a reader that went away: nothing more can be said to it
    atexit._run_exitfuncs()
    os._exit(code)


if __name__ == "__main__":
    entry()
