"""Pull Python tracebacks out of an attempt's log.

When vLLM's engine core or a worker raises, the attempt's own exception is a generic one
("EngineDeadError ... see stack trace above", "Worker failed with error ..."); the traceback that
names the real frame was logged by the other process, each line prefixed by vLLM's logger.
"""

from __future__ import annotations

import re

# "(Worker pid=5795) ERROR 11-29 13:36:29 [multiproc_executor.py:1063] " and the bare "ERROR 11-29 ..." form
_PREFIX = re.compile(r"^(?:\([^)]*\)\s+)?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\[[^\]]*\]\s?")
_PROC = re.compile(r"^\(([^)]*)\)\s")


def strip_prefixes(text: str) -> list[str]:
    return [_PREFIX.sub("", line) for line in text.splitlines()]


def tracebacks(text: str, limit: int = 2) -> list[str]:
    """The last `limit` distinct traceback blocks in a log, logger prefixes removed."""
    raw = text.splitlines()
    lines = strip_prefixes(text)
    blocks, k = [], 0
    while k < len(lines):
        if lines[k].startswith("Traceback (most recent call last):"):
            proc = _PROC.match(raw[k])
            start, k = k, k + 1
            # frames are indented; the block ends after the first unindented line (the exception)
            while k < len(lines) and (lines[k].startswith(" ") or not lines[k].strip()):
                k += 1
            block = "\n".join(lines[start:k + 1])
            blocks.append((f"[{proc.group(1)}]\n" if proc else "") + block)
        k += 1
    unique = list(dict.fromkeys(blocks))
    return unique[-limit:]


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)\n(?P<code>\s+\S.*)?', re.M)


def frames(block: str) -> list[dict]:
    """The frames of one traceback block, outermost first."""
    return [{"file": m["file"], "line": int(m["line"]), "function": m["function"], "code": (m["code"] or "").strip()}
            for m in _FRAME.finditer(block)]


def tail(text: str, n: int = 40) -> str:
    return "\n".join(text.splitlines()[-n:])
