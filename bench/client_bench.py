#!/usr/bin/env python
"""Issue 12: a whole vLLM tree as a client, next to its floor and griffe, in one run.

    python bench/client_bench.py --vllm 0.16.0 --client /work/self/0.16.0
    python bench/client_bench.py --vllm 0.16.0 --client speculators==0.3.0 --skip-floor

Every figure is a separate process, run one after the other in the same period (the machine may be shared:
compare the ratios, which one run's load affects alike):

* floor: `ast.parse` of every .py file of the client tree, one process, one core;
* griffe: `griffe.load("vllm", search_paths=[the target's sources, extracted], allow_inspection=False)`;
* driftcheck cold: `python -m driftcheck scan ... -f json` with a fresh cache folder that holds only the
  fetched sources zips (no summaries, no text answers, no unit results);
* driftcheck warm: the same command again (nothing changed);
* driftcheck one file changed: a copy of the client with one function body edited, after a warm run of it.

Peak RSS is the largest resident size of the process and of the workers it waited for (`wait4`). CPU s is the
user + system time of the process and of the workers it waited for (interpreter start included): the work done,
which other jobs on a shared machine inflate far less than the wall time; "CPU / floor CPU" compares it with the
floor process's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from driftcheck.storage.cache import default_cache_dir  # noqa: E402
from driftcheck.sources.fetch import fetch_sources  # noqa: E402
from driftcheck.sources.targets import VLLM_DISTS  # noqa: E402

FLOOR = """
import ast, pathlib, sys, time
files = sorted(p for p in pathlib.Path(sys.argv[1]).rglob("*.py") if "__pycache__" not in p.parts)
t = time.perf_counter()
for p in files:
    try:
        ast.parse(p.read_bytes())
    except (SyntaxError, ValueError):
        pass
print(len(files), time.perf_counter() - t)
"""

GRIFFE = """
import sys, time, griffe
t = time.perf_counter()
griffe.load("vllm", search_paths=[sys.argv[1]], allow_inspection=False)
print(time.perf_counter() - t)
"""


def run_with_rss(cmd: list[str], env: dict | None = None) -> tuple[float, int, str, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{err[-2000:]}")
    # CPU seconds of the process and the workers it waited for: the work done, which other jobs on a shared
    # machine do not inflate as they do the wall time
    return wall, usage.ru_maxrss, out, usage.ru_utime + usage.ru_stime


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--vllm", default="0.16.0")
    p.add_argument("--client", default="/work/self/0.16.0")
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--skip-floor", action="store_true")
    p.add_argument("--skip-griffe", action="store_true")
    args = p.parse_args()
    from bench.scan_bench import byte_compile

    print(byte_compile())

    cache = default_cache_dir()
    zips = [fetch_sources(VLLM_DISTS, args.vllm, cache)[0]]
    if "==" in args.client:
        name, _, version = args.client.partition("==")
        zips.append(fetch_sources([name], version, cache)[0])
    fresh = Path(tempfile.mkdtemp(prefix="dc-client-bench-"))
    (fresh / "sources").symlink_to(cache / "sources")  # every fetched release (the client's baseline too); nothing else
    env = dict(os.environ, DRIFTCHECK_CACHE_DIR=str(fresh))
    if args.jobs:
        env["DRIFTCHECK_JOBS"] = str(args.jobs)
    py = sys.executable
    scan = [py, "-m", "driftcheck", "scan", "--vllm", args.vllm, "--client", args.client, "-f", "json",
            "--accept-unknown", "--fail-on", "never", "-o", str(fresh / "report.json")]
    rows: list[tuple[str, float, int, float]] = []
    floor = floor_cpu = None
    if not args.skip_floor and Path(args.client).is_dir():
        wall, rss, out, cpu = run_with_rss([py, "-c", FLOOR, args.client])
        n, floor = out.split()
        floor = float(floor)
        floor_cpu = cpu
        rows.append((f"floor: ast.parse of the client's {n} .py files (1 core)", floor, rss, cpu))
    griffe = None
    if not args.skip_griffe:
        src = Path(tempfile.mkdtemp(prefix="dc-griffe-"))
        with zipfile.ZipFile(zips[0]) as zf:
            zf.extractall(src)
        wall, rss, out, cpu = run_with_rss([py, "-c", GRIFFE, str(src)])
        griffe = float(out.strip())
        rows.append((f"griffe.load(vllm {args.vllm})", griffe, rss, cpu))
        shutil.rmtree(src, ignore_errors=True)
    for label in ("driftcheck cold", "driftcheck warm"):
        wall, rss, _, cpu = run_with_rss(scan, env)
        rows.append((label, wall, rss, cpu))
    if Path(args.client).is_dir():
        copy = Path(tempfile.mkdtemp(prefix="dc-client-copy-")) / "client"
        shutil.copytree(args.client, copy)
        edit = [*scan]
        edit[edit.index(args.client)] = str(copy)
        run_with_rss(edit, env)  # warm the copy's caches
        # a function added at the end of the first file that imports vLLM: one unit's content changes
        target = next(p for p in sorted(copy.rglob("*.py")) if b"from vllm" in p.read_bytes() or b"import vllm" in p.read_bytes())
        target.write_bytes(target.read_bytes().rstrip(b"\n") + b"\n\n\ndef _bench_edit():\n    return 1\n")
        wall, rss, _, cpu = run_with_rss(edit, env)
        rows.append((f"driftcheck, one file changed ({target.relative_to(copy)})", wall, rss, cpu))
        shutil.rmtree(copy.parent, ignore_errors=True)
    print(f"vLLM {args.vllm}, client {args.client}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"| what | wall s | CPU s | peak RSS MiB | / floor | CPU / floor CPU | griffe / it |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, wall, rss, cpu in rows:
        ratio = f"{wall / floor:.2f}x" if floor else "-"
        cpu_ratio = f"{cpu / floor_cpu:.2f}x" if floor and floor_cpu else "-"
        vs = f"{griffe / wall:.1f}x" if griffe and not label.startswith(("griffe", "floor")) else "-"
        print(f"| {label} | {wall:.2f} | {cpu:.2f} | {rss / 1024:.0f} | {ratio} | {cpu_ratio} | {vs} |")
    shutil.rmtree(fresh, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
