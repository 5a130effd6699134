"""A vLLM a client file puts first on `sys.path` from outside the client (a local checkout, a fork under review).

`sys.path.insert(0, str(Path("/home/me/Projects/vllm")))` at the top of a script, before it imports vLLM, makes every
later `import vllm...` of that process find the package in that folder first, wherever the folder exists: the vLLM the
file's code then runs against is the one there, which driftcheck does not read, and only where the folder is missing
the release checked. A module or name the release lacks is then no certain failure of that code (FB1's smoke script
of an unmerged vLLM pull request: `from vllm.config import FileUploadConfig` after such an insert).

Read as such: a module-level `sys.path.insert(0, X)` whose `X` names a folder outside the client's tree that names the
target's package (a checkout of it: `.../Projects/vllm`, `$VLLM_SRC`): an absolute path literal (`"/..."`, `"~/..."`,
`"C:\\..."`, also through `Path(...)`, `str(...)`, `os.path.expanduser(...)` or a module-level name bound to such a
string) or an environment variable (`os.environ[...]`, `os.getenv(...)`). Not: a folder whose path does not name the
package (`/workspace/myproject`, where a script finds its own project's modules), a path built from `__file__` (a
folder of the client's own tree, which driftcheck reads), a relative path, an append (after site-packages: the
installed vLLM is still found first), an insert inside a function (when it runs is not known), or one below a
module-level import of vLLM (the release is loaded by then, and its submodules come from its own folder).
"""

from __future__ import annotations

import ast
import re

from driftcheck.astnodes import dotted_name, source_text
from driftcheck.client_model.computed_names import string_constants

_ABSOLUTE = re.compile(r"^(?:/|~|[A-Za-z]:[\\/])")
_ENVIRON_READS = frozenset({"os.getenv", "os.environ.get", "getenv", "environ.get"})


def outside_path_inserts(tree: ast.AST, package: str = "vllm") -> list[tuple[int, str]]:
    """(line, what the path is) of each module-level insert of a folder outside the client at the front of
    `sys.path`, above which the file imports nothing of `package` at module level."""
    out: list[tuple[int, str]] = []
    for stmt in getattr(tree, "body", []):
        if _imports_package(stmt, package):
            break
        path = _inserted_outside(stmt, tree, package)
        if path is not None:
            out.append((stmt.lineno, path))
    return out


def _imports_package(stmt: ast.stmt, package: str) -> bool:
    """A module-level statement that imports `package` (or one of its modules) as it runs, also inside a try or if."""
    todo: list[ast.AST] = [stmt]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # runs when called, not as the module is imported
        todo.extend(ast.iter_child_nodes(n))
        if isinstance(n, ast.Import) and any(a.name == package or a.name.startswith(package + ".") for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom) and not n.level and n.module and \
                (n.module == package or n.module.startswith(package + ".")):
            return True
    return False


def _inserted_outside(stmt: ast.stmt, tree: ast.AST, package: str) -> str | None:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    if dotted_name(call.func) != "sys.path.insert" or len(call.args) != 2 or call.keywords:
        return None
    where, path = call.args
    if not (isinstance(where, ast.Constant) and where.value == 0):
        return None
    if any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(path)):
        return None  # a folder of the client's own tree
    named = package.lower()
    for n in ast.walk(path):
        if isinstance(n, ast.Call) and dotted_name(n.func) in _ENVIRON_READS or \
                isinstance(n, ast.Subscript) and dotted_name(n.value) in ("os.environ", "environ"):
            text = source_text(path)
            return f"`{text}`" if named in text.lower() else None
        if isinstance(n, (ast.Constant, ast.Name)):
            for text in string_constants(n, tree):
                if _ABSOLUTE.match(text) and named in text.lower():
                    return f"`{text}`"
    return None
