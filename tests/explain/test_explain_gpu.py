"""`driftcheck explain` on real CUDA tracebacks: speculators 0.3.0's generator fixed one drift at a time and run
under the smoke runner on an NVIDIA H200 with PyPI's vLLM 0.22.0 (bench/gpu/stepwise.py, bench/gpu/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tracebacks"

# fixture -> (rule, fix, a phrase of the diagnosis)
EXPECTED = {
    "gpu-0.22.0-schedulerconfig-field-required": ("DC005", "add-argument", "is_encoder_decoder"),
    "gpu-0.22.0-unexpected-kwarg-kv-cache-specs": ("DC003", "drop-keyword", "kv_cache_specs"),
    "gpu-0.22.0-scheduler-missing-block-size": ("DC005", "add-argument", "block_size"),
    "gpu-0.22.0-get-input-embeddings": ("DC008", "rename-method", "get_input_embeddings"),
    "gpu-0.22.0-boolean-value-of-tensor": ("DC105", "tensor-truthiness", "DC104"),
    "gpu-0.22.0-cache-full-blocks-assert": ("DC101", "disable-prefix-caching", "block_hasher"),
}


def test_every_gpu_fixture_is_covered_and_real():
    assert {p.stem for p in FIXTURES.glob("gpu-*.txt")} == set(EXPECTED)
    for name in EXPECTED:
        text = (FIXTURES / f"{name}.txt").read_text()
        assert text.startswith("Traceback (most recent call last):") and "driftcheck/runner/child.py" in text, name
        assert "/tmp/dc-gpu/" in text, name  # the client as bench/gpu/device.sh laid it out on the device


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_diagnosis_confirmed_against_0_22_0(name):
    rule, fix, phrase = EXPECTED[name]
    proc = run_cli("explain", "--json", "--vllm", "0.22.0", str(FIXTURES / f"{name}.txt"))
    assert proc.returncode == 0, proc.stderr
    [d] = json.loads(proc.stdout)["diagnoses"]
    assert (d["rule"], d["fix"]) == (rule, fix)
    assert phrase in d["message"] + d["vllm_change"]
    assert d["confirmed"] is True, d
    assert d["frame"] and "/pydantic/" not in d["frame"]["file"]
