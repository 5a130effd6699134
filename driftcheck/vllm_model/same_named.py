"""vLLM's modules named like a given module, the closest first: where a module (or a submodule imported from its
old package) went. DC001 names them for a missing module, DC002 for a submodule its package no longer has; the
move-import fix acts on the first."""

from __future__ import annotations

from driftcheck.sources.sources import module_name_for


def same_named_modules(api, module: str) -> list[str]:
    """vLLM's modules named like `module`'s last part, the closest first: most trailing parts in common
    (`vllm.entrypoints.openai.tool_parsers.utils` -> `vllm.tool_parsers.utils`, not `vllm.benchmarks.datasets.utils`),
    then most parent parts in common (`vllm.entrypoints.openai.protocol` -> `vllm.entrypoints.openai.chat_completion
    .protocol`), then the tree's order."""
    leaf = module.rsplit(".", 1)[-1]
    parts = module.split(".")
    out = []
    for rel in api.tree.iter_files(api.package):
        if rel.endswith(f"/{leaf}.py") or rel.endswith(f"/{leaf}/__init__.py"):
            out.append(module_name_for(rel))

    def closeness(name: str) -> tuple[int, int]:
        theirs = name.split(".")
        tail = 0
        while tail < min(len(theirs), len(parts)) and theirs[-1 - tail] == parts[-1 - tail]:
            tail += 1
        return -tail, -len(set(theirs[:-1]) & set(parts[:-1]))

    return sorted(out, key=closeness)


def own_objects(api, module: str, names, gone: str) -> dict[str, str]:
    """Those of `names` that `module` binds to an object made for one module other than `gone` (`logger =
    init_logger(__name__)`), each with its statement: another module's `logger` is another logger, so such a name is
    no evidence that a module of the same name is where `gone` went, and no name to move there on its own (NA1). Empty
    for a module the target lacks."""
    from driftcheck.vllm_model.bodies import text_index_for
    from driftcheck.vllm_model.resolved import Resolved

    mod = api.module(module)
    if mod is None:
        return {}
    out = {}
    for name in names:
        found = api.module_member(mod, name)
        if isinstance(found, Resolved) and found.path and found.line:
            own = text_index_for(api).own_object_at(found.path, found.line)
            if own is not None and own[1] != gone:
                out[name] = own[0]
    return out
