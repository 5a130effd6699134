"""The tiny model and its transformers reference, built inside a vLLM environment (which has torch)."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from .helpers import REPO, vllm_env

pytestmark = pytest.mark.vllm_runtime

SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    from pathlib import Path
    import torch
    from transformers import AutoTokenizer
    from driftcheck.runner.reference import reference_hidden_states
    from driftcheck.runner.spec import ModelSpec
    from driftcheck.runner.tinymodel import _WORDS, build_model

    spec = ModelSpec()
    out = {}
    for name in ("a", "b"):
        d = Path(sys.argv[1], name)
        info = build_model(d, spec)
        out[name] = {"prompts": info["prompts"],
                     "weights": hashlib.sha256((d / "model.safetensors").read_bytes()).hexdigest()}
    d = Path(sys.argv[1], "a")
    tok = AutoTokenizer.from_pretrained(d)
    ref, notes = reference_hidden_states(d, out["a"]["prompts"])
    cfg = json.loads((d / "config.json").read_text())
    print(json.dumps({**out, "notes": notes, "vocab": len(tok), "config": cfg,
                      "shapes": [list(r.shape) for r in ref],
                      # prompts are cut at token boundaries: words inside them must decode whole
                      "roundtrip": all(w in _WORDS for p in out["a"]["prompts"] for w in tok.decode(p).split()[1:-1]),
                      "finite": all(bool(torch.isfinite(r).all()) for r in ref)}))
""")


@pytest.mark.parametrize("version", ["0.32.0", "0.16.0"])
def test_model_tokenizer_and_reference(version, tmp_path):
    env = vllm_env(version)
    proc = subprocess.run([str(env / "bin/python"), "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1",
                                                TRANSFORMERS_OFFLINE="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert r["a"] == r["b"]  # seeded: the same weights and prompts every time
    assert [len(p) for p in r["a"]["prompts"]] == [7, 45, 130, 200, 300]
    assert r["config"]["head_dim"] == 64 and r["config"]["num_hidden_layers"] == 4
    assert r["config"]["hidden_size"] == 256 and r["config"]["torch_dtype"] == "bfloat16"
    assert r["vocab"] == r["config"]["vocab_size"]
    # num_layers + 1 entries per prompt; the last is the pre-norm output, which transformers' own
    # hidden_states[-1] is not (it has the final norm applied)
    assert r["shapes"] == [[5, n, 256] for n in (7, 45, 130, 200, 300)]
    assert r["notes"]["hidden_states_last_entry_normed"] is True
    assert r["finite"] and r["roundtrip"]
