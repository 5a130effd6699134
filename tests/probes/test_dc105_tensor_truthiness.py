"""DC105 tensor-truthiness: truthiness test on a value that may be a tensor (probes/tensor_truthiness.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

from conftest import real_scan
from behaviour import _by_rule, _client_line, pinned, seed


def test_dc105_tensor_truthiness_present_on_016(seed):
    [f] = _by_rule(seed, "DC105")
    assert f.client.line == _client_line("if not aux_hidden_states:")
    assert "Boolean value of Tensor" in f.message


def test_dc105_absent_on_011_and_for_040(pinned):
    assert _by_rule(pinned, "DC105") == []
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC105") == []
