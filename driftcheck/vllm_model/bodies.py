"""Helpers for behaviour probes: read vLLM method bodies (asserts, raises, returns, defaults).

Behaviour probes decide from what the target's code does, never from its version number.
"""

from __future__ import annotations

import ast
import bisect
import weakref
from dataclasses import dataclass

from driftcheck.astnodes import nodes_of, walk
from driftcheck.storage.code_digest import code_digest
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.signatures import Param
from driftcheck.vllm_model.text_index import TextIndex


def method(api: ApiIndex, class_path: str, name: str) -> tuple[Resolved | None, ast.FunctionDef | None]:
    """Resolve `module.Class` and return (resolved method, its AST) or (None, None)."""
    cls = api.resolve(class_path)
    if not isinstance(cls, Resolved) or cls.kind != "class":
        return None, None
    m = api.class_member(cls, name)
    if not isinstance(m, Resolved) or m.func is None:
        return None, None
    return m, api.function_node(m)


def mentions(node: ast.AST, *names: str) -> bool:
    text = ast.unparse(node)
    return all(n in text for n in names)


def find_asserts(fn: ast.AST, *needles: str) -> list[ast.Assert]:
    return [n for n in walk(fn) if isinstance(n, ast.Assert) and mentions(n.test, *needles)]


_TEXT_INDEXES: "weakref.WeakKeyDictionary[ApiIndex, TextIndex]" = weakref.WeakKeyDictionary()


def text_index_for(api: ApiIndex) -> TextIndex:
    """One TextIndex per ApiIndex: the whole-tree text is read at most once per scan, and for an immutable
    tree (wheel, fetched sources) its answers are kept in the cache folder for the next scan."""
    index = _TEXT_INDEXES.get(api)
    if index is None:
        index = _TEXT_INDEXES[api] = TextIndex(api.tree, api.package, _store_for(api))
    return index


def _store_for(api: ApiIndex):
    from driftcheck.sources.sources import ZipTree

    if api.cache is None or not isinstance(api.tree, ZipTree):
        return None  # folders change under us; their answers are kept for this process only
    # per tree and per driftcheck code: the probes' per-tree answers (`TextIndex.extra`) are only as good as the code
    # that computed them
    return api.cache.root.parent.parent / "text" / f"{api.tree.fingerprint()}-{code_digest()[:16]}.pkl"


def save_text_indexes() -> None:
    for index in list(_TEXT_INDEXES.values()):
        index.save()


def find_text(api: ApiIndex, needle: str, prefer: str = "") -> tuple[str, int] | None:
    """Where a literal first occurs in the target (preferring paths containing `prefer`)."""
    index = text_index_for(api)
    hits = []
    for rel in index.files_mentioning(needle):
        data = index.blob(rel)
        pos = data.find(needle.encode())
        hits.append((prefer not in rel, rel, data.count(b"\n", 0, pos) + 1))
    if not hits:
        return None
    _, rel, line = sorted(hits)[0]
    return rel, line


@dataclass
class FieldDefault:
    param: Param | None
    path: str
    line: int

    @property
    def value(self) -> str | None:
        if self.param is None or not self.param.has_default:
            return None
        return self.param.default


def constructor_default(api: ApiIndex, class_path: str, field: str) -> FieldDefault | None:
    cls = api.resolve(class_path)
    if not isinstance(cls, Resolved) or cls.kind != "class":
        return None
    sig = api.constructor(cls)
    if sig is None:
        return None
    param = sig.get(field)
    return FieldDefault(param, cls.path, param.line if param else cls.line)


def literal(node: ast.expr | None):
    """The Python value of a literal expression, or a sentinel when it is not a literal."""
    if node is None:
        return _NOT_LITERAL
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return _NOT_LITERAL


def literal_src(src: str | None):
    if src is None:
        return _NOT_LITERAL
    try:
        return ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError):
        return _NOT_LITERAL


class _NotLiteral:
    def __repr__(self) -> str:
        return "<not a literal>"


_NOT_LITERAL = _NotLiteral()
NOT_LITERAL = _NOT_LITERAL


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    for k in call.keywords:
        if k.arg == name:
            return k
    return None


def enclosing_function(tree: ast.AST, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose lines hold the node's: of those, the one that starts last."""
    fns, starts = _by_start(tree)
    for i in range(bisect.bisect_right(starts, node.lineno) - 1, -1, -1):
        if node.lineno <= (fns[i].end_lineno or fns[i].lineno):
            return fns[i]
    return None


_BY_START: "weakref.WeakKeyDictionary[ast.AST, tuple]" = weakref.WeakKeyDictionary()


def _by_start(tree: ast.AST) -> tuple[list, list[int]]:
    found = _BY_START.get(tree)
    if found is None:
        # a stable sort keeps ast.walk order among functions starting on one line (the outer one first)
        fns = sorted(functions_of(tree), key=lambda f: f.lineno)
        found = _BY_START[tree] = (fns, [f.lineno for f in fns])
    return found


_FUNCTIONS: "weakref.WeakKeyDictionary[ast.AST, list]" = weakref.WeakKeyDictionary()


def functions_of(tree: ast.AST) -> list:
    """Every function definition in a tree, walked once per tree (probes ask this per call site)."""
    found = _FUNCTIONS.get(tree)
    if found is None:
        # from the tree's shared one-walk index (a def and an async def never start on one line, so sorting by line,
        # as _by_start does, gives the same order as a walk)
        found = _FUNCTIONS[tree] = nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef)
    return found
