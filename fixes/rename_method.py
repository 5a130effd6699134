"""rename-method (DC008): call the target's new name for a renamed method or attribute.

`self.get_input_embeddings(input_ids)` becomes `self.embed_input_ids(input_ids)` when the classes
that match the receiver dropped the old name and gained the new one (vLLM 0.11.1). With
`--guard`: `(self.embed_input_ids if hasattr(self, "embed_input_ids") else self.get_input_embeddings)`.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, code_of, expr, run_transformer
from driftcheck.rules.findings import Finding

FIX = Fix("rename-method", ("DC008",), "Use the target's new name for a renamed method or attribute")


class _Rename(Targeted):
    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        f = self.finding_at(original)
        if f is None:
            return updated
        new = f.details.get("renamed_to")
        old = f.symbol.rsplit(".", 1)[-1] if f.symbol else None
        if not new or updated.attr.value != old:
            self.skipped.append((f, "no known new name" if not new else f"attribute is not '{old}'"))
            return updated
        self.applied.append(f)
        if self.ctx.guard:
            receiver = code_of(updated.value)
            return expr(f'({receiver}.{new} if hasattr({receiver}, "{new}") else {receiver}.{old})')
        return updated.with_changes(attr=cst.Name(new))


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _Rename([f for f in findings if f.details.get("renamed_to")], ctx))
