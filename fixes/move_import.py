"""move-import (DC001, DC002, DC009): import a name from the module that defines it in the target.

`from vllm.old import X` becomes `from vllm.new import X` when the target defines `X` in
`vllm.new` (found by driftcheck, not from a table). When only some names of the statement moved,
the statement is split so the others keep their module.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, code_of, run_transformer
from driftcheck.rules.findings import Finding

FIX = Fix("move-import", ("DC001", "DC002", "DC009"), "Import from the module that defines the name in the target")


def _dotted(module: str) -> cst.BaseExpression:
    parts = module.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


class _MoveImport(Targeted):
    def leave_SimpleStatementLine(self, original, updated):
        pos = self.position(original)
        mine = [f for f in self.findings if f.client and f.client.line == pos.start.line and f.details.get("moved_to")]
        if not mine or len(updated.body) != 1 or not isinstance(updated.body[0], cst.ImportFrom):
            return updated
        stmt: cst.ImportFrom = updated.body[0]
        if isinstance(stmt.names, cst.ImportStar) or stmt.module is None:
            return updated
        module = code_of(stmt.module)
        moving: dict[str, str] = {}
        for f in mine:
            name = (f.symbol or "").rsplit(".", 1)[-1]
            if f.rule == "DC001":
                for alias in stmt.names:
                    moving[code_of(alias.name)] = f.details["moved_to"]
            else:
                moving[name] = f.details["moved_to"]
        keep = [a for a in stmt.names if code_of(a.name) not in moving]
        moved = [a for a in stmt.names if code_of(a.name) in moving]
        if not moved:
            return updated
        self.applied.extend(mine)
        targets = sorted({moving[code_of(a.name)] for a in moved})
        lines = []
        if keep:
            lines.append(updated.with_changes(body=[stmt.with_changes(names=_fix_commas(keep))]))
        for target in targets:
            names = [a for a in moved if moving[code_of(a.name)] == target]
            new_stmt = stmt.with_changes(module=_dotted(target), names=_fix_commas(names), relative=[])
            lines.append(updated.with_changes(body=[new_stmt], leading_lines=[] if lines else updated.leading_lines))
        _ = module
        return cst.FlattenSentinel(lines) if len(lines) > 1 else lines[0]


def _fix_commas(aliases: list[cst.ImportAlias]) -> list[cst.ImportAlias]:
    out = list(aliases)
    if out:
        out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _MoveImport([f for f in findings if f.details.get("moved_to")], ctx))
