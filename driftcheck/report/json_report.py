"""JSON: the contract other tools and the CI gate read (keys are extended, never renamed)."""

from __future__ import annotations

import json


def render(result, **_options) -> str:
    return json.dumps(result.to_json(), indent=2, sort_keys=False) + "\n"
