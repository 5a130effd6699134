"""The client side's files: which ones reach into vLLM, parsed once and shared by every probe."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from driftcheck import shared_trees
from driftcheck.astnodes import nodes_of
from driftcheck.client_model.patch_paths import patch_paths
from driftcheck.errors import DriftcheckError, SourceError
from driftcheck.sources.sources import SourceTree, module_name_for
from driftcheck.text_lines import TextLines

SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}
# a build's output at the client's top (setuptools' `build/lib/pkg`, wheels in `dist/`): copies of the package; a
# subpackage of that name is code (`mypkg/build/engine.py`; batch 22c's P7)
TOP_SKIP_DIRS = {"build", "dist"}
# what may be an import of vLLM, or a load of one of its modules by its whole name (`importlib.import_module(
# "vllm.v1.core.x")`): at a line's start (after a BOM too), after `;` or a compound statement's `:` (`try: from vllm ...`),
# or among the modules of one `import` (`import os, vllm.envs`). A prefilter only: `imports_vllm` reads the parsed file
VLLM_IMPORT = re.compile(rb"(?:^|[;:])[ \t]*(?:\xef\xbb\xbf)?(?:from[ \t]+vllm[\s.]|import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?"
                         rb"[ \t]*,[ \t]*)*vllm\b)|\bimport_module\(\s*[\"']vllm[.\"']", re.M)


# a patch of vLLM named by strings (`wrap_function_wrapper("vllm.engine.metrics", "StatLogger.__init__", w)`, the
# strings maybe held in names; `mock.patch("vllm.x.f")`): tracing libraries and plugins' tests reach into vLLM so
# without importing it (client_model/patch_paths.py); the patcher may be bound under another name (`patch as p`), so
# any file naming one beside a "vllm.x" string is parsed, and its imports decide (`imports_vllm`)
WRAPT_PATCH = re.compile(rb"\b(?:wrap_function_wrapper|patch_function_wrapper|wrap_object|patch|setattr)\b")
VLLM_STRING = re.compile(rb"[\"']vllm\.[\w.]+[\"']")


class ClientParseError(DriftcheckError):
    """A client file that imports vLLM but cannot be parsed: we will not guess what it does."""


class NewerSyntax(ClientParseError):
    """A client file written for a newer Python than the one driftcheck runs on (`type X = ...` on 3.11): valid code
    this interpreter's `ast` cannot read. The scan goes on without it and says so (an unknown, never a pass)."""


@dataclass
class ClientFile:
    rel: str  # path inside the client tree, posix
    module: str  # dotted module name derived from the path
    text: str
    tree: ast.Module
    lines: Sequence[str] = field(default_factory=list)  # text.splitlines(), as TextLines (no string per line)

    def code(self, line: int) -> str:
        if self.lines.__class__ is TextLines:
            return self.lines.code(line)  # type: ignore[attr-defined]
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


@dataclass
class LaunchFile:
    """A client file that may start vLLM as a server (a Python launcher, a shell script, YAML, a Dockerfile),
    whether or not it imports vLLM. Only rules that read command lines (DC111) ask for these."""

    rel: str
    kind: str  # python | shell | yaml | dockerfile
    text: str
    tree: ast.Module | None = None  # Python files only
    lines: list[str] = field(default_factory=list)


@dataclass
class ClientSource:
    tree: SourceTree  # only the client's own files (its packages, or the one .py it is)
    files: list[ClientFile]
    label: str
    scanned: int = 0  # how many .py files were looked at
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why) for files that could not be read
    unparsed: list[tuple[str, str]] = field(default_factory=list)  # (rel, why): files in a newer Python's syntax
    _launch_files: list[LaunchFile] | None = field(default=None, repr=False)
    _quoted: dict[str, str] | None = field(default=None, repr=False)
    _scripts: tuple[str, list] | None = field(default=None, repr=False)
    _own_modules: frozenset[str] | None = field(default=None, repr=False)

    def own_modules(self) -> frozenset[str]:
        """Every module and package the tree's .py files are imported as, from their paths (nothing is read); a
        module under `src/` is known by the name below it, as the installed project imports it."""
        if self._own_modules is None:
            out: set[str] = set()
            roots = self.project_roots()
            for rel in self.tree.iter_files(""):
                parts = module_name_for(rel).split(".")
                parts = parts[1:] if parts[0] == "src" and len(parts) > 1 else parts
                out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1) if parts[0])
                for root in roots:  # `proj/pkg/mod.py` under the project folder `proj/` is `pkg.mod` too
                    inner = parts[len(root):] if parts[:len(root)] == root else []
                    out.update(".".join(inner[:i]) for i in range(1, len(inner) + 1) if inner and inner[0])
            self._own_modules = frozenset(out)
        return self._own_modules

    def project_roots(self) -> list[list[str]]:
        """The folders below the tree's root that hold a project of their own (a `setup.py` or `pyproject.toml`), as
        dotted parts (`["verl"]` for `verl/setup.py`), and their `src/` folders: the installed project imports its
        modules by the names below them (29g F1: LUFFY's `luffy/verl/setup.py` + `luffy/verl/verl/...`)."""
        found = self.__dict__.get("_project_roots")
        if found is None:
            found = []
            for rel in self.tree.iter_files("", suffix=""):
                folder, _, name = rel.rpartition("/")
                if folder and name in ("setup.py", "pyproject.toml"):
                    found += [folder.split("/"), [*folder.split("/"), "src"]]
            self.__dict__["_project_roots"] = found
        return found

    def by_module(self, module: str) -> ClientFile | None:
        return first_file_by(self, self.files, "module").get(module)

    def module_tree(self, module: str) -> tuple[ast.Module, bool] | None:
        """Any client module's AST and whether it is a package, whether or not it imports vLLM
        (`worker_extension_cls` may name a package whose `__init__.py` only re-exports the class)."""
        found = self._module_tree(module)
        root, _, rest = module.partition(".")
        folder = self.label.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].replace("-", "_")  # a name or a path
        if found is None and rest and root == folder and self._module_tree("") is not None:
            # the client is the package folder itself (`--client .../vllm_ascend`): its files are `ops/fla.py`, while
            # its code imports `vllm_ascend.ops.fla`
            found = self._module_tree(rest)
        if found is None and root not in ("", "src"):
            # a `src/` layout: `pkg.mod` is the file `src/pkg/mod.py`, as the installed project imports it (FA2)
            found = self._module_tree("src." + module)
        for project in self.project_roots() if found is None and root else ():
            found = self._module_tree(".".join([*project, module]))  # a project folder's own package (29g F1)
            if found is not None:
                break
        return found

    def _module_tree(self, module: str) -> tuple[ast.Module, bool] | None:
        base = module.replace(".", "/")
        absent = self.__dict__.setdefault("_absent", set())  # paths no module is at: asked again for every file
        for rel, package in ((f"{base}.py", False), (f"{base}/__init__.py", True)) if base else (("__init__.py", True),):
            file = self.file_at(rel)
            if file is not None:
                return file.tree, package
            if rel in absent:
                continue
            try:
                return ast.parse(self.tree.read_text(rel)), package
            except Exception:  # absent, unreadable or not Python: not this one
                absent.add(rel)
                continue
        return None

    def file_at(self, rel: str) -> ClientFile | None:
        """The first of `files` at `rel`, from a table made once per list (a search of a whole-platform client's
        thousand files, for every module name its classes' labels name, was a second of its phases)."""
        return first_file_by(self, self.files, "rel").get(rel)

    def quoted_names(self) -> dict[str, str]:
        """Every name the client's files spell as a whole string literal (`"vllm.x.y"` or `'vllm.x.y'`) -> where it
        first does ("file:line", files in the tree's order, those outside tests first: `is_test_path`, so a place in
        a test file is the answer only where no other file spells the name): every file, whether or not it imports
        vLLM (the one that registers a module in `sys.modules` need not). Read once per client, not once per name
        asked."""
        if self._quoted is None:
            self._quoted = _quoted_names(self.tree)
        return self._quoted

    def other_modules(self) -> dict[str, str]:
        """Module -> path of the client's .py files that import no vLLM (from their paths: nothing is read)."""
        def build():
            mine = {f.rel for f in self.files}
            return {module_name_for(rel): rel for rel in self.tree.iter_files("") if rel not in mine}
        return kept_on(self, "_other_modules", self.files, build)  # asked once per name by some rules: one walk

    def other_files(self, containing: str | None = None, matching: "re.Pattern[bytes] | None" = None):
        """Those files (those whose text holds `containing`, or where `matching` matches) parsed, one at a time as
        the caller walks them (those that cannot be are left out): only rare questions about how the client's own
        modules reach one another read them, and no tree is kept."""
        needle = containing.encode() if containing is not None else None
        for rel in self.other_modules().values():
            try:
                data = self.tree.read_bytes(rel)
                if (needle is None or needle in data) and (matching is None or matching.search(data)):
                    yield parse_client_file(self.tree, rel, data)
            except Exception:  # unreadable or not parseable here: it reaches nothing we can see
                continue

    def package_scripts(self, package: str) -> list[tuple[str, str, ast.Module]]:
        """(rel, text, tree) of the client's .py files that spell a path into the package's folder (`vllm/`) and read
        or write a file's text (`.read_text(`, `.write`): its patch scripts. Read and parsed once per client for both
        rules that read them (text_patchers.py, patch_anchors.py)."""
        if self._scripts is None or self._scripts[0] != package:
            self._scripts = (package, _package_scripts(self, package))
        return self._scripts[1]

    def launch_files(self) -> list[LaunchFile]:
        """Files that may launch vLLM or build its configs, read once on first use: every other rule sees
        `files` (the ones importing vLLM) only."""
        if self._launch_files is None:
            self._launch_files = _launch_files(self)
        return self._launch_files


def own_packages(client: ClientSource) -> set[str]:
    """The top-level names the client's own modules are imported by: a package of the tree whose files import no
    vLLM (vllm_for_sp2's `sse_swa_moba_hf`, the Hugging Face twin of its vLLM model) is the client's, not a third
    party's."""
    return {m for m in client.own_modules() if "." not in m}


SMALL_TEXT = 1 << 20  # a bigger client file is data, not a script or launcher someone wrote


def texts_mentioning(client: "ClientSource", rels, needle: str):
    """(rel, text) for each of `rels` whose bytes hold `needle` (unreadable files and ones over SMALL_TEXT left out)."""
    for rel in rels:
        try:
            data = client.tree.read_bytes(rel)
        except SourceError:
            continue
        if len(data) <= SMALL_TEXT and needle.encode() in data:
            yield rel, data.decode("utf-8", errors="replace")


def in_skipped_folder(rel: str) -> bool:
    """Whether a client file lies in a folder no scan reads (caches, virtual environments, hidden or dist-info)."""
    parts = rel.split("/")[:-1]
    return bool(parts) and parts[0] in TOP_SKIP_DIRS or \
        any(p in SKIP_DIRS or p.startswith(".") or p.endswith(".dist-info") for p in parts)


class ClientView(SourceTree):
    """The client's part of a tree: a single `.py` given as --client is the whole client, and an installed
    package is its own folders, not all of site-packages (probes that read scripts look only here)."""

    def __init__(self, base: SourceTree, prefixes: list[str]):
        self.base = base
        self.prefixes = prefixes
        self.label = base.label

    def iter_files(self, prefix: str = "", suffix: str = ".py"):
        seen: set[str] = set()
        for p in self.prefixes:
            if prefix and not (p == prefix or p.startswith(prefix.rstrip("/") + "/") or prefix.startswith(p + "/")):
                continue
            start = prefix if prefix.startswith(p + "/") else p
            for rel in self.base.iter_files(start, suffix):
                if rel not in seen:
                    seen.add(rel)
                    yield rel

    def is_file(self, rel: str) -> bool:
        return self.base.is_file(rel)

    def is_dir(self, rel: str) -> bool:
        return self.base.is_dir(rel)

    def read_bytes(self, rel: str) -> bytes:
        return self.base.read_bytes(rel)

    def fingerprint(self) -> str:
        return self.base.fingerprint() + "|" + ",".join(self.prefixes)

    def display_path(self, rel: str) -> str:
        return self.base.display_path(rel)


@dataclass
class Survey:
    """What a client holds, before any parsing: the files that import vLLM and what could not be read."""

    looked_at: int = 0  # .py files seen
    importing: list[tuple[str, bytes]] = field(default_factory=list)  # (rel, bytes) of files that import vLLM
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (display path, why)
    scripts: int = 0  # shell/YAML/Dockerfiles that mention vLLM (DC102 and DC111 read them)
    launchers: int = 0  # .py files that do not import vLLM but start `vllm serve` or build its configs (DC111)

    def imports_any(self) -> bool:
        """Whether some file the prefilter matched imports vLLM in its code, not only names it in a docstring or a
        comment (22c's P6): parsed in order until one does, so mostly one parse. A file that cannot be parsed counts:
        the scan makes it an unknown, never a pass."""
        for _rel, data in self.importing:
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError):
                return True
            if imports_vllm(tree):
                return True
        return False


# shell scripts, SLURM batch scripts among them (`#SBATCH` lines are comments to the shell)
SHELL_SUFFIXES = (".sh", ".bash", ".sbatch", ".slurm")
SCRIPT_SUFFIXES = (*SHELL_SUFFIXES, ".yaml", ".yml")
# what a file that starts `vllm serve` or builds its JSON configs mentions (DC111 reads those files)
LAUNCH_MARKER = re.compile(rb"vllm(?:[\"']?\s+[\"']?|\W*,\s*\W*)serve\b|--entrypoint[= ]\S*vllm\b|vllm\.entrypoints\.(?:openai\.api_server|cli\.main)|"
                           rb"kv_connector|speculative[_-]config|vllm-openai\b|-m[\"']?\s*,?\s*[\"']?vllm\.\w|"
                           rb"-\s+[\"']?vllm[\"']?\s*\n\s*-\s+[\"']?serve\b")  # (the server image: its arguments are flags; a YAML list `- vllm` / `- serve`;
# `python -m vllm.x`, whose module DC111 checks)


def launch_kind(rel: str) -> str | None:
    name = rel.rsplit("/", 1)[-1]
    if name.endswith(".py"):
        return "python"
    if name.endswith(SHELL_SUFFIXES):
        return "shell"
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    if name.startswith("Dockerfile") or name.endswith((".dockerfile", ".Dockerfile")):
        return "dockerfile"
    return None


# a quote, a name of word characters and dots, and the same quote as a lookahead (left for the next match to start
# from, so `"a"b"` holds both `"a"` and `"b"`); `[\w.]*` stops at the first other character, so a match is the whole
# literal or nothing. A pattern that starts with the quote is searched 2x faster than a lookahead at every position.
_QUOTED_NAME = re.compile(r"""(["'])([^\W\d][\w.]*)(?=\1)""")
_OTHER_LINE_BREAKS = re.compile("[\r\v\f\x1c-\x1e\x85\u2028\u2029]")  # str.splitlines breaks there too


def is_test_path(rel: str) -> bool:
    """Whether a client path is test code: a file named `test_*.py`, `*_test.py` or `conftest.py`, or one under a
    `tests` or `test` folder. What such a file does (a stand-in put in `sys.modules`) happens only while tests run."""
    parts = rel.split("/")
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(part in ("tests", "test") for part in parts[:-1]))


def _package_scripts(client: ClientSource, package: str) -> list[tuple[str, str, ast.Module]]:
    needle = f"{package}/"
    read = [(f.rel, f.text) for f in client.files if needle in f.text]  # read already: those importing vLLM
    others = [rel for rel in client.tree.iter_files("", ".py") if client.file_at(rel) is None and not in_skipped_folder(rel)]
    out = []
    for rel, text in [*read, *texts_mentioning(client, others, needle)]:
        if ".read_text(" not in text and ".write" not in text:
            continue  # neither checks a file's text nor writes any
        try:
            out.append((rel, text, ast.parse(text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return out


def _quoted_names(tree: SourceTree) -> dict[str, str]:
    out: dict[str, str] = {}
    for rel in sorted(tree.iter_files(""), key=is_test_path):  # stable: the tree's order, test files last
        try:
            text = tree.read_text(rel)
        except SourceError:
            continue
        if "'" not in text and '"' not in text:
            continue
        if _OTHER_LINE_BREAKS.search(text):  # number lines as str.splitlines does
            for i, line in enumerate(text.splitlines(), 1):
                for m in _QUOTED_NAME.finditer(line):
                    out.setdefault(m.group(2), f"{rel}:{i}")
            continue
        line, pos = 1, 0
        for m in _QUOTED_NAME.finditer(text):
            if m.group(2) in out:
                continue
            line += text.count("\n", pos, m.start())
            pos = m.start()
            out[m.group(2)] = f"{rel}:{line}"
    return out


def _launch_files(source: "ClientSource") -> list[LaunchFile]:
    parsed = {f.rel: f for f in source.files}
    out: list[LaunchFile] = []
    for rel in source.tree.iter_files("", suffix=""):
        kind = launch_kind(rel)
        if kind is None or in_skipped_folder(rel):
            continue
        if rel in parsed:
            f = parsed[rel]
            if LAUNCH_MARKER.search(f.text.encode("utf-8", "replace")):
                out.append(LaunchFile(rel, kind, f.text, f.tree, f.lines))
            continue
        try:
            data = source.tree.read_bytes(rel)
        except SourceError:
            continue
        if b"\x00" in data or not LAUNCH_MARKER.search(data):
            continue
        text = data.decode("utf-8", errors="replace")
        tree = None
        if kind == "python":
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue  # a file that does not import vLLM and does not parse: not ours to judge
        out.append(LaunchFile(rel, kind, text, tree, text.splitlines()))
    return out


def client_view(tree: SourceTree, prefixes: list[str] | None) -> SourceTree:
    return ClientView(tree, prefixes) if prefixes else tree


def survey(tree: SourceTree, prefixes: list[str] | None = None, scripts: bool = False) -> Survey:
    """Which of the client's .py files import vLLM; which files were skipped and why (too large, a FIFO,
    unreadable). `scripts` also counts the shell/YAML files that mention vLLM."""
    out = Survey()
    view = client_view(tree, prefixes)
    seen: set[str] = set()
    for rel in view.iter_files(""):
        if rel in seen or in_skipped_folder(rel):
            continue
        seen.add(rel)
        out.looked_at += 1
        try:
            data = view.read_bytes(rel)
        except SourceError as exc:
            out.skipped.append((view.display_path(rel), _why(exc, view.display_path(rel))))
            continue
        if VLLM_IMPORT.search(data) or (WRAPT_PATCH.search(data) and VLLM_STRING.search(data)):
            out.importing.append((rel, data))
        elif scripts and LAUNCH_MARKER.search(data):
            out.launchers += 1
    if scripts:
        for rel in view.iter_files("", suffix=""):
            if launch_kind(rel) in ("shell", "yaml", "dockerfile") and not in_skipped_folder(rel):
                try:  # a command line that runs vLLM (what DC102 / DC111 read), not any mention (`pip install vllm`)
                    if LAUNCH_MARKER.search(view.read_bytes(rel)):
                        out.scripts += 1
                except SourceError:
                    continue
    return out


def _why(exc: SourceError, where: str) -> str:
    """The reason alone ("is not a regular file"), without the path the caller prints anyway."""
    text = exc.one_line()
    return text[len(where):].lstrip(" :") if text.startswith(where) else text.replace(where, "it")


def load_client(tree: SourceTree, label: str, prefixes: list[str] | None = None, only_vllm: bool = True) -> ClientSource:
    """Parse the client's files that import vLLM (only those matter to driftcheck)."""
    view = client_view(tree, prefixes)
    if only_vllm:
        return source_from_survey(tree, label, prefixes, survey(tree, prefixes))
    files: list[ClientFile] = []
    scanned = 0
    seen: set[str] = set()
    for rel in view.iter_files(""):
        if rel in seen or in_skipped_folder(rel):
            continue
        seen.add(rel)
        scanned += 1
        files.append(parse_client_file(view, rel, view.read_bytes(rel)))
    return ClientSource(tree=view, files=files, label=label, scanned=scanned)


def source_from_survey(tree: SourceTree, label: str, prefixes: list[str] | None, found: Survey) -> ClientSource:
    """The client's vLLM-importing files parsed, from a survey already made (its bytes are read once)."""
    view = client_view(tree, prefixes)
    files: list[ClientFile] = []
    unparsed: list[tuple[str, str]] = []
    failed: ClientParseError | None = None
    for rel, data in found.importing:
        try:
            parsed = parse_client_file(view, rel, data)
            if imports_vllm(parsed.tree):
                files.append(parsed)
        except NewerSyntax as exc:
            unparsed.append((rel, exc.message))
        except ClientParseError as exc:
            # one broken file (an old Python 2 script, a half-edited module) does not stop the check of the others, as
            # a linter goes on past a file's syntax error; it is an unknown (exit 1), never a pass
            unparsed.append((rel, exc.one_line()))
            failed = failed or exc
    if failed is not None and not files:
        raise failed  # nothing left to check: the file's own error, one line, exit 2
    return ClientSource(tree=view, files=files, label=label, scanned=found.looked_at, skipped=found.skipped, unparsed=unparsed)


# Statements only a newer Python parses, by the version that added them, tested on the line the error names
_NEWER_STATEMENTS = [
    ((3, 12), re.compile(r"^\s*type\s+[^\W\d]\w*\s*(\[[^\]]*\])?\s*=")),  # PEP 695 type alias
    ((3, 12), re.compile(r"^\s*(async\s+)?def\s+[^\W\d]\w*\s*\[")),  # PEP 695 generic function
    ((3, 12), re.compile(r"^\s*class\s+[^\W\d]\w*\s*\[")),  # PEP 695 generic class
    ((3, 11), re.compile(r"^\s*except\s*\*")),  # PEP 654 except*
]


def _newer_python(text: str, exc: SyntaxError) -> str | None:
    """The Python version whose syntax the failing line uses, when it is newer than this interpreter's."""
    lines = text.splitlines()
    line = lines[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(lines) else ""
    for version, pattern in _NEWER_STATEMENTS:
        if sys.version_info < version and pattern.search(line):
            return f"{version[0]}.{version[1]}"
    if sys.version_info < (3, 12) and (exc.msg or "").startswith("f-string"):
        return "3.12"  # PEP 701: quotes, backslashes and comments inside an f-string's braces
    return None


def imports_vllm(tree: ast.Module) -> bool:
    """Whether the parsed file imports vLLM (`import vllm...`, `from vllm... import`, `import_module("vllm...")`),
    not only names it in a docstring or comment that `VLLM_IMPORT` matched (batch 22c's P6: a usage example in a
    docstring made a file "import vLLM" and the gate pass on nothing checked), or patches a vLLM module through wrapt
    by strings."""
    for node in nodes_of(tree, ast.Import, ast.ImportFrom, ast.Call):
        if isinstance(node, ast.Import):
            if any(a.name == "vllm" or a.name.startswith("vllm.") for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and (node.module == "vllm" or node.module.startswith("vllm.")):
                return True
        elif node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and (node.args[0].value == "vllm" or node.args[0].value.startswith("vllm.")) \
                and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in ("import_module", "__import__"):
            return True
    # a patch of a vLLM name by strings imports its module when it starts: wrapt's (26f M4: ENOVA's llmo), and a
    # plugin's test that mocks `vllm.x.f` without importing vLLM itself (27d M2)
    return bool(patch_paths(tree, "vllm"))


def parse_client_file(tree: SourceTree, rel: str, data: bytes) -> ClientFile:
    where = tree.display_path(rel)
    if b"\x00" in data:
        raise ClientParseError(f"{where} contains NUL bytes: not a Python source file", "remove it or exclude it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = tree.read_text(rel)
        if not re.search(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+", "\n".join(text.splitlines()[:2]), re.M):
            raise ClientParseError(f"{where} is not valid UTF-8 and declares no encoding", "re-save it as UTF-8") from None
    try:
        parsed = shared_trees.parse(text, filename=where)
    except SyntaxError as exc:
        newer = _newer_python(text, exc)
        if newer is not None:
            running = f"{sys.version_info[0]}.{sys.version_info[1]}"
            raise NewerSyntax(f"line {exc.lineno} is Python {newer} syntax, which Python {running} (the one driftcheck "
                              f"runs on) cannot parse ({exc.msg})", f"run driftcheck under Python {newer} or newer") from None
        hint = "a Python 2 file?" if re.search(r"^\s*print\s+[^(\s]", text, re.M) else "fix the syntax error"
        raise ClientParseError(f"{where}:{exc.lineno}: cannot parse ({exc.msg})", hint) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ClientParseError(f"{where}: cannot parse ({type(exc).__name__})") from None
    return ClientFile(rel=rel, module=module_name_for(rel), text=text, tree=parsed, lines=TextLines(text))


def kept_on(owner, name: str, basis, build):
    """`build()`, kept in `owner.__dict__` (outside its dataclass fields, which codecs and digests read) while
    `basis`, the list or dict it is derived from, is the same object (held, so its id is not reused) of the same
    length: a table over a whole client, made once instead of once per question."""
    cached = owner.__dict__.get(name)
    if cached is None or cached[0] is not basis or cached[1] != len(basis):
        cached = owner.__dict__[name] = (basis, len(basis), build())
    return cached[2]


def first_file_by(owner, files: list, field_name: str) -> dict:
    """`field value -> the first file with it` for `owner`'s list of files (`kept_on` it)."""
    def build() -> dict:
        table: dict = {}
        for f in files:
            table.setdefault(getattr(f, field_name), f)
        return table
    return kept_on(owner, f"_by_{field_name}", files, build)
