"""Where vLLM builds a class one of its functions hands back: `connector_cls = cls.get_connector_class(config)` with
`get_connector_class(...) -> type[KVConnectorBaseType]`, then `connector_cls(config, role, kv_cache_config)`. A client
subclass of that class (a KV connector loaded by `kv_connector_module_path`) is built there with whatever arguments
vLLM passes, whatever its own `__init__` takes (DC109 reads these calls for a client `__init__`).

Only the plain shape is read: a function annotated `-> type[X]` (`Type[X]`, or as a string), a local of one function
bound once from a call of it, then called. A class held in a registry, a tuple or an attribute is not followed. A call
is a constructor protocol of X's family only where every vLLM subclass of X takes it (`family_takes`): `quant_cls()` in
the weight loader is made for the few quantization configs whose constructor needs nothing, not for any.
"""

from __future__ import annotations

import ast
import re
import weakref

from driftcheck.astnodes import dotted_name, functions_at, nodes_of, walk
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.sources.sources import module_name_for

_RETURNS_A_CLASS = re.compile(rb"->\s*[\"']?(?:typing\.)?[Tt]ype\[")
_FACTORIES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # api -> {function name: {class qualname}}


_FACTORY_DEF = re.compile(rb"def\s+(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*->\s*[\"']?(?:typing\.)?[Tt]ype\[\s*[\"']?([\w.]+)")


def factories(api, index) -> dict[str, set[str]]:
    """Every function of the target annotated to return a class, by name: the qualnames of the classes it says it
    returns (one search of the files whose text holds such an annotation, kept per target; the class is resolved in
    the module's summary, no file is parsed)."""
    found = _FACTORIES.get(api)
    if found is None:
        found = {}
        for rel, data in index.blobs().items():
            if b"ype[" not in data or not _RETURNS_A_CLASS.search(data):
                continue
            mod = None
            for m in _FACTORY_DEF.finditer(data):
                mod = mod or api.module(module_name_for(rel))
                cls = api.resolve_in_scope(mod, m.group(2).decode()) if mod is not None else None
                if isinstance(cls, Resolved) and cls.kind == "class":
                    found.setdefault(m.group(1).decode(), set()).add(cls.qualname)
        _FACTORIES[api] = found
    return found


def construction_sites(api, index, classes: set[str], files_calling):
    """(rel, tree, function, call, class qualname) of the target's calls `v(...)` of a local `v` its function binds
    once, from a call of a function annotated to return one of `classes` (that class: `v` may be any subclass of it,
    the client's among them). `files_calling(name)`: the target's files that may call `name`."""
    returns = {n: sorted(returned & classes) for n, returned in factories(api, index).items() if returned & classes}
    seen: set[tuple[int, int]] = set()
    for name in sorted(returns):
        for rel, tree, fn, call in _sites_of(api, name, files_calling):
            if (id(call), id(tree)) not in seen:
                seen.add((id(call), id(tree)))
                yield rel, tree, fn, call, returns[name][0]


_SITES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # api -> {factory name: its construction sites}


def _sites_of(api, name: str, files_calling) -> list:
    """(rel, tree, function, call) of the calls of a local bound from `name(...)`: kept per name, since the overrides
    of one client share their bases (every `__init__` of a CustomOp subclass asks for the same factories)."""
    per_api = _SITES.setdefault(api, {})
    found = per_api.get(name)
    if found is None:
        found = per_api[name] = []
        for rel in files_calling(name):
            tree = api.parse(rel)
            # only the functions that call the factory: `functions_at` descends to them, no walk of every function
            callers = {id(fns[-1]): fns[-1] for call in (nodes_of(tree, ast.Call) if tree is not None else ())
                       if _called_name(call.func) == name and (fns := functions_at(tree, call.lineno))}
            for fn in callers.values():
                found += [(rel, tree, fn, call) for call, _made in _calls_of_built(fn, {name})]
    return found


def _called_name(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _calls_of_built(fn: ast.AST, factory_names: set[str]) -> list[tuple[ast.Call, str]]:
    """In one function (not its nested ones): `v = <...>.factory(...)` (bound once), then `v(...)` after it; with the
    factory's name."""
    own = [n for n in walk(fn) if n is fn or not _inside_nested(fn, n)]
    bindings: dict[str, list[ast.AST]] = {}
    for node in own:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bindings.setdefault(node.id, []).append(node)
    out = []
    for node in own:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)):
            continue
        called = node.value.func
        made = _called_name(called)
        if made not in factory_names:
            continue
        var = node.targets[0].id
        if len(bindings.get(var, [])) != 1:
            continue  # rebound (`connector_cls = cast(...)`, another branch's class): not followed
        out += [(c, made) for c in own if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == var
                and c.lineno > node.lineno]
    return out


_NESTED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _inside_nested(fn: ast.AST, node: ast.AST) -> bool:
    """Whether `node` lies in a function or class nested in `fn` (its own scope's names are another's)."""
    spans = _NESTED.get(fn)
    if spans is None:
        spans = _NESTED[fn] = [(n.lineno, n.end_lineno or n.lineno) for n in walk(fn)
                               if n is not fn and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))]
    line = getattr(node, "lineno", None)
    return line is not None and any(lo <= line <= hi for lo, hi in spans) and not isinstance(node, ast.arguments)


def family_takes(api, cls, shape, check_call) -> bool:
    """Whether the constructor of `cls` and of every vLLM subclass of it takes the call's arguments: then vLLM builds
    any class of the family this way (a KV connector's `(config, role, kv_cache_config)`); where one of its own
    rejects them, the call is made only for some classes (which, is not known)."""
    for c in [cls, *api.subclasses(cls)]:
        init = api.class_member(c, "__init__")
        if not isinstance(init, Resolved) or init.func is None:
            continue  # object's: a class with no constructor of its own takes what its base does
        if [p for p in check_call(init.func.signature.without_first(), shape) if p.kind != "duplicate-argument"]:
            return False
    return True


def calls_by_global_name(tree: ast.Module, name: str) -> list[tuple[ast.AST | None, ast.Call]]:
    """(function, call) of the module's calls `name(...)` that read the module's global `name` (a function that binds
    `name` itself, by an import or an assignment, reads its own): where a replacement the client sets on the module
    (`module.Name = ClientSub`) is what runs (23b's R2: vllm-gaudi's MoE method class). A child process or thread
    started on it counts as the call it makes (`started_calls`)."""
    out = []
    named = [c for c in nodes_of(tree, ast.Call) if isinstance(c.func, ast.Name) and c.func.id == name]
    for call in named + started_calls(nodes_of(tree, ast.Call), name):
        fns = functions_at(tree, call.lineno)
        fn = fns[-1] if fns else None
        if fn is not None and _binds_locally(fn, name):
            continue
        out.append((fn, call))
    return out


_STARTERS = ("Process", "Thread")  # multiprocessing's (and a context's), threading's


def started_calls(calls, name: str) -> list[ast.Call]:
    """`Process(target=name, args=(a, b), kwargs={"k": v})` among `calls`, as the call `name(a, b, k=v)` the child
    makes (26f M1: vLLM 0.6.4.post1's api_server starts `run_mp_engine` so, with one argument more than 0.6.3.post1;
    happy_vllm had replaced that global with a function of its own). Only a tuple or list display of arguments and a
    dict display with string keys; the made call carries the start's position."""
    out = []
    for call in calls:
        if not isinstance(call, ast.Call) or (dotted_name(call.func) or "").rsplit(".", 1)[-1] not in _STARTERS:
            continue
        given = {k.arg: k.value for k in call.keywords if k.arg}
        target, args, kwargs = given.get("target"), given.get("args"), given.get("kwargs")
        if not (isinstance(target, ast.Name) and target.id == name) or call.args:
            continue
        if args is not None and (not isinstance(args, (ast.Tuple, ast.List)) or
                                 any(isinstance(e, ast.Starred) for e in args.elts)):
            continue
        if kwargs is not None and not (isinstance(kwargs, ast.Dict) and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in kwargs.keys)):
            continue
        made = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args.elts) if args is not None else [],
                        keywords=[ast.keyword(arg=k.value, value=v) for k, v in zip(kwargs.keys, kwargs.values)]
                        if kwargs is not None else [])
        made.started_by = call  # type: ignore[attr-defined]  (for messages: the start as written)
        out.append(ast.copy_location(made, call))
    return out


def _binds_locally(fn: ast.AST, name: str) -> bool:
    for n in walk(fn):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name for a in n.names):
            return True
        if isinstance(n, ast.arg) and n.arg == name:
            return True
    return False
