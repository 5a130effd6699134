"""Modules the sources read here lack but other builds of the release ship.

A wheel is one build of a release: `vllm._C`, `vllm.vllm_flash_attn` or a CUDA build's `vllm.third_party.deep_gemm`
are compiled or copied in by the builds that have them, and the CPU wheel (or the sources zip) lacks them. Where
vLLM's own code imports such a module, some build provides it: a client's import of it (DC001) or a `python -m` of
it (DC111) fails only on a build that lacks it, so those rules warn rather than say it certainly fails.
"""

from __future__ import annotations

import re

from driftcheck.vllm_model.bodies import text_index_for


def built_elsewhere(api, module: str) -> tuple[str, int, str] | None:
    """Where vLLM's own code imports `module`: then some build ships it (a compiled extension or files a
    build copies in, such as `vllm._C` or `vllm.vllm_flash_attn`), though the sources read here lack it. Also where it
    imports a package above `module` that these sources lack as well: the build that copies in the package has its
    submodules (a CUDA build's `vllm.third_party.deep_gemm`, which the CPU wheel lacks; vLLM's own test imports
    `vllm.third_party.deep_gemm.utils`). (path, line, the module imported there)."""
    parts = module.split(".")
    for depth in range(len(parts), 1, -1):
        above = ".".join(parts[:depth])
        if depth < len(parts) and api.module(above) is not None:
            return None  # a package these sources have: its submodules are all here
        found = imported_by_vllm(api, above)
        if found is not None:
            return found[0], found[1], above
    return None


def imported_by_vllm(api, module: str) -> tuple[str, int] | None:
    """(file, line) of the first of vLLM's own files that imports `module` or from it (`from M import x`, `import M`,
    `from parent import leaf`); None where none does."""
    index = text_index_for(api)
    parent, _, leaf = module.rpartition(".")
    pattern = re.compile(rb"^\s*(?:from\s+" + re.escape(module.encode()) + rb"[\s.]|import\s+" + re.escape(module.encode())
                         + rb"\b|from\s+" + re.escape(parent.encode()) + rb"\s+import\s+[^\n]*\b" + re.escape(leaf.encode()) + rb"\b)", re.M)
    for rel in index.files_mentioning(leaf):
        if rel.split("/")[0] != api.package:
            continue
        m = pattern.search(index.blob(rel))
        if m:
            return rel, index.blob(rel).count(b"\n", 0, m.start()) + 1
    return None
