"""The classes an `isinstance` test has narrowed an expression to where it is used: inside `if isinstance(x, C):`,
after `if not isinstance(x, C): return` (or `raise`, `continue`, `break`) and after `assert isinstance(x, C)`.

A member only some of a base's subclasses define is no drift where the code has just checked that the object is a
class declaring it: vLLM's own scheduler does `if not isinstance(self.connector, SupportsHMA): return` and then calls
`self.connector.request_finished_all_groups(...)`, which the mixin `SupportsHMA` declares (F2, CARD's copy of it).
Only the expression as written is followed (`self.connector`, `x`), and only in the function that tests it.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import functions_at

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _tested(test: ast.expr, receiver: str, negated: bool) -> list[list[ast.expr]]:
    """The class groups `test` proves `receiver` an instance of when it holds (`negated`: when it fails): `isinstance(r,
    C)` and the terms of an `and` when it holds; `not isinstance(r, C)` and the terms of an `or` when it fails."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
        return [g for value in test.values for g in _tested(value, receiver, negated)]
    if negated:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return []
        test = test.operand
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2 and not test.keywords and ast.unparse(test.args[0]) == receiver:
        classes = test.args[1]
        return [list(classes.elts) if isinstance(classes, ast.Tuple) else [classes]]
    return []


def _holds(stmt: ast.stmt, line: int) -> bool:
    return stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)


def narrowing_classes(tree: ast.Module, node: ast.Attribute) -> list[list[ast.expr]]:
    """For the receiver of `node` (`x` of `x.m`), each group of class expressions an enclosing test or an earlier
    exiting test of its function proves it an instance of one of (a tuple's classes form one group)."""
    receiver = ast.unparse(node.value)
    line = node.lineno
    around = functions_at(tree, line)
    if not around:
        return []
    out: list[list[ast.expr]] = []
    todo = [around[-1].body]
    while todo:
        block = todo.pop()
        for i, stmt in enumerate(block):
            if stmt.lineno > line:
                break
            later = any(_holds(s, line) for s in block[i + 1:])
            if isinstance(stmt, ast.If) and stmt.body and later and isinstance(stmt.body[-1], _EXITS) and not stmt.orelse:
                out += _tested(stmt.test, receiver, negated=True)
            elif isinstance(stmt, ast.Assert) and later:
                out += _tested(stmt.test, receiver, negated=False)
            if not _holds(stmt, line) or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.If):
                if any(_holds(s, line) for s in stmt.body):
                    out += _tested(stmt.test, receiver, negated=False)
                    todo.append(stmt.body)
                elif any(_holds(s, line) for s in stmt.orelse):
                    out += _tested(stmt.test, receiver, negated=True)
                    todo.append(stmt.orelse)
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):  # a handler's own body is its "body"
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and any(_holds(s, line) for s in inner):
                    todo.append(inner)
    return out
