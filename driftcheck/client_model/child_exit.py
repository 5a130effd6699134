"""What a client does when a command it starts with `subprocess` fails.

A launch of vLLM (`python -m vllm.x`, `vllm serve --flag`) that the target rejects fails in the child: the client's
line goes on unless the call raises on the exit status (`check=True`, `check_call`, `check_output`). So a `try` around
`subprocess.Popen` / `run` handles nothing of the child's failure (mini-r1's `Popen` of `vllm serve`), while a client
that reads the exit status (`if out.returncode != 0: return {"available": False}`, 25f's F2 in genesis) or catches
what a raising call raises handles it: the command still fails, the client's code does not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from driftcheck.astnodes import dotted_name, own_scope, walk
from driftcheck.client_model.except_clauses import handler_catches

_STARTERS = {"run", "Popen", "call", "check_call", "check_output"}
_RAISING = {"check_call", "check_output"}
_STATUS = {"returncode", "wait", "poll"}  # what tells the parent how the child ended
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)


@dataclass(frozen=True)
class ChildLaunch:
    line: int  # the subprocess call's first line
    raises: bool  # the call raises CalledProcessError when the child fails
    handled: str  # how the client handles the child's failure ("" where it does not)


def child_launch(tree: ast.Module, line: int) -> ChildLaunch | None:
    """The `subprocess` call whose arguments hold `line` (the innermost), or None where the launch is not one."""
    names = _subprocess_names(tree)
    if not names:
        return None
    best: tuple[ast.Call, list[ast.AST]] | None = None
    for scope in [tree, *(n for n in walk(tree) if isinstance(n, _SCOPES[:2]))]:
        for node in own_scope(scope):
            if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno) and \
                    _starter(node, names) and (best is None or node.lineno >= best[0].lineno):
                best = (node, [scope])
    if best is None:
        best = _launched_list(tree, line, names)  # `cmd = [sys.executable, "-m", "vllm.x", ...]` then `run(cmd)`
    if best is None:
        return None
    call, (scope,) = best
    raises = _starter(call, names) in _RAISING or any(k.arg == "check" and isinstance(k.value, ast.Constant) and
                                                      k.value.value is True for k in call.keywords)
    handled = _caught(scope, call) if raises else _status_read(scope, call, _starter(call, names))
    return ChildLaunch(call.lineno, raises, handled)


def _launched_list(tree: ast.Module, line: int, names: dict[str, str]) -> tuple[ast.Call, list[ast.AST]] | None:
    """The subprocess call of the scope that hands it a list a name there holds, the list spanning `line` (26p)."""
    for scope in [tree, *(n for n in walk(tree) if isinstance(n, _SCOPES[:2]))]:
        nodes = own_scope(scope)
        held = {t.id for n in nodes if isinstance(n, ast.Assign) and n.lineno <= line <= (n.end_lineno or n.lineno)
                for t in n.targets if isinstance(t, ast.Name)}
        for node in nodes if held else ():
            if isinstance(node, ast.Call) and _starter(node, names) and any(
                    isinstance(a, ast.Name) and a.id in held for a in [*node.args[:1], *(k.value for k in node.keywords
                                                                                     if k.arg == "args")]):
                return node, [scope]
    return None


def _subprocess_names(tree: ast.Module) -> dict[str, str]:
    """Local name -> what it is: "subprocess" for the module, a function name for one imported from it."""
    out: dict[str, str] = {}
    for node in walk(tree):
        if isinstance(node, ast.Import):
            out.update({a.asname or a.name: "subprocess" for a in node.names if a.name == "subprocess"})
        elif isinstance(node, ast.ImportFrom) and node.module == "subprocess" and not node.level:
            out.update({a.asname or a.name: a.name for a in node.names if a.name in _STARTERS})
    return out


def _starter(call: ast.Call, names: dict[str, str]) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return names.get(func.id, "") if names.get(func.id) != "subprocess" else ""
    if isinstance(func, ast.Attribute) and func.attr in _STARTERS and isinstance(func.value, ast.Name) and \
            names.get(func.value.id) == "subprocess":
        return func.attr
    return ""


def _caught(scope: ast.AST, call: ast.Call) -> str:
    """A `try` of the scope whose body holds the raising call and a handler catching CalledProcessError."""
    for node in own_scope(scope):
        if isinstance(node, ast.Try) and node.body and node.body[0].lineno <= call.lineno <= \
                max(s.end_lineno or s.lineno for s in node.body):
            if any(handler_catches(h, "CalledProcessError") for h in node.handlers):
                return (f"inside a try (line {node.lineno}) that catches the CalledProcessError the call raises when "
                        "the command fails")
    return ""


def _status_read(scope: ast.AST, call: ast.Call, starter: str) -> str:
    """Where the scope acts on the child's failure without failing itself: a test of its exit status (`if
    out.returncode != 0:`, `if proc.wait():`, `if subprocess.call(...) != 0:`) whose branch does not raise or exit, or
    the status handed on (`return out.returncode == 0`). `proc.poll() is None` asks whether it still runs, not how it
    ended (mini-r1's cleanup of its server), and a branch that raises fails as the child did."""
    nodes = own_scope(scope)
    bound: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and node.value is call:
            bound |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.withitem) and node.context_expr is call and isinstance(node.optional_vars, ast.Name):
            bound.add(node.optional_vars.id)

    def child(expr: ast.expr) -> bool:
        return expr is call or isinstance(expr, ast.Name) and expr.id in bound

    def status(expr: ast.expr) -> bool:  # the exit status itself
        if isinstance(expr, ast.Attribute) and expr.attr == "returncode":
            return child(expr.value)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("wait", "poll"):
            return child(expr.func.value)
        return starter == "call" and child(expr)  # `subprocess.call` returns the status

    def tests_status(test: ast.expr) -> bool:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return tests_status(test.operand)
        if isinstance(test, ast.BoolOp):
            return any(tests_status(v) for v in test.values)
        if isinstance(test, ast.Compare):
            return status(test.left) and all(isinstance(c, ast.Constant) and type(c.value) is int for c in test.comparators)
        return status(test)

    for node in nodes:
        if isinstance(node, (ast.If, ast.While)) and node.lineno >= call.lineno and tests_status(node.test) and \
                not _fails(node.body):
            return f"the client tests its exit status (line {node.lineno}) and carries on"
        if isinstance(node, ast.Return) and node.value is not None and node.lineno >= call.lineno and \
                any(status(sub) for sub in walk(node.value)):
            return f"the client returns its exit status (line {node.lineno})"
    return ""


def _fails(body: list[ast.stmt]) -> bool:
    """A branch that ends by raising or exiting the process: the client fails there too."""
    last = body[-1]
    if isinstance(last, ast.Raise):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
        (dotted_name(last.value.func) or "") in ("sys.exit", "exit", "os._exit", "quit")
