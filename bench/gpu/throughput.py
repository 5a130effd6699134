"""Hidden-state extraction throughput on a GPU: what users choose between, on one random ~1B Llama.

    python3 bench/gpu/throughput.py all --out DIR [--client-fixed PATH]    # every variant, one process each
    python3 bench/gpu/throughput.py table RUN1/throughput.json [RUN2/...]   # the README's Markdown table

Variants (each in its own process group, run one after the other on the same GPU; the same random prompts):

  vllm-plain        vLLM, prefill only (max_tokens=1), no extraction: the ceiling
  vllm-native       vLLM's own `extract_hidden_states` speculative method + ExampleHiddenStatesConnector
                    (hidden states written to safetensors files; timed until every file is complete)
  generator-fixed   speculators 0.3.0's VllmHiddenStatesGenerator after `driftcheck fix --apply --vllm 0.22.0`
                    (its own engine settings: enforce_eager, max_num_seqs 32, 8192 batched tokens)
  transformers      plain transformers, `output_hidden_states=True`, batched, bf16, sdpa, the selected layers
                    copied to host memory (what EAGLE's data scripts do, batched)

vllm-plain and vllm-native share every engine setting (prefix caching off, chunked prefill off because the
connector refuses it, the same max_num_batched_tokens and gpu_memory_utilization, CUDA graphs and async
scheduling at vLLM's defaults), so their ratio is the cost of the extraction alone.

tokens/s = prompt tokens (prompts x length) / wall time of one timed pass, after a warm-up pass on other prompts.
Peak GPU memory: nvidia-smi's memory.used sampled every 100 ms while the variant ran (for vLLM that includes
the KV-cache pool it reserves up front, gpu_memory_utilization x total); for transformers also
torch.cuda.max_memory_allocated. vLLM's own log lines (weights, KV cache) are kept in the result.

Needs on the device: torch, transformers, tokenizers, vLLM (PYTHONPATH) and this repository (cwd).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

VARIANTS = ("vllm-plain", "vllm-native", "generator-fixed", "transformers")


# ----------------------------------------------------------------------------------------------- model + prompts
def model_config(args) -> dict:
    return dict(vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=args.intermediate,
                num_hidden_layers=args.num_layers, num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
                max_position_embeddings=args.max_model_len, rms_norm_eps=1e-5, tie_word_embeddings=False,
                bos_token_id=1, eos_token_id=2)


def build(args) -> dict:
    """A random Llama (seeded) in bf16 and a word-level tokenizer with exactly `vocab` ids: nothing from a hub."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(args.model)
    stamp = out / "bench-model.json"
    want = model_config(args)
    if stamp.exists() and json.loads(stamp.read_text()).get("config") == want:
        return json.loads(stamp.read_text())
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t0 = time.perf_counter()
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"w{i}": i for i in range(3, args.vocab)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                            model_max_length=args.max_model_len).save_pretrained(out)
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):
        model = LlamaForCausalLM(LlamaConfig(**want))
    model = model.to(torch.bfloat16)
    n_params = sum(p.numel() for p in model.parameters())
    model.save_pretrained(out, safe_serialization=True)
    cfg = json.loads((out / "config.json").read_text())
    cfg["torch_dtype"] = cfg["dtype"] = "bfloat16"
    (out / "config.json").write_text(json.dumps(cfg, indent=2))
    info = {"config": want, "params": n_params, "build_s": time.perf_counter() - t0, "device": device}
    stamp.write_text(json.dumps(info))
    return info


def prompts(args, seed_offset: int = 0, n: int | None = None) -> list[list[int]]:
    import random

    rng = random.Random(args.seed + 1 + seed_offset)
    return [[rng.randrange(3, args.vocab) for _ in range(args.prompt_len)] for _ in range(n or args.num_prompts)]


# --------------------------------------------------------------------------------------------------- variants
def _engine_facts(cfg) -> dict:
    comp = getattr(cfg, "compilation_config", None)
    return {
        "enable_prefix_caching": getattr(cfg.cache_config, "enable_prefix_caching", None),
        "block_size": getattr(cfg.cache_config, "block_size", None),
        "gpu_memory_utilization": getattr(cfg.cache_config, "gpu_memory_utilization", None),
        "num_gpu_blocks": getattr(cfg.cache_config, "num_gpu_blocks", None),
        "enable_chunked_prefill": getattr(cfg.scheduler_config, "enable_chunked_prefill", None),
        "async_scheduling": getattr(cfg.scheduler_config, "async_scheduling", None),
        "max_num_batched_tokens": getattr(cfg.scheduler_config, "max_num_batched_tokens", None),
        "max_num_seqs": getattr(cfg.scheduler_config, "max_num_seqs", None),
        "enforce_eager": getattr(cfg.model_config, "enforce_eager", None),
        "cudagraph_mode": str(getattr(comp, "cudagraph_mode", None)),
        "compilation_mode": str(getattr(comp, "mode", getattr(comp, "level", None))),
    }


def _timed_passes(args, run_batch, result: dict, after=None) -> None:
    """A warm-up pass on other prompts, then args.reps timed passes over the benchmark prompts; after(tag), if
    given, runs after each pass, off the clock."""
    warm = prompts(args, seed_offset=1000, n=args.warmup_prompts)
    t0 = time.perf_counter()
    run_batch(warm, "warmup")
    result["warmup_s"] = time.perf_counter() - t0
    if after:
        after("warmup")
    data = prompts(args)
    tokens = len(data) * args.prompt_len
    result["tokens"] = tokens
    result["passes"] = []
    for rep in range(args.reps):
        t0 = time.perf_counter()
        run_batch(data, f"rep{rep + 1}")
        dt = time.perf_counter() - t0
        result["passes"].append({"s": dt, "tokens_per_s": tokens / dt})
        if after:
            after(f"rep{rep + 1}")


def vllm_engine_args(args, native: bool, hs_dir: Path) -> dict:
    kw = dict(model=args.model, tokenizer=args.model, dtype="bfloat16", max_model_len=args.max_model_len,
              gpu_memory_utilization=args.gpu_mem, enable_prefix_caching=False, enable_chunked_prefill=False,
              max_num_batched_tokens=args.max_batched_tokens, seed=0)
    if native:
        kw["speculative_config"] = {
            "method": "extract_hidden_states", "num_speculative_tokens": 1,
            "draft_model_config": {"hf_config": {"eagle_aux_hidden_state_layer_ids": args.layer_ids}},
        }
        kw["kv_transfer_config"] = {
            "kv_connector": "ExampleHiddenStatesConnector", "kv_role": "kv_producer",
            "kv_connector_extra_config": {"shared_storage_path": str(hs_dir)},
        }
    return kw


def run_vllm(args, native: bool, result: dict) -> None:
    import fcntl

    from vllm import LLM, SamplingParams

    hs_dir = Path(args.scratch) / "hidden-states"
    shutil.rmtree(hs_dir, ignore_errors=True)
    hs_dir.mkdir(parents=True)
    kw = vllm_engine_args(args, native, hs_dir)
    result["engine_args"] = kw
    t0 = time.perf_counter()
    llm = LLM(**kw)
    result["load_s"] = time.perf_counter() - t0
    result["engine"] = _engine_facts(llm.llm_engine.vllm_config)
    params = SamplingParams(max_tokens=1, temperature=0.0)
    written = {}

    def run_batch(batch, tag):
        outs = llm.generate([{"prompt_token_ids": p} for p in batch], params, use_tqdm=False)
        if native:
            paths = [(o.kv_transfer_params or {}).get("hidden_states_path") for o in outs]
            if not all(paths):
                raise RuntimeError(f"{sum(not p for p in paths)} requests returned no hidden_states_path")
            for p in paths:  # what a client does before it reads: wait until the writer thread is done
                with open(p + ".lock") as lf:
                    fcntl.flock(lf, fcntl.LOCK_SH)
            written[tag] = paths
        if len(outs) != len(batch):
            raise RuntimeError(f"{len(outs)} outputs for {len(batch)} prompts")

    def after(tag):  # native: check one file of the pass, then free the disk, off the clock
        if not native:
            return
        from vllm.distributed.kv_transfer.kv_connector.v1.example_hidden_states_connector import (
            load_hidden_states,
        )

        paths = written[tag]
        sample = load_hidden_states(paths[-1])
        result.setdefault("sample_file", {})[tag] = {
            "files": len(paths), "hidden_states": list(sample["hidden_states"].shape),
            "dtype": str(sample["hidden_states"].dtype), "token_ids": list(sample["token_ids"].shape),
            "bytes_per_request": os.path.getsize(paths[-1]),
            "finite": bool(sample["hidden_states"].float().isfinite().all())}
        for p in paths:
            for f in (p, p + ".lock"):
                Path(f).unlink(missing_ok=True)

    result["hidden_states_dir"] = str(hs_dir) if native else None
    _timed_passes(args, run_batch, result, after)


def run_generator(args, result: dict) -> None:
    import importlib

    from driftcheck.runner import clientpkg

    pkg = clientpkg.package_dir(args.client_fixed)
    clientpkg.install_shim(pkg, Path(args.scratch) / "shim")
    module = importlib.import_module(clientpkg.GENERATOR_MODULE)
    result["client"] = str(pkg)
    t0 = time.perf_counter()
    gen = module.VllmHiddenStatesGenerator(model_path=args.model, layer_ids=list(args.layer_ids),
                                           max_model_len=args.max_model_len, gpu_memory_utilization=args.gpu_mem)
    result["load_s"] = time.perf_counter() - t0
    result["engine"] = _engine_facts(gen.vllm_config)
    result["generate_batch"] = args.generator_batch
    shapes = {}

    def run_batch(batch, tag):
        n = 0
        for i in range(0, len(batch), args.generator_batch):
            res = gen.generate([list(p) for p in batch[i:i + args.generator_batch]])
            n += len(res)
            shapes[tag] = [list(h.shape) for h in res[0]["hidden_states"]], str(res[0]["hidden_states"][0].device)
        if n != len(batch):
            raise RuntimeError(f"{n} results for {len(batch)} prompts")

    try:
        _timed_passes(args, run_batch, result)
    finally:
        gen.executor.shutdown()
    result["sample_result"] = {"hidden_states": shapes[f"rep{args.reps}"][0], "device": shapes[f"rep{args.reps}"][1]}


def run_transformers(args, result: dict) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    device = "cuda" if torch.cuda.is_available() else "cpu"
    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16, attn_implementation="sdpa")
    model.to(device).eval()
    result["load_s"] = time.perf_counter() - t0
    result["device"] = device
    result["batch"] = args.hf_batch
    # speculators' id L is the output of layer L: transformers hidden_states[L + 1]
    idx = [L + 1 for L in args.layer_ids]
    shape = {}

    def run_batch(batch, tag):
        with torch.inference_mode():
            for i in range(0, len(batch), args.hf_batch):
                ids = torch.tensor(batch[i:i + args.hf_batch], device=device)
                out = model(input_ids=ids, output_hidden_states=True, use_cache=False)
                host = torch.stack([out.hidden_states[j] for j in idx], dim=2).cpu()  # [B, T, layers, H]
                shape[tag] = list(host.shape)

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    _timed_passes(args, run_batch, result)
    result["sample_result"] = {"hidden_states_batch": shape[f"rep{args.reps}"]}
    if device == "cuda":
        result["torch_max_memory_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
        result["torch_max_memory_reserved_gib"] = torch.cuda.max_memory_reserved() / 2**30


def run_variant(args) -> int:
    result: dict = {"variant": args.variant}
    t0 = time.perf_counter()
    try:
        if args.variant == "build":
            result.update(build(args))
        elif args.variant in ("vllm-plain", "vllm-native"):
            run_vllm(args, args.variant == "vllm-native", result)
        elif args.variant == "generator-fixed":
            run_generator(args, result)
        elif args.variant == "transformers":
            run_transformers(args, result)
        else:
            raise SystemExit(f"unknown variant {args.variant}")
        result["status"] = "ok"
    except BaseException as exc:  # record, then let the parent see it
        import traceback

        result.update(status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    result["wall_s"] = time.perf_counter() - t0
    Path(args.result).write_text(json.dumps(result, indent=2, default=str))
    print(json.dumps({k: v for k, v in result.items() if k != "traceback"}, default=str)[:2000], flush=True)
    if result["status"] != "ok":
        print(result.get("traceback"), file=sys.stderr, flush=True)
    return 0 if result["status"] == "ok" else 1


# ------------------------------------------------------------------------------------------------ orchestration
class GpuMemSampler:
    """nvidia-smi's memory.used (MiB), every 100 ms, in a background process; .peak() since start."""

    def __init__(self):
        self.values: list[int] = []
        self.proc = None
        if shutil.which("nvidia-smi"):
            self.proc = subprocess.Popen(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                                          "-lms", "100"], stdout=subprocess.PIPE, text=True)
            self.thread = threading.Thread(target=self._read, daemon=True)
            self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.values.append(int(line.strip().split(",")[0]))
            except ValueError:
                pass

    def stop(self) -> dict:
        if self.proc is None:
            return {}
        self.proc.terminate()
        self.proc.wait()
        return {"nvidia_smi_peak_mib": max(self.values, default=None),
                "nvidia_smi_first_mib": self.values[0] if self.values else None, "samples": len(self.values)}


LOG_FACTS = [
    ("weights_gib", re.compile(r"Model loading took ([\d.]+) GiB")),
    ("available_kv_cache_gib", re.compile(r"Available KV cache memory: ([\d.]+) GiB")),
    ("kv_cache_tokens", re.compile(r"GPU KV cache size: ([\d,]+) tokens")),
    ("attention_backend", re.compile(r"Using (\S+) (?:attention )?backend")),
    ("compile_s", re.compile(r"torch\.compile (?:takes|took) ([\d.]+) s in total")),
    ("cudagraph_capture_s", re.compile(r"Graph capturing finished in ([\d.]+) secs")),
    ("cudagraph_mode_set_by_vllm", re.compile(r"setting cudagraph_mode=(\w+)")),
    ("flash_attn_version", re.compile(r"Using FlashAttention version (\d)")),
    ("async_scheduling_log", re.compile(r"(Asynchronous scheduling is (?:enabled|disabled)[^\n]*)")),
    ("multiproc_method", re.compile(r"(We must use the `spawn` multiprocessing start method)")),
]


def log_facts(text: str) -> dict:
    out = {}
    for key, rx in LOG_FACTS:
        found = rx.findall(text)
        if found:
            out[key] = found[0] if len(set(found)) == 1 else found
    return out


def child_cmd(args, variant: str, result: Path) -> list[str]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "run", variant, "--result", str(result)]
    for k in ("model", "scratch", "client_fixed"):
        if getattr(args, k):
            cmd += [f"--{k.replace('_', '-')}", str(getattr(args, k))]
    for k in ("num_prompts", "prompt_len", "warmup_prompts", "reps", "gpu_mem", "max_batched_tokens",
              "generator_batch", "hf_batch", "hidden", "intermediate", "num_layers", "heads", "kv_heads", "vocab",
              "max_model_len", "seed"):
        cmd += [f"--{k.replace('_', '-')}", str(getattr(args, k))]
    cmd += ["--layer-ids", ",".join(map(str, args.layer_ids))]
    return cmd


def run_all(args) -> int:
    from driftcheck.runner import procs

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault("VLLM_USE_FLASHINFER_SAMPLER", "0")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1",
               TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
    variants = ["build"] + [v for v in args.variants.split(",") if v]
    if not args.client_fixed:
        variants = [v for v in variants if v != "generator-fixed"]
    summary = {"settings": {k: v for k, v in vars(args).items() if k not in ("func",)}, "results": {}}
    for v in variants:
        res_path = out / f"{v}.json"
        res_path.unlink(missing_ok=True)
        sampler = GpuMemSampler()
        outcome = procs.run_isolated(child_cmd(args, v, res_path), env=env, timeout_s=args.timeout,
                                     log_path=out / f"{v}.log")
        mem = sampler.stop()
        res = json.loads(res_path.read_text()) if res_path.exists() else {
            "variant": v, "status": "timeout" if outcome.timed_out else "died", "returncode": outcome.returncode}
        res.update(mem, process_wall_s=outcome.wall_s, peak_rss_mb=outcome.peak_rss_mb,
                   leftover_pids=outcome.leftovers, **log_facts((out / f"{v}.log").read_text(errors="replace")))
        summary["results"][v] = res
        (out / "throughput.json").write_text(json.dumps(summary, indent=2, default=str))
        print(f"[{v}] {res.get('status')} in {outcome.wall_s:.1f} s"
              + (f": {res.get('error')}" if res.get("error") else ""), flush=True)
        if v == "build" and res.get("status") != "ok":
            break
    print_table(summary)
    return 0 if all(r.get("status") == "ok" for r in summary["results"].values()) else 1


def print_table(summary: dict) -> None:
    res = summary["results"]
    base = res.get("vllm-plain", {})
    base_tps = max((p["tokens_per_s"] for p in base.get("passes", [])), default=None)
    print(f"\n{'variant':<17} {'status':<7} {'tok/s pass1':>12} {'tok/s pass2':>12} {'vs plain':>9} "
          f"{'GPU peak GiB':>13} {'torch peak':>11} {'load s':>7}")
    for v, r in res.items():
        if v == "build":
            continue
        tps = [p["tokens_per_s"] for p in r.get("passes", [])]
        ratio = f"{max(tps) / base_tps:.2f}" if tps and base_tps else "-"
        smi = r.get("nvidia_smi_peak_mib")
        tp = r.get("torch_max_memory_allocated_gib")
        cells = [f"{t:>12,.0f}" for t in tps] + [f"{'-':>12}"] * (2 - len(tps))
        print(f"{v:<17} {r.get('status', '?'):<7} {' '.join(cells[:2])} {ratio:>9} "
              f"{(smi / 1024 if smi else 0):>13.1f} {(f'{tp:.1f}' if tp else '-'):>11} {r.get('load_s', 0):>7.1f}")


def markdown(paths: list[str]) -> str:
    """One Markdown row per variant and run, from throughput.json files (run 1, run 2, ...)."""
    rows = ["| run | variant | tok/s pass 1 | tok/s pass 2 | best vs vllm-plain | peak GPU mem (nvidia-smi, GiB) | "
            "torch max allocated (GiB) | engine/model load (s) |", "|---|---|---|---|---|---|---|---|"]
    for i, path in enumerate(paths, 1):
        res = json.loads(Path(path).read_text())["results"]
        base = max(p["tokens_per_s"] for p in res["vllm-plain"]["passes"])
        for v in VARIANTS:
            r = res.get(v)
            if not r or not r.get("passes"):
                rows.append(f"| {i} | {v} | {r and r.get('status')} | | | | | |")
                continue
            tps = [p["tokens_per_s"] for p in r["passes"]]
            tp = r.get("torch_max_memory_allocated_gib")
            rows.append(f"| {i} | {v} | {tps[0]:,.0f} | {tps[1] if len(tps) > 1 else float('nan'):,.0f} | "
                        f"{max(tps) / base:.2f} | {r['nvidia_smi_peak_mib'] / 1024:.1f} | "
                        f"{f'{tp:.2f}' if tp else '-'} | {r.get('load_s', 0):.1f} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=("all", "run", "table"))
    ap.add_argument("variant", nargs="*", help="run: the variant; table: throughput.json files")
    ap.add_argument("--out", default="reports/gpu-throughput")
    ap.add_argument("--result")
    ap.add_argument("--model", default="/tmp/dc-gpu/bench-model")
    ap.add_argument("--scratch", default="/tmp/dc-gpu/bench-scratch")
    ap.add_argument("--client-fixed", help="speculators 0.3.0 after driftcheck fix (package or folder holding it)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--num-prompts", type=int, default=512)
    ap.add_argument("--prompt-len", type=int, default=512)
    ap.add_argument("--warmup-prompts", type=int, default=64)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--layer-ids", type=lambda s: [int(x) for x in s.split(",")], default=[2, 8, 13, 15])
    ap.add_argument("--gpu-mem", type=float, default=0.3, help="vLLM gpu_memory_utilization (all vLLM variants)")
    ap.add_argument("--max-batched-tokens", type=int, default=16384)
    ap.add_argument("--generator-batch", type=int, default=64, help="prompts per generate() call")
    ap.add_argument("--hf-batch", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--intermediate", type=int, default=8192)
    ap.add_argument("--num-layers", type=int, default=16)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--max-model-len", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args(argv)
    if args.cmd == "table":
        print(markdown(args.variant))
        return 0
    if args.cmd == "run":
        if len(args.variant) != 1 or not args.result:
            ap.error("run needs VARIANT and --result")
        args.variant = args.variant[0]
        return run_variant(args)
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
