"""The classes an `isinstance` test has narrowed an expression to where it is used: inside `if isinstance(x, C):`,
after `if not isinstance(x, C): return` (or `raise`, `continue`, `break`) and after `assert isinstance(x, C)`.

A member only some of a base's subclasses define is no drift where the code has just checked that the object is a
class declaring it: vLLM's own scheduler does `if not isinstance(self.connector, SupportsHMA): return` and then calls
`self.connector.request_finished_all_groups(...)`, which the mixin `SupportsHMA` declares (F2, CARD's copy of it).
Only the expression as written is followed (`self.connector`, `x`), and only in the function that tests it.
"""

from __future__ import annotations

import ast
import weakref

from driftcheck.astnodes import dotted_name, functions_at, nodes_of, walk

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def predicates(tree: ast.Module) -> dict[tuple[bool, str], tuple[int, ast.expr]]:
    """The file's one-line isinstance predicates (26b VB1, cascade's `def _is_disk_cache_meta(self, meta): return
    isinstance(meta, DiskCacheMeta)`): (is a method, name) -> (the argument's index in a call, the classes). A call
    of one tests its argument as the `isinstance` would. A name defined twice with other bodies is left out."""
    kept = _PREDICATES.get(tree)
    if kept is not None:
        return kept
    out: dict[tuple[bool, str], tuple[int, ast.expr, bool] | None] = {}
    methods = {id(f) for c in walk(tree) if isinstance(c, ast.ClassDef) for f in c.body}
    for fn in walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant) \
            else fn.body
        method = id(fn) in methods and not any(dotted_name(d) == "staticmethod" for d in fn.decorator_list)
        key = (method, fn.name)
        call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args][1 if method else 0:]
        wrapped = any(dotted_name(d) != "staticmethod" for d in fn.decorator_list)  # a property, a cache, ...
        guarded = _type_guard(fn.returns)
        if not wrapped and guarded is not None and params:
            # `def _is_block_fp8(qc) -> TypeGuard[Fp8Config]`: True says its first argument is one (29d R1: vLLM
            # 0.30.0's bailing_moe_v3); False says nothing (its body may test more than the class)
            found = (0, guarded, False)
        elif wrapped or not (_is_isinstance(call) and isinstance(call.args[0], ast.Name) and call.args[0].id in params):
            if key in out:
                out[key] = None
            continue
        else:
            found = (params.index(call.args[0].id), call.args[1], True)
        out[key] = found if key not in out or out[key] == found else None
    table = _PREDICATES[tree] = {k: v for k, v in out.items() if v is not None}
    return table


_PREDICATES: "weakref.WeakKeyDictionary[ast.Module, dict]" = weakref.WeakKeyDictionary()  # once per file, while it lives


def _type_guard(returns: ast.expr | None) -> ast.expr | None:
    """The class a `-> TypeGuard[C]` / `-> TypeIs[C]` return annotation names (typing's or typing_extensions')."""
    if isinstance(returns, ast.Subscript) and (dotted_name(returns.value) or "").rsplit(".", 1)[-1] in ("TypeGuard", "TypeIs"):
        return returns.slice
    return None


def _is_isinstance(call) -> bool:
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance" \
        and len(call.args) == 2 and not call.keywords


def predicate_test(call: ast.expr, preds: dict, exact: bool = False) -> tuple[ast.expr, ast.expr] | None:
    """(the expression tested, the classes) of `isinstance(x, C)` or of a call of a predicate of the file
    (`self._is_meta(x)`, `is_meta(x)`); `exact`: only a test whose False also says the object is none of those (not a
    TypeGuard's). A walrus tested (`isinstance(spec := f(g), MambaSpec)`) tests the name it binds (29d R2)."""
    if _is_isinstance(call):
        tested = call.args[0]
        return (tested.target if isinstance(tested, ast.NamedExpr) else tested), call.args[1]
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    func = call.func
    key = (True, func.attr) if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
        func.value.id in ("self", "cls") else (False, func.id) if isinstance(func, ast.Name) else None
    found = preds.get(key) if key else None
    if found is None or found[0] >= len(call.args) or (exact and not found[2]):
        return None
    tested = call.args[found[0]]
    return (tested.target if isinstance(tested, ast.NamedExpr) else tested), found[1]


def _tested(test: ast.expr, receiver: str, negated: bool, preds: dict, exact: bool = False) -> list[list[ast.expr]]:
    """The class groups `test` proves `receiver` an instance of when it holds (`negated`: when it fails): `isinstance(r,
    C)` (or a call of the file's predicate doing it) and the terms of an `and` when it holds; `not isinstance(r, C)` and
    the terms of an `or` when it fails. `exact`: only tests whose failing also proves the receiver none of them."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
        return [g for value in test.values for g in _tested(value, receiver, negated, preds, exact)]
    if negated:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return []
        test = test.operand
    found = predicate_test(test, preds, exact)
    if found is not None and ast.unparse(found[0]) == receiver:
        classes = found[1]
        return [list(classes.elts) if isinstance(classes, ast.Tuple) else [classes]]
    return []


def _holds(stmt: ast.stmt, line: int) -> bool:
    return stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)


def _tests_around(tree: ast.Module, line: int):
    """(test, whether it held) for each test the code at `line` runs only after: an enclosing `if`'s (True in its
    body, False in its `else`), an earlier exiting `if` without `else` of the same block (False: the rest runs when it
    failed) and an earlier `assert` (True)."""
    around = functions_at(tree, line)
    todo = [around[-1].body] if around else []
    while todo:
        block = todo.pop()
        for i, stmt in enumerate(block):
            if stmt.lineno > line:
                break
            later = any(_holds(s, line) for s in block[i + 1:])
            if isinstance(stmt, ast.If) and stmt.body and later and isinstance(stmt.body[-1], _EXITS) and not stmt.orelse:
                yield stmt.test, False
            elif isinstance(stmt, ast.Assert) and later:
                yield stmt.test, True
            if not _holds(stmt, line) or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.If):
                if any(_holds(s, line) for s in stmt.body):
                    yield stmt.test, True
                    todo.append(stmt.body)
                elif any(_holds(s, line) for s in stmt.orelse):
                    yield stmt.test, False
                    todo.append(stmt.orelse)
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):  # a handler's own body is its "body"
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and any(_holds(s, line) for s in inner):
                    todo.append(inner)


def _short_circuits(tree: ast.Module, node: ast.AST):
    """(test, whether it held) for each term of an `and` (held) or an `or` (failed) before the one holding `node`:
    `isinstance(self.spec, MLAAttentionSpec) and self.spec.model_version` reads the member only where the test held
    (28c FW2: vLLM's own MLA indexer)."""
    around = functions_at(tree, node.lineno)
    for op in nodes_of(around[-1] if around else tree, ast.BoolOp):
        if not op.lineno <= node.lineno <= (op.end_lineno or op.lineno):
            continue
        for i, value in enumerate(op.values[1:], 1):
            if any(n is node for n in walk(value)):
                yield from ((earlier, isinstance(op.op, ast.And)) for earlier in op.values[:i])
                break


def tests_before(tree: ast.Module, node: ast.AST) -> list[ast.expr]:
    """Every test the code at `node` runs only after, whichever way it came out: an enclosing `if`'s, an earlier
    exiting `if`'s, an `assert`'s, an earlier term of an `and` / `or` around it."""
    return [test for test, _held in (*_tests_around(tree, node.lineno), *_short_circuits(tree, node))]


def narrowing_classes(tree: ast.Module, node: ast.Attribute) -> list[list[ast.expr]]:
    """For the receiver of `node` (`x` of `x.m`), each group of class expressions an enclosing test, an earlier
    exiting test of its function or an earlier term of an `and` around it proves it an instance of one of (a tuple's
    classes form one group)."""
    receiver, preds = ast.unparse(node.value), predicates(tree)
    return [g for test, held in (*_tests_around(tree, node.lineno), *_short_circuits(tree, node))
            for g in _tested(test, receiver, not held, preds)]


def excluded_classes(tree: ast.Module, node: ast.Attribute) -> list[ast.expr]:
    """The class expressions an earlier test proves the receiver of `node` is NOT an instance of: the `elif` / `else`
    of `if isinstance(x, A):`, or the lines after `if isinstance(x, A): return` (27c F1: V0/V1 dispatch code whose
    `elif isinstance(engine, AsyncLLMEngine):` branch never runs where `AsyncLLMEngine` is `AsyncLLM`, the first test's
    class)."""
    receiver, preds = ast.unparse(node.value), predicates(tree)
    return [c for test, held in _tests_around(tree, node.lineno) if not held
            for g in _tested(test, receiver, False, preds, exact=True) for c in g]


_TESTED: "weakref.WeakKeyDictionary[ast.Module, frozenset[str]]" = weakref.WeakKeyDictionary()


def tested_receivers(tree: ast.Module) -> frozenset[str]:
    """The expressions (a name, or `name.attr`) the file tests with `isinstance` or one of its predicates, as written:
    where no test names a receiver, no test narrows it (read once per file)."""
    kept = _TESTED.get(tree)
    if kept is None:
        preds = predicates(tree)
        out = set()
        for call in nodes_of(tree, ast.Call):
            found = predicate_test(call, preds)
            if found is not None and receiver_key(found[0]):
                out.add(receiver_key(found[0]))
        kept = _TESTED[tree] = frozenset(out)
    return kept


def receiver_key(expr: ast.expr) -> str:
    """`x` or `x.attr` as written; "" for any other expression."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        return f"{expr.value.id}.{expr.attr}"
    return ""
