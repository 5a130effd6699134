"""A helper's None as the answer of its probe: `def resolve_layout(cache_config): if not hasattr(cache_config,
"kv_cache_layout"): return None; ...; return name` (redhare 0.6.0, bench/engine_sim.py:427-466) returns None only
where the attribute is missing. Its caller's branch for a value that is not None (`layout = resolve_layout(c)` then
`if layout is None: ... else: B`, `if layout is not None: B`, or `if layout is None: return` before B) runs only on
a vLLM that has it, as the body of `if hasattr(cache_config, "kv_cache_layout"):` does: all of it is guarded (Guard
kind "hasattr" with no names), and so are the private helpers only B calls (`guards._caller_guards`).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of, walk
from driftcheck.client_model.preconditions import helper_called
from driftcheck.client_model.version_checks import test_kind

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _returns_none(node: ast.Return) -> bool:
    return node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)


def _probe_line(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
    """The line of `if not hasattr(...): return None` when that is the helper's only way to return None: every other
    return gives a value and the body does not fall off its end."""
    probe = next((s for s in fn.body if isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
                  and isinstance(s.body[0], ast.Return) and _returns_none(s.body[0])
                  and isinstance(s.test, ast.UnaryOp) and isinstance(s.test.op, ast.Not)
                  and test_kind(s.test.operand, set()) == "hasattr"), None)
    if probe is None or not fn.body or not isinstance(fn.body[-1], (ast.Return, ast.Raise)):
        return None
    inner = {id(n) for f in walk(fn) if f is not fn and isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
             for n in walk(f)}  # returns of nested functions answer for those
    others = [n for n in walk(fn) if isinstance(n, ast.Return) and n is not probe.body[0] and id(n) not in inner]
    return None if any(_returns_none(r) for r in others) else probe.lineno


def _presence(test: ast.expr, name: str) -> bool | None:
    """True: the test holds when `name` is not None (`name is not None`, `name`); False: when it is (`name is None`,
    `not name`); None: another test."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    if negated:
        test = test.operand
    if isinstance(test, ast.Name) and test.id == name:
        return not negated
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) and test.left.id == name \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        return isinstance(test.ops[0], ast.IsNot) != negated
    return None


def _span(body: list[ast.stmt]) -> tuple[int, int]:
    return body[0].lineno, max(s.end_lineno or s.lineno for s in body)


def probed_branches(tree: ast.AST) -> list[tuple[int, int, int]]:
    """(start, end, the helper's probe line) of each caller branch that runs only where the helper's probe passed."""
    helpers = {fn.name: line for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef) if (line := _probe_line(fn))}
    if not helpers:
        return []
    out: list[tuple[int, int, int]] = []
    for owner in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.While, ast.With, ast.Try):
        for block in (getattr(owner, "body", None), getattr(owner, "orelse", None)):
            for i, stmt in enumerate(block or []):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                    continue
                probe = helpers.get(helper_called(stmt.value) or "")
                if probe is None:
                    continue
                name = stmt.targets[0].id
                for j, later in enumerate(block[i + 1:], start=i + 1):
                    if isinstance(later, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in walk(later)):
                        break  # rebound: later tests are about another value
                    present = _presence(later.test, name) if isinstance(later, ast.If) else None
                    if present is None:
                        continue
                    branch = later.body if present else later.orelse
                    if branch:
                        out.append((*_span(branch), probe))
                    exits = later.orelse if present else later.body
                    if exits and isinstance(exits[-1], _EXITS) and j + 1 < len(block):
                        out.append((*_span(block[j + 1:]), probe))  # `if v is None: return` before the rest
    return out
