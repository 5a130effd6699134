"""Flat folders of copies of one vLLM package's files, meant to be dropped into it.

vllm-windows-build's `turboquant/` holds kernels copied from its author's vLLM tree: `triton_turboquant_decode.py`
(a changed copy of 0.25.1's `vllm/v1/attention/ops/triton_turboquant_decode.py`) imports
`vllm.v1.attention.ops.turboquant_kv_cache`, which no release has but which is the file beside it (batch 19b, NGA).
Copied into `vllm/v1/attention/ops/`, every such import finds its sibling; read where they lie, each was an error.
Nothing in the client says whether the copy is made, so a module only the folder provides is neither certainly
missing nor certainly there (DC001 says unknown), and a module of the release the folder has its own copy of is
shadowed like any other client copy (DC002 says unknown for a name only the copy defines).

A folder counts for a package `vllm.P` when it is no package of the client's (no `__init__.py`: its files are not
imported by a name of the client's), one of its files imports, by vLLM's name, `vllm.P.X` where `X.py` is another file
of the same folder, and one of its files is named like a file of the release's `vllm/P/`. A platform plugin's
`vllm_ascend/sample/rejection_sampler.py`, which imports vLLM's `vllm.v1.sample.rejection_sampler` to wrap it, is a
module of the plugin's package, not a copy: its imports of vLLM stay what they are. A folder inside a folder named like
the package is an overlay (overlay.py), not read here.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.client import ClientSource


def drop_in_copies(client: ClientSource, api) -> dict[str, tuple[str, str]]:
    """Module of the target's package -> (the client file that is a copy of it, "file:line" of the import of a
    sibling by vLLM's name that shows the folder is one)."""
    package = api.package
    candidates: dict[tuple[str, str], str] = {}  # (folder, vLLM package) -> where a file imports its sibling
    for f in client.files:
        folder, _, own = f.rel.rpartition("/")
        if package in folder.split("/") or client.tree.is_file(_in(folder, "__init__.py")):
            continue  # an overlay's file (overlay.py), or a module of a client package
        for node in nodes_of(f.tree, ast.Import, ast.ImportFrom):  # indexed once per tree, for every phase
            for name in _imported(node):
                parent, _, leaf = name.rpartition(".")
                if not parent.startswith(package + ".") or (folder, parent) in candidates or f"{leaf}.py" == own:
                    continue
                if client.tree.is_file(_in(folder, f"{leaf}.py")) and _is_package(api, parent):
                    candidates[(folder, parent)] = f"{f.rel}:{node.lineno}"
    out: dict[str, tuple[str, str]] = {}
    for (folder, parent), where in sorted(candidates.items()):
        stems = [rel.rsplit("/", 1)[-1][:-3] for rel in client.tree.iter_files(folder) if rel.count("/") == folder.count("/") + bool(folder)]
        if not any(_is_file_module(api, f"{parent}.{stem}") for stem in stems):
            continue  # no file of the folder is named like one of the package's: nothing says it mirrors it
        for stem in stems:
            if stem != "__init__":
                out.setdefault(f"{parent}.{stem}", (_in(folder, f"{stem}.py"), where))
    return out


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def _in(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _is_package(api, module: str) -> bool:
    found = api.module_path(module)
    return found is not None and found[1]


def _is_file_module(api, module: str) -> bool:
    found = api.module_path(module)
    return found is not None and not found[1]
