"""Errors that end a command with one clear line and a documented exit code.

Anything raised as a `DriftcheckError` is printed as `driftcheck: error: <message>` (plus a hint
when there is one) and never as a traceback.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class DriftcheckError(Exception):
    """A problem with the user's input or environment, not a bug in driftcheck."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        text = self.message.rstrip(".")
        if self.hint:
            text += f" ({self.hint})"
        return text


class TargetError(DriftcheckError):
    """A --vllm or --client target that cannot be located, read or fetched."""


class FetchError(TargetError):
    """`pip download` could not provide a release."""


class SourceError(DriftcheckError):
    """A source file that cannot be read (too large, not a file, unreadable)."""
