"""add-argument (DC005): pass a parameter the target requires, with the value its own engine uses.

The rule's finding carries the parameter and the value (`ArgumentToAdd`); the value is read from the target, not from a table: the literal a config class fills in for
itself (`SchedulerConfig.default_factory` sets `is_encoder_decoder=False`), or the expression
vLLM's engine core passes at its own call site (`Scheduler(block_size=...)` from the cache config),
rewritten in the client's terms (`vllm_config` becomes whatever the client passes as
`vllm_config=`). When no such value exists, or vLLM's own call sites pass different ones (`InputBatch(
max_num_blocks_per_req=[])` where it starts, the filled list where it builds the real one), the finding is left for a
person, and said so. With
`--guard` the argument is passed only where the callee's signature accepts it.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import (
    Fix, FixContext, FixOutcome, Targeted, append_arg, code_of, ensure_import, expr, run_transformer,
)
from driftcheck.probes.missing_argument import ArgumentToAdd
from driftcheck.rules.findings import Finding

FIX = Fix("add-argument", ("DC005",), "Pass a newly required argument with the value the target's engine uses")


class _AddArgument(Targeted):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        mine = self.findings_at(original)
        for f in mine:
            wanted: ArgumentToAdd | None = f.payload
            if wanted is None:
                self.skipped.append((f, "the finding carries no argument to add (a scan from before payloads)"))
                continue
            param, value = wanted.parameter, wanted.value
            if any(a.keyword is not None and a.keyword.value == param for a in updated.args):
                self.applied.append(f)  # already there: nothing to do (idempotent)
                continue
            if value is None:
                self.skipped.append((f, f"no one value for '{param}' in the target's own code (none found, or its call "
                                        "sites pass different ones): pass it by hand"))
                continue
            if self.ctx.guard:
                callee = code_of(updated.func)
                arg = cst.Arg(value=expr(f'({{"{param}": {value.code}}} if "{param}" in __import__("inspect").signature({callee}).parameters else {{}})'),
                              star="**")
            else:
                arg = cst.Arg(keyword=cst.Name(param), value=expr(value.code),
                              equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            updated = updated.with_changes(args=append_arg(list(updated.args), arg))
            self.applied.append(f)
        return updated


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    outcome = run_transformer(source, _AddArgument(findings, ctx))
    needed: list[tuple[str, str]] = []
    for f in outcome.applied:
        v = f.payload.value if f.payload is not None else None
        if v is not None:
            outcome.notes.append(f"{f.payload.parameter}={v.code}  ({v.how}, {v.path}:{v.line})")
            needed += v.imports
    if needed:
        module = cst.parse_module(outcome.source)
        for from_module, name in needed:
            module = ensure_import(module, from_module, name)
        outcome.source = module.code
    return outcome
