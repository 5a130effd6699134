"""The strings a name in client code may hold where it is not a literal: a loop variable over literal names
(`for name in ("a", "b"): self.register_buffer(name, ...)`), a module constant (`_EXT = "pkg.mod.Cls"`), a class
attribute bound once (`self._ext_cls` with `_ext_cls = "pkg.mod.Cls"` in a class body of the file), and,
for an attribute created under a name computed from data, the identifier strings of the file (as vLLM's own
classes that set attributes by a computed name are read: their module's strings name their members).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import assignment_targets, nodes_of, walk


def literal_strings(node: ast.expr | None, tree: ast.Module, position: int | None = None) -> list[str] | None:
    """The strings a literal collection holds (`("a", "b")`, `{"a": 1}.keys()`, a dict's keys), or, with
    `position`, the string at that position of each tuple (`(("W_K", w), ("W_V", v))`); a name or `self.X` /
    `Cls.X` bound once to such a literal at module or class level is followed. None when it is not one."""
    if node is None:
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("keys", "items") \
            and not node.args and not node.keywords:
        keys = literal_strings(node.func.value, tree)  # `{"a": x}.items()`: the keys (the first of each pair)
        return keys if position in (None, 0) or node.func.attr == "keys" else None
    if isinstance(node, ast.Dict):
        node = ast.Tuple(elts=list(node.keys), ctx=ast.Load()) if all(k is not None for k in node.keys) else None
        if node is None:
            return None
    if isinstance(node, (ast.Name, ast.Attribute)):
        bound = _constant_binding(node, tree)
        return literal_strings(bound, tree, position) if bound is not None else None
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or not node.elts:
        return None
    out: list[str] = []
    for elt in node.elts:
        if position is not None:
            if not isinstance(elt, (ast.Tuple, ast.List)) or len(elt.elts) <= position:
                return None
            elt = elt.elts[position]
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        out.append(elt.value)
    return out


def _constant_binding(node: ast.Name | ast.Attribute, tree: ast.Module) -> ast.expr | None:
    """The one value a module-level name (`NAMES = (...)`) or a class attribute (`self.NAMES`, `cls.NAMES`,
    `Cls.NAMES`, for a class of this file that binds it once) is bound to; None when bound more than once."""
    if isinstance(node, ast.Name):
        values = [v for v in module_bindings(tree, node.id)]
        return values[0] if len(values) == 1 else None
    if not isinstance(node.value, ast.Name):
        return None
    owner = node.value.id
    values = []
    for cls in nodes_of(tree, ast.ClassDef):
        if owner not in ("self", "cls") and cls.name != owner:
            continue
        values += [v for v in _body_bindings(cls.body, node.attr)]
    return values[0] if len(values) == 1 else None


def module_bindings(tree: ast.Module, name: str) -> list[ast.expr]:
    """Every value the module binds `name` to: its top-level assignments and those of functions that declare
    it `global`."""
    out = _body_bindings(tree.body, name)
    for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        if any(isinstance(n, ast.Global) and name in n.names for n in walk(fn)):
            out += [n.value for n in walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
                    and any(isinstance(t, ast.Name) and t.id == name for t in assignment_targets(n))]
    return out


def _body_bindings(body: list[ast.stmt], name: str) -> list[ast.expr]:
    out: list[ast.expr] = []
    for stmt in body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and any(isinstance(t, ast.Name) and t.id == name for t in assignment_targets(stmt)):
            if stmt.value is not None:
                out.append(stmt.value)
        elif isinstance(stmt, (ast.If, ast.Try)):
            for part in (stmt.body, stmt.orelse, *([h.body for h in stmt.handlers] if isinstance(stmt, ast.Try) else [])):
                out += _body_bindings(part, name)
    return out


def string_constants(node: ast.expr, tree: ast.Module) -> list[str]:
    """A string constant, or the strings a module-level name of this file is bound to (each binding a string,
    or None: `_EXT: str | None = None` set in a function that declares it global), or the one string a class of
    this file binds a class attribute to (`self._ext_cls`, `Cls._ext_cls`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Attribute):
        bound = _constant_binding(node, tree)
        return [bound.value] if isinstance(bound, ast.Constant) and isinstance(bound.value, str) else []
    if not isinstance(node, ast.Name):
        return []
    values = module_bindings(tree, node.id)
    if not values or not all(isinstance(v, ast.Constant) and (isinstance(v.value, str) or v.value is None) for v in values):
        return []
    return [v.value for v in values if isinstance(v.value, str)]


def loop_names(tree: ast.Module, call: ast.AST, variable: str) -> list[str] | None:
    """The names `variable` takes at `call` when an enclosing `for` loop binds it from literal names (innermost
    loop first); None when no such loop encloses the call."""
    loops = [loop for loop in nodes_of(tree, ast.For, ast.AsyncFor)
             if loop.lineno <= call.lineno <= (loop.end_lineno or loop.lineno) and _encloses(loop, call)]
    for loop in sorted(loops, key=lambda loop: -loop.lineno):
        target = loop.target
        if isinstance(target, ast.Name) and target.id == variable:
            return literal_strings(loop.iter, tree)
        if isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name) and elt.id == variable:
                    return literal_strings(loop.iter, tree, i)
    return None


def _encloses(loop: ast.For | ast.AsyncFor, node: ast.AST) -> bool:
    return any(n is node for stmt in loop.body for n in walk(stmt))


def identifier_strings(tree: ast.Module) -> frozenset[str]:
    """The file's string constants that are identifiers: the names an attribute set by a computed name may take
    (kept on the tree: a file asks once however many such calls it makes)."""
    found = getattr(tree, "_driftcheck_identifier_strings", None)
    if found is None:
        found = frozenset(n.value for n in walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                          and n.value.isidentifier())
        tree._driftcheck_identifier_strings = found
    return found


def computed_names(tree: ast.Module, call: ast.AST, name: ast.expr) -> tuple[frozenset[str], str]:
    """The names an attribute created under `name` by `call` may have, and how they were found: the literal
    names a loop variable takes, else every identifier string of the file."""
    if isinstance(name, ast.Name):
        looped = loop_names(tree, call, name.id)
        if looped:
            return frozenset(looped), "loop"
    return identifier_strings(tree), "file strings"
