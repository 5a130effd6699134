"""Answers about one file of a release, kept by the file's bytes for the life of the process.

`matrix` and `range` scan release after release in one worker, and most of a release's files are byte-identical to a
file an earlier release shipped (0.11.0..0.33.0: 55,627 `.py` files, 18,576 distinct contents). A question whose
answer depends only on a file's bytes and the path it is asked at (the classes its text defines, the "not ... yet"
raises it holds, the decoder-layer call in a model class's forward) is answered once per content, whichever tree
asks. The answers are shared between trees, so callers treat them as read-only.

It is on only in processes that scan many releases (`keep_across_trees`: `matrix` workers, `bisect`): keying a file costs a
hash of its bytes (SHA-1, as the summary cache's keys; a zip member's CRC-32 is too short to stand for its content),
which a single scan would pay for nothing.
"""

from __future__ import annotations

import hashlib
from typing import Callable, TypeVar

T = TypeVar("T")

_ANSWERS: dict[tuple, object] = {}
_ON = False


def keep_across_trees() -> None:
    """From now on this process keeps answers by content (a process that scans release after release)."""
    global _ON
    _ON = True


def on() -> bool:
    return _ON


def content_key(data: bytes) -> bytes:
    return hashlib.sha1(data).digest()


def answer(question: str, rel: str, key: bytes, compute: Callable[[], T], *args) -> T:
    """`compute()`, once per (question, path, content, args) in this process."""
    memo_key = (question, rel, key, args)
    try:
        return _ANSWERS[memo_key]  # type: ignore[return-value]
    except KeyError:
        value = _ANSWERS[memo_key] = compute()
        return value


def forget() -> None:
    """Drop every answer (tests that change how a question is answered)."""
    _ANSWERS.clear()
