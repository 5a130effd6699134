"""The client side's files: which ones reach into vLLM, parsed once and shared by every probe."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .errors import DriftcheckError, SourceError
from .sources import SourceTree

SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "build", "dist"}
VLLM_IMPORT = re.compile(rb"^\s*(from\s+vllm[\s.]|import\s+vllm\b)", re.M)


class ClientParseError(DriftcheckError):
    """A client file that imports vLLM but cannot be parsed: we will not guess what it does."""


@dataclass
class ClientFile:
    rel: str  # path inside the client tree, posix
    module: str  # dotted module name derived from the path
    text: str
    tree: ast.Module
    lines: list[str] = field(default_factory=list)

    def code(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


@dataclass
class ClientSource:
    tree: SourceTree
    files: list[ClientFile]
    label: str
    scanned: int = 0  # how many .py files were looked at

    def by_module(self, module: str) -> ClientFile | None:
        for f in self.files:
            if f.module == module:
                return f
        return None


def module_name_for(rel: str) -> str:
    parts = rel[:-3].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _skipped(rel: str) -> bool:
    parts = rel.split("/")[:-1]
    return any(p in SKIP_DIRS or p.startswith(".") or p.endswith(".dist-info") for p in parts)


def load_client(tree: SourceTree, label: str, prefixes: list[str] | None = None, only_vllm: bool = True) -> ClientSource:
    """Parse the client's files that import vLLM (only those matter to driftcheck)."""
    files: list[ClientFile] = []
    scanned = 0
    seen: set[str] = set()
    for prefix in prefixes or [""]:
        for rel in tree.iter_files(prefix):
            if rel in seen or _skipped(rel):
                continue
            seen.add(rel)
            scanned += 1
            try:
                data = tree.read_bytes(rel)
            except SourceError:
                if only_vllm:
                    continue  # a file we cannot read cannot be shown to touch vLLM; reported by the CLI if explicit
                raise
            if only_vllm and not VLLM_IMPORT.search(data):
                continue
            files.append(parse_client_file(tree, rel, data))
    return ClientSource(tree=tree, files=files, label=label, scanned=scanned)


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
        parsed = ast.parse(text, filename=where)
    except SyntaxError as exc:
        hint = "a Python 2 file?" if re.search(r"^\s*print\s+[^(\s]", text, re.M) else "fix the syntax error"
        raise ClientParseError(f"{where}:{exc.lineno}: cannot parse ({exc.msg})", hint) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ClientParseError(f"{where}: cannot parse ({type(exc).__name__})") from None
    return ClientFile(rel=rel, module=module_name_for(rel), text=text, tree=parsed, lines=text.splitlines())
