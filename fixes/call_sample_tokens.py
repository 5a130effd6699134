"""call-sample-tokens (DC103): complete the two-phase step with `sample_tokens(None)`.

`executor.execute_model(out)` as a statement becomes
`if executor.execute_model(out) is None:` / `    executor.sample_tokens(None)`; an assignment
`r = executor.execute_model(out)` is followed by `if r is None:` / `    r = executor.sample_tokens(None)`.
Where execute_model returns the output directly (older vLLM), the `is None` test keeps the old
behaviour, so the rewrite is safe on both.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, code_of, run_transformer
from driftcheck.rules.findings import Finding

FIX = Fix("call-sample-tokens", ("DC103",), "Call sample_tokens(None) after an execute_model() that returned None")


class _SampleTokens(Targeted):
    def leave_SimpleStatementLine(self, original, updated):
        if len(updated.body) != 1:
            return updated
        stmt = updated.body[0]
        call = stmt.value if isinstance(stmt, (cst.Expr, cst.Assign)) else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "execute_model":
            return updated
        f = self.finding_at(original.body[0].value)
        if f is None:
            return updated
        receiver = code_of(call.func.value)
        indent = "    "
        if isinstance(stmt, cst.Expr):
            new = cst.parse_statement(f"if {code_of(call)} is None:\n{indent}{receiver}.sample_tokens(None)\n")
            self.applied.append(f)
            return new.with_changes(leading_lines=updated.leading_lines)
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0].target, cst.Name):
            self.skipped.append((f, "execute_model's result is unpacked; add sample_tokens by hand"))
            return updated
        name = stmt.targets[0].target.value
        follow = cst.parse_statement(f"if {name} is None:\n{indent}{name} = {receiver}.sample_tokens(None)\n")
        self.applied.append(f)
        return cst.FlattenSentinel([updated, follow])


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _SampleTokens(findings, ctx))
