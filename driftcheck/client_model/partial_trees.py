"""A client tree that holds only part of its own package: an overlay of a few files of a package installed beside
vLLM (pddisagg ships four replacement files for tpu-inference's runner, worker and connector). Those files import
subpackages the tree lacks (`tpu_inference.layers.common.sharding`), and that unread code may set members on vLLM's
objects (tpu-inference's platform sets `vllm_config.sharding_config`): a member no class defines is then not known
to be missing (23a's F1).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of


def missing_subpackage(client, package: str = "vllm") -> str | None:
    """"`module` (file:line)" of the first import, in a file the scan reads, of `top.sub.name...` where `top` is a
    package of the tree and the tree has nothing of `top.sub`: a whole subpackage of the client's own package is
    elsewhere. A module right under `top` that is absent (a generated `_version.py`, a compiled extension) is not
    that: only a missing folder with modules below it says the package is only partly here. Not vLLM's own package
    (`package`): a client that ships files inside it imports vLLM's modules, which the scan reads from the target."""
    modules = client.own_modules()
    tops = {m for m in modules if "." not in m} - {package}
    for file in client.files:
        for node in nodes_of(file.tree, ast.Import, ast.ImportFrom):
            names = [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                parts = name.split(".")
                if len(parts) >= 3 and parts[0] in tops and ".".join(parts[:2]) not in modules:
                    return f"`{name}` ({file.rel}:{node.lineno})"
    return None
