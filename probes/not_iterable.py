"""DC113 not-iterable: the client iterates a vLLM value whose class the target no longer makes iterable.

vLLM changes a container into a record and code written for the old shape loops over it: vLLM 0.9.2 made
`SchedulerOutput.scheduled_cached_reqs` one `CachedRequestData` (a struct of arrays: `req_ids`,
`new_block_ids`, ...) where 0.9.1 had `list[CachedRequestData]`, and a KV connector's
`for req in scheduler_output.scheduled_cached_reqs:` fails with `TypeError: 'CachedRequestData' object is
not iterable` on the first step that schedules a running request (not at import, not at engine start).

The rule reads the target's annotation of what the client iterates: an attribute read (`obj.attr`, `obj` a
vLLM object driftcheck types) or a call of a vLLM function or method, iterated by `for`, a comprehension, or
handed to `list`/`tuple`/`set`/`sorted`/`enumerate`/`zip`/`iter`/`dict`/`any`/`all`/`sum`/`min`/`max` as a
positional argument, or unpacked (`*x`, `a, b = x`). It is an error only when the annotation names one vLLM class
(or that class or None), and that class certainly cannot be iterated:
- neither it nor any class of its MRO defines `__iter__` or `__getitem__`, and every base is read (a base from
  outside vLLM other than `object`, `abc.ABC`, `typing.Generic`, `torch.nn.Module` keeps it unknown: pydantic's
  `BaseModel` and `NamedTuple` are iterable);
- it is no Protocol (an annotation of one says nothing of the object's class);
- no vLLM class and no client class derived from it makes it iterable (an abstract annotation may hold a
  subclass that is).
A use under `isinstance`, `hasattr` or a version check, or inside a `try` that catches TypeError, is a warning.
No fix: what to iterate instead depends on the record (`CachedRequestData.req_ids`, with the other fields by index).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.class_summary import split_union
from driftcheck.vllm_model.resolved import Resolved

RULE = Rule("DC113", "not-iterable", "Client iterates a vLLM value whose class is not iterable in the target", "error",
            kind="behaviour", raises=("TypeError",))

# builtins that iterate their positional arguments
_ITERATING = frozenset({"list", "tuple", "set", "frozenset", "sorted", "enumerate", "zip", "iter", "dict", "any",
                        "all", "sum", "min", "max", "reversed", "map", "filter"})
# bases outside vLLM that make no instance iterable
_PLAIN_EXTERNALS = frozenset({"builtins.object", "abc.ABC", "typing.Generic", "torch.nn.Module"})
_PROTOCOL = ("__iter__", "__getitem__")


def _iterated(tree: ast.Module) -> dict[int, str]:
    """id(expression) -> how the file iterates it ("for", "a comprehension", "list()", "unpacking")."""
    out: dict[int, str] = {}
    builtins_rebound = {t.id for n in nodes_of(tree, ast.Assign) for t in n.targets if isinstance(t, ast.Name)} | \
        {n.name for n in nodes_of(tree, ast.FunctionDef, ast.ClassDef)}
    for node in nodes_of(tree, ast.For, ast.AsyncFor):
        out[id(node.iter)] = "`for`"
    for node in nodes_of(tree, ast.comprehension):
        if not node.is_async:
            out[id(node.iter)] = "a comprehension"
    for node in nodes_of(tree, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in _ITERATING and node.func.id not in builtins_rebound:
            for arg in node.args if node.func.id in ("zip", "map") else node.args[:1]:
                if node.func.id == "map" and arg is node.args[0]:
                    continue  # map's first argument is the function
                if not isinstance(arg, ast.Starred):
                    out[id(arg)] = f"`{node.func.id}()`"
    for node in nodes_of(tree, ast.Starred):
        out.setdefault(id(node.value), "`*` unpacking")
    for node in nodes_of(tree, ast.Assign):
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
            out.setdefault(id(node.value), "unpacking")
    return out


def _one_class(ctx: ScanContext, resolved: Resolved) -> Resolved | None:
    """The one vLLM class `resolved` (an attribute, property or function) evaluates to, when its annotation names only
    that class (or it or None)."""
    expr = resolved.type_expr if resolved.kind == "attribute" else resolved.func.returns if resolved.func else None
    if not expr or len([p for p in split_union(expr) if p.strip("'\" ") != "None"]) != 1:
        return None
    found = ctx.api.type_of(resolved)
    if not isinstance(found, Resolved) or found.kind != "class" or found.cls is None or found.otherwise is not None:
        return None
    return found


def _iterable_or_unknown(ctx: ScanContext, cls: Resolved) -> bool:
    """Whether an instance of `cls` may be iterable: its MRO defines `__iter__`/`__getitem__`, a base is not read, it
    is a Protocol, or a subclass (vLLM's, by the text of its class lines; the client's) defines one."""
    order, is_open, externals = ctx.api.mro(cls)
    if is_open or not set(externals) <= _PLAIN_EXTERNALS:
        return True
    for c in order:
        ci = c.cls
        if ci is None or any(n in ci.methods or n in ci.class_attrs for n in _PROTOCOL) or ci.dynamic_attrs:
            return True
    for label, bases in ctx.usage.client_vllm_bases.items():  # the client's own subclasses, and theirs
        if any(b == cls.qualname or any(c.qualname == cls.qualname for c in _mro_of(ctx, b)) for b in bases):
            members = ctx.usage.client_class_table.get(label, (set(), []))[0] | \
                ctx.usage.client_subclass_members.get(label, set())
            if any(n in members for n in _PROTOCOL):
                return True
    index = text_index_for(ctx.api)
    short = cls.qualname.rsplit(".", 1)[-1]
    todo, seen = [short], {short}
    while todo:  # vLLM's subclasses, by name (a same-named class elsewhere only makes this more careful)
        for rel, name in index.classes_naming_base(todo.pop()):
            sub = index.class_by_name(rel, name)
            if sub is None or any(n in sub.members for n in _PROTOCOL):
                return True
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return False


def _mro_of(ctx: ScanContext, qualname: str) -> list[Resolved]:
    found = ctx.api.resolve(qualname)
    return ctx.api.mro(found)[0] if isinstance(found, Resolved) and found.kind == "class" and found.cls else []


def check(ctx: ScanContext):
    iterated_by_file: dict[str, dict[int, str]] = {}

    def how(file, node) -> str | None:
        if file.rel not in iterated_by_file:
            iterated_by_file[file.rel] = _iterated(file.tree)
        return iterated_by_file[file.rel].get(id(node))

    told: set[tuple[str, int, int]] = set()
    uses = [(a.file, a.node, a.result, f"`{a.owner.qualname.rsplit('.', 1)[-1]}.{a.attr}`") for a in ctx.usage.attrs
            if not a.store and isinstance(a.result, Resolved) and a.result.kind == "attribute"]
    uses += [(c.file, c.node, c.target, f"`{c.target.qualname.rsplit('.', 1)[-1]}()`") for c in ctx.usage.calls
             if c.kind in ("function", "method") and c.target.func is not None]
    for file, node, resolved, what in uses:
        way = how(file, node)
        if way is None or (file.rel, node.lineno, node.col_offset) in told:
            continue
        cls = _one_class(ctx, resolved)
        if cls is None or _iterable_or_unknown(ctx, cls):
            continue
        told.add((file.rel, node.lineno, node.col_offset))
        name = cls.qualname.rsplit(".", 1)[-1]
        expr = (resolved.type_expr if resolved.kind == "attribute" else resolved.func.returns).strip("'\" ")
        yield ctx.finding(
            RULE, f"{way} iterates {what}, which is `{expr}` in {ctx.version_label()}: `{name}` defines neither "
                  f"`__iter__` nor `__getitem__` (nor does any class it derives from), so this line raises TypeError: "
                  f"'{name}' object is not iterable.",
            loc_of(file, node), ctx.location_of(resolved), resolved.qualname, when="call", fix=False,
            iterated_class=cls.qualname)


SIGNATURES = (
    Signature("the client iterates a vLLM object that is a record, not a container, in this vLLM.",
              "A value vLLM hands the client changed from a list into one object (vLLM 0.9.2: "
              "`SchedulerOutput.scheduled_cached_reqs` is one `CachedRequestData` whose fields are lists); "
              "iterate its fields instead (`req_ids`, with the others by index).",
              # a builtin's own type says nothing of vLLM: `'NoneType' object is not iterable` has many causes
              message=r"'(?!(?:NoneType|int|float|bool|str|bytes|function|method|type|module|builtin_function_or_method)')"
                      r"\w+' object is not iterable", exc_types=("TypeError",), priority=20),
)
