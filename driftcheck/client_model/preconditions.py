"""Precondition checks: a helper of the client's file that imports the vLLM APIs its caller needs inside `try:` and,
on ImportError, raises its own error (`_require_inprocess_apis(engine)` in tokenspeed-smg-grpc-servicer 0.14.1:
`try: from vllm.transformers_utils.processor import get_video_processor_cls_name / except ImportError as e: raise
ValueError("needs vllm>=0.20.0")`). A call to it as a statement stops the caller where those imports fail, so the rest
of the caller's block runs only where they succeed: the uses of what it checked are guarded, and, where the check
itself certainly fails on the target, nothing after the call is reached (`guards.guard_at`, Guard kind
"precondition", whose `body` is the check's try body).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.except_clauses import handler_catches

@dataclass(frozen=True)
class Precondition:
    helper: str
    names: frozenset[str]  # the vLLM modules and names the check imports
    body: tuple[int, int]  # the lines of its try body


@dataclass(frozen=True)
class CheckedRest:
    start: int  # the rest of the caller's block after the call
    end: int
    call: int  # the line of the call
    check: Precondition


def _is_vllm(module: str | None) -> bool:
    return bool(module) and (module == "vllm" or module.startswith("vllm."))


def _raises_on_import_error(handler: ast.ExceptHandler, exits: tuple[type, ...] = (ast.Raise,)) -> bool:
    return handler_catches(handler, "ModuleNotFoundError") and bool(handler.body) and isinstance(handler.body[-1], exits)


def try_check(stmt: ast.stmt, helper: str = "") -> Precondition | None:
    """`stmt` as a check: a `try:` that imports from vLLM and raises on ImportError (`helper`: the function it is the
    check of; "" for a try inline in the block it guards, `guards._after_import_probe`, where a `return` from the
    handler leaves the block as well)."""
    exits = (ast.Raise,) if helper else (ast.Raise, ast.Return)
    if not isinstance(stmt, ast.Try) or not stmt.body or not any(_raises_on_import_error(h, exits) for h in stmt.handlers):
        return None
    names: set[str] = set()
    for node in stmt.body:
        if isinstance(node, ast.ImportFrom) and not node.level and _is_vllm(node.module):
            names |= {node.module} | {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if _is_vllm(a.name) and a.name != "vllm"}
    if not names:
        return None
    return Precondition(helper, frozenset(names), (stmt.body[0].lineno, max(s.end_lineno or s.lineno for s in stmt.body)))


def _check_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Precondition | None:
    """The first `try:` directly in the helper's body that imports from vLLM and raises on ImportError."""
    return next((c for stmt in fn.body if (c := try_check(stmt, fn.name))), None)


def helper_called(value: ast.expr) -> str | None:
    """The name of the helper of this file a call names: `helper(...)`, `self.helper(...)` or `cls.helper(...)`."""
    if not isinstance(value, ast.Call):
        return None
    f = value.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"):
        return f.attr
    return None


def checked_rests(tree: ast.AST) -> list[CheckedRest]:
    """Each call to a precondition check of this file, with the lines after it that it guards."""
    checks = {fn.name: c for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef) if (c := _check_of(fn))}
    if not checks:
        return []
    out: list[CheckedRest] = []
    for owner in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.While, ast.With, ast.Try):
        for block in (getattr(owner, "body", None), getattr(owner, "orelse", None)):
            for i, stmt in enumerate(block or []):
                check = checks.get(helper_called(stmt.value) or "") if isinstance(stmt, ast.Expr) else None  # a statement
                if check is not None and i + 1 < len(block):
                    end = max(s.end_lineno or s.lineno for s in block[i + 1:])
                    out.append(CheckedRest(block[i + 1].lineno, end, stmt.lineno, check))
    return out


def passing_probes(tree: ast.AST, guards: list, api) -> list:
    """`guards` with each inline import probe (Guard kind "precondition" without a helper) whose every import
    certainly works on the target marked `test="passes"`: the rest of its block runs there, so the probe guards only
    the uses of what it imported, as `if hasattr(m, "x"):` guards only `x` (batch 19d's PB1: cpu_serving's `from
    vllm import utils` works on every release, and avp's `FlashAttentionMetadata` import works at 0.33.0, where the
    call after it raises TypeError). An import driftcheck cannot decide (a module `__getattr__`, a star import)
    leaves the probe as it was: the rest may not run there."""
    import dataclasses

    from driftcheck.vllm_model.resolved import Missing, Unknown

    probes = [g for g in guards if g.kind == "precondition" and not g.where and g.test != "passes"]
    if not probes:
        return guards
    tries = {t.lineno: t for t in nodes_of(tree, ast.Try)}

    def works(stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Import):
            return all(api.module(a.name) is not None for a in stmt.names if _is_vllm(a.name))
        if not isinstance(stmt, ast.ImportFrom) or stmt.level or not _is_vllm(stmt.module):
            return False
        if api.module(stmt.module) is None:
            return False
        return all(a.name != "*" and not isinstance(api.resolve(f"{stmt.module}.{a.name}"), (Missing, Unknown))
                   for a in stmt.names)

    passing = {g for g in probes if g.line in tries and all(works(s) for s in tries[g.line].body)}
    return [dataclasses.replace(g, test="passes") if g in passing else g for g in guards]
