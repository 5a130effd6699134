"""A big client's first scan of a release: the vLLM modules it reaches are summarised on the second core.

Before any rule runs, this process parses every client file and then runs the global phases and the
visits, which summarise each vLLM module the client reaches (parse and summary: 7 s of vLLM 0.16.0's own
tree as a client, all of it serial). Here a forked worker summarises those modules meanwhile, from the
client's own import lines outward (the modules each summary imports next), and writes each summary to
the summary cache; when this process reaches a module, the cache answers (a decode: a tenth of a
summary). What the worker has not reached yet, this process summarises itself, as without it: the
answers are the same, only who computed them differs (the cache is keyed by content, written atomically).

Only for a pool-sized client (units.MIN_FILES_FOR_POOL files or more), with a summary cache, more than
one job and `fork`: a small client reaches a few dozen modules, and its second core has the whole-client
rules to run. The worker is stopped before the pool forks (`stop`), whatever it has left: between two
statements, so a summary it was writing is removed whole, never left as a temp file in the cache.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections import deque

from driftcheck.storage.signals import fork_helper

_IMPORTED = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))", re.M)


class Presummary:
    """A forked worker summarising modules into the summary cache; `stop()` ends it."""

    def __init__(self, api, client_bytes: list[bytes]):
        self._pid: int | None = None
        if api.cache is None or not hasattr(os, "fork"):
            return
        first = _named_modules(client_bytes, api.package)
        self._pid = fork_helper(lambda: _until_stopped(_summarise_outward, api, first))

    def stop(self) -> None:
        """End the worker and reap it. It stops between two statements (a summary being written is removed whole,
        as `safe_write` does when interrupted, so no temp file is left in the cache); one that does not within two
        seconds is killed."""
        if self._pid is None:
            return
        pid, self._pid = self._pid, None
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            done, _status = os.waitpid(pid, os.WNOHANG)
            if done:
                return
            time.sleep(0.005)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


class _Stopped(BaseException):
    """Raised in the worker by stop()'s SIGTERM: unwinds it (a write in progress removes its temp file)."""


def _until_stopped(work, *args) -> None:
    def stopped(_signum, _frame):
        raise _Stopped

    signal.signal(signal.SIGTERM, stopped)
    try:
        work(*args)
    except _Stopped:
        pass


def presummarise(api, client_bytes: list[bytes], jobs: int, min_files: int) -> Presummary | None:
    """Start the worker for a client of `min_files` files or more (see the module docstring)."""
    if jobs < 2 or len(client_bytes) < min_files:
        return None
    return Presummary(api, client_bytes)


def _named_modules(client_bytes: list[bytes], package: str) -> list[str]:
    """The target's modules the client's import lines name, in the order they first appear, and their packages."""
    prefix = package.encode()
    out: dict[str, None] = {}
    for data in client_bytes:
        for m in _IMPORTED.finditer(data):
            names = [m.group(1)] if m.group(1) else [n.strip() for n in m.group(2).split(b",")]
            for name in names:
                if name == prefix or name.startswith(prefix + b"."):
                    parts = name.decode("ascii", "replace").split(".")
                    for i in range(1, len(parts) + 1):
                        out.setdefault(".".join(parts[:i]))
    return list(out)


def _summarise_outward(api, first: list[str]) -> None:
    """Summarise `first` in order, then the modules their summaries import, breadth first, into the cache (a
    summary already there is not read: the scan will decode it)."""
    todo = deque(first)
    seen = set(first)
    while todo:
        name = todo.popleft()
        found = api.module_path(name)
        if found is None or found[0].endswith("/"):
            continue
        path, is_pkg = found
        try:
            data = api.tree.read_bytes(path)
        except Exception:  # unreadable: the scan will say so when it asks
            continue
        if api.cache.has(data, name, is_pkg):
            continue
        info = api.module(name)
        for binding in info.bindings.values() if info is not None else ():
            if binding.kind not in ("import", "module-import") or not binding.target.startswith(api.package + "."):
                continue
            module = binding.target if binding.kind == "module-import" else binding.target.rpartition(".")[0]
            for candidate in (module, binding.target):
                if candidate not in seen:
                    seen.add(candidate)
                    todo.append(candidate)
