"""vLLM modules a client's shell setup copies into the installed vLLM folder that the release lacks.

vllm-fp8kv's `setup.sh` installs a vLLM wheel, clones vLLM at an unmerged pull request, and copies the pull request's
new files over the installed package (`SITE=$(python -c 'import vllm, os; print(os.path.dirname(vllm.__file__))')`,
then `for f in v1/attention/backends/mla/triton_mla_sparse.py ...; do cp "vllm-src/vllm/$f" "$SITE/$f"; done`). Its
code then imports `vllm.v1.attention.backends.mla.triton_mla_sparse`, which no release has: the module exists
wherever that step ran, from a source driftcheck does not read. Such a module is not certainly missing: DC001 (the
module) and DC002 (the submodule's name) warn and name the copy, as DC001 does for a module the client names as a
string it may register (`_named_by_client`); a warning, not an unknown, so that a guarded import stays what its
guard makes it.

Read in the client's shell scripts (`.sh`, `.bash`) and Dockerfiles: a `cp` / `install` / `rsync` / `ln` line (a
Dockerfile's `COPY` / `ADD` too) whose last argument is a path below the package's folder:
- below a variable bound to it (a value that reads `vllm.__file__` / `vllm.__path__`, or spells `site-packages/vllm`):
  a literal `$SITE/v1/x/y.py`, or `$SITE/$f` (or `$SITE/prefix/$f`) inside `for f in a.py b.py ...; do` (words
  continued over `\\` lines), each `.py` word then;
- a literal path that spells it: `.../site-packages/vllm/x/y.py` (or dist-packages), or `.../vllm/x/y.py` where
  `vllm.x` is a package of the release (a source checkout installed in place, `/app/vllm/vllm/distributed/het_tp.py`:
  rdna4-vllm's Dockerfile, batch 19a).
Only modules the release lacks are kept: a copy over a module the release has is `mounted_copies`' question
(overlay.py).
"""

from __future__ import annotations

import re

from driftcheck.client_model.client import in_skipped_folder, launch_kind, texts_mentioning

_ASSIGN = re.compile(r"^\s*(?:export\s+|local\s+|readonly\s+)?(\w+)=(.+)$", re.M)
_COPY = re.compile(r"^[^#\n]*?\b(?:cp|install|rsync|ln)\b[^\n#]*$|^[ \t]*(?:COPY|ADD)[ \t][^\n]*$", re.M)
_FOR = re.compile(r"\bfor\s+(\w+)\s+in\b((?:[^;\n]|\\\n)*?)(?:;\s*|\n\s*)do\b", re.S)


def launcher_installed(client, package: str, has_module) -> dict[str, str]:
    """Modules below `package` that the client's shell scripts copy into the installed package's folder and that the
    release lacks (`has_module(name)` is False) -> "file:line" of the copy."""
    out: dict[str, str] = {}
    scripts = [rel for rel in client.tree.iter_files("", "") if launch_kind(rel) in ("shell", "dockerfile") and not in_skipped_folder(rel)]
    for rel, text in texts_mentioning(client, scripts, package):
        for path, line, spelled in _copied_paths(text, package):
            module = ".".join([package, *path[:-3].split("/")])
            if not path.endswith(".py") or path.endswith("__init__.py") or module in out or has_module(module):
                continue
            folder = module.rpartition(".")[0]
            if spelled or (folder != package and has_module(folder)):  # a literal `.../vllm/x/y.py`: `vllm.x` is vLLM's
                out[module] = f"{rel}:{line}"
    return out


def _copied_paths(text: str, package: str):
    """(path below the package folder, line, whether the line certainly names the installed package's folder) of each
    file a copy line of `text` puts there."""
    folders = {m.group(1) for m in _ASSIGN.finditer(text) if _names_package_folder(m.group(2), package)}
    dest = re.compile(r"[\"']?\$\{?(" + "|".join(map(re.escape, sorted(folders))) + r")\}?/([^\s\"';|&]*)[\"']?\s*(?:[;|&].*)?$") \
        if folders else None
    for m in _COPY.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        found = dest.search(m.group(0)) if dest is not None else None
        if found is None:
            yield from ((path, line, spelled) for path, spelled in _literal_destinations(m.group(0), package))
            continue
        tail = found.group(2)
        var = re.fullmatch(r"((?:[\w.-]+/)*)\$\{?(\w+)\}?", tail)
        if var is None:
            if re.fullmatch(r"(?:[\w.-]+/)*\w+\.py", tail):
                yield tail, line, True
            continue
        for word in _loop_words(text, m.start(), var.group(2)):
            yield var.group(1) + word, line, True


_LAST_WORD = re.compile(r"[\"']?([^\s\"';|&]+)[\"']?\s*(?:[;|&].*)?$")


def _literal_destinations(command: str, package: str):
    """(path below a `package/` folder, whether the path spells site-packages / dist-packages) for the last word of a
    copy line, one candidate per `package/` segment of it (`/app/vllm/vllm/x.py`: `vllm/x.py` and `x.py`)."""
    found = _LAST_WORD.search(command)
    if found is None:
        return
    word = found.group(1)
    segment = f"/{package}/"
    at = word.find(segment)
    while at >= 0:
        tail = word[at + len(segment):]
        if re.fullmatch(r"(?:[\w.-]+/)*\w+\.py", tail):
            yield tail, re.search(r"(?:site|dist)-packages$", word[:at]) is not None
        at = word.find(segment, at + 1)


def _loop_words(text: str, at: int, var: str) -> list[str]:
    """The literal words of the nearest `for var in ...; do` above offset `at` (paths only: no `$`, globs or quotes
    left inside)."""
    loops = [m for m in _FOR.finditer(text, 0, at) if m.group(1) == var]
    if not loops:
        return []
    words = loops[-1].group(2).replace("\\\n", " ").split()
    return [w.strip("\"'") for w in words if re.fullmatch(r"[\"']?(?:[\w.-]+/)*[\w.-]+[\"']?", w)]


def _names_package_folder(value: str, package: str) -> bool:
    """A shell value that names the installed package's folder: it reads `package.__file__` / `package.__path__` (a
    `python -c` that prints its folder) or spells `site-packages/package` (or dist-packages)."""
    return f"{package}.__file__" in value or f"{package}.__path__" in value or \
        re.search(r"(?:site|dist)-packages/" + re.escape(package) + r"\b", value) is not None
