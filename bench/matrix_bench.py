"""Time `driftcheck matrix` for speculators 0.3.0 and 0.4.0 over vLLM 0.11.0..0.32.0 (34 releases).

    python bench/matrix_bench.py [--out reports/] [--jobs 2]

Runs the matrix twice against one cache: the first run fetches whatever release sources are
missing and fills the per-file summary cache; the second is the "warm source cache" figure the
issue asks for. Both are printed, with the machine's core count; the second run's reports
(matrix.{json,md,html,png}) are written to --out.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

CLIENTS = ["speculators==0.3.0", "speculators==0.4.0"]


def run(out: Path, jobs: int) -> float:
    cmd = [sys.executable, "-m", "driftcheck", "matrix", "--vllm", "0.11.0..0.32.0", "--out", str(out), "-j", str(jobs)]
    for c in CLIENTS:
        cmd += ["--client", c]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"matrix failed: {proc.stderr}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="reports")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    first = run(Path(args.out), args.jobs)
    second = run(Path(args.out), args.jobs)
    print(f"cores: {os.cpu_count()}, jobs: {args.jobs}")
    print(f"matrix 34 releases x 2 clients, first run (fills caches): {first:.1f} s")
    print(f"matrix 34 releases x 2 clients, warm source + summary cache: {second:.1f} s")


if __name__ == "__main__":
    main()
