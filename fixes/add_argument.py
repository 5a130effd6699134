"""add-argument (DC005): pass a parameter the target requires, with the value its own engine uses.

The value is read from the target, not from a table: the literal a config class fills in for
itself (`SchedulerConfig.default_factory` sets `is_encoder_decoder=False`), or the expression
vLLM's engine core passes at its own call site (`Scheduler(block_size=...)` from the cache config),
rewritten in the client's terms (`vllm_config` becomes whatever the client passes as
`vllm_config=`). When no such value exists the finding is left for a person, and said so. With
`--guard` the argument is passed only where the callee's signature accepts it.
"""

from __future__ import annotations

import ast

import libcst as cst

from driftcheck.vllm_model.resolved import Resolved
from driftcheck.fix.codemod import (
    Fix, FixContext, FixOutcome, Targeted, append_arg, code_of, ensure_import, expr, run_transformer,
)
from driftcheck.vllm_model.engine_values import engine_value
from driftcheck.rules.findings import Finding
from driftcheck.vllm_model.signatures import Signature

FIX = Fix("add-argument", ("DC005",), "Pass a newly required argument with the value the target's engine uses")


class _AddArgument(Targeted):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        mine = self.findings_at(original)
        for f in mine:
            param = f.details.get("parameter")
            if any(a.keyword is not None and a.keyword.value == param for a in updated.args):
                self.applied.append(f)  # already there: nothing to do (idempotent)
                continue
            value = self.ctx.extras.get("values", {}).get(id(f))
            if value is None:
                self.skipped.append((f, f"no value for '{param}' found in the target's own code: pass it by hand"))
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


def _find_values(source: str, findings: list[Finding], ctx: FixContext) -> dict[int, object]:
    """Look up each finding's value in the target (needs the ast call node for the client's arguments)."""
    tree = ast.parse(source)
    calls = {(n.lineno, n.col_offset + 1): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    values = {}
    for f in findings:
        call = calls.get((f.client.line, f.client.col)) if f.client else None
        qual = (f.symbol or "").split("(")[0]
        target = ctx.api.resolve(qual) if qual else None
        if call is None or not isinstance(target, Resolved):
            continue
        sig = ctx.api.constructor(target) if target.kind == "class" else (
            target.func.signature.without_first() if target.kind == "method" and target.func else target.func.signature if target.func else None)
        if not isinstance(sig, Signature):
            continue
        value = engine_value(ctx.api, target, sig, f.details.get("parameter"), call)
        if value is not None:
            values[id(f)] = value
    return values


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    ctx.extras["values"] = _find_values(source, findings, ctx)
    outcome = run_transformer(source, _AddArgument(findings, ctx))
    notes = ctx.extras.setdefault("notes", [])
    needed: list[tuple[str, str]] = []
    for f in outcome.applied:
        v = ctx.extras["values"].get(id(f))
        if v is not None:
            notes.append(f"{f.details.get('parameter')}={v.code}  ({v.how}, {v.path}:{v.line})")
            needed += v.imports
    if needed:
        module = cst.parse_module(outcome.source)
        for from_module, name in needed:
            module = ensure_import(module, from_module, name)
        outcome.source = module.code
    return outcome
