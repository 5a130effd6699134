"""The client folders a file puts on `sys.path` when it runs: where its `import name` (and a class it names by
`"name.Cls"` for vLLM to import) is found besides the client's root.

Python puts a script's own folder first on `sys.path`, and vLLM's workers, forked or spawned from it, import from the
same path. Read as such: the file's own folder when it has a top-level `if __name__ == "__main__":` block, and each
folder a module-level `sys.path.insert(i, X)` / `sys.path.append(X)` adds where `X` is built from `__file__`
(`os.path.dirname(os.path.abspath(__file__))`, `Path(__file__).resolve().parent.parent`, or a module-level name bound
to one: `HERE = os.path.dirname(__file__); sys.path.insert(0, HERE)`). A path built any other way is not read.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name

_DIRNAME = ("os.path.dirname", "path.dirname", "dirname")
_SAME_PATH = ("os.path.abspath", "os.path.realpath", "path.abspath", "path.realpath", "abspath", "realpath", "str",
              "os.fspath")
_SAME_PATH_METHODS = ("resolve", "absolute")


def script_folders(tree: ast.Module, rel: str) -> list[str]:
    """The folders (relative to the client root, "" for the root itself) the file at `rel` puts on `sys.path`, in
    the order Python searches them."""
    here = rel.rpartition("/")[0]
    out: list[str] = []
    if any(_is_main_guard(stmt) for stmt in tree.body):
        out.append(here)
    names: dict[str, int] = {}  # module-level name -> how many folders up from the file it is
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            up = _folders_up(stmt.value, names)
            if up is not None:
                names[stmt.targets[0].id] = up
            else:
                names.pop(stmt.targets[0].id, None)
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        if call is None or call.keywords:
            continue
        func = dotted_name(call.func)
        path = call.args[1] if func == "sys.path.insert" and len(call.args) == 2 else \
            call.args[0] if func == "sys.path.append" and len(call.args) == 1 else None
        up = _folders_up(path, names) if path is not None else None
        if up is None:
            continue
        parts = here.split("/") if here else []
        if not 0 <= up <= len(parts):
            continue
        folder = "/".join(parts[:len(parts) - up])
        if folder in out:
            continue
        if func == "sys.path.insert":  # before the script's own folder (`insert(0, X)`, as the clients write it)
            out.insert(0, folder)
        else:
            out.append(folder)
    return out


def _is_main_guard(stmt: ast.stmt) -> bool:
    test = stmt.test if isinstance(stmt, ast.If) else None
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__" \
        and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant) \
        and test.comparators[0].value == "__main__"


def _folders_up(node: ast.expr, names: dict[str, int]) -> int | None:
    """How many folders above the file's own the path `node` is (0: the file's folder), or None when it is not a
    folder built from `__file__`; `__file__` itself is -1 (the file, one dirname from its folder)."""
    if isinstance(node, ast.Name):
        return -1 if node.id == "__file__" else names.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _folders_up(node.value, names)
        return inner + 1 if inner is not None else None
    if isinstance(node, ast.Call) and len(node.args) <= 1 and not node.keywords:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _SAME_PATH_METHODS and not node.args:
            return _folders_up(func.value, names)  # Path(...).resolve()
        name = dotted_name(func)
        if node.args and name in _DIRNAME:
            inner = _folders_up(node.args[0], names)
            return inner + 1 if inner is not None else None
        if node.args and (name in _SAME_PATH or name in ("Path", "pathlib.Path")):
            return _folders_up(node.args[0], names)
    return None
