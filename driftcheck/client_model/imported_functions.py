"""Functions a client file imports from another of the client's modules, read where they are defined.

`from happy_vllm.engine.mp_engine import run_mp_engine`, then `api_server.run_mp_engine = run_mp_engine` (DC109
reads the def against vLLM's calls); kserve's `from .vllm.utils import maybe_add_vllm_cli_parser`, a wrapper that
hands the parser to `AsyncEngineArgs.add_cli_args` (DC124 reads what that builder adds). The module may import no
vLLM itself: it is then read as the client's other files are. `vllm_callee` names the vLLM function a call in such a
file makes, through that file's own imports (`imported_path`, which DC122 reads too).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import binding_counts, dotted_name
from driftcheck.vllm_model.pysummary import resolve_relative


def imported_function(client, file, name: str):
    """(the client file, the def) of a module-level function `file` imports by `name` from another client module and
    binds no other way; None otherwise."""
    if binding_counts(file.tree).get(name) != {"import": 1}:
        return None
    for node in file.tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        alias = next((a for a in node.names if (a.asname or a.name) == name), None)
        if alias is None:
            continue
        module = resolve_relative(file.module, file.rel.endswith("__init__.py"), node.level or 0, node.module)
        found = client.module_tree(module) if module else None
        if found is None:
            return None
        home = next((f for f in client.files if f.tree is found[0]), None)
        if home is None:  # a module that imports no vLLM: read as the client's other files are
            home = next((f for f in client.other_files(containing=alias.name) if f.module == module
                         or f.module.endswith("." + module) or module.endswith("." + f.module)), None)
        fn = next((n for n in home.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and n.name == alias.name), None) if home is not None else None
        return (home, fn) if fn is not None else None
    return None


def vllm_callee(tree: ast.Module, call: ast.Call, package: str = "vllm") -> str | None:
    """The dotted vLLM name a call names through its file's top-level imports (`AsyncEngineArgs.add_cli_args(p)` after
    `from vllm.engine.arg_utils import AsyncEngineArgs`), or None."""
    path = imported_path(tree, dotted_name(call.func) or "")
    return path if path and (path == package or path.startswith(package + ".")) else None


def imported_path(tree: ast.Module, name: str) -> str | None:
    """The absolute dotted path a dotted name means through the module's top-level imports
    (`from vllm.config.utils import config`, `import vllm.config.utils as cu` for `cu.config`, `import vllm.config.utils`
    for `vllm.config.utils.config`); None otherwise (a relative import names the client's own code)."""
    head, _, rest = name.partition(".")
    if not head:
        return None
    for stmt in tree.body:
        names = stmt.names if isinstance(stmt, (ast.Import, ast.ImportFrom)) else []
        for alias in names:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0 and (alias.asname or alias.name) == head:
                return ".".join(p for p in (stmt.module, alias.name, rest) if p)
            if isinstance(stmt, ast.Import) and alias.asname == head:
                return ".".join(p for p in (alias.name, rest) if p)
            if isinstance(stmt, ast.Import) and alias.asname is None and name.startswith(alias.name + "."):
                return name  # `import vllm.config.utils` binds `vllm`: the dotted name is the path itself
    return None
