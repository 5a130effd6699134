"""What an `except` clause catches, read once for every pass that asks (the guard pass, the import phase, the
refusals, the preconditions): the names it lists, a file's exception tuples spelled out, the broad classes as ANY."""

from __future__ import annotations

import ast

from driftcheck.astnodes import walk

ANY = "*"  # a bare `except:`, `except Exception` or `except BaseException` catches every drift
_BROAD = {"Exception", "BaseException"}
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def handler_names(handler: ast.ExceptHandler, tuples: dict[str, list[ast.expr]] | None = None) -> set[str]:
    """`tuples`: the file's exception tuples by name (`exception_tuples`): `except VLLM_EXCEPTIONS` catches theirs."""
    if handler.type is None:
        return {ANY}
    elts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = set()
    for e in elts:
        for x in (tuples or {}).get(e.id, [e]) if isinstance(e, ast.Name) else [e]:
            name = x.attr if isinstance(x, ast.Attribute) else x.id if isinstance(x, ast.Name) else None
            if name:
                names.add(ANY if name in _BROAD else name)
    return names


# a raised class is caught by an `except` of itself or of a base class it has (besides the broad ones, ANY)
_CAUGHT_BY = {"ModuleNotFoundError": {"ModuleNotFoundError", "ImportError"},
              "CalledProcessError": {"CalledProcessError", "SubprocessError"}}


def handler_catches(handler: ast.ExceptHandler, raised: str, tuples: dict[str, list[ast.expr]] | None = None) -> bool:
    """Whether `except ...:` catches `raised`: `except ModuleNotFoundError` a missing module only (a name its module
    lacks raises the plain ImportError, which that handler lets through: 25f's F3)."""
    names = handler_names(handler, tuples)
    return ANY in names or bool(names & _CAUGHT_BY.get(raised, {raised}))


def exception_tuples(tree: ast.AST) -> dict[str, list[ast.expr]]:
    """`VLLM_EXCEPTIONS = (ImportError, TypeError, AttributeError)` at the top of a file, the name bound nowhere else
    in it: the exception classes an `except VLLM_EXCEPTIONS:` catches (names and dotted names only)."""
    found: dict[str, list[ast.expr]] = {}
    for stmt in getattr(tree, "body", []):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                isinstance(stmt.value, ast.Tuple) and stmt.value.elts and \
                all(isinstance(e, (ast.Name, ast.Attribute)) for e in stmt.value.elts):
            found[stmt.targets[0].id] = list(stmt.value.elts)
    if found:
        stores: dict[str, int] = {}
        for n in walk(tree):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and n.id in found:
                stores[n.id] = stores.get(n.id, 0) + 1
        found = {k: v for k, v in found.items() if stores.get(k) == 1}
    return found


def only_import_errors(handler: ast.ExceptHandler) -> bool:
    """`except ImportError:` / `except (ImportError, ModuleNotFoundError):`, nothing broader."""
    names = handler_names(handler)
    return bool(names) and names <= _IMPORT_ERRORS
