"""tensor-truthiness (DC105): test for None and emptiness explicitly instead of `bool(tensor)`.

`if not x:` becomes `if x is None or len(x) == 0:` and `if x:` becomes
`if x is not None and len(x) > 0:`; both mean the same for lists and work for tensors.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, code_of, expr, run_transformer
from driftcheck.rules.findings import Finding

FIX = Fix("tensor-truthiness", ("DC105",), "Replace a truthiness test on a tensor with None/len checks")


def _rewrite(test: cst.BaseExpression, parens: bool) -> cst.BaseExpression | None:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        name = code_of(test.expression)
        new = f"{name} is None or len({name}) == 0"
    elif isinstance(test, (cst.Name, cst.Attribute)):
        name = code_of(test)
        new = f"{name} is not None and len({name}) > 0"
    else:
        return None
    return expr(f"({new})" if parens else new)


class _Truthiness(Targeted):
    def _fix_test(self, node, updated, field: str, parens: bool):
        test = getattr(updated, field)
        f = self.finding_at(getattr(node, field))
        if f is None:
            return updated
        new = _rewrite(test, parens)
        if new is None:
            self.skipped.append((f, "not a plain `x` / `not x` test"))
            return updated
        self.applied.append(f)
        return updated.with_changes(**{field: new})

    def leave_If(self, original, updated):
        return self._fix_test(original, updated, "test", parens=False)

    def leave_While(self, original, updated):
        return self._fix_test(original, updated, "test", parens=False)

    def leave_Assert(self, original, updated):
        return self._fix_test(original, updated, "test", parens=False)

    def leave_IfExp(self, original, updated):
        return self._fix_test(original, updated, "test", parens=True)


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _Truthiness(findings, ctx))
