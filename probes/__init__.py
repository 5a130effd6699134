"""The rule modules, in the order a scan runs them. One module per rule; the module name is the rule's name.

Contract: each module defines `RULE` (a `driftcheck.rules.findings.Rule` with a stable id),
`check(ctx: driftcheck.rules.context.ScanContext) -> Iterable[Finding | UnknownResult]` (the detector) and, when
the rule's drift raises, `SIGNATURES` (`driftcheck.rules.tbsigs.Signature`s: what `driftcheck explain` matches).
The module docstring is the rule's documentation. A rule module imports facts (driftcheck.vllm_model.facts), never
another rule module. driftcheck.rules.registry joins each module with the fixes that repair it: that registry is
what scan, explain, SARIF, `driftcheck rules` and `fix` read.
"""

from __future__ import annotations

import importlib
from types import ModuleType

PROBE_MODULES = [
    # generic usage probes: compare every use the client makes of vLLM with the target
    "missing_module",
    "missing_name",
    "unknown_keyword",
    "too_many_positional",
    "missing_argument",
    "missing_attribute",
    "unknown_rpc_method",
    "removed_name",
    "deprecated_name",
    # behaviour probes: read bodies, defaults and return shapes
    "request_block_hasher",
    "prefix_caching_hidden_states",
    "two_phase_execution",
    "unique_reply_rank",
    "tensor_truthiness",
    "forward_replay_drift",
    "default_flipped",
    "engine_setup_precondition",
    "override_signature_drift",
    "vendored_copy_drift",
    "serve_config_drift",
    "refused_release",
    "patch_anchor_gone",
    "positional_rebound",
    "post_init_arity",
    "parsed_option_gone",
    "parser_option_clash",
    # shape probes: what the target's annotations and bodies say a value is (a record, an ABC, a tuple, a value)
    "not_a_container",
    "abstract_method_missing",
    "unpack_count",
    "not_callable",
    "isinstance_not_a_class",
    # silent and async drift: what the client customises stops running; a coroutine becomes a plain call, or back
    "orphaned_override",
    "await_drift",
    "fallback_taken",
]


def load_probes(only: list[str] | None = None) -> list[ModuleType]:
    modules = []
    for name in PROBE_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        rule = module.RULE
        if only and rule.id not in only and rule.name not in only:
            continue
        modules.append(module)
    return modules
