"""vLLM files a client's own Python script rewrites in place, and the names its text defines.

DS4_SM120_Flash_VLLM_Experiment's `docker/patch_vllm_deepseekv4.py` (run by its Dockerfile) reads
`Path("/usr/local/lib/python3.12/dist-packages/vllm/" "third_party/flashmla/flash_mla_interface.py")`, inserts a helper
`def _sm120_flash_mla_sparse_prefill_fwd(...)` before a marker with `str.replace`, and writes the file back; its
benchmark then imports that name from the module (batch 19a, F3). Where the script ran, the name exists; whether it
ran (and whether its markers were found in this release) cannot be known from the client: DC002 says unknown, as it
does for a shipped diff (source_diffs.py).

A script counts when it writes files (`.write_text(`, `.write_bytes(`, `.write(`) and spells, as one string literal
(adjacent literals joined), a path below the package's folder that is a file of the release: `.../vllm/x/y.py` or
`vllm/x/y.py`. The names it may add are every `def` / `class` name and every `name =` its text holds, in code or in
the strings it inserts: broad, but a name only matters where the client also imports it from that module.
"""

from __future__ import annotations

import ast
import re


_WRITES = re.compile(r"\.write(?:_text|_bytes)?\(")
_DEFINED = re.compile(r"\b(?:def|class)\s+(\w+)|^[\s'\"]*(\w+)\s*(?::[^=\n]+)?=(?!=)", re.M)
_TAIL = re.compile(r"(?:\w+/)*\w+\.py")


def rewritten_files(client, package: str, has_file) -> dict[str, tuple[str, list[str]]]:
    """Release file (`vllm/x/y.py`) -> ("file:line" of the script's path literal, the names the script's text defines)
    for each file of the release (`has_file(path)`) a client script rewrites."""
    out: dict[str, tuple[str, list[str]]] = {}
    for rel, text, tree in client.package_scripts(package):
        if not _WRITES.search(text):
            continue
        paths = [(path, node.lineno) for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
                 for path in release_paths(node.value, package) if has_file(path)]
        if not paths:
            continue
        names = sorted({a or b for a, b in _DEFINED.findall(text)})
        for path, line in paths:
            out.setdefault(path, (f"{rel}:{line}", names))
    return out


def release_paths(value: str, package: str) -> list[str]:
    """`package/...py` for each place in a string where a path below a folder named `package` starts (`/app/vllm/vllm/x.py`
    gives `vllm/vllm/x.py` and `vllm/x.py`)."""
    out = []
    at = 0 if value.startswith(package + "/") else value.find(f"/{package}/")
    while at >= 0:
        start = at if value.startswith(package + "/", at) else at + 1
        tail = value[start + len(package) + 1:]
        if _TAIL.fullmatch(tail):
            out.append(f"{package}/{tail}")
        at = value.find(f"/{package}/", start + 1)
    return out
