"""The codemod registry. One module per fix; the module name is the fix id with underscores.

Contract: each module defines `FIX` (a `driftcheck.fix.codemod.Fix`: id, the rule ids it repairs, its
applicability) and `transform(source, findings, ctx) -> FixOutcome`. What the rule knew that the fix needs comes typed in
`finding.payload` (the dataclass the rule declares as `Rule.payload`, the only thing a fix imports from a rule);
notes for the diff summary go in `FixOutcome.notes`. A fix never imports another fix: shared
editing helpers live in driftcheck.fix.codemod, shared vLLM questions in driftcheck.vllm_model.facts. The rule registry
(driftcheck.rules.registry) lists, per rule, the fixes whose `FIX.rules` name it. Modules run in the order
below, one at a time, with a rescan in between (so line numbers are always fresh).
"""

from __future__ import annotations

import importlib
from types import ModuleType

FIX_MODULES = [
    "move_import",
    "drop_keyword",
    "add_argument",
    "rename_method",
    "disable_prefix_caching",
    "add_block_hasher",
    "unwrap_unique_reply",
    "tensor_truthiness",
    "call_sample_tokens",
    "replay_engine_setup",
    "replay_layer_arguments",
]


def load_fixes() -> list[ModuleType]:
    return [importlib.import_module(f"{__name__}.{name}") for name in FIX_MODULES]
