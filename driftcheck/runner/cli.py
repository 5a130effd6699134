"""`driftcheck smoke`: a real hidden-state extraction on a tiny local model, on an installed vLLM.

This process never imports vLLM, torch or transformers. It probes the target environment, then runs
each step (model build + reference, one attempt per driver and mode) as a child process of that
environment's Python, each in its own process group with a timeout, and reads back a JSON file.

Exit codes: 0 every gating attempt passed; 1 an extraction crashed, timed out or failed a check (a
finding); 2 usage or tool error (bad arguments, no vLLM in that environment, model build failed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from driftcheck.runner import analysis, logtext, report
from driftcheck.runner.attempts import run_attempt, run_child
from driftcheck.runner.summary import describe
from driftcheck.runner.spec import ARCHS, DEFAULT_RTOL, DTYPES, AttemptSpec, model_spec

DRIVERS = ("generator", "native", "auto")


class UsageError(Exception):
    """Bad input or an environment the runner cannot use: one line on stderr, exit 2."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="driftcheck smoke",
        description="Run a real hidden-state extraction on a tiny locally built model with the installed "
                    "vLLM and check it against transformers.")
    p.add_argument("--driver", default="auto", choices=DRIVERS,
                   help="generator: the client's VllmHiddenStatesGenerator (speculators 0.3/0.4); native: "
                        "vLLM's extract_hidden_states method (0.17+); auto: every driver that applies")
    p.add_argument("--model", default="llama", choices=ARCHS,
                   help="the tiny model: llama (4 layers) or deepseek (DeepSeek V3: MLA + MoE, 3 layers); default llama")
    p.add_argument("--layers", help="layer ids to extract, comma-separated (default: every layer but the first, "
                                    "1,2,3 for llama, 1,2 for deepseek)")
    p.add_argument("--client", help="the client's speculators package, or the folder holding it "
                                    "(default: the one installed in the target environment)")
    p.add_argument("--python", help="Python of the vLLM environment under test (default: this one)")
    p.add_argument("--out", default="reports/smoke", help="where results go (default reports/smoke)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per attempt (default 300)")
    p.add_argument("--defaults-too", action="store_true",
                   help="also run each driver with the target's defaults and report the difference")
    p.add_argument("--upstream-connector", action="store_true",
                   help="native: also run once with vLLM's own ExampleHiddenStatesConnector")
    p.add_argument("--dtype", choices=DTYPES, help="model dtype (default: bfloat16 for llama, float32 for deepseek)")
    p.add_argument("--passes", type=int, default=2,
                   help="times the same prompts run in one engine (default 2: repeats catch prefix-cache bugs)")
    p.add_argument("--json", action="store_true", help="print the JSON result instead of the summary")
    p.add_argument("--keep", action="store_true", help="keep the extracted hidden-states files")
    return p


def parse_layers(text: str, num_layers: int) -> list[int]:
    try:
        layers = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--layers must be comma-separated integers, got {text!r}") from None
    if not layers:
        raise UsageError("--layers names no layer")
    if len(set(layers)) != len(layers):
        raise UsageError(f"--layers repeats a layer: {text!r}")
    bad = [L for L in layers if not 0 <= L < num_layers]
    if bad:
        raise UsageError(f"--layers {bad} out of range: the smoke model has layers 0..{num_layers - 1}")
    return layers


def child_env(pythonpath_dir: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath_dir), env.get("PYTHONPATH")]))
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB; otherwise vLLM 0.32 reserves ~18 GB here
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1")
    return env


def expose_driftcheck(out: Path) -> Path:
    """A folder holding only a link to this driftcheck package, for the child's PYTHONPATH: the
    child must not see this environment's site-packages."""
    d = out / ".pythonpath"
    d.mkdir(parents=True, exist_ok=True)
    link = d / "driftcheck"
    target = Path(__file__).resolve().parents[1]
    if link.is_symlink() and Path(os.readlink(link)) != target:
        link.unlink()
    if not link.exists():
        link.symlink_to(target, target_is_directory=True)
    return d


def choose_drivers(want: str, facts: dict, client: str | None) -> list[str]:
    can_native = bool(facts.get("has_extract_hidden_states"))
    if want == "native" and not can_native:
        raise UsageError(f"vLLM {facts.get('vllm')} has no extract_hidden_states method (vLLM 0.17+); "
                         "use --driver generator")
    if want == "generator" and not client:
        raise UsageError("--driver generator needs a client generator: no speculators in the target "
                         "environment; pass --client PATH")
    if want != "auto":
        return [want]
    drivers = (["generator"] if client else []) + (["native"] if can_native else [])
    if not drivers:
        raise UsageError(f"nothing to drive: vLLM {facts.get('vllm')} has no extract_hidden_states and no "
                         "client generator was found (pass --client PATH)")
    return drivers


def main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one-line usage error (or --help)
        return 0 if exc.code == 0 else 2
    try:
        return _smoke(args)
    except UsageError as exc:
        print(f"driftcheck smoke: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("driftcheck smoke: interrupted (attempt processes were stopped)", file=sys.stderr)
        return 2


def _smoke(args) -> int:
    model = model_spec(args.model, args.dtype)
    layers = parse_layers(args.layers or ",".join(str(i) for i in range(1, model.num_layers)), model.num_layers)
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.passes < 1:
        raise UsageError("--passes must be at least 1")
    python = args.python or sys.executable
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise UsageError(f"--python {python}: not an executable file")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = child_env(expose_driftcheck(out))
    say = (lambda *a: None) if args.json else (lambda *a: print(*a, flush=True))

    t0 = time.monotonic()
    facts, outcome = run_child(python, ["probe"], out / "probe.json", out / "probe.log", env, 120)
    if facts is None:
        raise UsageError(f"could not probe {python}: {logtext.tail((out / 'probe.log').read_text(errors='replace'), 1)}")
    if not facts.get("vllm"):
        raise UsageError(f"no vLLM installed in {python}")
    client = args.client or facts.get("speculators_dir")
    if args.client and not Path(args.client).exists():
        raise UsageError(f"--client {args.client}: no such file or folder")
    drivers = choose_drivers(args.driver, facts, client)
    if "generator" in drivers:
        from driftcheck.runner.clientpkg import package_dir
        try:
            client = str(package_dir(client))
        except FileNotFoundError as exc:
            if args.driver == "generator" or args.client:
                raise UsageError(f"--client: {exc}") from None
            drivers.remove("generator")
            if not drivers:
                raise UsageError(str(exc)) from None
    say(f"driftcheck smoke: vLLM {facts['vllm']} ({facts['vllm_dist']}), torch {facts['torch']}, "
        f"transformers {facts['transformers']}, python {facts['python']} at {python}")

    model_dir = out / "model"
    prep_spec = AttemptSpec(driver="-", mode="-", layers=layers, model_dir=str(model_dir), out_dir=str(out), model=model)
    (out / "prepare-spec.json").write_text(prep_spec.to_json())
    prep, outcome = run_child(python, ["prepare", str(out / "prepare-spec.json")], out / "prepare.json",
                              out / "prepare.log", env, args.timeout)
    if prep is None:
        log = (out / "prepare.log").read_text(errors="replace")
        raise UsageError(f"building the tiny model failed in {python}: "
                         f"{(logtext.tracebacks(log) or [logtext.tail(log, 1)])[-1].strip().splitlines()[-1]} "
                         f"(log: {out / 'prepare.log'})")
    say(f"model: {model.describe()}; "
        f"{len(prep['prompt_tokens'])} prompts ({sum(prep['prompt_tokens'])} tokens) x {args.passes} passes; "
        f"built in {prep['build_s']:.1f} s, transformers reference in {prep['reference_s']:.1f} s")

    attempts = []
    for driver in drivers:
        modes = ["careful"] + (["defaults"] if args.defaults_too else [])
        plans = [(m, False) for m in modes] + ([("careful", True)] if args.upstream_connector and driver == "native" else [])
        for mode, upstream in plans:
            spec = AttemptSpec(driver=driver, mode=mode, layers=layers, model_dir=str(model_dir), out_dir="",
                               model=model, client=client if driver == "generator" else None,
                               passes=args.passes, upstream_connector=upstream)
            spec.out_dir = str(out / spec.name)
            attempt = run_attempt(python, spec, env, args.timeout, args.keep)
            if mode == "defaults":
                careful = next(a for a in attempts if a["driver"] == driver and a["mode"] == "careful")
                attempt["differences"] = analysis.differences(careful, attempt)
            attempts.append(attempt)
            for line in describe(attempt):
                say(line)

    result = {
        "tool": "driftcheck smoke",
        "version": _version(),
        "ok": all(a["status"] == "passed" for a in attempts if a["gate"]),
        "environment": facts,
        "model": {**model.to_dict(), "dir": str(model_dir), "prompt_tokens": prep["prompt_tokens"],
                  "build_s": prep["build_s"], "reference_s": prep["reference_s"], "notes": prep.get("notes")},
        "rtol": DEFAULT_RTOL[model.dtype],
        "drivers": drivers,
        "attempts": attempts,
        "findings": analysis.findings(attempts),
        "wall_s": time.monotonic() - t0,
    }
    json_path = report.write_json(result, out)
    junit_path = report.write_junit(result, out)
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        if result["findings"]:
            say("findings:")
            for f in result["findings"]:
                say(f"  {f['severity']:7} {f['id']}: {f['message']}")
        say(f"{'PASSED' if result['ok'] else 'FAILED'} in {result['wall_s']:.1f} s; result {json_path}, junit {junit_path}")
    return 0 if result["ok"] else 1


def _version() -> str:
    from driftcheck import __version__

    return __version__
