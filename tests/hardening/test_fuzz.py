"""Fuzzing: hypothesis mutates real vLLM and speculators files (deleted lines, renamed names, truncation,
swapped signatures) and runs them through the engine. No crash, no hang; the run length is bounded.

A mutated client may stop parsing: that must be the clean `ClientParseError` (exit 2), nothing else.
Every mutated scan must end within a per-example alarm.
"""

from __future__ import annotations

import re
import signal
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import CACHE_DIR, client_sources, vllm_sources
from driftcheck.client_model.client import ClientParseError
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

VLLM_FILES = ["vllm/v1/core/block_pool.py", "vllm/v1/core/sched/scheduler.py", "vllm/v1/request.py",
              "vllm/config/scheduler.py", "vllm/config/__init__.py", "vllm/v1/core/kv_cache_utils.py",
              "vllm/v1/executor/multiproc_executor.py"]
CLIENT_FILES = ["speculators/data_generation/vllm_hidden_states_generator.py", "speculators/data_generation/custom_worker.py"]
PER_EXAMPLE_S = 30
FUZZ = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                                          HealthCheck.function_scoped_fixture])


@contextmanager
def alarm(seconds: int):
    def _raise(*_):
        raise TimeoutError(f"scan took more than {seconds}s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    with zipfile.ZipFile(vllm_sources("0.16.0")) as z:
        z.extractall(root / "vllm")
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(root / "client")
    return root / "vllm", root / "client"


def mutate(text: str, kind: str, a: int, b: int, name_pick: int) -> str:
    lines = text.splitlines(keepends=True)
    n = max(len(lines), 1)
    i, j = sorted((a % n, b % n))
    if kind == "delete-lines":
        return "".join(lines[:i] + lines[j + 1:])
    if kind == "truncate":
        return text[: (a * 7919) % max(len(text), 1)]
    if kind == "swap-lines":
        lines[i], lines[j] = lines[j], lines[i]
        return "".join(lines)
    names = sorted(set(re.findall(r"\b[A-Za-z_]\w{3,}\b", text)))
    if kind == "rename":
        old = names[name_pick % len(names)]
        return re.sub(rf"\b{re.escape(old)}\b", old + "_renamed", text)
    if kind == "swap-signature":
        defs = [k for k, line in enumerate(lines) if line.lstrip().startswith("def ")]
        if len(defs) >= 2:
            x, y = defs[a % len(defs)], defs[b % len(defs)]
            head_x, head_y = lines[x].split("(", 1), lines[y].split("(", 1)
            if len(head_x) == 2 and len(head_y) == 2:
                lines[x], lines[y] = head_x[0] + "(" + head_y[1], head_y[0] + "(" + head_x[1]
        return "".join(lines)
    return text


MUTATION = st.tuples(st.sampled_from(["delete-lines", "truncate", "swap-lines", "rename", "swap-signature"]),
                     st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 10_000))


def run_scan(vllm_root: Path, client_root: Path):
    with alarm(PER_EXAMPLE_S):
        vllm = resolve_vllm(str(vllm_root), CACHE_DIR)
        client = resolve_client(str(client_root), CACHE_DIR)
        return scan(vllm, [client], ScanOptions(cache_dir=CACHE_DIR, use_cache=False, client_vllm="0.11.0"))


@FUZZ
@given(target=st.sampled_from(VLLM_FILES), mutation=MUTATION)
def test_mutated_vllm_files(trees, target, mutation):
    vllm_root, client_root = trees
    path = vllm_root / target
    original = path.read_text()
    try:
        path.write_text(mutate(original, *mutation))
        result = run_scan(vllm_root, client_root)
        assert result.internal_errors == [], result.internal_errors
    finally:
        path.write_text(original)


@FUZZ
@given(target=st.sampled_from(CLIENT_FILES), mutation=MUTATION)
def test_mutated_client_files(trees, target, mutation):
    vllm_root, client_root = trees
    path = client_root / target
    original = path.read_text()
    try:
        path.write_text(mutate(original, *mutation))
        try:
            result = run_scan(vllm_root, client_root)
        except ClientParseError:
            return  # a clean, one-line usage error for a client that no longer parses
        assert result.internal_errors == [], result.internal_errors
    finally:
        path.write_text(original)
