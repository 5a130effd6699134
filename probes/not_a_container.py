"""DC113 not-a-container: the client iterates, indexes or measures a vLLM value whose class is a record in the target.

vLLM changes a container into a record and code written for the old shape loops over it: vLLM 0.9.2 made
`SchedulerOutput.scheduled_cached_reqs` one `CachedRequestData` (a struct of arrays: `req_ids`,
`new_block_ids`, ...) where 0.9.1 had `list[CachedRequestData]`, and a KV connector's
`for req in scheduler_output.scheduled_cached_reqs:` fails with `TypeError: 'CachedRequestData' object is
not iterable` on the first step that schedules a running request (not at import, not at engine start).

The same change breaks `len(x)` ("object of type 'CachedRequestData' has no len()"), `x[0]` ("not
subscriptable"), `x[k] = v` and `r in x`.

The rule reads the target's annotation of what the client uses as a container: an attribute read (`obj.attr`,
`obj` a vLLM object driftcheck types) or a call of a vLLM function or method, that is
- iterated: by `for`, a comprehension, handed to `list`/`tuple`/`set`/`sorted`/`enumerate`/`zip`/`iter`/`dict`/
  `any`/`all`/`sum`/`min`/`max`/`map`/`filter`/`reversed` as a positional argument, or unpacked (`*x`,
  `a, b = x`): it needs `__iter__` or `__getitem__`;
- measured, `len(x)`: `__len__`;
- indexed, `x[i]`: `__getitem__`; assigned into, `x[i] = v`: `__setitem__`;
- searched, `r in x`: `__contains__`, `__iter__` or `__getitem__`.
It is an error only when the annotation names one vLLM class (or that class or None), and that class certainly
lacks what the operation needs:
- neither it nor any class of its MRO defines one of those methods, and every base is read (a base from outside
  vLLM other than `object`, `abc.ABC`, `typing.Generic`, `torch.nn.Module` keeps it unknown: pydantic's
  `BaseModel` and `NamedTuple` are containers);
- no vLLM class and no client class derived from it defines one (an abstract annotation may hold a subclass that
  does).
A use under `isinstance`, `hasattr` or a version check, or inside a `try` that catches TypeError, is a warning.

A str key on a module-level list, tuple or str vLLM binds once (`QUANTIZATION_METHODS["fp8"]`, read, set or
deleted, where 0.6.5 made the registry's dict a list of names) raises TypeError too: a sequence is indexed by
integers. Nothing where another vLLM file sets the name on its module, or the client rebinds it.
No fix: what to iterate instead depends on the record (`CachedRequestData.req_ids`, with the other fields by index).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.source_diffs import changed_files
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.facts import PLAIN_EXTERNAL_BASES, mro_defines_any
from driftcheck.vllm_model.class_summary import split_union
from driftcheck.vllm_model.resolved import Missing, Resolved

RULE = Rule("DC113", "not-a-container", "Client iterates, indexes or takes len() of a vLLM value whose class is a record",
            "error", kind="behaviour", raises=("TypeError",))


@dataclass(frozen=True)
class _Operation:
    how: str  # what the client does with the value, for the message: "`for` iterates"
    needs: tuple[str, ...]  # any one of these methods makes it work
    error: str  # the TypeError's message, with {name} for the class


def _iterates(how: str) -> _Operation:
    return _Operation(f"{how} iterates", ("__iter__", "__getitem__"), "'{name}' object is not iterable")


_LEN = _Operation("`len()` measures", ("__len__",), "object of type '{name}' has no len()")
_INDEX = _Operation("indexing reads", ("__getitem__",), "'{name}' object is not subscriptable")
_STORE = _Operation("an item assignment writes into", ("__setitem__",), "'{name}' object does not support item assignment")
_SEARCH = _Operation("`in` searches", ("__contains__", "__iter__", "__getitem__"), "argument of type '{name}' is not iterable")

# builtins that iterate their positional arguments
_ITERATING = frozenset({"list", "tuple", "set", "frozenset", "sorted", "enumerate", "zip", "iter", "dict", "any",
                        "all", "sum", "min", "max", "reversed", "map", "filter"})
# typing's names of containers (an annotation `Sequence[X]` is no record)
_TYPING_CONTAINERS = frozenset({"List", "Dict", "Set", "FrozenSet", "Tuple", "Sequence", "Mapping", "MutableMapping",
                                "Iterable", "Iterator", "Collection", "Generator", "AsyncIterator", "Deque",
                                "DefaultDict", "OrderedDict", "Counter", "ChainMap", "Optional", "Union", "Any"})
# bases outside vLLM that make no instance a container (a torch.nn.Module is none)
_PLAIN_EXTERNALS = PLAIN_EXTERNAL_BASES | {"torch.nn.Module"}


def _container_uses(tree: ast.Module) -> dict[int, _Operation]:
    """id(expression) -> what the file does with it as a container."""
    out: dict[int, _Operation] = {}
    rebound = {t.id for n in nodes_of(tree, ast.Assign) for t in n.targets if isinstance(t, ast.Name)} | \
        {n.name for n in nodes_of(tree, ast.FunctionDef, ast.ClassDef)}  # a `list` of the file's own is not the builtin
    for node in nodes_of(tree, ast.For):  # `async for` asks for __aiter__, another protocol
        out[id(node.iter)] = _iterates("`for`")
    for node in nodes_of(tree, ast.comprehension):
        if not node.is_async:
            out[id(node.iter)] = _iterates("a comprehension")
    for node in nodes_of(tree, ast.Call):
        func = node.func.id if isinstance(node.func, ast.Name) and node.func.id not in rebound else None
        if func == "len" and len(node.args) == 1 and not isinstance(node.args[0], ast.Starred):
            out[id(node.args[0])] = _LEN
        elif func in _ITERATING and not (func in ("min", "max", "iter") and len(node.args) != 1):
            # `max(a, b)` compares its arguments and `iter(f, sentinel)` calls f: neither iterates them
            for arg in node.args[1:] if func in ("map", "filter") else node.args if func == "zip" else node.args[:1]:
                if not isinstance(arg, ast.Starred):  # map's and filter's first argument is the function
                    out[id(arg)] = _iterates(f"`{func}()`")
    for node in nodes_of(tree, ast.Subscript):
        out[id(node.value)] = _STORE if isinstance(node.ctx, ast.Store) else _INDEX if isinstance(node.ctx, ast.Load) \
            else _Operation("`del` deletes from", ("__delitem__",), "'{name}' object doesn't support item deletion")
    for node in nodes_of(tree, ast.Compare):
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                out[id(right)] = _SEARCH
    for node in nodes_of(tree, ast.Starred):
        out.setdefault(id(node.value), _iterates("`*` unpacking"))
    for node in nodes_of(tree, ast.Assign):
        if any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets):
            out.setdefault(id(node.value), _iterates("unpacking"))
    return out


def _one_class(ctx: ScanContext, resolved: Resolved) -> Resolved | None:
    """The one vLLM class `resolved` (an attribute, property or function) evaluates to, when its annotation names only
    that class (or it or None)."""
    expr = resolved.type_expr if resolved.kind == "attribute" else resolved.func.returns if resolved.func else None
    parts = [p for p in split_union(expr) if p.strip("'\" ") != "None"] if expr else []
    shown = parts[0].strip("'\" ") if len(parts) == 1 else ""
    built = re.fullmatch(r"[A-Za-z_][\w.]*\((.*)\)", shown, re.S)  # `make_batch(Batch)`: built by a call, annotated
    head = (built.group(1) if built else shown).strip("'\" ").split("[", 1)[0].rsplit(".", 1)[-1]
    if not head[:1].isupper() or head in _TYPING_CONTAINERS:
        return None  # `list[X]`, `dict`, `int`, `Sequence[X]`: no vLLM class (a builtin or typing's), not asked further
    found = ctx.api.type_of(resolved)
    if not isinstance(found, Resolved) or found.kind != "class" or found.cls is None or found.otherwise is not None:
        return None
    return found


def _mro_of(ctx: ScanContext, qualname: str) -> list[Resolved]:
    found = ctx.api.resolve(qualname)
    return ctx.api.mro(found)[0] if isinstance(found, Resolved) and found.kind == "class" and found.cls else []


def _may_have(ctx: ScanContext, cls: Resolved, needs: tuple[str, ...]) -> bool:
    """Whether an instance of `cls` may have one of `needs`: its MRO defines one, a base is not read, or a subclass
    (vLLM's, by the text of its class lines; the client's) defines one."""
    if mro_defines_any(ctx.api, cls, needs, _PLAIN_EXTERNALS) is not False:
        return True
    for label, bases in ctx.usage.client_vllm_bases.items():  # the client's own subclasses, and theirs
        if any(b == cls.qualname or any(c.qualname == cls.qualname for c in _mro_of(ctx, b)) for b in bases):
            members = ctx.usage.client_class_table.get(label, (set(), []))[0] | \
                ctx.usage.client_subclass_members.get(label, set())
            if any(n in members for n in needs):
                return True
    index = text_index_for(ctx.api)
    short = cls.qualname.rsplit(".", 1)[-1]
    todo, seen = [short], {short}
    while todo:  # vLLM's subclasses, by name (a same-named class elsewhere only makes this more careful)
        for rel, name in index.classes_naming_base(todo.pop()):
            sub = index.class_by_name(rel, name)
            if sub is None or any(n in sub.members for n in needs):
                return True
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return False


def _diffed(ctx: ScanContext, *where: Resolved) -> bool:
    """A diff the client ships for a vLLM file that declares the value or its class may change either."""
    changed = changed_files(ctx.client.tree, ctx.api.tree)
    return any(r.path in changed for r in where)


def check(ctx: ScanContext):
    by_file: dict[str, dict[int, _Operation]] = {}
    told: set[tuple[str, int, int]] = set()
    uses = [(a.file, a.node, a.result, f"`{a.owner.qualname.rsplit('.', 1)[-1]}.{a.attr}`") for a in ctx.usage.attrs
            if not a.store and isinstance(a.result, Resolved) and a.result.kind == "attribute"]
    uses += [(c.file, c.node, c.target, f"`{c.target.qualname.rsplit('.', 1)[-1]}()`") for c in ctx.usage.calls
             if c.kind in ("function", "method") and c.target.func is not None]
    for file, node, resolved, what in uses:
        if file.rel not in by_file:
            by_file[file.rel] = _container_uses(file.tree)
        op = by_file[file.rel].get(id(node))
        if op is None or (file.rel, node.lineno, node.col_offset) in told:
            continue
        cls = _one_class(ctx, resolved)
        if cls is None or _may_have(ctx, cls, op.needs) or _diffed(ctx, resolved, cls):
            continue
        told.add((file.rel, node.lineno, node.col_offset))
        name = cls.qualname.rsplit(".", 1)[-1]
        expr = (resolved.type_expr if resolved.kind == "attribute" else resolved.func.returns).strip("'\" ")
        built = re.fullmatch(r"([A-Za-z_][\w.]*)\((.*)\)", expr, re.S)  # the resolver's `make_batch(Batch)`: built by a call
        shown = f"`{built.group(2).strip(chr(39) + chr(34))}` (what `{built.group(1)}()` returns)" if built else f"`{expr}`"
        needs = " nor ".join(f"`{n}`" for n in op.needs)
        yield ctx.finding(
            RULE, f"{op.how} {what}, which is {shown} in {ctx.version_label()}: `{name}` defines "
                  f"{'neither ' if len(op.needs) > 1 else 'no '}{needs} (nor does any class it derives from), so this "
                  f"line raises TypeError: {op.error.format(name=name)}.",
            loc_of(file, node), ctx.location_of(resolved), resolved.qualname, when="call", fix=False,
            record_class=cls.qualname)
    yield from _str_keys(ctx)


def _str_keys(ctx: ScanContext):
    """`QUANTIZATION_METHODS["fp8"]` where the release binds the name to a list, tuple or str (29g C1): the visit
    keeps it as a member use whose name is the key in brackets (visitor._visit_builtin_key)."""
    index = text_index_for(ctx.api)
    for use in ctx.usage.module_attrs:
        if not (use.attr.startswith("[") and isinstance(use.result, Missing)):
            continue
        name = use.module.rpartition(".")[2]
        if index.set_on_module_elsewhere(name, use.result.path):
            continue
        yield ctx.finding(
            RULE, f"`{name}` is {use.result.reason} in {ctx.version_label()} ({use.result.path}:{use.result.line}), "
                  f"indexed by integers: `{name}{use.attr}` raises TypeError when this line runs.",
            use.loc, ctx.vllm_location(use.result.path, use.result.line), f"{use.module}{use.attr}",
            when="call" if use.runtime_only else "import", fix=False)


# a builtin's own type says nothing of vLLM: `'NoneType' object is not iterable` has many causes
_NOT_BUILTIN = r"(?!(?:NoneType|int|float|bool|str|bytes|function|method|type|module|builtin_function_or_method)')"

SIGNATURES = (
    Signature("the client uses a vLLM object that is a record, not a container, in this vLLM, as a container.",
              "A value vLLM hands the client changed from a list into one object (vLLM 0.9.2: "
              "`SchedulerOutput.scheduled_cached_reqs` is one `CachedRequestData` whose fields are lists); "
              "iterate its fields instead (`req_ids`, with the others by index).",
              message=rf"'{_NOT_BUILTIN}\w+' object is not (?:iterable|subscriptable)|object of type '{_NOT_BUILTIN}\w+' has "
                      r"no len\(\)",
              exc_types=("TypeError",), priority=20),
    Signature("the client indexes a vLLM list by a name: the registry it was written for was a dict.",
              "A module-level registry vLLM keeps changed from a dict to a list of names (0.6.5's "
              "`QUANTIZATION_METHODS`); register through the release's own function "
              "(`register_quantization_config`, 0.7.0 on) and test membership with `in`.",
              message=r"(?:list|tuple|string) indices must be integers(?: or slices)?, not str",
              exc_types=("TypeError",), priority=20),
)
