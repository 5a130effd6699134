"""DC109 override-signature-drift: vLLM calls a method the client overrides with arguments the client's `def` rejects.

Plugins subclass vLLM classes (a model runner, a worker, a KV connector), graft methods onto them
through patch classes (`class P(Patch[GPUModelRunner])`), or set functions on them
(`GPUModelRunner.initialize_kv_cache = my_init`, with `my_init` a module-level function or one the installing
function defines in its own body, a closure over the method it replaces). vLLM keeps calling those methods from its own
code, and when a release starts passing a new argument the override fails with `TypeError`
although the client's own call sites never changed: `GPUModelRunner` calls
`self.initialize_kv_cache(minimal_config, is_profiling=True)` from vLLM 0.20 on, so an override
`def initialize_kv_cache(self, kv_cache_config)` breaks; the worker calls
`self.model_runner.load_model(eep_scale_up=...)` (0.16) and `load_model(load_dummy_weights=...)`
(0.20+), so `def load_model(self)` breaks.

For each overriding method the probe reads the target's own call sites of that name, in the files
that mention it and one of the classes the client's object is an instance of, and keeps those whose
receiver is that object: `self.m(...)` in a class of the override's MRO (or, for a function set on
a class, also in its subclasses that inherit it), and `x.m(...)` where `x` is typed as one of those
classes (an annotated parameter, a typed `self.x` attribute), and the same calls made through a getattr hook
(`hook = getattr(module, "process_weights_after_loading", None)`, then `hook()`: vLLM 0.34.0's weight loader); a hook
on an untyped object a `for` loop binds reaches every object the loop visits that has the method, the client's maybe
among them: at most a warning. Each call's shape is bound against the
client's signature. Only calls vLLM's own method accepts count (a call its own `def` would reject is
not made on objects of that class), and only calls that are new since the vLLM the client was written
for (the same vLLM function made no call the client's `def` rejects: the client ran, so vLLM never
reached a rejected call for it). A keyword the client's `def` does not take (and no `**kwargs`), too
many positional arguments or a required parameter vLLM no longer passes is then an `error`: TypeError
when vLLM reaches that line. Without a vLLM of the client's own to compare with it is a warning. A call site inside a method the client itself overrides without calling
`super()` is never reached and is skipped; one whose function inspects signatures (`inspect.signature`,
the keyword as a string) or sits in a `try` catching `TypeError` is a warning. So is a call on `cls` inside another
classmethod of the base that vLLM itself calls only on classes its own code picks (`backend_class.validate_configuration`
in a platform's selector, never `cls.`/`self.`/`super().` of a class the client's derives from) and that the client
never calls: vLLM reaches it only if its selector picks the client's class. Each finding names
the vLLM call line and the client `def`.

A client `__init__` is read where vLLM builds the class (`vllm_model/class_factories.py`): a local its function binds
from a call of a vLLM function annotated `-> type[X]`, then calls (the KV connector factory's `connector_cls(config,
role, kv_cache_config)`: a connector loaded by `kv_connector_module_path` with a two-argument `__init__` fails from the
release that passes three, 22b's UCM), only where every vLLM subclass of X takes that call (`quant_cls()` in the weight
loader is made for some quantization configs only); and a vLLM module's own `Name(...)` calls of a class the client
sets on that module (`compressed_tensors_moe.CompressedTensorsWNA16MarlinMoEMethod = HPUMethod`, 23b's R2). Not a
client class only its own subclasses, each with its own `__init__`, derive from and nothing hands out
(`client_model/unbuilt_bases.py`, 30c F1).
"""

from __future__ import annotations

import ast
import bisect
import re
import weakref
from collections import deque

from driftcheck.astnodes import assignment_targets, children, dotted_name, first_line, nodes_of, own_scope, walk, within
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.class_factories import calls_by_global_name, construction_sites, family_takes, started_calls
from driftcheck.vllm_model.receivers import (annotated_globals, decorated_with, files_calling, files_calling_name, files_reading_by_getattr,
                                             receiver_classes)
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.vllm_model.signatures import check_call, signature_from_args
from driftcheck.client_model.unbuilt_bases import only_a_base
from driftcheck.client_model.uses import call_shape, loc_of
from driftcheck.client_model.client_classes import built_by_the_client, grafted_class
from driftcheck.client_model.imported_functions import imported_function
from driftcheck.client_model.platform_workers import other_platforms_worker, own_workers
from driftcheck.sources.sources import module_name_for

RULE = Rule("DC109", "override-signature-drift", "vLLM calls a method the client overrides with arguments its def rejects",
            "error", kind="behaviour", raises=("TypeError",), baseline=True)

MAX_CALL_FILES = 80  # a name vLLM calls in more files than this is too generic to read every call of


class _Override:
    def __init__(self, file, node, owner: Resolved, name: str, how: str, client_cls: ast.ClassDef | None,
                 further: bool = False):
        self.file, self.node, self.owner, self.name, self.how, self.client_cls = file, node, owner, name, how, client_cls
        # another client subclass of a vLLM class whose first subclass is read too (`_other_subclasses`): only a
        # certain failure is said for it again; a hedged one would repeat the first subclass's (29f D1)
        self.further = further


def _class(api, qualname: str) -> Resolved | None:
    found = api.resolve(qualname)
    return found if isinstance(found, Resolved) and found.kind == "class" else None


_BY_FILE: dict[int, tuple[dict, dict]] = {}  # id(subclass_members) -> (it, rel -> [(vqual, [(member, where)])])


def _members_in(subclass_members: dict, files: dict) -> list:
    """subclass_members' entries made in `files`, in its order: a unit of one file skips every other file's
    (the global table is shared by all the units of a scan)."""
    held = _BY_FILE.get(id(subclass_members))
    if held is None or held[0] is not subclass_members:
        by_rel: dict[str, dict[str, list]] = {}
        for vqual, members in subclass_members.items():
            for member, where in members.items():
                by_rel.setdefault(where[1], {}).setdefault(vqual, []).append((member, where))
        _BY_FILE.clear()  # one scan's table at a time
        held = _BY_FILE[id(subclass_members)] = (subclass_members, by_rel)
    if len(files) == 1:
        return list(held[1].get(next(iter(files)), {}).items())
    return [(vqual, [(m, w) for m, w in members.items() if w[1] in files]) for vqual, members in subclass_members.items()]


def _other_subclasses(ctx: ScanContext, files: dict) -> list:
    """The overrides of the client's second and later subclasses of a vLLM class (`subclass_members` keeps one
    client class per member, the first; 29b R1: two `Scheduler` subclasses with the same outdated `schedule(self)`),
    from `client_overrides`, which lists every client class, in `_members_in`'s shape. Only the unit's files, from a
    table made once per scan (a whole-platform client has thousands of overrides and a unit per file); none without
    the client's own vLLM, where a further subclass could only repeat the first one's warning (29f D1)."""
    usage = ctx.usage
    held = _FURTHER.get(id(usage.client_overrides))
    if held is None or held[0] is not usage.client_overrides:
        _FURTHER.clear()  # one scan's table at a time
        held = _FURTHER[id(usage.client_overrides)] = (usage.client_overrides, _further_overrides(usage))
    by_rel = held[1]
    if not any(rel in by_rel for rel in files) or not ctx.baseline():
        return []
    return [entry for rel in files for entry in by_rel.get(rel, ())]


_FURTHER: dict[int, tuple[dict, dict]] = {}  # id(client_overrides) -> (it, rel -> [(vqual, [(member, where)])])


def _further_overrides(usage) -> dict[str, list]:
    out: dict[str, dict[str, list]] = {}
    for vqual, methods in usage.client_overrides.items():
        first = usage.subclass_members.get(vqual, {})
        for member, entries in methods.items():
            for label, sig in entries:
                owner = label.rsplit(".", 1)[0]
                if first.get(member, ("",))[0] != owner:
                    out.setdefault(sig.path, {}).setdefault(vqual, []).append((member, (owner, sig.path, sig.line)))
    return {rel: list(table.items()) for rel, table in out.items()}


_DEFS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # module tree -> class name -> (def, its methods)


def _method_def(tree: ast.Module, cls_name: str, member: str):
    """(the first module-level `class cls_name`, its first `def member`): the file's classes listed once, not searched
    once per member (a client subclass of a runner defines dozens). A class an `if` / `try` / `with` of the module
    defines counts (ATOM's `if not disable_vllm_plugin: class ATOMPlatform(RocmPlatform): ...`, 26n MISS-1)."""
    classes = _DEFS.get(tree)
    if classes is None:
        classes = _DEFS[tree] = {}
        for node in _module_level(tree.body):
            if isinstance(node, ast.ClassDef) and node.name not in classes:
                methods: dict[str, ast.AST] = {}
                for n in node.body:
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        methods.setdefault(n.name, n)
                classes[node.name] = (node, methods)
    cdef, methods = classes.get(cls_name, (None, {}))
    return cdef, methods.get(member)


def _module_level(body: list):
    """The statements a module runs at import, in order: its own and those of its `if`, `try` and `with` blocks."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.With, ast.AsyncWith)):
            yield from _module_level(node.body)
            yield from _module_level(getattr(node, "orelse", []))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _module_level(block)


def _overrides(ctx: ScanContext) -> list[_Override]:
    """Client methods that stand in for a vLLM method: subclass and patch-class members, functions set on a class."""
    api, usage = ctx.api, ctx.usage
    by_rel = {f.rel: f for f in usage.files}
    out: list[_Override] = []
    seen: set[tuple] = set()
    for further, (vqual, members) in [*((False, e) for e in _members_in(usage.subclass_members, by_rel)),
                                      *((True, e) for e in _other_subclasses(ctx, by_rel))]:
        vcls = None
        for member, (label, rel, _line) in members:
            if (member.startswith("__") and member != "__init__") or (label, member) in seen:
                continue  # (`__init__`: read where vLLM builds a class one of its functions hands back)
            file = by_rel[rel]
            cdef, fn = _method_def(file.tree, label.rsplit(".", 1)[-1], member)
            if fn is None:
                continue
            vcls = vcls or _class(api, vqual)
            if vcls is None:
                break
            target = api.class_member(vcls, member)
            # the most derived vLLM class that has the method: the one whose own class defines it
            if not (isinstance(target, Resolved) and target.kind == "method" and target.owner is not None
                    and target.owner.qualname == vcls.qualname):
                continue
            seen.add((label, member))
            out.append(_Override(file, fn, vcls, member, "subclass", cdef, further))
    # `Cls.m = f` / setattr(Cls, "m", f) with a module-level function f of the same file, or a function the
    # installing function defines itself (`def _install(): ... def wrapper(self, ...): ...; Cls.m = wrapper`)
    for file in usage.files:
        functions = {n.name: n for n in file.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for node in nodes_of(file.tree, ast.Assign, ast.Call):  # the file's one-walk index
            pairs, fn = [], None
            value = _unwrapped(node.value) if isinstance(node, ast.Assign) else None
            def_file = file
            if isinstance(value, ast.Name) and any(isinstance(t, ast.Attribute) for t in node.targets):
                fn = _function_named(file.tree, node, value.id, functions)
                if fn is None:  # `from pkg.engine import run_mp_engine`, then `api_server.run_mp_engine = ...`
                    def_file, fn = imported_function(ctx.client, file, value.id) or (file, None)
                if fn is not None:
                    pairs = [(t.value, t.attr) for t in node.targets if isinstance(t, ast.Attribute)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and len(node.args) == 3 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                    and isinstance(node.args[2], ast.Name):
                fn = _function_named(file.tree, node, node.args[2].id, functions)
                if fn is not None:
                    pairs = [(node.args[0], node.args[1].value)]
            for obj, attr in pairs:
                short = ast.unparse(obj).rsplit(".", 1)[-1]
                for vqual, name in usage.patched:
                    if name != attr or ("patch", vqual, attr) in seen or \
                            (vqual.rsplit(".", 1)[-1] != short and not _imported_as(file.tree, vqual, short)):
                        continue
                    vcls = _class(api, vqual)
                    if vcls is None:
                        # `selector._cached_get_attn_backend = _patched`: a module function the module itself calls
                        # by name (23a's M3, turboquant-amd at vLLM 0.33.0)
                        func = api.resolve(f"{vqual}.{attr}") if api.module(vqual) is not None else None
                        if isinstance(func, Resolved) and func.kind == "function" and func.func is not None:
                            seen.add(("patch", vqual, attr))
                            found = _Override(def_file, fn, func, attr, "module", None)
                            found.where = api.module(vqual).path  # the module whose global the client replaced
                            out.append(found)
                        continue
                    if not isinstance(api.class_member(vcls, attr), Resolved):
                        continue
                    seen.add(("patch", vqual, attr))
                    out.append(_Override(def_file, fn, vcls, attr, "patch", None))
    return out


_KEEPS_SIGNATURE = frozenset({"cache", "lru_cache"})  # functools' memoisers (vLLM's `selector.cache` is one)


def _unwrapped(value: ast.expr) -> ast.expr:
    """`cache(f)` / `functools.lru_cache(maxsize=None)(f)`: the function a memoiser wraps, which takes the same
    arguments (turboquant-amd's `selector._cached_get_attn_backend = selector.cache(_patched)`, 23a's M3)."""
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        callee = value.func.func if isinstance(value.func, ast.Call) else value.func
        if (dotted_name(callee) or "").rsplit(".", 1)[-1] in _KEEPS_SIGNATURE:
            return value.args[0]
    return value


_FUNCTION_DEFS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # tree -> (names any def binds, defs by line)


def _imported_as(tree: ast.Module, module: str, name: str) -> bool:
    """Whether the file binds `name` to the module by an alias (`import vllm.entrypoints.openai.api_server as
    vllm_api_server`, `from vllm.entrypoints.openai import api_server as srv`)."""
    for node in nodes_of(tree, ast.Import, ast.ImportFrom):
        for a in node.names:
            if (a.asname or a.name) == name and (a.name if isinstance(node, ast.Import) else
                                                  f"{node.module}.{a.name}" if node.module else "") == module:
                return True
    return False


def _function_named(tree: ast.Module, node: ast.AST, name: str, module_functions: dict):
    """The function `name` holds where `node` (a store of it onto an attribute) runs: a function that a function
    around `node` defines in its own body before that line (the innermost such scope, as a closure sees it), provided
    that scope binds the name no other way (a parameter or another assignment of the name there leaves it unknown:
    None); else the module's own function of that name."""
    held = _FUNCTION_DEFS.get(tree)
    if held is None:
        defs = sorted(nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef), key=lambda n: n.lineno)
        held = _FUNCTION_DEFS[tree] = ({d.name for d in defs}, defs)
    names, defs = held
    if name not in names:
        return None
    line = node.lineno
    around = []  # the functions whose bodies hold the line, outermost first (sorted by first line)
    for d in defs:
        if d.lineno > line:
            break
        if d is not node and (d.end_lineno or d.lineno) >= line and d.body and d.body[0].lineno <= line:
            around.append(d)
    for scope in reversed(around):
        local, other = None, False
        for n in own_scope(scope):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name and n.lineno < line:
                local = local or n
                other = other or n is not local
            elif isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
                other = True
        params = scope.args
        if any(a.arg == name for a in [*params.posonlyargs, *params.args, *params.kwonlyargs, params.vararg, params.kwarg]
               if a):
            other = True
        if local is not None:
            return None if other else local
        if other:
            break  # a name this scope binds itself: not a def of an enclosing one
    return module_functions.get(name)


def _client_signature(ov: _Override):
    fn = ov.node
    decorators = {ast.unparse(d).rsplit(".", 1)[-1] for d in fn.decorator_list}
    sig = signature_from_args(fn.args, ov.file.rel, fn.lineno)
    if "staticmethod" in decorators or ov.how == "module":
        return sig, decorators
    return sig.without_first(), decorators


def _skipped_methods(ov: _Override) -> set[str]:
    """Methods the client class overrides without calling super(): vLLM's own body of those never runs for it."""
    if ov.client_cls is None:
        return set()
    return _methods_without_super(ov.client_cls, ov.file.text) - {ov.name}


_WITHOUT_SUPER: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the breaks `ast` numbers lines by (not \f or \x1c, which splitlines takes)


def _methods_without_super(cls: ast.ClassDef, text: str) -> set[str]:
    """The methods of a client class whose source never says `super(...).<their own name>`: read once per class,
    not once per override of it (a plugin's runner subclass overrides dozens of methods). Only a method whose own
    lines hold the word `super` is unparsed and searched: the others cannot call it."""
    found = _WITHOUT_SUPER.get(cls)
    if found is None:
        lines = _LINE_BREAK.split(text) if "super" in text else []

        def without(n) -> bool:
            return not any("super" in line for line in lines[n.lineno - 1:n.end_lineno or n.lineno]) \
                or not re.search(rf"super\(\s*\w*\s*,?\s*\w*\s*\)\.{re.escape(n.name)}\b", ast.unparse(n))
        found = _WITHOUT_SUPER[cls] = {name for name, defs in _defined_in_every_branch(cls.body).items()
                                       if all(without(d) for d in defs)}
    return found


def _defined_in_every_branch(body: list[ast.stmt]) -> dict[str, list]:
    """The methods a class body defines whatever its `if`s take: its own `def`s, and those both branches of an
    `if` / `else` define (vllm-ascend's `if vllm_version_is(...): def prepare_inputs(...) else: def prepare_inputs(...)`,
    27e C3b), each with every def of it."""
    out: dict[str, list] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.If) and node.orelse:
            taken, other = _defined_in_every_branch(node.body), _defined_in_every_branch(node.orelse)
            for name in taken.keys() & other.keys():
                out.setdefault(name, []).extend(taken[name] + other[name])
    return out


_ONLY_THROUGH_DEPTH = 6  # vLLM's processors reach `_call_hf_processor` four calls below `apply`


def _method_of(parents: dict, tree: ast.Module, node: ast.AST):
    """(the method a node sits in, its class) when that class is at the module's top level, else (None, None)."""
    cur, inner = parents.get(id(node)), None
    while cur is not None:
        if isinstance(cur, ast.ClassDef):
            return (inner, cur) if inner is not None and parents.get(id(cur)) is tree else (None, None)
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = cur
        cur = parents.get(id(cur))
    return None, None


def _only_through_answers(ctx: ScanContext) -> dict:
    return {}


def _reached_only_through(ctx: ScanContext, ov: _Override, method: str, skipped: set[str],
                          seen: frozenset = frozenset()) -> bool:
    """Whether vLLM's `method` (the one a call to the override sits in) runs for the client's object only from
    methods the client replaces without super(): every call of it in the target is `self.method(...)` or
    `super().method(...)` in a method of a class of the override's MRO that is itself replaced, or reached only that
    way (a few calls deep), and no client file calls it. A call from a class outside the MRO is on another object; a
    call on any other receiver may be on the client's, and so may a name called in too many places to read. Comb's
    `CombDummyProcessor` (batch 30c) replaces `apply`, and vLLM 0.33 calls `_call_hf_processor` only from
    `_apply_hf_processor_main` < `_apply_hf_processor` < `_cached_apply_hf_processor` < `apply`."""
    if method in skipped:
        return True
    if not seen:  # the answer for a method asked first, kept per override class and replaced set
        memo = ctx.once(_only_through_answers)
        key = (ov.owner.qualname, frozenset(skipped), method)
        if key not in memo:
            memo[key] = _reached_only_through(ctx, ov, method, skipped, frozenset({method}))
        return memo[key]
    if len(seen) > _ONLY_THROUGH_DEPTH or method.startswith("__"):
        return False
    if _called_in(ctx.client.files, method):
        return False
    api = ctx.api
    index = text_index_for(api)
    holders = _mro_names(api, ov.owner)
    files = files_calling(api, index, method)
    if not files or len(files) > MAX_CALL_FILES:
        return False  # no call of it: vLLM reaches it some other way (a callback, a name looked up)
    name = method.encode()
    other_use = re.compile(rb"\." + re.escape(name) + rb"\b(?!\s*\()|[\"']" + re.escape(name) + rb"[\"']")
    if any(other_use.search(index.blob(rel)) for rel in index.files_mentioning(method)):
        return False  # handed on uncalled (`fn = self.m`) or named in a string (`getattr(self, "m")`)
    for rel in files:
        tree = api.parse(rel)
        if tree is None:
            return False
        parents, calls = _file_calls(api, rel, tree, index.blob(rel), method)
        mod = api.module(module_name_for(rel)) if calls else None
        for node in calls:
            recv = node.func.value
            caller, cls_node = _method_of(parents, tree, node)
            if caller is None or mod is None:
                return False
            params = caller.args.posonlyargs + caller.args.args
            via_super = isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super"
            via_self = isinstance(recv, ast.Name) and bool(params) and recv.id == params[0].arg and \
                not decorated_with(caller, "staticmethod")
            if not (via_super or via_self):
                return False
            if f"{mod.name}.{cls_node.name}" not in holders:
                continue  # another class's object (a sibling subclass calling its own method)
            if caller.name in seen:
                continue  # a cycle among these methods gives no way in from outside
            if not _reached_only_through(ctx, ov, caller.name, skipped, seen | {caller.name}):
                return False
    return True


def _other_platforms_only(ctx: ScanContext, rel: str, parents: dict, node: ast.AST) -> str | None:
    """Why a call site runs only in another platform's worker (`platform_workers.py`): it sits in a method of such a
    worker, or in a method or module function that vLLM calls only from such workers, a few calls deep (27b F1:
    `_init_minimal_kv_cache_for_profiling` < `profile_cudagraph_memory` < `GPUModelRunner.profile_cudagraph_memory`
    < the CUDA `Worker`), and the client never calls; None otherwise."""
    api = ctx.api
    tree = api.parse(rel)
    mod = api.module(module_name_for(rel))
    fn, _cls_node, scope_cls = _enclosing(api, mod, tree, parents, node)
    own = other_platforms_worker(ctx, scope_cls)
    if own is not None:
        return _worker_why(own, f"the call is in vLLM's `{scope_cls.qualname.rsplit('.', 1)[-1]}`")
    workers: set[str] = set()
    if fn is None or not _only_from_workers(ctx, rel, tree, parents, fn, scope_cls, 0, workers) or not workers:
        return None
    return _worker_why(own_workers(ctx), f"vLLM calls `{fn.name}` only from its "
                                         f"{', '.join(f'`{w}`' for w in sorted(workers))}")


_WORKER_DEPTH = 4  # profile_cudagraph_memory's chain is three calls from the CUDA worker


def _only_from_workers(ctx: ScanContext, rel: str, tree: ast.Module, parents: dict, fn, cls, depth: int,
                       workers: set[str]) -> bool:
    """Whether every call of `fn` (a method of a top-level class, or a module function) in the target sits in another
    platform's worker or in a function reached only from such workers; the worker classes met go to `workers`."""
    module_function = cls is None and parents.get(id(fn)) is tree
    if depth > _WORKER_DEPTH or fn.name.startswith("__") or not (cls is not None or module_function):
        return False
    name = fn.name
    if _called_in(ctx.client.files, name) or (module_function and any(
            re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", f.text) for f in ctx.client.files)):
        return False
    api = ctx.api
    index = text_index_for(api)
    quoted = re.compile(rb"[\"']" + re.escape(name.encode()) + rb"[\"']")
    mentioning = index.files_mentioning(name)
    if len(mentioning) > MAX_CALL_FILES or any(quoted.search(index.blob(r)) for r in mentioning):
        return False  # named in a string (`getattr(self, "m")`, an rpc), or too common to read
    calls = 0
    for caller_rel in mentioning:
        caller_tree = api.parse(caller_rel)
        if caller_tree is None:
            return False
        found = _calls_of_callable(caller_tree, name, module_function, caller_rel == rel)
        if found is None:
            return False  # handed on uncalled (`fn = self.m`, `executor.submit(m)`)
        caller_parents = _parents_of(caller_tree)
        caller_mod = api.module(module_name_for(caller_rel))
        for call in found:
            calls += 1
            caller_fn, _, caller_cls = _enclosing(api, caller_mod, caller_tree, caller_parents, call)
            own = other_platforms_worker(ctx, caller_cls)
            if own is not None:
                workers.add(caller_cls.qualname.rsplit(".", 1)[-1])
            elif caller_fn is None or caller_fn is fn or not _only_from_workers(
                    ctx, caller_rel, caller_tree, caller_parents, caller_fn, caller_cls, depth + 1, workers):
                return False
    return calls > 0


def _calls_of_callable(tree: ast.Module, name: str, module_function: bool, home: bool) -> list[ast.Call] | None:
    """The calls of `name` in one file: `x.name(...)`, and for a module function also `name(...)` where the file
    defines it (`home`) or imports it (under any alias); None where the file uses the name any other way."""
    aliases = {name} if module_function and home else set()
    imports: set[int] = set()
    for node in nodes_of(tree, ast.ImportFrom) if module_function else ():
        for a in node.names:
            if a.name == name:
                aliases.add(a.asname or a.name)
                imports.add(id(node))
    called = [c for c in nodes_of(tree, ast.Call)
              if isinstance(c.func, ast.Attribute) and c.func.attr == name
              or isinstance(c.func, ast.Name) and c.func.id in aliases]
    funcs = {id(c.func) for c in called}
    # (for a method, a bare name of the same spelling is another file's function: only `x.name` reads count)
    for node in nodes_of(tree, ast.Name, ast.Attribute) if module_function else nodes_of(tree, ast.Attribute):
        word = node.id if isinstance(node, ast.Name) else node.attr
        if (word == name or word in aliases) and id(node) not in funcs and isinstance(node.ctx, ast.Load):
            return None
    return called


def _worker_why(own, where: str) -> str:
    names = ", ".join(f"`{label}`" for label in own.labels)
    return (f"{where}, another platform's worker: the client's platform names its own worker ({names}) as worker_cls, "
            f"so this runs only where the client's object is used with vLLM's worker")


def _called_in(files, method: str) -> bool:
    """Whether any of these client files calls a method of that name (`.method(`), on whatever object."""
    call = re.compile(rf"\.{re.escape(method)}\s*\(")
    return any(call.search(f.text) for f in files)


def _mro_names(api, cls: Resolved) -> set[str]:
    order, _, _ = api.mro(cls)
    return {c.qualname for c in order}


def _inspects(fn: ast.AST | None, keywords: list[str]) -> bool:
    if fn is None:
        return False
    text = ast.unparse(fn)
    if "signature(" in text or "getfullargspec" in text or "supports_kw" in text:
        return True
    # a keyword tested by name (`if "num_heads" in params:`); a dict key or value of that spelling built for another
    # call checks nothing (27b W1: `{"chat_template_kwargs": ...}`). A positional overflow has no name
    wanted = {k for k in keywords if k}
    return any(isinstance(c.left, ast.Constant) and c.left.value in wanted and
               all(isinstance(op, (ast.In, ast.NotIn)) for op in c.ops) for c in walk(fn) if isinstance(c, ast.Compare))


_PLATFORM_METHODS = {"forward_hip": "ROCm", "forward_xpu": "Intel XPU", "forward_cpu": "CPU", "forward_tpu": "TPU",
                     "forward_hpu": "Gaudi", "forward_oot": "an out-of-tree platform", "forward_neuron": "Neuron"}


def _platform_only(api, fn, typed: Resolved) -> str | None:
    """The platform a call site runs on when it sits in a CustomOp's per-platform method (`MRotaryEmbedding.forward_xpu`
    calls `self.forward_cuda(...)` with an argument more: on XPU only; 23c's F2, vLLM-Kunlun): `CustomOp.forward`
    dispatches to one of them by the platform vLLM runs on, which a static scan does not know."""
    platform = _PLATFORM_METHODS.get(getattr(fn, "name", ""))
    if platform is None or not any(c.qualname.rsplit(".", 1)[-1] == "CustomOp" for c in api.mro(typed)[0]):
        return None
    return platform


def _in_type_error_try(parents: dict, node: ast.AST) -> bool:
    cur = parents.get(id(node))
    while cur is not None:
        if isinstance(cur, ast.Try) and any(h.type is None or "TypeError" in ast.unparse(h.type) or
                                            ast.unparse(h.type) == "Exception" for h in cur.handlers):
            return True
        cur = parents.get(id(cur))
    return False


def _patch_source(ctx: ScanContext, ov: _Override) -> bool:
    """A subclass override in a class whose methods another client file copies onto vLLM classes and that the client
    never builds (TriAttention's `TriAttentionScheduler`, whose helpers are set on vLLM's `Scheduler`): no object of
    it may exist for vLLM to call the method on."""
    if ov.how != "subclass" or ov.client_cls is None:
        return False
    module = ov.file.module
    return grafted_class(ctx.usage, f"{module}.{ov.client_cls.name}") and \
        not built_by_the_client(ctx.client, module, ov.client_cls.name)


def _enclosing(api, mod, tree: ast.Module, parents: dict, node: ast.AST):
    """(the innermost function around a call, the class around that, the class as vLLM's summary knows it when it
    is a top-level class of the module)."""
    fn, cls_node = None, None
    cur = parents.get(id(node))
    while cur is not None:
        if fn is None and isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fn = cur
        if isinstance(cur, ast.ClassDef):
            cls_node = cur
            break
        cur = parents.get(id(cur))
    scope_cls = None
    if cls_node is not None and mod is not None and cls_node.name in mod.classes and parents.get(id(cls_node)) is tree:
        scope_cls = _class(api, f"{mod.name}.{cls_node.name}")
    return fn, cls_node, scope_cls


def _call_sites(ctx: ScanContext, ov: _Override):
    """(path, call node, enclosing function, owner class name, parents) of the target's calls that reach the override."""
    api = ctx.api
    if ov.name == "__init__":
        yield from _construction_sites(ctx, ov)
        return
    if ov.how == "module":  # the module's own calls of the name read its global, which the client replaced
        where = getattr(ov, "where", None) or ov.owner.path  # (the function may be imported there from elsewhere)
        tree = api.parse(where)
        for fn, node in calls_by_global_name(tree, ov.name) if tree is not None else ():
            yield where, node, fn, ov.owner, _parents_of(tree), False, None
        return
    index = text_index_for(api)
    mro = api.mro(ov.owner)[0]
    holders = {c.qualname for c in mro}
    short_names = {c.qualname.rsplit(".", 1)[-1] for c in mro}
    # a file may reach the object through a global another module annotates with the class (`current_platform`)
    held = {g for s in short_names for g in annotated_globals(api, index, s)}
    # or through a function of the class's own module annotated to return it (`offloader = get_offloader()`: 29h O1)
    held |= {f.name for c in mro if c.module is not None for f in c.module.functions.values()
             if (f.returns or "").strip("'\" ") in short_names}
    files = [rel for rel in files_calling(api, index, ov.name)
             if any(s.encode() in index.blob(rel) for s in short_names | held)]
    if len(files) > MAX_CALL_FILES:
        return None
    for rel in files:
        tree = api.parse(rel)
        if tree is None:
            continue
        parents, calls = _file_calls(api, rel, tree, index.blob(rel), ov.name)
        if not calls:
            continue  # the text's `.name(` was in a string or a comment: no summary of this module is needed
        mod = api.module(module_name_for(rel))
        for node in calls:
            recv = node.func.value
            if isinstance(recv, ast.Call):
                continue  # super().m(...): a vLLM subclass calling its parent, not the client's object
            fn, _cls_node, scope_cls = _enclosing(api, mod, tree, parents, node)
            for typed in receiver_classes(api, mod, scope_cls, fn, recv):
                reaches = typed.qualname in holders
                if not reaches and ov.how == "patch" and ov.owner.qualname in _mro_names(api, typed):
                    member = api.class_member(typed, ov.name)
                    reaches = isinstance(member, Resolved) and member.owner is not None and member.owner.qualname == ov.owner.qualname
                if reaches:
                    yield rel, node, fn, typed, parents, recv is not None and isinstance(recv, ast.Name) and typed is scope_cls, None
                    break
    yield from _hook_sites(ctx, ov, holders)
    if ov.name == "forward":
        yield from _module_call_sites(ctx, ov)


_HELD_AS = re.compile(rb"self\.(\w+)\s*(?::[^=\n]*)?=\s*(?:[\w.]+\.)?(\w+)\(")  # `self.self_attn = Qwen3NextAttention(`


def _module_call_sites(ctx: ScanContext, ov: _Override):
    """`self.self_attn(hidden_states=h, positions=p)` where `self.self_attn` holds the class whose `forward` the client
    replaces: torch's `Module.__call__` runs `forward` with those arguments (23b's R6: vllm-gaudi's
    `Qwen3NextAttention.forward` takes `output`, which vLLM 0.26.0's decoder layer no longer passes). Only attributes
    vLLM's own code builds from that very class, and calls whose receiver is typed as it; only for a `forward` the client
    sets on the class itself, which every object of it runs."""
    api = ctx.api
    if ov.how != "patch" or "torch.nn.Module" not in api.mro(ov.owner)[2]:
        return  # (a subclass's `forward` runs only on objects of the subclass: vLLM builds its own class there)
    index = text_index_for(api)
    short = ov.owner.qualname.rsplit(".", 1)[-1]
    holding = set(index.files_mentioning(short))
    if len(holding) > MAX_CALL_FILES:
        return
    attrs = sorted({m.group(1).decode() for rel in holding for m in _HELD_AS.finditer(index.blob(rel))
                    if m.group(2).decode() == short})
    for attr in attrs:
        # the files that build the class hold the calls (`self.self_attn` is called in a hundred model files)
        for rel in [rel for rel in files_calling(api, index, attr) if rel in holding]:
            tree = api.parse(rel)
            if tree is None:
                continue
            parents, calls = _file_calls(api, rel, tree, index.blob(rel), attr)
            mod = api.module(module_name_for(rel)) if calls else None
            for node in calls:
                if isinstance(node.func.value, ast.Call):
                    continue
                fn, _cls_node, scope_cls = _enclosing(api, mod, tree, parents, node)
                typed = receiver_classes(api, mod, scope_cls, fn, node.func)
                if typed and all(t.qualname == ov.owner.qualname for t in typed):
                    yield rel, node, fn, typed[0], parents, False, None


def _construction_sites(ctx: ScanContext, ov: _Override):
    """A client `__init__`: vLLM's calls of a class one of its functions hands back as `type[X]`, X the vLLM class
    the client's derives from or an ancestor of it (`connector_cls(config, role, kv_cache_config)` in the KV connector
    factory; 22b's UCM). Only in a subclass: a patch class or a function set as `__init__` is built the same way, but
    a subclass is what such a factory loads."""
    if ov.how != "subclass" or (ov.client_cls is not None and only_a_base(ctx.client, ov.client_cls)):
        return  # (a base only the client's own subclasses build, through `super().__init__`: 30c F1)
    api = ctx.api
    index = text_index_for(api)
    holders = {c.qualname for c in api.mro(ov.owner)[0]}
    for rel, tree, fn, node, made in construction_sites(api, index, holders, lambda name: files_calling_name(index, name)):
        built = _class(api, made)
        if built is not None and family_takes(api, built, call_shape(node), check_call):
            yield rel, node, fn, built, _parents_of(tree), False, None
    # `module.Name = ClientSub`: the module's own calls of `Name(...)` build the client's class (23b's R2)
    for (owner, attr), rebindings in ctx.usage.rebound.items():
        mod = api.module(owner) if any(r.code == ov.client_cls.name for r in rebindings) else None
        tree = api.parse(mod.path) if mod is not None else None
        replaced = _class(api, f"{owner}.{attr}") if tree is not None else None
        if replaced is None or replaced.qualname not in holders:
            continue  # (the client's class derives from the replaced one: `super().__init__` reaches vLLM's)
        for fn, node in calls_by_global_name(tree, attr):
            yield mod.path, node, fn, replaced, _parents_of(tree), False, None


_PARENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _parents_of(tree: ast.Module) -> dict:
    found = _PARENTS.get(tree)
    if found is None:
        found = _PARENTS[tree] = {id(child): node for node in walk(tree) for child in children(node)}
    return found


def _hook_sites(ctx: ScanContext, ov: _Override, holders: set[str]):
    """vLLM's calls of the method through a getattr hook (`hook = getattr(module, "process_weights_after_loading",
    None)`, then `hook()`: vLLM 0.34.0's weight loader calls it so on every module of the model): a receiver typed as
    a class of the override's MRO reaches it as `x.m(...)` does; an untyped one that a `for` loop of the function
    binds is every object the loop visits that has the method, the client's maybe among them (the 7th item: that
    loop's iterable, a warning's reason). A method only some hooks reach is not certain: never an error."""
    api = ctx.api
    index = text_index_for(api)
    files = files_reading_by_getattr(api, index, ov.name)
    if len(files) > MAX_CALL_FILES:
        return
    for rel in files:
        tree = api.parse(rel)
        if tree is None:
            continue
        parents, sites = _hook_calls_in(api, rel, tree, ov.name)
        if not sites:
            continue
        mod = api.module(module_name_for(rel))
        for node, loop in sites:
            fn, _cls_node, scope_cls = _enclosing(api, mod, tree, parents, node)
            classes = receiver_classes(api, mod, scope_cls, fn, node.func.value)
            typed = next((t for t in classes if t.qualname in holders), None)
            if typed is not None:
                yield rel, node, fn, typed, parents, False, None
            elif loop is not None and not classes:
                yield rel, node, fn, ov.owner, parents, False, loop


_HOOK_CALLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
def _hook_calls_in(api, rel: str, tree: ast.Module, name: str) -> tuple[dict, list[tuple[ast.Call, str | None]]]:
    """(child id -> parent, [(a stand-in `x.name(...)` call, the iterable of the `for` loop that binds `x` or None)])
    for each call of a getattr hook of `name` in the file: `getattr(x, "name"[, d])(...)`, or a local bound to one
    and called later in the same function. The stand-in has the hook call's arguments and place, and the hook call's
    parent, so every question DC109 asks of a call (its function, a `try` around it) has its answer."""
    per_api = _HOOK_CALLS.setdefault(api, {})
    found = per_api.get(rel)
    if found is None or found[0] is not tree:  # every name's hooks of the file, in one walk
        found = per_api[rel] = (tree, *_hook_calls(tree))
    return found[1], found[2].get(name, [])


def _hook_calls(tree: ast.Module) -> tuple[dict, dict[str, list[tuple[ast.Call, str | None]]]]:
    parents: dict = {}
    for parent in walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
    sites: dict[str, list[tuple[ast.Call, str | None]]] = {}
    for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        scope = own_scope(fn)
        if not any(isinstance(n, ast.Name) and n.id == "getattr" for n in scope):
            continue
        bound: dict[str, tuple[ast.expr, str]] = {}  # local -> (the object its getattr reads, the name read)
        for node in sorted((n for n in scope if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
            read = _getattr_of(node.value)
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and read is not None:
                bound[node.targets[0].id] = read
        for node in scope:
            if not isinstance(node, ast.Call):
                continue
            read = _getattr_of(node.func)
            if read is None and isinstance(node.func, ast.Name) and node.func.id in bound:
                read = bound[node.func.id]
            if read is None:
                continue
            recv, name = read
            stand_in = ast.copy_location(ast.Call(func=ast.copy_location(ast.Attribute(value=recv, attr=name, ctx=ast.Load()),
                                                                          node.func), args=node.args, keywords=node.keywords), node)
            parents[id(stand_in)] = parents.get(id(node))
            sites.setdefault(name, []).append((stand_in, _loop_binding(parents, node, recv)))
    return parents, sites


def _getattr_of(node: ast.expr) -> tuple[ast.expr, str] | None:
    """(`x`, "name") of `getattr(x, "name")` / `getattr(x, "name", default)`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
            2 <= len(node.args) <= 3 and not node.keywords and isinstance(node.args[1], ast.Constant) \
            and isinstance(node.args[1].value, str):
        return node.args[0], node.args[1].value
    return None


def _loop_binding(parents: dict, node: ast.AST, recv: ast.expr) -> str | None:
    """The iterable of the innermost `for` loop around `node` whose target is the name `recv` (`for module in
    children_first(model)` -> "children_first(model)"), inside the same function; None otherwise."""
    if not isinstance(recv, ast.Name):
        return None
    cur = parents.get(id(node))
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        if isinstance(cur, (ast.For, ast.AsyncFor)) and isinstance(cur.target, ast.Name) and cur.target.id == recv.id:
            return ast.unparse(cur.iter)
        cur = parents.get(id(cur))
    return None


_FILE_CALLS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
def _file_calls(api, rel: str, tree: ast.Module, data: bytes, name: str) -> tuple[dict, list[ast.Call]]:
    """(child id -> parent of the nodes walked, the file's `x.name(...)` calls in `ast.walk` order). The walk enters
    only the nodes whose lines hold the text `name` (a call's lines hold its attribute's name), so one method's calls
    cost the few statements that name it, not a walk of the whole file per file (the bulk of this rule on a plugin
    overriding dozens of runner methods); a file with `\r` line breaks (which `ast` counts and `\n` does not) is
    walked whole. `parents` is shared by the names asked: a node's parent is the same whoever walked to it."""
    per_api = _FILE_CALLS.setdefault(api, {})
    found = per_api.get(rel)
    if found is None or found[0] is not tree:
        found = per_api[rel] = (tree, {}, {})
    _, parents, calls = found
    if name not in calls:
        calls[name] = _calls_of(tree, name, None if b"\r" in data else _lines_holding(data, name.encode()), parents)
    return parents, calls[name]


def _lines_holding(data: bytes, needle: bytes) -> list[int]:
    out: list[int] = []
    line, pos = 1, 0
    at = data.find(needle)
    while at >= 0:
        line += data.count(b"\n", pos, at)
        pos = at
        if not out or out[-1] != line:
            out.append(line)
        at = data.find(needle, at + len(needle))
    return out


def _calls_of(tree: ast.Module, name: str, lines: list[int] | None, parents: dict) -> list[ast.Call]:
    """ast.walk's breadth-first order, each node's children listed once, entering only nodes whose lines hold one of
    `lines` (all of them when `lines` is None)."""
    calls: list[ast.Call] = []
    todo = deque([tree])
    while todo:
        parent = todo.popleft()
        for field in parent._fields:
            value = getattr(parent, field, None)
            for child in value if isinstance(value, list) else (value,):
                if not isinstance(child, ast.AST):
                    continue
                if lines is not None and hasattr(child, "lineno"):
                    start = first_line(child) if getattr(child, "decorator_list", None) else child.lineno
                    i = bisect.bisect_left(lines, start)
                    if i == len(lines) or lines[i] > (child.end_lineno or child.lineno):
                        continue  # the name is nowhere in this node's lines: no call of it inside
                parents[id(child)] = parent
                todo.append(child)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == name:
            calls.append(parent)
    return calls


def _params(fn) -> set[str]:
    args = getattr(fn, "args", None)
    return {a.arg for a in (args.posonlyargs + args.args + args.kwonlyargs)} if args is not None else set()


def _imported_in(fn, name: str) -> bool:
    """Whether the function binds `name` by an import of its own (`from .x import SomeBackend` inside it)."""
    return fn is not None and any(
        (a.asname or a.name.split(".")[0]) == name
        for node in walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names)


def _picked_by_vllm(ctx: ScanContext, ov: _Override, fn) -> str | None:
    """Where vLLM calls the classmethod `fn` (which holds the call of the override on `cls`), when none of its calls
    goes on through the client's class: every `X.fn(...)` of the target is on a class its own code picks (a selector's
    `backend_cls`, a class it names) and none on `cls`/`self`/`super()` of a class the client's class derives from,
    nor on an attribute typed as one; and the client itself never calls `fn`. Then vLLM reaches the override only if
    its selector picks the client's class (a class the client only keeps beside its own, or hands to a platform of
    its own that selects without validating, is never picked): not certain. None when a call goes on through the
    client's class, or when there are too many to read."""
    if not decorated_with(fn, "classmethod") or fn.name == ov.name:
        return None
    if _called_in(ctx.usage.files, fn.name):
        return None  # the client calls it itself, perhaps on its own class
    api = ctx.api
    index = text_index_for(api)
    holders = _mro_names(api, ov.owner)
    files = files_calling(api, index, fn.name)
    if len(files) > MAX_CALL_FILES:
        return None
    first = None
    for rel in files:
        tree = api.parse(rel)
        if tree is None:
            return None
        parents, calls = _file_calls(api, rel, tree, index.blob(rel), fn.name)
        mod = api.module(module_name_for(rel))
        for node in calls:
            recv = node.func.value
            caller, cls_node, scope_cls = _enclosing(api, mod, tree, parents, node)
            if isinstance(recv, ast.Call):  # super().fn(...): goes on through the class it is written in
                if cls_node is None or scope_cls is None or scope_cls.qualname in holders:
                    return None
                continue
            typed = receiver_classes(api, mod, scope_cls, caller, recv)
            if any(t.qualname in holders for t in typed):
                return None  # `cls.fn(...)` in a class the client's derives from, or a typed attribute
            if typed:
                continue  # on another class of vLLM's (its own subclass's `cls`), never the client's
            if isinstance(recv, ast.Name) and mod is not None and recv.id not in _params(caller):
                named = api.module_member(mod, recv.id)
                if (isinstance(named, Resolved) and named.kind == "class") or _imported_in(caller, recv.id):
                    continue  # `SomeBackend.fn(...)`: the class it names, never the client's
            if isinstance(recv, ast.Name) and caller is not None and scope_cls is None and cls_node is not None:
                return None  # a method of a class this file does not summarise: cannot tell what `cls` is
            first = first or f"{rel}:{node.lineno}"
    return first or "nowhere"


def _vllm_signature(api, ov: _Override):
    """The signature of vLLM's own method the client's def replaces (as a bound call sees it)."""
    if ov.how == "module":
        return ov.owner.func.signature
    own = api.class_member(ov.owner, ov.name)
    if not isinstance(own, Resolved) or own.func is None:
        return None
    sig = own.func.signature
    return sig if own.func.is_static else sig.without_first()


def _enclosing_qualname(parents: dict, tree, fn) -> str | None:
    if fn is None:
        return None
    parts = [fn.name]
    cur = parents.get(id(fn))
    while cur is not None and cur is not tree:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            parts.append(cur.name)
        cur = parents.get(id(cur))
    return ".".join(reversed(parts))


def _survived(baseline, rel: str, qual: str | None, name: str, sig, built: str | None = None) -> bool | None:
    """Did the same function of the client's own vLLM already call `name` in a way the client's def rejects (so
    vLLM never reached that line for the client's object)? None when the function is not there. `built`: for an
    `__init__`, the local the call builds (`connector_cls(...)`), whose calls there are compared instead."""
    if baseline is None or qual is None:
        return None
    tree = baseline.parse(rel)
    if tree is None:
        return None
    target = None
    stack = [(tree, "")]
    while stack and target is None:
        node, prefix = stack.pop()
        for child in children(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = f"{prefix}{child.name}"
                if q == qual and not isinstance(child, ast.ClassDef):
                    target = child
                    break
                stack.append((child, q + "."))
    if target is None:
        return None
    if built is not None:
        started = started_calls(walk(target), built)
    for node in [*walk(target), *started] if built is not None else walk(target):
        if built is not None:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == built \
                    and [p for p in check_call(sig, call_shape(node)) if p.kind != "duplicate-argument"]:
                return True
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
                and not isinstance(node.func.value, ast.Call):
            if [p for p in check_call(sig, call_shape(node)) if p.kind != "duplicate-argument"]:
                return True
    for node, _loop in _hook_calls_in(baseline, rel, tree, name)[1]:  # the same hook there (getattr, then a call)
        if within([node], target) and [p for p in check_call(sig, call_shape(node)) if p.kind != "duplicate-argument"]:
            return True
    return False



def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _exits(body: list) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _none_guards(fn: ast.AST, call: ast.Call) -> list[str]:
    """`X` of each `if self.X is None: ... return` (or `if not self.X:`) among the function's own statements before
    the call's line, whose body always leaves the function: past it, `self.X` holds a value."""
    out = []
    for stmt in getattr(fn, "body", []):
        if stmt.lineno >= call.lineno:
            break
        if not isinstance(stmt, ast.If) or not _exits(stmt.body):
            continue
        test = stmt.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            attr = test.operand
        elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
                and _is_none(test.comparators[0]):
            attr = test.left
        else:
            continue
        if isinstance(attr, ast.Attribute) and isinstance(attr.value, ast.Name) and attr.value.id == "self":
            out.append(attr.attr)
    return out


def _never_set_for_client(ctx: ScanContext, ov: _Override, typed: Resolved, attr: str, skipped: set[str]) -> bool:
    """Whether `self.<attr>` never holds a value on the client's object: the client never names it, and every
    vLLM method of its classes that stores a value other than None there is one the client replaces without
    calling super(); nothing else in the tree stores it on another object."""
    if ov.client_cls is None or re.search(rf"\b{re.escape(attr)}\b", ov.file.text):
        return False
    api = ctx.api
    index = text_index_for(api)
    mro = {c.qualname for c in api.mro(typed)[0]}
    setters: set[str] = set()
    for rel in index.files_mentioning(attr):
        tree = api.parse(rel)
        if tree is None:
            return False
        mod_name = module_name_for(rel)
        # the file's stores to `.attr`, from its node buckets: a walk of every method of every file naming the
        # attribute was most of this rule on a plugin overriding many methods
        stores = [n for n in nodes_of(tree, ast.Assign, ast.AnnAssign, ast.AugAssign)
                  if any(isinstance(t, ast.Attribute) and t.attr == attr for t in assignment_targets(n))]
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)) if stores else ():
            inside = f"{mod_name}.{cls.name}" in mro
            for method in (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
                for node in within(stores, method):
                    for t in assignment_targets(node):
                        if not (isinstance(t, ast.Attribute) and t.attr == attr):
                            continue
                        if not (isinstance(t.value, ast.Name) and t.value.id == "self"):
                            return False  # set on another object
                        value = getattr(node, "value", None)
                        if inside and value is not None and not _is_none(value):
                            setters.add(method.name)
        for node in nodes_of(tree, ast.Call):  # stores outside any class body's methods (module code, setattr)
            if isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and any(isinstance(a, ast.Constant) and a.value == attr for a in node.args[1:2]):
                return False
    return bool(setters) and setters <= skipped


def check(ctx: ScanContext):
    if not ctx.usage.subclass_members and not ctx.usage.patched:
        return
    baseline = None
    for ov in _overrides(ctx):
        sig, decorators = _client_signature(ov)
        if decorators & {"property", "cached_property"}:
            continue
        skipped = _skipped_methods(ov)
        sites = _call_sites(ctx, ov)
        if sites is None:
            yield ctx.unknown(RULE, f"`{ov.name}` is called in too many places of {ctx.version_label()} to check every call "
                              f"against the client's override", loc_of(ov.file, ov.node), f"{ov.owner.qualname}.{ov.name}")
            continue
        reported: set[str] = set()
        own_sig = _vllm_signature(ctx.api, ov)
        # a site that runs only in another platform's worker is read after the others (appended to the list this
        # loop walks), so it is reported only where no other site shows the same problem
        queue: list = [(site, None) for site in sites]
        for site, off_platform in queue:
            rel, node, fn, typed, parents, via_self, loop = site
            if via_self and fn is not None and fn.name in skipped:
                continue  # the client replaces the method this call is in
            if via_self and fn is not None and any(_never_set_for_client(ctx, ov, typed, attr, skipped)
                                                   for attr in _none_guards(fn, node)):
                continue  # past `if self.X is None: return`, where only methods the client replaces store X
            shape = call_shape(node)
            problems = [p for p in check_call(sig, shape) if p.kind != "duplicate-argument"]
            if not problems:
                continue
            if own_sig is None or [p for p in check_call(own_sig, shape) if p.kind != "duplicate-argument"]:
                continue  # vLLM's own method would fail too: this call is not made on objects of this class
            caller = _method_of(parents, ctx.api.parse(rel), node)[0] if via_self and skipped else None
            if caller is not None and _reached_only_through(ctx, ov, caller.name, skipped):
                continue  # the method this call is in runs only from methods the client replaces
            if baseline is None:
                baseline = ctx.baseline() or False
            qual = _enclosing_qualname(parents, ctx.api.parse(rel), fn)
            built = node.func.id if (ov.name == "__init__" or ov.how == "module") and isinstance(node.func, ast.Name) else None
            through = node.func.attr if isinstance(node.func, ast.Attribute) and node.func.attr != ov.name else None
            survived = _survived(baseline or None, rel, qual, through or ov.name, sig, built)
            if survived:
                continue  # the client's vLLM made the same call and the client ran: vLLM does not reach it for this class
            p = problems[0]
            key = f"{p.kind}:{p.name}"
            if key in reported:
                continue
            if off_platform is None:
                off_platform = _other_platforms_only(ctx, rel, parents, node) or ""
                if off_platform:  # a warning at most: another call site of the same problem may be an error
                    queue.append((site, off_platform))
                    continue
            reported.add(key)
            what = {"unknown-keyword": f"passes '{p.name}=', which the client's def does not take",
                    "too-many-positional": f"passes {shape.n_positional} positional argument(s), more than the client's def takes",
                    "missing-argument": f"does not pass '{p.name}', which the client's def requires"}.get(p.kind, p.detail)
            soft = _inspects(fn, [p.name]) or _in_type_error_try(parents, node)
            gated = _platform_only(ctx.api, fn, typed)
            certain = p.kind in ("unknown-keyword", "too-many-positional") or not (shape.star_args or shape.star_kwargs)
            if loop is not None:
                why = (f"vLLM calls it through `getattr` on every object the loop over `{loop}` visits that has "
                       f"`{ov.name}`, and whether the client's objects are among them is not known")
            elif soft:
                why = "vLLM checks the signature or catches TypeError around it"
            elif off_platform:
                why = off_platform
            elif gated is not None:
                why = (f"the call is in `{fn.name}`, which vLLM's CustomOp runs only on {gated}, so it fails only "
                       "where the client runs there")
            elif _patch_source(ctx, ov):
                why = (f"`{ov.client_cls.name}` is a class whose methods the client copies onto vLLM's classes and "
                       f"never builds itself, so vLLM may never call its `{ov.name}`")
            elif via_self and fn is not None and (picked := _picked_by_vllm(ctx, ov, fn)) is not None:
                where = "never calls it," if picked == "nowhere" else f"calls it only on classes its own code picks, as at {picked},"
                why = (f"the call is in the classmethod `{fn.name}`, and vLLM {where} never through the client's class: "
                       f"it reaches this call only if its selector picks the client's class")
            elif survived is None and not baseline:
                why = (f"there is no vLLM of the client's own to tell whether this call is new "
                       f"({ctx.baseline_note or 'unavailable'}), so vLLM may never reach it for this class")
            else:
                why = ""
            severity = "error" if certain and not why else "warning"
            if ov.further and severity != "error":
                continue
            was = "" if not baseline else f" (new since vLLM {baseline.version}, the client's vLLM)"
            short = typed.qualname.rsplit(".", 1)[-1]
            start = getattr(node, "started_by", None)
            if ov.how == "module" and start is not None:
                called = (f"starts its module function `{short}` in a child, `{dotted_name(start.func)}(target={short}, "
                          f"args=...)`, which the client replaces,")
            elif ov.how == "module":
                called = f"calls its module function `{short}`, which the client replaces,"
            elif through is not None:  # a module's `__call__`, which runs `forward`
                called = f"calls a `{short}`, `{ast.unparse(node.func)}(...)`, which runs its `forward`,"
            elif built is None:
                called = f"calls `{ov.name}` on a `{short}`"
            elif built == short:  # the module's own name, which the client rebinds to its class
                called = (f"builds `{ast.unparse(node)[:120]}` by its module's name `{short}`, which the client "
                          f"sets to its `{ov.client_cls.name}`")
            else:
                called = (f"builds the `{short}` class a function of its own hands back, `{ast.unparse(node)[:120]}`, "
                          f"the client's subclass where vLLM is set to use it")
            vllm_name = ov.owner.qualname if ov.how == "module" else f"{ov.owner.qualname}.{ov.name}"
            message = (f"{ctx.version_label()} {called} ({rel}:{node.lineno}){was} and {what}: the client's "
                       f"`{ov.name}{sig.render()}` "
                       + ("raises TypeError when vLLM reaches that line." if severity == "error"
                          else f"may raise TypeError there ({why}).")
                       + f" vLLM's own `{vllm_name}{own_sig.render()}` takes it.")
            yield ctx.finding(RULE, message, loc_of(ov.file, ov.node), ctx.vllm_location(rel, node.lineno),
                              f"{vllm_name}({p.name or '*'})", when="call", severity=severity, fix=False,
                              problem=p.kind, argument=p.name or None, how=ov.how, call=ast.unparse(node)[:200],
                              raised_later=True)
