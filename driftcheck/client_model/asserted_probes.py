"""Import-time probes by assertion: `try: from vllm import _custom_ops as ops; assert hasattr(ops,
"gptq_marlin_gemm"); AVAILABLE = True; except (ImportError, AttributeError, AssertionError): AVAILABLE = False`
(llm-infer 0.8.0, engines/native/backends/linear/kernels/awq_marlin.py:30-46).

The module checks at import whether the attribute exists and records the answer; its uses of the attribute sit
behind that record (there `is_available()` returns the flag, and the registry builds the backend only when it says
yes), a path driftcheck does not follow. So a use of a probed name in that file is guarded as under `if
hasattr(ops, "gptq_marlin_gemm"):`: a warning at most. Only module-level `try` statements whose handlers catch
AssertionError (or everything) and do not re-raise count: an assertion that escapes, or one inside a function,
records nothing for the rest of the file.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name

_CATCH = {"AssertionError", "Exception", "BaseException"}


def _catches_assertion(handler: ast.ExceptHandler) -> bool:
    if handler.body and isinstance(handler.body[-1], ast.Raise):
        return False
    if handler.type is None:
        return True
    elts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else None) in _CATCH
               for e in elts)


def _probed_names(test: ast.expr) -> list[tuple[str, str]]:
    """(object, attribute) pairs `assert hasattr(obj, "a") and hasattr(obj, "b")` requires."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    out = []
    for p in parts:
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "hasattr" and len(p.args) == 2 \
                and isinstance(p.args[1], ast.Constant) and isinstance(p.args[1].value, str):
            out.append((dotted_name(p.args[0]) or "?", p.args[1].value))
    return out


def asserted_probes(tree: ast.AST) -> list[tuple[int, str, str, int]]:
    """(assert line, object, attribute, try line) for each import-time `assert hasattr(obj, "attr")` whose failure
    a module-level try catches."""
    out = []
    for node in getattr(tree, "body", []):
        if not isinstance(node, ast.Try) or not any(_catches_assertion(h) for h in node.handlers):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.Assert):
                out += [(stmt.lineno, obj, attr, node.lineno) for obj, attr in _probed_names(stmt.test)]
    return out
