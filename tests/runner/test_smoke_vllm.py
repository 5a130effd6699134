"""Real extractions on installed vLLM CPU builds (marked vllm_runtime; see helpers.py for the envs).

Together these are the runner's acceptance: vLLM's own path passes on 0.32.0; the seed client
(speculators 0.3.0, unmodified) crashes on 0.16.0 and explain names the drift; once ported it passes,
repeated prompts included, while the target's defaults (prefix caching on) truncate repeated prompts.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from conftest import client_sources

from .handpatch import patched_copy
from .helpers import REPO, site_packages, smoke, vllm_env

pytestmark = pytest.mark.vllm_runtime


def attempts(result: dict) -> dict:
    return {a["name"]: a for a in result["attempts"]}


def checks(attempt: dict) -> dict:
    return {c["name"]: c for c in attempt["checks"]}


def test_native_on_vllm_0_32_passes(tmp_path):
    env = vllm_env("0.32.0")
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--driver", "native", "--defaults-too"], tmp_path)
    assert rc == 0, err
    by = attempts(result)
    careful = by["native-careful"]
    assert careful["status"] == "passed" and all(c["ok"] for c in careful["checks"])
    assert checks(careful)["convention"]["data"]["detected"] == "input"  # vLLM's id L = input of layer L
    assert careful["notes"]["engine"]["enable_prefix_caching"] is False
    defaults = by["native-defaults"]
    assert defaults["notes"]["engine"]["enable_prefix_caching"] is True
    # the defaults run must really have served the second pass from the prefix cache
    assert defaults["notes"]["cached_tokens_per_pass"][0] == 0 < defaults["notes"]["cached_tokens_per_pass"][1]
    ids = {f["id"] for f in result["findings"]}
    assert "smoke.upstream-connector-needs-cuda" in ids
    assert careful["metrics"]["tokens_per_s"] > 0 and careful["metrics"]["peak_rss_mb"] > 100
    assert (tmp_path / "smoke-junit.xml").is_file()
    assert all(a["leftover_pids"] == [] for a in result["attempts"])


def test_upstream_connector_needs_cuda_pinned_memory(tmp_path):
    env = vllm_env("0.32.0")
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--driver", "native", "--upstream-connector"],
                            tmp_path)
    assert rc == 0, err  # the upstream attempt informs; it does not gate
    upstream = attempts(result)["native-careful-upstream-connector"]
    assert upstream["status"] == "crashed" and not upstream["gate"]
    assert "pin_memory" in upstream["error"]["root_cause"]


def test_generator_unmodified_speculators_0_3_0_on_vllm_0_16_fails(tmp_path):
    env = vllm_env("0.16.0")
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--driver", "generator"], tmp_path)
    assert rc == 1, err
    a = attempts(result)["generator-careful"]
    assert a["status"] == "crashed"
    # the first drift the seed met: SchedulerConfig requires is_encoder_decoder from vLLM 0.12
    assert a["error"]["type"] == "ValidationError" and "is_encoder_decoder" in a["error"]["message"]
    assert a["error"]["client_frame"]["file"].endswith("speculators/data_generation/vllm_hidden_states_generator.py")
    hits = a["explain"]
    assert [h["rule"] for h in hits] == ["DC005"] and hits[0]["fix"] == "add-argument"
    assert "is_encoder_decoder" in hits[0]["message"] and "SchedulerConfig" in hits[0]["message"]


def test_generator_ported_by_hand_passes_and_defaults_truncate(tmp_path):
    env = vllm_env("0.16.0")
    client = patched_copy(site_packages(env) / "speculators", tmp_path / "client")
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--driver", "generator", "--client", str(client),
                             "--defaults-too"], tmp_path / "out")
    assert rc == 0, err
    by = attempts(result)
    careful = by["generator-careful"]
    assert careful["status"] == "passed", careful.get("checks") or careful.get("error")
    assert checks(careful)["convention"]["data"]["detected"] == "output"  # speculators' id L = output of layer L
    # with vLLM's default (prefix caching on) the repeated prompts come back short: a silent corruption
    defaults = by["generator-defaults"]
    assert defaults["status"] == "failed"
    assert not checks(defaults)["rows"]["ok"] and "pass 2" in checks(defaults)["rows"]["detail"]
    assert "pass 1" not in checks(defaults)["rows"]["detail"]
    assert "smoke.defaults-differ" in {f["id"] for f in result["findings"]}


@pytest.mark.parametrize("version", ["0.16.0", "0.32.0"])
def test_generator_after_driftcheck_fix_passes(tmp_path, version):
    env = vllm_env(version)
    client = tmp_path / "client"
    # the released speculators 0.3.0 as pip lays it out: the package and its dist-info, whose
    # `vllm==0.11.0` requirement is the baseline the untyped-receiver rule (DC008) compares with
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(client)
    fix = subprocess.run([sys.executable, "-m", "driftcheck", "fix", "--apply", "--warnings",
                          "--vllm", str(site_packages(env) / "vllm"), "--client", str(client)],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert fix.returncode == 0, fix.stderr  # every error fixed, nothing unknown left
    rc, result, err = smoke(["--python", str(env / "bin/python"), "--driver", "generator", "--client", str(client)],
                            tmp_path / "out")
    careful = attempts(result)["generator-careful"] if result else None
    assert rc == 0, (err, careful and (careful.get("error") or careful.get("checks")))
    assert careful["status"] == "passed"
    assert checks(careful)["rows"]["ok"] and checks(careful)["reference"]["data"]["per_pass"]["pass2"] < 0.02
