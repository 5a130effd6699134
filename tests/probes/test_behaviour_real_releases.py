"""Behaviour rules (DC101-DC107) on the seed pair, together: no rule is unsure of it.

Each rule's own tests are in test_dc1xx_<name>.py (present where the drift is, absent where not).
"""

from __future__ import annotations

from behaviour import pinned, seed


def test_no_unknowns_and_no_internal_errors_on_the_seed_pair(seed, pinned):
    assert seed.unknown == [] and seed.internal_errors == []
    assert pinned.unknown == [] and pinned.internal_errors == []
