"""Time `driftcheck matrix` over vLLM 0.11.0..0.33.0 x speculators 0.3.0 and 0.4.0 (issue 12's "many releases").

    python bench/matrix_bench.py [--vllm 0.11.0..0.33.0] [--jobs 2] [--out reports/]

The release sources are fetched first (untimed) into the usual cache. Then, each in its own process:

* cold: `driftcheck matrix` with a fresh cache folder whose `sources/` holds the fetched zips and nothing else
  (no summaries, no text answers, no unit results): the figure the issue's 30 s goal is about;
* warm: the same command again on that folder.

Printed with the machine's cores and load average; the warm run's reports (matrix.{json,md,html,png}) go to --out.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLIENTS = ["speculators==0.3.0", "speculators==0.4.0"]


def run(span: str, out: Path, jobs: int, cache: Path) -> float:
    cmd = [sys.executable, "-m", "driftcheck", "matrix", "--vllm", span, "--out", str(out), "-j", str(jobs),
           "--cache-dir", str(cache)]
    for c in CLIENTS:
        cmd += ["--client", c]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"matrix failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    sys.path.insert(0, str(REPO))
    from bench.scan_bench import byte_compile
    from driftcheck.storage.cache import default_cache_dir

    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm", default="0.11.0..0.33.0")
    ap.add_argument("--out", default="reports")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    print(byte_compile())
    shared = default_cache_dir()
    run(args.vllm, Path(tempfile.mkdtemp(prefix="dc-matrix-fetch-")), args.jobs, shared)  # fetch what is missing
    fresh = Path(tempfile.mkdtemp(prefix="dc-matrix-bench-"))
    (fresh / "sources").symlink_to(shared / "sources")  # the fetched zips, and nothing else
    try:
        cold = run(args.vllm, Path(tempfile.mkdtemp(prefix="dc-matrix-cold-")), args.jobs, fresh)
        warm = run(args.vllm, Path(args.out), args.jobs, fresh)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    print(f"cores: {os.cpu_count()}, jobs: {args.jobs}, load average {os.getloadavg()[0]:.1f}")
    print(f"matrix {args.vllm} x {len(CLIENTS)} clients, cold (sources fetched, nothing else cached): {cold:.1f} s")
    print(f"matrix {args.vllm} x {len(CLIENTS)} clients, warm (the same cache again): {warm:.1f} s")


if __name__ == "__main__":
    main()
