"""Members of a standard-library class a vLLM class derives from (`FlexibleArgumentParser(argparse.ArgumentParser)`,
`MultiModalDataItems(UserDict)`), read with `ast` from the running Python's own standard library: its methods, class
attributes and the `self.x = ...` of its methods, along its bases in the standard library. Only a positive answer is
used (the member exists); a name not found stays unknown, as a class implemented in C (`ctypes.Structure`) or a base
outside the sources read may still have it. Nothing is imported but a module compiled into the interpreter that a
standard-library module re-exports a class from (`collections.deque`, from `_collections`), read with `dir()`.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import sys
import sysconfig
from pathlib import Path

_MAX_DEPTH = 12


@functools.lru_cache(maxsize=None)
def _module_tree(module: str) -> ast.Module | None:
    if module.split(".")[0] not in sys.stdlib_module_names:
        return None
    root = Path(sysconfig.get_paths()["stdlib"])
    rel = Path(*module.split("."))
    for path in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
        if path.is_file():
            try:
                return ast.parse(path.read_text(encoding="utf-8", errors="replace"))
            except (SyntaxError, ValueError, RecursionError, OSError):
                return None
    return None


def _class_and_scope(module: str, name: str, depth: int) -> tuple[ast.ClassDef, str] | None:
    """The `class name` a standard-library module defines, or re-exports through `from x import name`."""
    tree = _module_tree(module)
    if tree is None or depth > _MAX_DEPTH:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node, module
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _class_and_scope(node.module, alias.name, depth + 1)
    return None


def _base_qualname(module: str, expr: ast.expr) -> str | None:
    """A base as written in `module` -> `module.Class` (a local class, `from m import C`, `import m` + `m.C`)."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.insert(0, expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Subscript):
        return _base_qualname(module, expr.value)
    if not isinstance(expr, ast.Name):
        return None
    parts.insert(0, expr.id)
    tree = _module_tree(module)
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == parts[0]:
                    return ".".join([node.module, alias.name, *parts[1:]])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if (alias.asname or alias.name) == parts[0]:
                    return ".".join([alias.name, *parts[1:]])
    if len(parts) != 1:
        return None
    local = any(isinstance(n, ast.ClassDef) and n.name == parts[0] for n in (tree.body if tree is not None else ()))
    return f"builtins.{parts[0]}" if not local and isinstance(getattr(builtins, parts[0], None), type) else f"{module}.{parts[0]}"


def _members_of(node: ast.ClassDef) -> set[str]:
    out: set[str] = set()
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        out.add(t.id)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.args.args:
            me = stmt.args.args[0].arg
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) \
                        and isinstance(sub.value, ast.Name) and sub.value.id == me:
                    out.add(sub.attr)
    return out


def _builtin_module_class(module: str, name: str) -> object:
    """A class the standard library implements in a module compiled into the interpreter, which its Python module
    re-exports, also under a top-level `try` (`collections.deque` from `_collections`, JC5): read with `dir()` (a
    builtin module imports with no side effect, and the same in every process). Extension modules (`_ctypes`) are
    not read."""
    tree = _module_tree(module)
    for node in tree.body if tree is not None else ():
        imports = [node] if isinstance(node, ast.ImportFrom) else \
            [n for n in node.body if isinstance(n, ast.ImportFrom)] if isinstance(node, ast.Try) else []
        for imp in imports:
            if imp.level == 0 and imp.module in sys.builtin_module_names and \
                    any((a.asname or a.name) == name for a in imp.names):
                original = next(a.name for a in imp.names if (a.asname or a.name) == name)
                return getattr(importlib.import_module(imp.module), original, None)
    return None


@functools.lru_cache(maxsize=None)
def stdlib_members(qualname: str, _depth: int = 0) -> frozenset[str]:
    """Members `module.Class` of the standard library has, along its standard-library bases (empty when it is not a
    class of the standard library's Python sources)."""
    module, _, name = qualname.rpartition(".")
    found = _class_and_scope(module, name, 0) if module and _depth <= _MAX_DEPTH else None
    if found is None:
        value = getattr(builtins, name, None) if module == "builtins" else _builtin_module_class(module, name)
        return frozenset(dir(value)) if isinstance(value, type) else frozenset()
    node, scope = found
    out = _members_of(node)
    for base in node.bases:
        qual = _base_qualname(scope, base)
        if qual is not None and qual != qualname:
            out |= stdlib_members(qual, _depth + 1)
    return frozenset(out)
