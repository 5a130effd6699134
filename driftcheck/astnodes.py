"""One walk per parsed tree: its nodes bucketed by type, for the many questions that scan a whole file.

Rules and the client analysis ask "every call in this file", "every try", "every assignment" many times
over; walking the tree once and keeping the buckets (for as long as the tree lives) is what makes a
whole-platform client affordable.
"""

from __future__ import annotations

import ast
import bisect
import weakref
from collections import defaultdict, deque

_INDEX: "weakref.WeakKeyDictionary[ast.AST, dict[type, list[ast.AST]]]" = weakref.WeakKeyDictionary()
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}  # a node class's fields, without `ctx`
_AST = ast.AST


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        scalar = _scalar_fields(cls)
        fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f != "ctx" and f not in scalar)
    return fields


_SCALAR_TYPES = frozenset({"identifier", "string", "int", "constant", "expr_context"})


def _scalar_fields(cls: type) -> frozenset[str]:
    """The fields the grammar types as an identifier, a string, an int or a constant (read from the class's
    docstring, `Name(identifier id, expr_context ctx)`): they never hold a node, so a walk does not look into them
    (`Name.id`, `Attribute.attr`, `Constant.value`: a third of the fields a walk read). A docstring of another form
    leaves every field in."""
    head = (cls.__doc__ or "").split("\n", 1)[0].strip()
    if not (head.startswith(cls.__name__ + "(") and head.endswith(")")):
        return frozenset()
    out = set()
    for part in head[len(cls.__name__) + 1:-1].split(","):
        words = part.split()
        if len(words) == 2 and words[0].rstrip("?*") in _SCALAR_TYPES:
            out.add(words[1])
    return frozenset(out)


def children(node: ast.AST) -> list:
    """`list(ast.iter_child_nodes(node))` without the `Load` / `Store` / `Del` of a `ctx` field (no question asks for
    those shared singletons; a node's `.ctx` is still there to read), and without a generator per node."""
    out: list = []
    for name in _CHILD_FIELDS.get(node.__class__) or _child_fields(node.__class__):
        value = getattr(node, name, None)  # None: an optional field a hand-made node leaves unset
        if value.__class__ is list:
            out += value
        elif value is not None and isinstance(value, _AST):
            out.append(value)
    # a list field's only non-node items: a `Dict`'s None keys (`{**d}`), `arguments.kw_defaults`' None defaults
    return [item for item in out if item is not None] if node.__class__ in _NONE_IN_LISTS else out


_NONE_IN_LISTS = frozenset({ast.Dict, ast.arguments})


def walk(node: ast.AST):
    """`ast.walk(node)`'s nodes in its order (breadth first), without `ctx` singletons: a third of a tree's nodes,
    and ast.walk's two generators a node were the largest single cost of a whole-platform client's first phases."""
    return _breadth_first([node])


def _breadth_first(queue: list):
    """Extend `queue` (a list holding the root) with every node below it, in `ast.walk`'s order, and iterate it. A list
    field is appended whole: its only non-node items are None (`_NONE_IN_LISTS`), skipped here, which costs less than
    testing every item (the node index and the walks of every scope read each node this way)."""
    append, extend, fields_of = queue.append, queue.extend, _CHILD_FIELDS
    for node in queue:
        if node is None:
            continue
        yield node
        for name in fields_of.get(node.__class__) or _child_fields(node.__class__):
            value = getattr(node, name, None)  # None: an optional field a hand-made node leaves unset
            if value.__class__ is list:
                extend(value)
            elif value is not None and isinstance(value, _AST):
                append(value)


_STATEMENT_FIELDS = ("items", "body", "handlers", "orelse", "finalbody", "cases")  # in each node type's _fields order


def walk_statements(fn: ast.AST):
    """ast.walk restricted to statements (and except handlers, match cases, with-items), in the same
    breadth-first order: the nodes an assignment to `self.x` can be, and the only ones that hold statement lists,
    without visiting expressions (no statement lies under an expression)."""
    todo = deque([fn])
    while todo:
        node = todo.popleft()
        yield node
        for name in _STATEMENT_FIELDS:
            children = getattr(node, name, None)
            if children and type(children) is list:
                todo.extend(children)


def nodes_of(tree: ast.AST, *kinds: type) -> list:
    """The nodes of `tree` of the given types, each type's in `ast.walk` order."""
    index = _INDEX.get(tree)
    if index is None:
        index = _INDEX[tree] = _bucketed(tree)
    if len(kinds) == 1:
        found = index.get(kinds[0], [])
        return [tree, *found] if tree.__class__ is kinds[0] else found
    return [n for kind in kinds for n in ([tree, *index.get(kind, ())] if tree.__class__ is kind else index.get(kind, ()))]


def _bucketed(tree: ast.AST) -> dict[type, list]:
    """The nodes below `tree` by type, each type's in `ast.walk` order. The root stays out: a value holding its own weak
    key would keep every indexed tree alive."""
    queue = [tree]
    deque(_breadth_first(queue), maxlen=0)  # run it: what it read stays in `queue`
    index: dict[type, list] = defaultdict(list)
    for node in queue[1:]:
        index[node.__class__].append(node)
    index.pop(type(None), None)
    return index


def functions_at(tree: ast.AST, line: int) -> list:
    """The function definitions whose lines hold `line`, outermost first: a descent through the statement bodies
    that hold the line, where a walk of the whole tree to find them cost a file like gpu_model_runner.py 20k nodes."""
    out: list = []
    stack = [tree]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for stmt in _holding(node, field, line):
                start, end = getattr(stmt, "lineno", None), getattr(stmt, "end_lineno", None)
                if start is not None and not (start <= line <= (end or start)):
                    continue
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out.append(stmt)
                stack.append(stmt)
    return sorted(out, key=lambda n: n.lineno)


_STARTS: "weakref.WeakKeyDictionary[ast.AST, dict]" = weakref.WeakKeyDictionary()


def _holding(node: ast.AST, field: str, line: int) -> list:
    """The statements of one body of `node` that may hold `line`: the one that starts last at or before it (a body's
    statements follow each other without overlap), found by bisection over their first lines, kept per node; the
    whole body where one has no line (`match` cases). A file of thousands of top-level functions with a finding in
    each was quadratic here (batch 22c's P12: 20,000 findings, 320 s)."""
    body = getattr(node, field, None)
    if not body:
        return []
    known = _STARTS.get(node)
    if known is None:
        known = _STARTS[node] = {}
    starts = known.get(field)
    if starts is None:
        starts = known[field] = [getattr(s, "lineno", None) for s in body]
    if len(body) < 8 or None in starts:
        return body
    i = bisect.bisect_right(starts, line) - 1
    return [body[i]] if i >= 0 else []


def first_line(node: ast.AST) -> int:
    """The line a function's or class's text starts on: its first decorator's, else its `def` / `class` line."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def within(nodes: list, fn: ast.AST) -> list:
    """Those of `nodes` inside `fn`'s lines, decorators included (what `ast.walk(fn)` would reach, nested functions
    too)."""
    start, end = first_line(fn), getattr(fn, "end_lineno", fn.lineno) or fn.lineno
    return [n for n in nodes if start <= getattr(n, "lineno", 0) <= end]


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def source_text(node: ast.expr) -> str:
    """`ast.unparse(node)`, without the unparser for the shapes most annotations, bases and defaults have (a name, a
    dotted name, None / True / False, a non-negative int): summarising a release unparses tens of thousands of them."""
    name = dotted_name(node)
    if name is not None:
        return name
    if type(node) is ast.Constant and (node.value is None or type(node.value) in (bool, int)) and node.kind is None:
        return repr(node.value)
    return ast.unparse(node)


def is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` / `if typing.TYPE_CHECKING:`: a block that never runs. The constant read through any one
    module name counts too: `typing_extensions.TYPE_CHECKING` (the same False; tair-kvcache's connector, OB1) or an
    alias of either (`import typing as t`; `t.TYPE_CHECKING`)."""
    name = dotted_name(test)
    return name == "TYPE_CHECKING" or (name is not None and name.count(".") == 1 and name.endswith(".TYPE_CHECKING"))


def root_name(node: ast.expr) -> str | None:
    """The name an attribute / subscript chain starts from: `self` for `self.layer.w[0]`."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def assignment_targets(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[ast.expr]:
    """What an assignment statement binds: `a = b = v`'s targets, or the one target of `a: T = v` / `a += v`."""
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def attribute_stores(tree: ast.AST) -> list[tuple[ast.Attribute, int]]:
    """Every `x.attr = ...` (also annotated, and inside tuple targets) in `tree`, with its statement's line: what
    creates or sets a member. Not `x.attr += ...`, which reads the member before it stores it, so it creates nothing
    (on an object without it, it raises AttributeError: JC1)."""
    out: list[tuple[ast.Attribute, int]] = []
    for node in nodes_of(tree, ast.Assign, ast.AnnAssign):
        for target in assignment_targets(node):
            out += [(t, node.lineno) for t in _stored_attributes(target)]
    return out


_AUGMENTED: "weakref.WeakKeyDictionary[ast.AST, frozenset[int]]" = weakref.WeakKeyDictionary()


def augmented_targets(tree: ast.AST) -> frozenset[int]:
    """The ids of the attributes `x.attr += v` targets in `tree`: the node's `ctx` is `Store`, but the statement reads
    the member first (JC1)."""
    found = _AUGMENTED.get(tree)
    if found is None:
        found = _AUGMENTED[tree] = frozenset(id(n.target) for n in nodes_of(tree, ast.AugAssign)
                                             if isinstance(n.target, ast.Attribute))
    return found


def stores_only(node: ast.Attribute, tree: ast.AST) -> bool:
    """Whether an attribute node of `tree` stores or deletes without reading: not `x.m += v`'s target (JC1)."""
    return isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in augmented_targets(tree)


def top_level_bindings(stmt: ast.stmt) -> list[tuple[str, bool]]:
    """The module-level names one top-level statement binds, each with whether an import binds it (names bound in the
    statement's nested blocks count: a `try`'s import; a function's or class's body does not)."""
    out: list[tuple[str, bool]] = []
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out += [((a.asname or a.name.split(".")[0]), True) for a in node.names if a.name != "*"]
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node.name, False))
            continue
        if isinstance(node, (ast.Lambda, ast.comprehension, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.append((node.id, False))
        stack.extend(ast.iter_child_nodes(node))
    return out


_BINDINGS: "weakref.WeakKeyDictionary[ast.AST, dict[str, dict[str, int]]]" = weakref.WeakKeyDictionary()


def binding_counts(tree: ast.AST) -> dict[str, dict[str, int]]:
    """How often `tree` binds each name, anywhere in it, by kind: "import" (what an import binds: its alias, else
    the first part of the module's dotted name), "def" (a function or class), "store" / "del" (a bare name assigned,
    a loop or `with` target, a `del`), "arg" (a parameter). One table per tree, read from its buckets: what a name read
    in the file may hold (the visitor's names bound twice, DC119's names an import alone binds)."""
    found = _BINDINGS.get(tree)
    if found is None:
        found = {}

        def count(name: str, kind: str) -> None:
            kinds = found.setdefault(name, {})
            kinds[kind] = kinds.get(kind, 0) + 1

        for n in nodes_of(tree, ast.Import, ast.ImportFrom):
            for a in n.names:
                count((a.asname or a.name).split(".")[0], "import")
        for n in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            count(n.name, "def")
        for n in nodes_of(tree, ast.Name):
            if isinstance(n.ctx, (ast.Store, ast.Del)):
                count(n.id, "store" if isinstance(n.ctx, ast.Store) else "del")
        for n in nodes_of(tree, ast.arg):
            count(n.arg, "arg")
        _BINDINGS[tree] = found
    return found


_BY_LINE: "weakref.WeakKeyDictionary[ast.AST, dict[tuple, tuple[list[int], list]]]" = weakref.WeakKeyDictionary()


def nodes_within(root: ast.AST, node: ast.AST, *kinds: type) -> list:
    """`nodes_of(root, *kinds)` that lie in `node`'s lines (decorators included), for a function or class inside `root`:
    read from `root`'s buckets sorted by line, where a walk of each method of each class, or of every function of
    every module, was most of the cost (ordered by line, not as `ast.walk`: callers read a set or ask for any)."""
    table = _BY_LINE.setdefault(root, {})
    found = table.get(kinds)
    if found is None:
        nodes = sorted(nodes_of(root, *kinds), key=lambda n: n.lineno)
        found = table[kinds] = ([n.lineno for n in nodes], nodes)
    lines, nodes = found
    return nodes[bisect.bisect_left(lines, first_line(node)):bisect.bisect_right(lines, node.end_lineno or node.lineno)]


def attribute_stores_within(root: ast.AST, node: ast.AST) -> list[tuple[ast.Attribute, int]]:
    """`attribute_stores(node)` for a function or class inside `root` (`nodes_within`)."""
    out: list[tuple[ast.Attribute, int]] = []
    for stmt in nodes_within(root, node, ast.Assign, ast.AnnAssign):
        for target in assignment_targets(stmt):
            out += [(t, stmt.lineno) for t in _stored_attributes(target)]
    return out


def _stored_attributes(target: ast.AST) -> list[ast.Attribute]:
    """The attributes a target stores to, in `walk` order: the target itself, or those inside its tuple, list or
    starred parts (what a target's attribute or subscript holds is only read, so it is not walked)."""
    cls = target.__class__
    if cls is ast.Attribute:
        return [target] if isinstance(target.ctx, ast.Store) else []
    if cls is ast.Starred:
        return _stored_attributes(target.value)
    if cls is ast.Tuple or cls is ast.List:
        return [t for part in walk(target) if part.__class__ is ast.Attribute and isinstance(part.ctx, ast.Store)
                for t in [part]]
    return []


def own_scope(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own body, not those of functions, lambdas or classes nested in it."""
    out, todo = [], list(getattr(fn, "body", []))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return out
