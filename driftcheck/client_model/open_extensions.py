"""Worker extensions the client relies on without naming one: it reads the configured `worker_extension_cls`
off an object (`getattr(parallel_config, "worker_extension_cls", None)`, `config.worker_extension_cls`) or hands
vLLM a value its caller gives it (`LLM(..., worker_extension_cls=ext)` with `ext` a parameter). The class is then
chosen by whoever builds the engine: lm-polygraph 0.7.0 checks that its caller's `LLM` was built with
`worker_extension_cls='hook_hs_extension.HookHiddenStatesExtension'`, a module it does not ship, and calls that
class's methods through `collective_rpc`. The workers may have methods driftcheck cannot read (`Usage.open_extensions`;
DC007 says unknown for an rpc sent from a file that relies on one so, when the client names no extension of its own).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of, walk
from driftcheck.client_model.client import ClientFile
from driftcheck.client_model.uses import Loc, loc_of

KEY = "worker_extension_cls"


def open_extensions(files: list[ClientFile]) -> list[tuple[str, Loc]]:
    """(how the client relies on an extension it does not name, where) for each such place."""
    out: list[tuple[str, Loc]] = []
    for file in files:
        if KEY not in file.text:  # most files never mention it
            continue
        for node in nodes_of(file.tree, ast.Attribute, ast.Call):
            if isinstance(node, ast.Attribute) and node.attr == KEY and isinstance(node.ctx, ast.Load):
                out.append((f"reads the configured `{ast.unparse(node)}`", loc_of(file, node)))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == KEY:
                out.append((f"reads the configured `{KEY}` of `{ast.unparse(node.args[0])}`", loc_of(file, node)))
        for fn in nodes_of(file.tree, ast.FunctionDef, ast.AsyncFunctionDef):
            params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
            for call in (n for n in walk(fn) if isinstance(n, ast.Call)):
                for k in call.keywords:  # the caller's value, whatever it names
                    if k.arg == KEY and isinstance(k.value, ast.Name) and k.value.id in params:
                        out.append((f"passes on the `{KEY}` its caller gives `{fn.name}`", loc_of(file, k.value)))
    return out
