"""unwrap-unique-reply (DC104): stop indexing the single reply of `collective_rpc(..., unique_reply_rank=r)`.

`captured_states_list[0]` becomes `captured_states_list`: from vLLM 0.12 the call returns rank
r's reply itself. There is no `--guard` form: a list reply and a single reply that is itself a list
cannot be told apart at run time; gate on the vLLM version if both must work.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, run_transformer
from driftcheck.rules.findings import Finding

FIX = Fix("unwrap-unique-reply", ("DC104",), "Use the single reply of collective_rpc(unique_reply_rank=) as is")


class _Unwrap(Targeted):
    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        f = self.finding_at(original)
        if f is None:
            return updated
        if self.ctx.guard:
            self.skipped.append((f, "no guard form for a reply-shape change; gate on the vLLM version"))
            return updated
        self.applied.append(f)
        return updated.value.with_changes(lpar=updated.lpar, rpar=updated.rpar) if updated.lpar else updated.value


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _Unwrap(findings, ctx))
