"""Functions a client file imports from another of the client's modules, read where they are defined.

`from happy_vllm.engine.mp_engine import run_mp_engine`, then `api_server.run_mp_engine = run_mp_engine` (DC109
reads the def against vLLM's calls); kserve's `from .vllm.utils import maybe_add_vllm_cli_parser`, a wrapper that
hands the parser to `AsyncEngineArgs.add_cli_args` (DC124 reads what that builder adds). The module may import no
vLLM itself: it is then read as the client's other files are. `vllm_callee` names the vLLM function a call in such a
file makes, through that file's own imports.
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
    dotted = dotted_name(call.func) or ""
    root, _, rest = dotted.partition(".")
    if not root:
        return None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                (node.module == package or node.module.startswith(package + ".")):
            for a in node.names:
                if (a.asname or a.name) == root:
                    return ".".join(p for p in (node.module, a.name, rest) if p)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname == root and (a.name == package or a.name.startswith(package + ".")):
                    return ".".join(p for p in (a.name, rest) if p)
    return None
