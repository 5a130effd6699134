"""What a fix module builds on: locating a finding's node in a libcst tree, the fix contract, and the editing
helpers several fixes share (a fix never imports another fix: shared helpers live here).

Contract (see fixes/__init__.py): a fix module defines `FIX` (a `Fix`) and
`transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome`. It edits only
what its findings point at; libcst keeps every other byte (comments, formatting) as it was.
Findings locate nodes by the client line and column that `ast` reported (columns 1-based).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from driftcheck.rules.findings import Finding

SAFE, UNSAFE = "safe", "unsafe"


@dataclass(frozen=True)
class Fix:
    id: str
    rules: tuple[str, ...]
    title: str
    applicability: str = SAFE  # safe: makes the code do what the target's own engine does; unsafe: a choice to review


@dataclass
class FixContext:
    api: Any  # the target's ApiIndex
    client_file: str  # path relative to the client root
    guard: bool = False  # emit a compatibility guard instead of a rewrite, where the fix supports it


@dataclass
class FixOutcome:
    source: str
    applied: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the fix chose and why, for the diff summary


def parse(source: str) -> cst.Module:
    return cst.parse_module(source)


def at(pos: CodeRange, finding: Finding) -> bool:
    """Does this node start where the finding's client location starts?"""
    loc = finding.client
    if loc is None or pos.start.line != loc.line:
        return False
    return loc.col is None or pos.start.column == loc.col - 1


class Targeted(cst.CSTTransformer):
    """A transformer that knows node positions and the findings it should act on."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, findings: list[Finding], ctx: FixContext):
        super().__init__()
        self.findings = findings
        self.ctx = ctx
        self.applied: list[Finding] = []
        self.skipped: list[tuple[Finding, str]] = []

    def position(self, node: cst.CSTNode) -> CodeRange:
        return self.get_metadata(PositionProvider, node)

    def finding_at(self, node: cst.CSTNode) -> Finding | None:
        found = self.findings_at(node)
        return found[0] if found else None

    def findings_at(self, node: cst.CSTNode) -> list[Finding]:
        """Every finding (not yet applied) that starts where this node starts."""
        pos = self.position(node)
        return [f for f in self.findings if at(pos, f) and f not in self.applied]


def run_transformer(source: str, transformer: Targeted) -> FixOutcome:
    module = MetadataWrapper(parse(source))
    new = module.visit(transformer)
    skipped = list(transformer.skipped)
    done = {id(f) for f in transformer.applied} | {id(f) for f, _ in skipped}
    for f in transformer.findings:
        if id(f) not in done:
            skipped.append((f, "no matching code at the reported location"))
    return FixOutcome(new.code, transformer.applied, skipped)


def expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def ensure_import(module: cst.Module, from_module: str, name: str) -> cst.Module:
    """Add `from from_module import name` after the last top-level import, unless it is there."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None and code_of(small.module) == from_module \
                        and not isinstance(small.names, cst.ImportStar) and any(code_of(a.name) == name for a in small.names):
                    return module
    return insert_after_imports(module, cst.parse_statement(f"from {from_module} import {name}\n"))


def insert_after_imports(module: cst.Module, statement: cst.BaseStatement) -> cst.Module:
    """Insert a top-level statement right after the module's last top-level import."""
    body = list(module.body)
    last_import = 0
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            last_import = i + 1
    body.insert(last_import, statement)
    return module.with_changes(body=body)


def append_arg(args: list[cst.Arg], new: cst.Arg) -> list[cst.Arg]:
    """Append before any **kwargs, copying the call's comma and line style."""
    out = list(args)
    insert_at = len(out)
    while insert_at > 0 and out[insert_at - 1].star == "**":
        insert_at -= 1
    if insert_at == 0:
        return [new.with_changes(comma=cst.MaybeSentinel.DEFAULT if not out else cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))] + out
    prev = out[insert_at - 1]
    between = out[insert_at - 2].comma if insert_at >= 2 and isinstance(out[insert_at - 2].comma, cst.Comma) else None
    if isinstance(prev.comma, cst.Comma):
        # `prev,` followed by newline (trailing comma style) or by the next argument
        new = new.with_changes(comma=prev.comma)
        prev = prev.with_changes(comma=between or cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    else:
        prev = prev.with_changes(comma=between or cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    out[insert_at - 1] = prev
    out.insert(insert_at, new)
    return out
