"""`driftcheck smoke`: hands its arguments to the smoke runner (driftcheck/runner)."""

from __future__ import annotations

import argparse

from driftcheck.errors import DriftcheckError


def cmd_smoke(args: argparse.Namespace) -> int:
    try:
        from driftcheck.runner.cli import main as smoke_main
    except ImportError as exc:
        raise DriftcheckError(f"the smoke runner is not available ({exc})") from None
    return smoke_main(args.args)
