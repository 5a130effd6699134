"""A client class that is only ever a base of the client's other classes: nothing hands it to vLLM.

vLLM builds the classes a plugin hands it (registered by a decorator, named in an entry point or a config string,
passed to a vLLM function). A client class whose name appears in the client only in the bases of its own subclasses
that define their own `__init__` (and in `super(...)`, `isinstance(...)`, `issubclass(...)`) is a shared base those
subclasses build through `super().__init__(...)`: vLLM never calls its `__init__` with its own arguments (30c F1:
swallow-evaluation-instruct's `MarkupReasoningParser(ReasoningParser)`, whose `__init__(think_start_expr,
response_start_expr)` only its registered subclasses, each taking the tokenizer, call).
"""

from __future__ import annotations

import ast
import re

from driftcheck.astnodes import dotted_name, walk
from driftcheck.client_model.client import kept_on, texts_mentioning

_PACKAGING = ("pyproject.toml", "setup.cfg", "entry_points.txt")  # where an entry point may name the class
_NOT_HANDED_OUT = ("super", "isinstance", "issubclass")


def only_a_base(client, cls: ast.ClassDef) -> bool:
    """Whether `cls` is undecorated, at least one client class derives from it, and each mention of its name in the
    client's .py files is a base of a client class that defines `__init__` itself or an argument of `super` /
    `isinstance` / `issubclass`; no string and no packaging file names it."""
    if cls.decorator_list:
        return False
    name = cls.name
    if name not in _bases_written(client):
        return False  # the common case: no class of the client names it as a base (one text pass per client)
    files = [f for f in client.files if name in f.text]  # a substring first: a regex over every file costs seconds
    if any(_unexplained(f.text, name) for f in files):
        return False  # a mention the text alone shows is no base, import, `super` or isinstance: no tree walked
    packaging = [rel for suffix in _PACKAGING for rel in client.tree.iter_files("", suffix=suffix)]
    if any(True for _ in texts_mentioning(client, packaging, name)):
        return False
    files += list(client.other_files(containing=name))
    subclasses = 0
    for f in files:
        found = _mentions(f.tree, cls, name)
        if found is None:
            return False
        subclasses += found
    return subclasses > 0


_CLASS_HEADER = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)\)", re.M)


def _bases_written(client) -> frozenset[str]:
    """The last dotted part of every base the client's vLLM-importing files write in a class header, read once per
    client from the text."""
    def build() -> frozenset[str]:
        return frozenset(word.rsplit(".", 1)[-1] for f in client.files for m in _CLASS_HEADER.finditer(f.text)
                         for word in re.findall(r"[\w.]+", m.group(1)))
    return kept_on(client, "_bases_written", client.files, build)


_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+\S+[ \t]+)?import[ \t]+(?:\([^)]*\)|[^\n]*)", re.M)


def _unexplained(text: str, name: str) -> bool:
    """Whether the text names `name` more often than its class headers (bases and the class's own), imports and
    `super(` / `isinstance(` / `issubclass(` calls account for: another use, so the class may be handed out."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    explained = sum(len(word.findall(m.group(0))) for m in _CLASS_HEADER.finditer(text))
    explained += sum(len(word.findall(m.group(0))) for m in _IMPORT_LINE.finditer(text))
    explained += len(re.findall(rf"(?:super|isinstance|issubclass)\([^()]*\b{re.escape(name)}\b", text))
    explained += len(re.findall(rf"^[ \t]*class[ \t]+{re.escape(name)}\b(?![^\n]*\()", text, re.M))
    return len(word.findall(text)) > explained


def _mentions(tree: ast.Module, cls: ast.ClassDef, name: str) -> int | None:
    """How many classes of the file derive from `name` and define `__init__`; None where the file mentions the name
    any other way."""
    allowed: set[int] = set()
    subclasses = 0
    for node in walk(tree):
        if isinstance(node, ast.ClassDef) and node is not cls:
            for base in node.bases:
                if _names(base, name):
                    if not any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
                               for s in node.body):
                        return None  # a subclass built with the base's own `__init__`
                    allowed.add(id(base))
                    subclasses += 1
        elif isinstance(node, ast.Call) and dotted_name(node.func) in _NOT_HANDED_OUT:
            allowed.update(id(a) for a in node.args if _names(a, name))
    for node in walk(tree):
        if _names(node, name) and id(node) not in allowed:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and name in node.value:
            return None
    return subclasses


def _names(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)
