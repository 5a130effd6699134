"""Members the client itself sets on typed objects (run by `finish_client` once every file was visited)."""

from __future__ import annotations

import ast

from driftcheck.vllm_model.class_summary import flatten_class_body
from driftcheck.astnodes import attribute_stores, nodes_of
from driftcheck.client_model.saved_originals import read_before_own_store
from driftcheck.client_model.unread_code import takes_new_attributes
from driftcheck.client_model.uses import AttrUse, Usage
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.bodies import enclosing_function
from driftcheck.vllm_model.resolved import External, InSubclass, Missing, Resolved, Unknown


def credit_client_stores(usage: Usage, api: ApiIndex) -> None:
    """A member the client itself assigns on objects of a vLLM class exists on those objects once that code
    ran: reading it is the client's own attribute, not a vLLM drift. Two kinds of evidence: a store on a
    receiver of the same (or a related) class anywhere in the client, or a store through the same variable
    name in the same file (`prefill = attn_metadata.prefill; prefill.req_to_token = ...` in a builder, then
    `prefill.req_to_token` in the backend that reads it). An assignment on some unrelated object hides nothing."""
    typed: dict[str, list[tuple[Resolved, str]]] = {}  # attribute -> (class of the receiver, where) of each store
    for use in usage.attrs:
        # a store of a member only some subclass of the receiver's class defines (`self.old_quant_method.fused_experts
        # = ...` on a `FusedMoEMethodBase` where only `FusedMoEModularMethod` has it) sets it on that object too (ZV)
        if use.store and isinstance(use.result, (Missing, InSubclass)):
            typed.setdefault(use.attr, []).append((use.owner, f"{use.loc.path}:{use.loc.line}"))
    for owner, attr, where in usage.union_stores:  # a receiver annotated `A | B` is one of them
        typed.setdefault(attr, []).append((owner, where))
    by_name: dict[str, set[tuple[str, str]]] = {}  # file -> {(variable, attribute)} it assigns
    chained: dict[tuple[str, str], str] | None = None  # (last receiver attribute, attribute) -> where, in any file
    other: _OtherReferences | None = None  # stores through references to a client class's object other than `self`
    for use in usage.attrs:
        if use.store or not isinstance(use.result, Missing):
            continue
        if id(use.node) in read_before_own_store(use.file.tree) \
                and all(where.rpartition(":")[0] == use.file.rel for _owner, where in typed.get(use.attr, ())):
            continue  # `orig = Cls.m` before the client's one `Cls.m = wrap(orig)`: vLLM's member is read (23a's M2)
        made = _typed_store(use, typed.get(use.attr, ()), api)
        if made is None and isinstance(use.node.value, ast.Name):
            if use.file.rel not in by_name:
                by_name[use.file.rel] = _named_stores(use.file.tree)
            if (use.node.value.id, use.attr) in by_name[use.file.rel]:
                made = f"{use.file.rel} assigns {use.node.value.id}.{use.attr}"
        elif made is None and isinstance(use.node.value, ast.Attribute):
            # `vllm_config.scheduler_config._original_cls = ...` in a platform hook that types vllm_config as Any
            if chained is None:
                chained = _chained_stores(usage.files)
            made = chained.get((use.node.value.attr, use.attr))
        doubt = None
        if made is None and not (isinstance(use.node.value, ast.Name) and use.node.value.id == "self"):
            if other is None:
                other = _OtherReferences(usage)
            made = other.declared(use, api)
        if made is None and isinstance(use.node.value, ast.Name) and use.node.value.id == "self":
            if other is None:
                other = _OtherReferences(usage)
            made, doubt = other.stored(use)
            if made is None and doubt is None:
                doubt = _replaced_base_sets(usage, api, use)
        if made is not None:
            use.result = External(f"client-set.{use.owner.qualname}.{use.attr} ({made})")
        elif doubt is not None:
            use.result = Unknown(use.result.qualname, doubt)
        elif use.unread_may_set is not None:
            use.result = Unknown(use.result.qualname, use.unread_may_set)  # a plugin the client runs under may set it
        elif usage.partial_package is not None and takes_new_attributes(api, use.owner):
            use.result = Unknown(use.result.qualname, (
                f"the tree holds only part of the client's package: it imports {usage.partial_package}, which is not "
                f"here, and that code may set '{use.attr}' on `{use.owner.cls.name}` objects"))


def _typed_store(use: AttrUse, stores, api: ApiIndex) -> str | None:
    mro = {c.qualname for c in api.mro(use.owner)[0]}
    for owner, where in stores:
        if owner.qualname in mro or use.owner.qualname in {c.qualname for c in api.mro(owner)[0]}:
            return where
    return None


def _chained_stores(files) -> dict[tuple[str, str], str]:
    """(last receiver attribute, attribute) -> where, for `a.b.attr = ...` anywhere in the client."""
    out: dict[tuple[str, str], str] = {}
    for file in files:
        for t, line in attribute_stores(file.tree):
            if isinstance(t.value, ast.Attribute):
                out.setdefault((t.value.attr, t.attr), f"{file.rel}:{line}")
    return out


def _named_stores(tree: ast.AST) -> set[tuple[str, str]]:
    """(variable, attribute) for `var.attr = ...` in a file; each class's `self` is another object, so not those."""
    return {(t.value.id, t.attr) for t, _line in attribute_stores(tree)
            if isinstance(t.value, ast.Name) and t.value.id not in ("self", "cls")}


class _OtherReferences:
    """`self.x` read in a method of a client class whose vLLM bases lack `x`, where other client code stores `x`
    through another reference to the object: `self.runner.layer_name_to_kvcache_index = {}` in the helper the runner
    builds with `KVCacheManager(self)` (tpu-inference). A reference typed as the class (a parameter annotated with it,
    or `self.runner` bound from one) makes the member the class's own; an untyped one, where the class hands `self`
    to other code, leaves it unknown; no store, or a class that hands itself to nothing, keeps the error."""

    def __init__(self, usage: Usage):
        self.usage = usage
        self.stores: dict[str, list[tuple[object, ast.Attribute, int]]] | None = None
        self.factories: dict[str, set[str]] | None = None  # client function -> classes its returns build
        self.bases: dict[str, set[str]] | None = None  # client class -> the names of its bases
        short: dict[str, int] = {}
        for label in usage.client_class_table:
            name = label.rsplit(".", 1)[-1]
            short[name] = short.get(name, 0) + 1
        self.unique = {n for n, count in short.items() if count == 1}

    def _stores_of(self, attr: str) -> list[tuple[object, ast.Attribute, int]]:
        if self.stores is None:
            self.stores = {}
            for file in self.usage.files:
                for target, line in attribute_stores(file.tree):
                    if not (isinstance(target.value, ast.Name) and target.value.id in ("self", "cls")):
                        self.stores.setdefault(target.attr, []).append((file, target, line))
        return self.stores.get(attr, [])

    def declared(self, use: AttrUse, api: ApiIndex) -> str | None:
        """`vllm_config.x` read on a vLLM class where another file stores `x` through a parameter annotated with that
        class's name, a name its file does not bind (`def check_and_update_config(cls, vllm_config: "VllmConfig")`
        in a platform that never imports `VllmConfig`): the annotation cannot be resolved, so the store is not typed,
        but it names the class the object is; the member is the client's own (ZS). A name the file binds (an import,
        a class of its own) is resolved as that binding, and credited by `_typed_store` when it is vLLM's."""
        names = {c.qualname.rsplit(".", 1)[-1] for c in api.mro(use.owner)[0]}
        for file, target, line in self._stores_of(use.attr):
            annotation = _reference_annotation(file.tree, target)
            if annotation in names and not _binds(file.tree, annotation):
                return f"{file.rel}:{line} stores it on a `{annotation}`"
        return None

    def stored(self, use: AttrUse) -> tuple[str | None, str | None]:
        cls = _method_class(use.file.tree, use.node)
        if cls is None or cls.name not in self.unique:
            return None, None
        untyped = None
        for file, target, line in self._stores_of(use.attr):
            annotation = _reference_annotation(file.tree, target)
            if annotation == cls.name:
                return f"{file.rel}:{line} stores it on a `{cls.name}`", None
            if annotation is None and (built := self._factory_builds(file, target, cls.name)):
                return f"{file.rel}:{line} stores it on the value of `{built}`, which may build a `{cls.name}`", None
            if annotation is None and untyped is None:
                untyped = f"{file.rel}:{line}"
        handed = _hands_self(cls) if untyped else None
        if handed:
            return None, (f"`{cls.name}` hands `self` to other code ({use.file.rel}:{handed}) and {untyped} stores "
                          f"'{use.attr}' on an object driftcheck cannot type, which may be this one")
        return None, None


    def _factory_builds(self, file, target: ast.Attribute, name: str) -> str | None:
        """Where a store's receiver is `self.x` and a method of the storing class binds `self.x = make(...)` with a
        client function whose `return Cls(...)` statements build `name` or a client subclass of it (vllm-ascend's
        `self.speculator = init_speculator(...)`, which returns the Eagle, MTP, DFlash or DSpark speculator, then
        `self.speculator.update_stream = ...`): the store may be on an object of that class. The call as written."""
        receiver = target.value
        if not (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self"):
            return None
        owner = _method_class(file.tree, target)
        for stmt in nodes_of(owner, ast.Assign, ast.AnnAssign) if owner is not None else ():
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if not any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                       and t.attr == receiver.attr for t in targets):
                continue
            value = stmt.value
            func = _annotated_as(value.func) if isinstance(value, ast.Call) else None
            if func is not None and any(self._derives(built, name) for built in self._returns(func)):
                return f"{ast.unparse(value.func)}(...)"
        return None

    def _returns(self, func: str) -> set[str]:
        """The classes the client's top-level functions named `func` build in their `return Cls(...)` statements."""
        if self.factories is None:
            self.factories = {}
            for f in self.usage.files:
                for fn in f.tree.body:
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        built = {c for r in nodes_of(fn, ast.Return) if (c := _constructed(r.value))}
                        if built:
                            self.factories.setdefault(fn.name, set()).update(built)
        return self.factories.get(func, set())

    def _derives(self, name: str, base: str, depth: int = 0) -> bool:
        """Whether the client class `name` is `base` or derives from it through client classes (by name)."""
        if name == base:
            return True
        if self.bases is None:
            self.bases = {}
            for f in self.usage.files:
                for c in f.tree.body:
                    if isinstance(c, ast.ClassDef):
                        self.bases.setdefault(c.name, set()).update(b for b in map(_annotated_as, c.bases) if b)
        return depth < 8 and any(self._derives(b, base, depth + 1) for b in self.bases.get(name, ()))


def _binds(tree: ast.Module, name: str) -> bool:
    """Whether the module binds `name` anywhere: an import, a class or function, an assignment (a TYPE_CHECKING
    import counts: the annotation is then resolved, not only named)."""
    for node in nodes_of(tree, ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef, ast.Name):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in node.names):
                return True
        elif isinstance(node, ast.Name):
            if node.id == name and isinstance(node.ctx, ast.Store):
                return True
        elif node.name == name:
            return True
    return False


def _replaced_base_sets(usage: Usage, api: ApiIndex, use: AttrUse) -> str | None:
    """`self.x` in a method of a client class whose vLLM base B the client replaces on B's module with a class of its
    own that sets `self.x` (`sched_mod.Scheduler = BalanceScheduler`, whose `__init__` sets `_disable_preemption`): a
    client class that runs `from sched_mod import Scheduler` after that line subclasses the replacement and has the
    member; one imported before does not. Which comes first is import order, which driftcheck cannot know."""
    cls = _method_class(use.file.tree, use.node)
    if cls is None:
        return None
    for base in api.mro(use.owner)[0]:
        module, _, name = base.qualname.rpartition(".")
        for rebinding in usage.rebound.get((module, name), ()):
            replacement = _class_named(usage, rebinding.where.rsplit(":", 1)[0], rebinding.code)
            if replacement is None or replacement is cls:
                continue
            if any(isinstance(t.value, ast.Name) and t.value.id == "self" and t.attr == use.attr
                   for t, _line in attribute_stores(replacement)):
                return (f"the client replaces `{base.qualname}` with its own `{replacement.name}` ({rebinding.where}), "
                        f"which sets '{use.attr}': `{cls.name}` subclasses that replacement, and has it, when its module "
                        "is imported after that line")
    return None


def _class_named(usage: Usage, rel: str, name: str) -> ast.ClassDef | None:
    """The class `name` defined at the top level of the client file `rel`."""
    file = usage.file_at(rel)
    return next((n for n in file.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None) if file else None


def _method_class(tree: ast.AST, node: ast.AST) -> ast.ClassDef | None:
    """The class whose method (not a nested function's own `self`) holds the node."""
    for cls in nodes_of(tree, ast.ClassDef):
        for fn in flatten_class_body(cls.body):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.lineno <= node.lineno <= (fn.end_lineno or fn.lineno):
                inner = [n for n in nodes_of(fn, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
                         if n is not fn and n.lineno <= node.lineno <= (n.end_lineno or n.lineno)]
                return None if inner else cls
    return None


def _annotated_as(annotation: ast.expr | None) -> str | None:
    """The class name an annotation names: `TPUModelRunner`, `"TPUModelRunner"`, `mod.TPUModelRunner`."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip().rsplit(".", 1)[-1] or None
    if isinstance(annotation, (ast.Name, ast.Attribute)):
        return annotation.id if isinstance(annotation, ast.Name) else annotation.attr
    return None


def _reference_annotation(tree: ast.AST, target: ast.Attribute) -> str | None:
    """The class the receiver of a store is annotated with: a parameter of the enclosing function (`runner:
    "TPUModelRunner"`), or `self.runner` where a method of the class binds `self.runner = runner` from such a
    parameter, or annotates the binding itself (`self.engine: LLMEngineLlumnix = LLMEngineLlumnix.from_engine_args(
    ...)`). None when it is not annotated."""
    fn = enclosing_function(tree, target)
    receiver = target.value
    if fn is None:
        return None
    if isinstance(receiver, ast.Name):
        return next((_annotated_as(a.annotation) for a in _params(fn) if a.arg == receiver.id), None)
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        owner = _method_class(tree, target)
        for method in owner.body if owner is not None else []:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            annotated = {a.arg: _annotated_as(a.annotation) for a in _params(method)}
            for t, _line in attribute_stores(method):
                if isinstance(t.value, ast.Name) and t.value.id == "self" and t.attr == receiver.attr:
                    stmt = next((n for n in nodes_of(method, ast.Assign, ast.AnnAssign) if t in
                                 (n.targets if isinstance(n, ast.Assign) else [n.target])), None)
                    value = getattr(stmt, "value", None)
                    if isinstance(value, ast.Name) and annotated.get(value.id):
                        return annotated[value.id]
                    if isinstance(stmt, ast.AnnAssign):  # `self.engine: Engine = Engine.from_engine_args(...)`
                        # `self.engine: Base = Engine(...)` holds an Engine, whatever the annotation says
                        return _constructed(value) or _annotated_as(stmt.annotation)
    return None


def _constructed(value: ast.expr | None) -> str | None:
    """The class a value builds with a direct call of a capitalised name, as classes are named (`Engine(...)`,
    `mod.Engine(...)`); None for any other value (a factory, a function, a name)."""
    if not isinstance(value, ast.Call):
        return None
    name = _annotated_as(value.func)
    return name if name is not None and name[:1].isupper() else None


def _params(fn) -> list[ast.arg]:
    return fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs


def _hands_self(cls: ast.ClassDef) -> int | None:
    """The line of a call in the class's methods that is given `self` itself (`KVCacheManager(self)`, `f(self, x)`)."""
    for call in nodes_of(cls, ast.Call):
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call) \
                and isinstance(call.func.value.func, ast.Name) and call.func.value.func.id == "super":
            continue
        if any(isinstance(a, ast.Name) and a.id == "self" for a in [*call.args, *(k.value for k in call.keywords)]):
            return call.lineno
    return None
