"""Modules a client ships inside vLLM's own package: a wheel whose files are `vllm/model_security/*.py` (with no
`vllm/__init__.py` of its own) is installed by pip into vLLM's `vllm/` folder, so `vllm.model_security` exists at run
time although the release lacks it. Those modules (and the folders above them the release lacks) are the client's
own: imports of them resolve to the client's files, like any client package. A client file whose dotted name the
release also has, with other contents, replaces the release's file or is replaced by it, whichever was installed
last: a name only one copy defines is neither certainly there nor certainly missing (`shadowed`, DC002 says unknown).
A folder named like the package below the client's root, that no import reaches by another name (the folder above it
is no package) and that replaces at least one release file at the same place (`vllm_patches/vllm/v1/core/sched/
scheduler.py`), is such an overlay too: the client's install step copies it over vLLM's folder or installs it as vLLM
(`_nested_roots`; MC1: CARD, MF1: olmes_setup's whole modified copy in `libs/vllm/`). A client file its launcher copies or mounts over a release file (`mounted_copies`: `-v ${OVL}/kv_cache_utils.py:/usr/
.../vllm/v1/core/kv_cache_utils.py:ro`, a mount table, a `cp` or `COPY` line) shadows that module the same way.
"""

from __future__ import annotations

import ast
import hashlib
import re

from driftcheck.client_model.client import SHELL_SUFFIXES, ClientSource, in_skipped_folder, texts_mentioning
from driftcheck.sources.sources import module_name_for
from driftcheck.errors import SourceError


def overlay_modules(client: ClientSource, api) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(modules the client provides under the target's package that the release lacks -> the client file or folder,
    modules both have whose client copy differs -> (the client file, its digest))."""
    package = api.package
    own: dict[str, str] = {}
    both: dict[str, tuple[str, str]] = {}  # module -> (client rel, release rel)
    roots = _nested_roots(client, api)
    for rel in [*client.tree.iter_files(package), *(r for root in roots for r in client.tree.iter_files(root))]:
        if in_skipped_folder(rel):
            continue
        below = next((root for root in roots if rel.startswith(root + "/")), None)
        module = module_name_for(rel[len(below) - len(package):] if below else rel)
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
            own[parent] = (below[:-len(package)] if below else "") + "/".join(parts[:i]) + "/"
    shadowed: dict[str, tuple[str, str]] = {}
    if both:
        mine = client.tree.read_many([rel for rel, _ in both.values()])
        theirs = api.tree.read_many([path for _, path in both.values()])
        for module, (rel, path) in sorted(both.items()):
            data = mine.get(rel)
            if data is not None and data != theirs.get(path):
                shadowed[module] = (rel, hashlib.sha1(data).hexdigest())
    return own, shadowed


def _nested_roots(client: ClientSource, api) -> list[str]:
    """Folders named like the target's package below the client's root that hold its own copy of part or all of it,
    laid over the installed package: CARD's `vllm_patches/vllm/` (its README copies the files over vLLM's folder),
    olmes_setup's `libs/vllm/` (a whole modified vLLM its requirements install). Such a folder is imported only as the
    package itself: the folder above it is no package of the client's (a copy vendored as `pkg/third_party/vllm` is
    imported as `pkg.third_party.vllm`, which is the client's own module, not vLLM), and at least one of its files
    replaces a file of the release at the same place, or one of its files imports, by the package's name, a module only
    the folder holds (rdna4-vllm's `zaya/overlay/vllm/`, all new files at 0.22.0, which its Dockerfile copies over
    vLLM's folder: written to run as the package, whatever the release ships; batch 19a)."""
    package = api.package
    roots: dict[str, bool] = {}  # root -> whether a file of it replaces one of the release
    files: dict[str, list[str]] = {}
    for rel in client.tree.iter_files(""):
        parts = rel.split("/")
        if in_skipped_folder(rel):
            continue
        for i in range(1, len(parts) - 1):
            if parts[i] != package:
                continue
            root = "/".join(parts[:i + 1])
            if root not in roots:
                if client.tree.is_file("/".join(parts[:i]) + "/__init__.py"):
                    continue
                roots[root] = False
            files.setdefault(root, []).append(rel)
            if not roots[root] and api.tree.is_file("/".join([package, *parts[i + 1:]])):
                roots[root] = True
    return sorted(root for root, replaces in roots.items() if (replaces or _imports_itself(client, root, files[root], package))
                  and not _imported_by_its_path(client, root))


def _imported_by_its_path(client: ClientSource, root: str) -> bool:
    """Whether a client file imports the folder by its dotted path from the client's root (`from pkg.vllm.engine import
    MyEngine` for `pkg/vllm/`, `pkg` a namespace package with no `__init__.py`): it is the client's module `pkg.vllm`,
    not vLLM, and the files beside it import the installed vLLM (31c M0: every check of those files went silent)."""
    dotted = root.replace("/", ".")
    for f in [*(f for f in client.files if dotted in f.text), *client.other_files(containing=dotted)]:
        for node in ast.walk(f.tree):
            named = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else []
            if any(n == dotted or n.startswith(dotted + ".") for n in named):
                return True
    return False


def _imports_itself(client: ClientSource, root: str, rels: list[str], package: str) -> bool:
    """Whether a file below `root` (a folder named `package`) imports, by the package's dotted name, a module below
    `root` other than the package itself."""
    held = {module_name_for(package + rel[len(root):]) for rel in rels} - {package}
    for rel in rels:
        f = client.file_at(rel)
        for node in ast.walk(f.tree) if f is not None else ():
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                named = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            if any(name in held for name in named):
                return True
    return False


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


# Text files a launcher's mounts or copies are written in, besides the client's Python files.
_LAUNCH_SUFFIXES = (*SHELL_SUFFIXES, ".yaml", ".yml", ".toml", ".cfg")


def _mount_line(package: str) -> re.Pattern:
    """A source file's name, a separator, then the release's path to a file of the same name: the shape of a copy or
    a mount (`src.py:/site/vllm/x/src.py`, `"src.py": "vllm/x/src.py"`, `cp a/src.py /site/vllm/x/src.py`). Prose
    that names both ("src.py: adapted from vllm/x/src.py") has words between them, and a relative path (a document's
    link `src.py](../vllm/src.py)`) points into the client's own `vllm` folder: neither matches."""
    return re.compile(r"(?<![\w./])((?:[\w.${}~-]*/)*)(\w+\.py)[^\w\n./]{1,6}(?:(?:/|\$\{?\w+\}?/|~/)(?:[\w.${}~-]*/)*?)?\b"
                      + re.escape(package) + r"/((?:\w+/)*)\2(?![\w.])")


def mounted_copies(client: ClientSource, api) -> dict[str, tuple[str, str]]:
    """Release modules that a client file is copied or mounted over: module -> (the client file, "file:line" of the
    line that places it). A copy whose text is the release's own changes nothing and is left out. Among client files
    of the same name, the one whose folder the line spells wins (else the first)."""
    package = api.package
    every = [rel for rel in client.tree.iter_files("", "") if not in_skipped_folder(rel)]  # one walk of the client's files
    by_name: dict[str, list[str]] = {}
    for rel in every:
        if rel.endswith(".py") and rel.split("/", 1)[0] != package:  # files inside the package: overlay_modules
            by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    if not by_name:
        return {}
    texts = [(f.rel, f.text) for f in client.files]
    seen = {rel for rel, _ in texts}
    launch = [rel for rel in every if rel not in seen
              and (rel.endswith(_LAUNCH_SUFFIXES) or rel.rsplit("/", 1)[-1].startswith("Dockerfile") or rel.endswith(".py"))]
    pattern, needle = _mount_line(package), f"{package}/"
    out: dict[str, tuple[str, str]] = {}
    mounts = [(rel, text, m) for rel, text in [*texts, *texts_mentioning(client, launch, needle)]
              for m in _matches_on_lines_with(pattern, text, needle)]
    words = ("locate_file", f"{package}.__file__", f"{package}.__path__")  # what reads the installed package's folder
    trees = {f.rel: f.tree for f in client.files}
    helpers = [*texts, *texts_mentioning(client, [r for r in launch if r.endswith(".py")], package)]
    mounts += [(rel, text, m) for rel, text in helpers if any(w in text for w in words)
               for m in _folder_joins(text, package, trees.get(rel))]
    for rel, text, m in mounts:
        folder, name, inside = m.group(1), m.group(2), m.group(3)
        copies = by_name.get(name)
        if not copies or name == "__init__.py":
            continue
        module = _release_module(api, inside, name)
        if module is None or module in out:
            continue
        spelled = [c for c in copies if folder and c.rsplit("/", 1)[0].endswith(folder.strip("/").rsplit("/", 1)[-1])]
        copy = (spelled or copies)[0]
        released = api.module_path(module)
        try:
            mine = client.tree.read_bytes(copy)
            if released is not None and mine == api.tree.read_bytes(released[0]):
                continue
        except SourceError:
            continue
        line = text.count("\n", 0, m.start()) + 1
        out[module] = (copy, f"{rel}:{line}")
    return out


def _folder_joins(text: str, package: str, tree: ast.Module | None = None):
    """Copies a Python install helper makes onto the installed release by joining a name bound to the package's
    folder (`vllm_dist_path = importlib.metadata.distribution("vllm").locate_file("vllm")`, `Path(vllm.__file__).parent`,
    `os.path.dirname(vllm.__file__)`) with a path below it: `"patch/subst/utils.py": vllm_dist_path /
    "v1/attention/backends/utils.py"` in a table of source -> destination (TH3). Matches with the groups of
    `_mount_line`: the source's folder, the file's name, the path below the package folder."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return
    names = sorted({t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _names_package_folder(n.value, package)
                    for t in n.targets if isinstance(t, ast.Name)})
    if not names:
        return
    join = re.compile(r"[\"']((?:[\w.-]*/)*)(\w+\.py)[\"']\s*[:,]\s*(?:" + "|".join(map(re.escape, names))
                      + r")\s*/\s*[\"']((?:\w+/)*)\2[\"']")
    yield from join.finditer(text)  # the whole text: a formatter may put the destination on the next line


def _names_package_folder(value: ast.expr, package: str) -> bool:
    """Whether an expression reads the installed package's folder: `....locate_file("vllm")`, `vllm.__file__`,
    `vllm.__path__` anywhere in it."""
    for n in ast.walk(value):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "locate_file" and n.args \
                and isinstance(n.args[0], ast.Constant) and n.args[0].value == package:
            return True
        if isinstance(n, ast.Attribute) and n.attr in ("__file__", "__path__") and isinstance(n.value, ast.Name) \
                and n.value.id == package:
            return True
    return False


def _matches_on_lines_with(pattern: re.Pattern, text: str, needle: str):
    """`pattern.finditer(text)` on the lines that hold `needle` only (a few lines of a file; the pattern may start at
    almost any character of the others)."""
    at = text.find(needle)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield from pattern.finditer(text, start, end)
        at = text.find(needle, end)


def _release_module(api, inside: str, name: str) -> str | None:
    """The release module a path below the package's folder names (`v1/core/` + `x.py`); a source checkout's path
    (`vllm/vllm/v1/x.py`) is tried without its leading package folders too."""
    parts = [p for p in inside.split("/") if p]
    while True:
        module = ".".join([api.package, *parts, name[:-3]])
        found = api.module_path(module)
        if found is not None and not found[0].endswith("/"):
            return module
        if not parts or parts[0] != api.package:
            return None
        parts = parts[1:]

