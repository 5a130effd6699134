"""Shared by the behaviour-rule tests (test_dc1xx_*.py): small hand-written clients scanned against a real
vLLM release, and the seed pair (speculators 0.3.0 on vLLM 0.16.0; and on 0.11.0, the release it was written for).

speculators 0.3.0 was written for vLLM 0.11.0; on 0.16.0 (the seed's pair) every runtime drift of the seed must
be found at the client line that crashes, with the vLLM line that makes it crash. speculators 0.4.0 is the
maintainers' port to 0.12-0.16 and must be clean of the runtime errors.
"""

from __future__ import annotations

import pytest

from conftest import client_sources, real_scan, source_line
from scan.helpers import scan_at_release

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
WORKER = "speculators/data_generation/custom_worker.py"


def scan_files(tmp_path, files: dict[str, str], vllm: str = "0.16.0", only=None, client_vllm=None):
    return scan_at_release(tmp_path, files, vllm, only, client_vllm)


def rules(result):
    return [(f.rule, f.client.line) for f in result.findings]


def _by_rule(result, rule):
    return [f for f in result.findings if f.rule == rule]


def _client_line(needle, rel=GEN, version="0.3.0", nth=1):
    return source_line(client_sources("speculators", version), rel, needle, nth)


@pytest.fixture(scope="module")
def seed():
    return real_scan("0.16.0", "speculators==0.3.0")


@pytest.fixture(scope="module")
def pinned():
    return real_scan("0.11.0", "speculators==0.3.0")
