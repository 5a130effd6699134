"""Modules a client ships inside vLLM's own package: a wheel whose files are `vllm/model_security/*.py` (with no
`vllm/__init__.py` of its own) is installed by pip into vLLM's `vllm/` folder, so `vllm.model_security` exists at run
time although the release lacks it. Those modules (and the folders above them the release lacks) are the client's
own: imports of them resolve to the client's files, like any client package. A client file whose dotted name the
release also has, with other contents, replaces the release's file or is replaced by it, whichever was installed
last: a name only one copy defines is neither certainly there nor certainly missing (`shadowed`, DC002 says unknown).
"""

from __future__ import annotations

import hashlib

from driftcheck.client_model.client import ClientSource, _skipped, module_name_for
from driftcheck.errors import SourceError


def overlay_modules(client: ClientSource, api) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(modules the client provides under the target's package that the release lacks -> the client file or folder,
    modules both have whose client copy differs -> (the client file, its digest))."""
    package = api.package
    own: dict[str, str] = {}
    both: dict[str, tuple[str, str]] = {}  # module -> (client rel, release rel)
    for rel in client.tree.iter_files(package):
        if _skipped(rel):
            continue
        module = module_name_for(rel)
        if module != package and not module.startswith(package + "."):
            continue
        found = api.module_path(module)
        if found is not None:
            if not found[0].endswith("/"):
                both[module] = (rel, found[0])
            continue
        own[module] = rel
        parts = module.split(".")
        for i in range(len(parts) - 1, 1, -1):  # the folders above it that the release lacks: packages of the client's
            parent = ".".join(parts[:i])
            if parent in own or api.module_path(parent) is not None:
                break
            own[parent] = "/".join(parts[:i]) + "/"
    shadowed: dict[str, tuple[str, str]] = {}
    if both:
        mine = client.tree.read_many([rel for rel, _ in both.values()])
        theirs = api.tree.read_many([path for _, path in both.values()])
        for module, (rel, path) in sorted(both.items()):
            data = mine.get(rel)
            if data is not None and data != theirs.get(path):
                shadowed[module] = (rel, hashlib.sha1(data).hexdigest())
    return own, shadowed


def in_overlay(overlay: dict[str, str], module: str) -> bool:
    """Whether `module` is one the client provides under vLLM's package, or inside one (`vllm.model_security.x`)."""
    if not overlay:
        return False
    parts = module.split(".")
    return any(".".join(parts[:i]) in overlay for i in range(2, len(parts) + 1))


def copy_may_define(client: ClientSource, rel: str, module: str, name: str) -> bool:
    """Whether the client's own copy of a module the release also has may bind `name` at run time: it defines or
    imports it, star-imports, has a module `__getattr__`, or the client ships a submodule of that name."""
    from driftcheck.vllm_model.pysummary import summarise_source

    try:
        text = client.tree.read_text(rel)
    except SourceError:
        return True  # unreadable: cannot tell
    info = summarise_source(module, rel, rel.endswith("__init__.py"), text)
    if info.syntax_error:
        return True
    if name in info.bindings or name in info.classes or name in info.functions or info.star_imports or info.getattr:
        return True
    folder = rel.rsplit("/", 1)[0]
    return rel.endswith("__init__.py") and (client.tree.is_file(f"{folder}/{name}.py") or client.tree.is_file(f"{folder}/{name}/__init__.py"))
