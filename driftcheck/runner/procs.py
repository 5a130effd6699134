"""Run one command in its own process group with a timeout; leave nothing running afterwards.

vLLM starts engine-core and worker processes; an abandoned engine holds gigabytes. Every attempt runs
in a new session (start_new_session=True), so the whole tree shares one process group and session id:
on exit or timeout the group is killed, and /proc is scanned to confirm that no member is left.
While it runs, the summed RSS of the group is sampled for the peak-memory figure. Linux only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Outcome:
    returncode: int | None     # None when killed for the timeout
    timed_out: bool
    wall_s: float
    peak_rss_mb: float
    leftovers: list[int] = field(default_factory=list)  # pids still alive after the kill (should be none)


def group_members(sid: int) -> list[int]:
    """Live (non-zombie) processes whose session or process group is sid."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # fields after the ")" that closes the command name: state ppid pgrp session ...
        rest = stat[stat.rindex(")") + 2:].split()
        state, pgrp, session = rest[0], int(rest[2]), int(rest[3])
        if state != "Z" and sid in (pgrp, session):
            pids.append(int(entry.name))
    return pids


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total / (1 << 20)


def kill_group(sid: int, grace_s: float = 5.0) -> list[int]:
    """SIGTERM the group, then SIGKILL what is left; return the pids that survive both."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        members = group_members(sid)
        if not members:
            return []
        try:
            os.killpg(sid, sig)
        except ProcessLookupError:
            pass
        for pid in members:  # a member that moved to its own group still belongs to the session
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and group_members(sid):
            time.sleep(0.1)
    return group_members(sid)


def run_isolated(cmd: list[str], *, env: dict, timeout_s: float, log_path: Path,
                 cwd: str | None = None, sample_s: float = 0.25) -> Outcome:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        sid, peak, timed_out = proc.pid, 0.0, False
        try:
            while proc.poll() is None:
                peak = max(peak, rss_mb(group_members(sid)))
                if time.monotonic() - t0 > timeout_s:
                    timed_out = True
                    break
                time.sleep(sample_s)
        finally:
            # always: the child may be done while its engine processes are not
            leftovers = kill_group(sid)
            proc.wait()
    return Outcome(None if timed_out else proc.returncode, timed_out, time.monotonic() - t0, peak, leftovers)
