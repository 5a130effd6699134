"""Time `driftcheck smoke` in ready vLLM environments; prints a markdown table for docs/smoke.md.

    python bench/smoke_bench.py --env ~/.cache/driftcheck/envs/vllm-0.32.0 [--env ...] [--repeat 3] [-- SMOKE ARGS]

Each run is a separate `python -m driftcheck.runner ... --json` (model build, reference, attempts);
the table gives the median over the repeats of: whole run wall time, engine load time, extraction
throughput (prompt tokens/s over both passes) and peak RSS summed over the attempt's process group.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_once(python: Path, extra: list[str]) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "driftcheck.runner", "--python", str(python), "--out", out,
                               "--json", *extra], capture_output=True, text=True, env=env, cwd=REPO)
        wall = time.monotonic() - t0
    if proc.returncode == 2 or not proc.stdout.strip():
        sys.exit(f"smoke_bench: {python}: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
    return wall, json.loads(proc.stdout)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", action="append", required=True, help="a vLLM environment folder (repeatable)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("smoke_args", nargs="*", help="extra arguments for driftcheck smoke (after --)")
    args = p.parse_args(argv)
    print("| vLLM | attempt | status | run wall (s) | load (s) | tokens/s | peak RSS (GiB) |")
    print("|---|---|---|---|---|---|---|")
    for env in args.env:
        python = Path(env) / "bin" / "python"
        runs = [run_once(python, args.smoke_args) for _ in range(args.repeat)]
        walls = [w for w, _ in runs]
        by_attempt: dict[str, list[dict]] = {}
        for _, result in runs:
            for a in result["attempts"]:
                by_attempt.setdefault(a["name"], []).append(a)
        version = runs[0][1]["environment"]["vllm"]
        for name, attempts in by_attempt.items():
            med = lambda key: statistics.median(a["metrics"].get(key) or 0 for a in attempts)  # noqa: E731
            status = "/".join(sorted({a["status"] for a in attempts}))
            print(f"| {version} | {name} | {status} | {statistics.median(walls):.1f} | {med('load_s'):.1f} | "
                  f"{med('tokens_per_s'):.0f} | {med('peak_rss_mb') / 1024:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
