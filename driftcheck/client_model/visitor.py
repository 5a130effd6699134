"""The visit of one client file: every call, attribute read or write and string-dispatched RPC on a value
of vLLM's, with `self` resolved through the client class's own members, its client bases, then every
vLLM base; receivers typed as a base class or a Protocol fall back to the subclasses of the tree.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import sys

from driftcheck.vllm_model.class_summary import flatten_class_body
from driftcheck.astnodes import binding_counts, children, dotted_name, nodes_of, root_name, stores_only, top_level_bindings, walk, within
from driftcheck.client_model.client import ClientFile, kept_on
from driftcheck.client_model.client_classes import ClientClasses, vllm_bases_through
from driftcheck.client_model.inference import (
    BINDINGS, BUILTIN_TYPES, ELEMENTS, UNIONS, BoundMethod, BuiltinValue, ClassRef, ClientSelf, Foreign, FuncRef,
    Instance, ModRef, SuperOf, UnboundMethod, ValueInference, base_name,
)
from driftcheck.client_model.phases import PATCH_SELF, ClientPhases
from driftcheck.client_model.plain_classes import builds_as_written
from driftcheck.client_model.patch_paths import PATCH_WORDS, patch_paths
from driftcheck.client_model.isinstance_narrowing import excluded_classes, narrowing_classes, receiver_key, tested_receivers
from driftcheck.client_model.patch_classes import replacement_function
from driftcheck.client_model.replacements import built_as_replacement
from driftcheck.client_model.saved_originals import read_before_own_store
from driftcheck.client_model.splatted_dicts import splatted_keys
from driftcheck.client_model.unread_code import plugin_may_set, unread_packages
from driftcheck.client_model.uses import (
    AttrUse, BoundFunction, CallUse, ModuleAttrUse, NameProbe, RpcUse, Usage, call_shape, loc_of,
)
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.bodies import enclosing_function
from driftcheck.vllm_model.resolved import External, InSubclass, Missing, Resolved, Unknown
from driftcheck.vllm_model.external_apis import TORCH_NN_MODULE

# What unittest.mock's Mock / MagicMock / AsyncMock have and a vLLM class would not: a client that reads or sets one on
# a vLLM-typed value treats it as a mock (`rejection_sampler.sampler.return_value = ...` after the fixture handed
# `Mock(spec=Sampler)` to vLLM's constructor), read from the running Python's own unittest.mock
# (asked only then: importing unittest.mock pulls in asyncio, 18 ms of every scan's start)
@functools.cache
def mock_members() -> frozenset[str]:
    return frozenset(n for n in dir(__import__("unittest.mock", fromlist=["AsyncMock"]).AsyncMock) if not n.startswith("_"))


_CONSTRUCTION = frozenset({"__init__", "__new__", "__init_subclass__", "__post_init__"})


# what `type`, `abc.ABCMeta` and `enum.EnumMeta` give every class object they make (`Cls.mro()`, `Cls.register(...)`);
# the underscored ones (`_member_map_`, `_abc_impl`) are skipped by their spelling (HI2)
_TYPE_MEMBERS = frozenset({"mro", "register"})

_PROBES = {"getattr": (3,), "hasattr": (2,)}  # the probes DC125 reads: a getattr with a default, a hasattr


class FileAnalyzer(ClientPhases, ClientClasses, ValueInference):
    def __init__(self, api: ApiIndex, file: ClientFile, usage: Usage, package: str):
        self.api = api
        self.file = file
        self.usage = usage
        self.package = package
        self.module_env: dict[str, object] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.local_class_scopes: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}  # a class a function defines -> it
        self._class_envs: dict[int, dict] = {}  # such a function -> the names its body binds (`class_env`)
        # (module or class, name) this file's own patches set (collect_patches): a test's patch by path lasts for
        # its test, so `_replaced` / `_patched_on` read it here and not from `usage.patched`
        self.file_patches: set[tuple[str, str]] = set()
        self._bound_twice: frozenset[str] | None = None  # names the file binds more than once (`_visit_class_member`)
        self.self_types: dict[str, dict[str, object]] = {}  # client class -> attr -> inferred
        self.client_class_members: dict[str, set[str]] = {}
        self.client_class_vllm_bases: dict[str, list[Resolved]] = {}
        self.reported: set[tuple[int, int, str]] = set()
        # client class "module.Name" -> [(vLLM class, method)] it is handed to anywhere in the client: one table that
        # prepare_client shares between the files' analyzers for the class phases (replacements.registrations)
        self.registered_classes: dict[str, list[tuple[str, str]]] = {}
        self.foreign: dict[str, str] = {}  # name -> module, for names imported from outside vLLM
        # (start, end) of `except ImportError:` bodies whose try body only imports what the target has: they never run
        self.unreached_handlers: set[tuple[int, int]] = set()
        self.patched_functions: dict[str, Resolved] = {}  # module function -> the vLLM class it is set on
        self.patched_locals: dict[int, Resolved] = {}  # id(a function's own nested def) -> the vLLM class it is set on
        self.patch_bases: dict[str, list[Resolved]] = {}  # client class -> vLLM classes its methods are set on
        self._driven = False  # visiting a method of a client class derived from a vLLM class
        self._setters: set[str] | None = None  # functions of this file that set attributes by a given name
        # id(body) -> its scope's nodes; ("bindings", id(body)) -> those build_env reads (the tree outlives the analyzer)
        self._scopes: dict[object, list[ast.AST]] = {}
        self._conflicting: dict[str, set[str]] = {}  # client class -> self attributes assigned values of different types
        self._handed: dict[tuple, str] | None = None  # (scope, ast.dump of an argument) -> the unread function given it
        self._scope_of: dict[int, tuple] = {}  # id(attribute node) -> (enclosing class, enclosing function)
        self._unread_reexports: dict[str, str] = {}  # names this file imports from vLLM that vLLM takes from elsewhere
        self.computed_members: dict[str, set[str]] = {}  # client class -> names `setattr(self, name, ...)` may set
        self._attr_stores: dict[int, tuple[list, set[str]]] = {}  # scope body -> names it stores onto attributes only
        self._mixins: dict[str, bool] = {}  # client class -> whether a client class lists it among several bases

    # ----------------------------------------------------------------- uses
    def analyse(self) -> None:
        if any(word in self.file.text for word in PATCH_WORDS):
            # DC001 / DC002 check what they look up; they are counted as uses checked
            self.usage.patch_paths.extend(patch_paths(self.file.tree, self.package, self.file.rel))
        self._find_bound_functions()
        self._visit_scope(self.file.tree.body, self.module_env, runtime_only=False)
        for fn in self.functions.values():
            patched = self.patched_functions.get(fn.name)
            self._driven = self._replaces_vllm_function(fn, self.file.tree.body, self.module_env)
            self._visit_function(fn, self._patch_self(fn, patched) if patched is not None else None)
            self._driven = False
        for name, cls in self.classes.items():
            outer = self.class_env(name) if name in self.local_class_scopes else None
            for stmt in flatten_class_body(cls.body):  # also the methods an `if` / `try` of the body defines
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self._visit_function(stmt, name, outer)

    def _visit_function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls_name: str | None, outer: dict | None = None) -> None:
        env = self.build_env(fn, outer if outer is not None else self.module_env, cls_name, record=True)
        driven = self._driven  # nested functions keep the flag of the method they are in
        if cls_name is not None:
            self._driven = bool(self.client_class_vllm_bases.get(cls_name))
        self._visit_scope(fn.body, env, runtime_only=True)
        for node in self._scope(fn.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = self._driven
                self._driven = inner or self._replaces_vllm_function(node, fn.body, env)
                patched = self.patched_locals.get(id(node))
                self._visit_function(node, self._patch_self(node, patched) if patched is not None else None, env)
                self._driven = inner
        self._driven = driven

    def _replaces_vllm_function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, body: list[ast.stmt], env: dict) -> bool:
        """`fn` is stored, in the scope that defines it, on a vLLM module or class in place of vLLM's own function
        (`utils.get_kv_cache_config_from_groups = get_config` after `import vllm.v1.core.kv_cache_utils as utils`,
        `Cls.method = fn`), and the client reads the name nowhere else: vLLM's own code calls it, after its engine's
        own set-up, so what the body calls is driven by vLLM (DC108 asks; FD1). A function the client also calls,
        returns or hands on, or stores on its own objects, is the client's to run."""
        if fn.name not in self._stored_on_attributes(body):
            return False  # the common case, answered from one pass over the scope (not one per function)
        stores = {id(node.value) for node in self._scope(body)
                  if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == fn.name
                  and all(isinstance(t, ast.Attribute) and isinstance(self.infer(t.value, env), (ModRef, ClassRef))
                          for t in node.targets)}
        if not stores:
            return False
        return all(id(n) in stores for stmt in body for n in walk(stmt)
                   if isinstance(n, ast.Name) and n.id == fn.name and isinstance(n.ctx, ast.Load))

    def _stored_on_attributes(self, body: list[ast.stmt]) -> set[str]:
        """Names the scope stores onto attributes only (`x.y = name`), once per scope."""
        found = self._attr_stores.get(id(body))
        if found is None or found[0] is not body:
            names = {node.value.id for node in self._scope(body) if isinstance(node, ast.Assign)
                     and isinstance(node.value, ast.Name) and all(isinstance(t, ast.Attribute) for t in node.targets)}
            found = self._attr_stores[id(body)] = (body, names)
        return found[1]

    def _visit_scope(self, body: list[ast.stmt], env: dict, runtime_only: bool) -> None:
        for node in self._scope(body):
            if self.unreached_handlers and isinstance(node, (ast.Call, ast.Attribute)) and any(
                    start <= node.lineno <= end for start, end in self.unreached_handlers):
                continue  # the `except` of a try whose imports all work here (TF3), as its imports are `unreached`
            if isinstance(node, ast.Call):
                self._visit_call(node, env, runtime_only)
                self._record_name_probe(node, env)
                store = self._literal_setattr(node, env)
                if store is not None:
                    self._visit_attribute(store, env, runtime_only)
            elif isinstance(node, ast.Attribute):
                self._visit_attribute(node, env, runtime_only)
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str):
                self._visit_builtin_key(node, env, runtime_only)
        # (what the client sets on objects other than `self`, `client_set_attrs`, is collect_patches': every file's,
        # before any visit, so no visit depends on which files came before it)

    def _record_name_probe(self, node: ast.Call, env: dict) -> None:
        """The builtin `getattr(x, "name", default)` or `hasattr(x, "name")` of a vLLM module, class or object, with the
        target's answer for the name (DC125 asks the client's own vLLM too)."""
        probed = self.builtin_lookup(node, env, _PROBES) if node.func.__class__ is ast.Name else None
        if probed is None or node.func.id in self.classes:
            return
        obj, name = probed
        base = self.infer(obj, env)
        if isinstance(base, ModRef):
            mod = self.api.module(base.module)
            if mod is None:
                return
            owner, result = base.module, self.api.module_member(mod, name)
        elif isinstance(base, (ClassRef, Instance)):
            owner, result = base.cls.qualname, self.api.class_member(base.cls, name)
        else:
            return
        self.usage.name_probes.append(NameProbe(loc_of(self.file, node), owner, name, node.func.id,
                                                isinstance(base, ModRef), result))

    def _literal_setattr(self, node: ast.Call, env: dict) -> ast.Attribute | None:
        """`setattr(attn_metadata, "blend_metadata", v)` (the builtin) stores what `attn_metadata.blend_metadata = v`
        stores: the same store, as an attribute node at the call (a computed name is computed_names.py's); so does
        `object.__setattr__(obj, "name", v)` (ZR)."""
        builtin = isinstance(node.func, ast.Name) and node.func.id == "setattr" and \
            not any("setattr" in scope for scope in (env, self.module_env, self.functions, self.classes))
        # `object.__setattr__(cfg, "flag", v)`, the way round a frozen dataclass's own `__setattr__`, is that store too
        through_object = dotted_name(node.func) == "object.__setattr__" and \
            not any("object" in scope for scope in (env, self.module_env, self.functions, self.classes))
        if not ((builtin or through_object) and len(node.args) == 3 and not node.keywords):
            return None
        name = node.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier()):
            return None
        return ast.copy_location(ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Store()), node)

    def _record_passed_types(self, node: ast.Call, env: dict) -> None:
        """What class each argument of a call holds, by the callee's name: a parameter annotated `ModelConfig`
        that a caller hands a Hugging Face config is not a ModelConfig (see DC006's annotation doubt)."""
        callee = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else None
        if callee is None:
            return
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call) \
                and dotted_name(node.func.value.func) == "type" and node.args and node.func.value.args:
            of = self.infer(node.func.value.args[0], env)  # `type(self.base_layer).m(self)`: m of base_layer's class
            owner = of.cls.qualname if isinstance(of, Instance) else None
            first = self.infer(node.args[0], env)
            if owner is None and isinstance(first, ClientSelf) and callee in self.client_members(first.cls_name):
                # `if hasattr(self, "base_layer"): type(self.base_layer).m(self)` inside the class that defines m:
                # m's `self` is whatever this `self` is, which the hasattr says may be a wrapper
                vbases = self.client_class_vllm_bases.get(first.cls_name) or []
                owner = vbases[0].qualname if vbases else f"{self.file.module}.{first.cls_name}"
            if owner is not None:
                self.usage.unbound_called.setdefault(callee, []).append((owner, self.file.rel, node.lineno))
        args = [(i, a) for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)]
        args += [(k.arg, k.value) for k in node.keywords if k.arg]
        for key, arg in args:
            if not isinstance(arg, (ast.Name, ast.Attribute)):
                continue
            value = self.infer(arg, env)
            if value is None and isinstance(arg, ast.Name):
                value = env.get(ELEMENTS, {}).get(arg.id)  # a loop variable over a container vLLM annotates
            if value is None and isinstance(arg, ast.Name) and arg.id in env.get(BINDINGS, {}):
                # `config = config.hf_config` above this call: the binding that last precedes it (straight-line
                # code; evidence only, never a type for checking)
                before = [v for line, v in env[BINDINGS][arg.id] if line < node.lineno]
                value = before[-1] if before else None
            qualname = value.cls.qualname if isinstance(value, Instance) else value.qualname if isinstance(value, Foreign) else None
            if qualname is not None:
                self.usage.passed.setdefault(callee, []).append((key, qualname, self.file.rel, node.lineno))

    def _visit_call(self, node: ast.Call, env: dict, runtime_only: bool) -> None:
        func = self.infer(node.func, env)
        loc = loc_of(self.file, node)
        self._record_passed_types(node, env)
        shape = call_shape(node)
        if shape.star_kwargs:  # the keys of a dict it spells out are keywords it certainly passes (26h M1)
            shape.splatted = {k: line for k, line in splatted_keys(node, self.file.tree).items() if k not in shape.keywords}
            shape.keywords += list(shape.splatted)
        # `Cls(...)` runs a `__new__` that may build a registered replacement; `super().__init__(...)` builds nothing
        built = not (isinstance(node.func, ast.Attribute) and node.func.attr == "__init__")
        # a replacement of the class by name changes what `Cls(...)` builds, not the base `super().__init__` reaches
        # (vllm-gcu replaces `multiproc_executor.WorkerProc` with its subclass, whose own `super().__init__` is vLLM's)
        if isinstance(func, ClassRef) and not (built and self._replaced(func.cls, built=True)) \
                and not (built and built_as_replacement(self.api, self.usage, func.cls, shape)) \
                and not (built and self._new_builds_subclass(func.cls)):
            self.usage.calls.append(CallUse(loc, "construct", func.cls, shape, node, self.file, runtime_only, self._driven,
                                            rebound=self._init_rebound(func.cls)))
        elif isinstance(func, FuncRef):
            self.usage.calls.append(CallUse(loc, "function", func.func, shape, node, self.file, runtime_only, self._driven,
                                            rebound=self._function_rebound(func)))
        elif built and isinstance(node.func, ast.Name) and (node.func.id not in env or node.func.id in self.foreign) \
                and (base := self._inherited_vllm_construction(node.func.id)) is not None \
                and not self._replaced(base, built=True) and not built_as_replacement(self.api, self.usage, base, shape):
            # `Sub(...)` of a client class that only adds methods to one vLLM base runs that base's constructor (WA3)
            self.usage.calls.append(CallUse(loc, "construct", base, shape, node, self.file, runtime_only, self._driven,
                                            rebound=self._init_rebound(base)))
        elif isinstance(func, BoundMethod):
            value = self.infer(node.func.value, env) if isinstance(node.func, ast.Attribute) else None
            narrowed = self._narrowed_method(node.func, env, value) if isinstance(value, Instance) else None
            if narrowed is not None:  # `assert isinstance(self.impl, Sub)` first: Sub's method is the one called
                func, value = narrowed
            self.usage.calls.append(CallUse(loc, "method", func.method, shape, node, self.file, runtime_only, self._driven,
                                            isinstance(value, SuperOf),
                                            receiver=value.cls if isinstance(value, Instance) else None,
                                            exact=narrowed is None and self._built_exactly(value)))
        elif isinstance(func, UnboundMethod):
            self.usage.calls.append(CallUse(loc, "function", func.method, shape, node, self.file, runtime_only, self._driven))
        elif isinstance(func, Instance) and (method := self._module_forward(func.cls)) is not None:
            self.usage.calls.append(CallUse(loc, "method", method, shape, node, self.file, runtime_only, self._driven,
                                            receiver=func.cls, exact=self._built_exactly(func)))
        if isinstance(node.func, ast.Attribute) and node.func.attr == "collective_rpc" and not self._own_dispatch(node.func.value, env):
            method = None
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "method"), None)
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                method = first.value
            urr = any(k.arg == "unique_reply_rank" for k in node.keywords)
            override, sender = self._rpc_override(node.func.value, env)
            self.usage.rpcs.append(RpcUse(loc, method, node, self.file, urr,
                                          loc_of(self.file, override) if override is not None else None, sender))

    def _built_exactly(self, value) -> bool:
        """An object the client built by calling the vLLM class itself (`self.attn = Attention(...)`), whose MRO has no
        `__new__` that may build another class (vLLM's `CustomOp.__new__` builds an out-of-tree replacement)."""
        return isinstance(value, Instance) and value.built and not any(
            "__new__" in c.cls.methods for c in self.api.mro(value.cls)[0] if c.cls)

    def _module_forward(self, cls: Resolved):
        """The `forward` a call of a vLLM `torch.nn.Module` object runs (`self.attn(q, k, v, kv_cache, attn_metadata)`):
        `nn.Module.__call__` hands it the call's arguments as they are (30a R1: 360zhinao's model files, whose
        `self.attn(...)` / `self.sampler(...)` calls kept the old arity). None where a vLLM class of its MRO defines
        `__call__` itself, or the class is no module, or the client sets a `forward` of its own: on the class
        (`LogitsProcessor.forward = mine`) or on some object (`layer.forward = hook`, 31a R1 / R2)."""
        order, _open, externals = self.api.mro(cls)
        if "torch.nn.Module" not in externals or any("__call__" in c.cls.methods or "__call__" in c.cls.class_attrs
                                                     for c in order if c.cls):
            return None
        if "forward" in self.usage.client_set_attrs or self._patched_on(cls, "forward"):
            return None
        method = self.api.class_member(cls, "forward")
        return method if isinstance(method, Resolved) and method.kind == "method" else None

    def _function_rebound(self, func: FuncRef) -> list:
        """The client's replacements a vLLM function may be when called here: those set on the module it was read from
        (`from M import f` / `M.f` after `M.f = client_f`), except in the file that rebinds it when this import runs
        first (a module's statements run in order: `from M import f` above `M.f = g` keeps vLLM's `f`)."""
        if func.via is None or not self.usage.rebound:
            return []
        module, name, rel, line = func.via
        out = []
        for r in self.usage.rebound.get((module, name), []):
            path, _, at = r.where.rpartition(":")
            if path == rel and line and line < int(at) and not r.in_place:
                continue
            out.append(r)
        home, _, own = func.func.qualname.rpartition(".")
        if home != module:  # read through a re-export: a function changed in place is changed there too
            out += [r for r in self.usage.rebound.get((home, own), []) if r.in_place]
        return out

    def _inherited_vllm_construction(self, name: str) -> Resolved | None:
        """The vLLM class whose constructor `name(...)` runs, where `name` is a class of this file, bound once at its
        top level, that derives from that one vLLM class only and adds nothing but methods: no `__init__`, `__new__`,
        `__init_subclass__` or `__post_init__` (its own or set from outside), no class-level assignment or annotation
        (a pydantic / dataclass / msgspec subclass's field), no decorator, no metaclass or class keyword (WA3:
        gpt_server's `CustomOpenAIServingChat(...)`, built without the `openai_serving_render` vLLM 0.18.0 requires)."""
        cls = self.classes.get(name)
        if cls is not None:
            tree, members = self.file.tree, self.client_class_members.get(name, set())
            base = self.infer(cls.bases[0], {}) if cls.bases else None
            if not isinstance(base, ClassRef) or [v.qualname for v in self.client_class_vllm_bases.get(name, [])] != [base.cls.qualname]:
                return None
            base = base.cls
        else:  # a class another client file defines, imported by its own name (prime-rl's server.py; batch 22b's M2)
            tree, cls, label = self._client_class_elsewhere(name)
            if cls is None:
                return None
            own, base_labels = self.usage.client_class_table.get(label, (set(), ["?"]))
            vllm_bases = self.usage.client_vllm_bases.get(label, [])
            base = self.api.resolve(vllm_bases[0]) if len(vllm_bases) == 1 and not base_labels else None
            if not (isinstance(base, Resolved) and base.kind == "class"):
                return None
            members = own
        if not builds_as_written(tree, cls, members) or cls.decorator_list or len(cls.bases) != 1:
            return None
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name not in _CONSTRUCTION:
                continue
            if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
                continue
            return None
        if members & _CONSTRUCTION:
            return None
        return base

    def _built_class_elsewhere(self, name: str) -> str | None:
        """For `name(...)` of a class another client file defines (imported by its own name), derived from vLLM
        classes only, with no `__new__` and no metaclass: a stand-in class of this file holding its members and vLLM
        bases from the cross-file tables, whose name `ClientSelf` carries (tpu-inference builds its
        `TPULRUCacheWorkerLoRAManager` in another file than the one defining it; 22b's M3)."""
        known = self.__dict__.setdefault("_built_elsewhere", {})
        if known.get(name) is None:  # (the cross-file tables fill during the class phases: only an answer is kept)
            known[name] = self._stand_in_for(name)
        return known[name]

    def _stand_in_for(self, name: str) -> str | None:
        tree, cls, label = self._client_class_elsewhere(name)
        own, base_labels = self.usage.client_class_table.get(label, (None, ["?"]))
        if cls is None or own is None or not builds_as_written(tree, cls, own):
            return None
        bases = [self.api.resolve(q) for q in self.usage.client_vllm_bases.get(label, [])]
        if base_labels or not bases or not all(isinstance(b, Resolved) and b.kind == "class" for b in bases):
            return None  # (a client or third-party base may define what the vLLM ones lack)
        stand_in = f"<built {label}>"
        self.client_class_members[stand_in] = set(own)
        self.client_class_vllm_bases[stand_in] = bases
        return stand_in

    def _client_class_elsewhere(self, name: str) -> tuple[ast.Module | None, ast.ClassDef | None, str]:
        """The tree, top-level class and label ("module.Name") of a class this file imports by that name from
        another client module; (None, None, "") when no client file defines it there."""
        known = self.__dict__.setdefault("_elsewhere", {})  # once per name: every call of an imported helper asks
        if name not in known:
            if name not in self.foreign or getattr(self, "client_source", None) is None:
                return None, None, ""  # (asked before the imports or the client's other files are known: not kept)
            known[name] = self._find_class_elsewhere(name)
        return known[name]

    def _find_class_elsewhere(self, name: str) -> tuple[ast.Module | None, ast.ClassDef | None, str]:
        module, source = self.foreign.get(name), getattr(self, "client_source", None)
        if not module or source is None \
                or sum(1 for stmt in self.file.tree.body for bound, _ in top_level_bindings(stmt) if bound == name) != 1:
            return None, None, ""
        found = source.module_tree(module)
        # the file as the class tables know it (a client given as its package folder drops the package's name)
        file = next((f for f in self.usage.files if found is not None and f.tree is found[0]), None)
        if file is None or file is self.file:
            return None, None, ""
        cls = next((n for n in file.tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if cls is None or any(n.id == name and not isinstance(n.ctx, ast.Load) for n in nodes_of(self.file.tree, ast.Name)):
            return None, None, ""  # no class of that name there, or bound some other way too here
        return file.tree, cls, f"{file.module}.{name}"

    def _init_rebound(self, cls: Resolved) -> list:
        """The client's replacements of the `__init__` that `Cls(...)` runs: one set on the class, or on the base whose
        `__init__` it inherits (no class between them defines or generates one)."""
        if not any(name == "__init__" for _owner, name in self.usage.rebound):
            return []
        for c in self.api.mro(cls)[0]:
            found = self.usage.rebound.get((c.qualname, "__init__"))
            if found:
                return list(found)
            if "__init__" in c.cls.methods or self.api.is_dataclass_like(c):
                return []
        return []

    def _own_dispatch(self, receiver: ast.expr, env: dict) -> bool:
        """`self.collective_rpc(...)` in a client class that defines `collective_rpc` itself and derives from no
        vLLM class: it dispatches to the client's own workers, not vLLM's (vLLM's own executors, scanned as a
        client, are vLLM classes and still checked)."""
        value = self.infer(receiver, env)
        if not isinstance(value, ClientSelf) or "collective_rpc" not in self.client_members(value.cls_name):
            return False
        if self.client_class_vllm_bases.get(value.cls_name):
            return False
        own = self.api.resolve(f"{self.file.module}.{value.cls_name}") if self.file.module.split(".")[0] == self.package else None
        return not (isinstance(own, Resolved) and own.kind == "class")

    def _rpc_override(self, receiver: ast.expr, env: dict) -> tuple[ast.AST | None, frozenset[str]]:
        """`self.collective_rpc(...)` in a client class with a vLLM base: the client's own `collective_rpc` the call
        reaches (the class's or a client base's of this file, before any vLLM base that has one), when it hands the
        call on to no other `collective_rpc` (`super().collective_rpc(...)`, `self.executor.collective_rpc(...)`):
        the override sends the method to workers of its own choosing (async-grpo-nccl's `ExternalProcessExecutor`,
        VC1); with it, the sending class and the client classes of this file it derives from. (None, empty)
        otherwise, vLLM's own classes scanned as a client included."""
        none = (None, frozenset())
        value = self.infer(receiver, env)
        if not isinstance(value, ClientSelf) or not self.client_class_vllm_bases.get(value.cls_name):
            return none
        own = self.api.resolve(f"{self.file.module}.{value.cls_name}") if self.file.module.split(".")[0] == self.package else None
        if isinstance(own, Resolved) and own.kind == "class":
            return none
        found = self._defined_rpc(value.cls_name, frozenset())
        if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return none
        for call in nodes_of(found, ast.Call):
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "collective_rpc" \
                    and not (isinstance(func.value, ast.Name) and func.value.id == "self"):
                return none  # hands the call on (to vLLM's, through super() or an object it holds)
        return found, frozenset([value.cls_name, *self._client_ancestors(value.cls_name)])

    def _defined_rpc(self, cls_name: str, seen: frozenset) -> object:
        """The `collective_rpc` def a client class of this file has from its body or its client bases, in base
        order; "vllm" when a vLLM base that has one comes first; None when neither."""
        cls = self.classes.get(cls_name)
        if cls is None or cls_name in seen:
            return None
        for stmt in flatten_class_body(cls.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "collective_rpc":
                return stmt
        for base in cls.bases:
            name = base_name(base)
            if name in self.classes:
                found = self._defined_rpc(name, seen | {cls_name})
                if found is not None:
                    return found
                continue
            value = self.infer(base, self.class_env(cls_name))
            if isinstance(value, ClassRef) and not isinstance(self.api.class_member(value.cls, "collective_rpc"), Missing):
                return "vllm"
        return None

    def _visit_attribute(self, node: ast.Attribute, env: dict, runtime_only: bool) -> None:
        base = self.infer(node.value, env)
        if base is None:
            base = self._tested_instance(node, env)
        store = stores_only(node, self.file.tree)
        key = (node.lineno, node.col_offset, node.attr)
        if key in self.reported:
            return
        if isinstance(base, Instance):
            self.reported.add(key)
            if self._patched_on(base.cls, node.attr) or self._replaced(base.cls, base.built) or self._held_replaced(base):
                return
            result = self._unread_may_set(node, self._look_up(base.cls, node.attr, store))
            if isinstance(result, (Missing, InSubclass)) and not store:
                result = self._narrowed(node, env, result)
            stand_in = self.usage.stand_ins.get(base.cls.qualname, {}).get(node.attr) \
                if isinstance(result, Missing) and not store and not base.built else None
            if stand_in is not None:
                result = Unknown(result.qualname, f"the client puts its own `{stand_in[0]}`, which does not derive from "
                                 f"`{base.cls.cls.name}` and defines '{node.attr}', where a value typed `{base.cls.cls.name}` "
                                 f"is expected ({stand_in[1]}): an annotation is not checked at run time, so what "
                                 f"`{ast.unparse(node.value)}` holds, and whether it has '{node.attr}', is not known")
            if isinstance(result, Missing) and not store and not base.built and self.api.is_marker(base.cls):
                result = Unknown(result.qualname, f"`{base.cls.cls.name}` declares no members at all (a marker class for "
                                 f"annotations): objects annotated with it need not derive from it, so what "
                                 f"`{ast.unparse(node.value)}` holds, and whether it has '{node.attr}', is not known")
            if isinstance(result, Missing) and not store and not base.built and self.api.never_instantiated(base.cls):
                result = Unknown(result.qualname, f"`{base.cls.cls.name}` is abstract and nothing in vLLM derives from it, "
                                 f"so no object vLLM makes is one: `{ast.unparse(node.value)}` holds another class (an "
                                 f"annotation is not checked at run time), and whether it has '{node.attr}' is not known")
            if isinstance(result, Missing) and not base.built and self._makes_mocks() and node.attr in mock_members():
                result = Unknown(result.qualname, f"'{node.attr}' is a member of unittest.mock's mocks, and this file "
                                 f"makes mocks: `{ast.unparse(node.value)}` may hold one the client put where vLLM "
                                 f"expects a `{base.cls.cls.name}` (an annotation is not checked at run time)")
            # a member only some subclasses define (InSubclass) is the same question once the client's own class of
            # that kind defines it: the object may be that class, which the subclass warning never names (VB1)
            sibling = self._sibling_defining(base.cls, node.attr) if (isinstance(result, Missing) or (
                isinstance(result, InSubclass) and result.subclass)) and not store and not base.built else None
            if sibling is not None:
                also = "" if isinstance(result, Missing) else (
                    f"; of the classes that derive from it, {result.subclass}" + (f" and {result.others} other subclass"
                    f"{'es' if result.others > 1 else ''} define" if result.others else " defines") + " it too")
                result = Unknown(result.qualname, f"`{base.cls.cls.name}` names a family of classes in vLLM (others derive "
                                 f"from it) and the client's own `{sibling}`, a class of the same kind that does not "
                                 f"derive from it, defines '{node.attr}'{also}: an annotation is not checked at run time, so "
                                 f"what `{ast.unparse(node.value)}` holds, and whether it has '{node.attr}', is not known")
            unread = self._unread_sibling(base.cls, node.value) \
                if isinstance(result, Missing) and not store and not base.built and sibling is None else None
            if unread is not None:
                result = Unknown(result.qualname, f"`{base.cls.cls.name}` names a family of classes in vLLM (others derive "
                                 f"from it) and the client imports {unread}, a class of the same kind from a package "
                                 f"driftcheck does not read: an annotation is not checked at run time, so what "
                                 f"`{ast.unparse(node.value)}` holds, and whether it has '{node.attr}', is not known")
            tested = self._tested_as(node, env, base.cls) if isinstance(result, Missing) and not store else ()
            self.usage.attrs.append(AttrUse(loc_of(self.file, node), base.cls, node.attr, store, result, node, self.file,
                                            plugin_may_set(self, node, result, env, base.cls), tested))
        elif isinstance(base, ClassRef) and not store and not isinstance(node.ctx, ast.Del):
            self._visit_class_member(node, base, key, env)
        elif isinstance(base, BuiltinValue) and not isinstance(node.ctx, ast.Del):
            self.reported.add(key)
            self._visit_builtin_member(node, base, runtime_only)
        elif isinstance(base, ModRef) and not store:
            mod = self.api.module(base.module)
            if mod is None or ((base.module, node.attr) in self.usage.patched
                               and id(node) not in read_before_own_store(self.file.tree)):
                return  # (a name the client sets is its business, unless this read runs before its one store: M2)
            self.reported.add(key)
            result = self.api.module_member(mod, node.attr)
            self.usage.module_attrs.append(ModuleAttrUse(loc_of(self.file, node), base.module, node.attr, result, runtime_only))
        elif base is None and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) \
                and node.value.id in env.get(UNIONS, {}):
            # `def f(self: "Attention | MLAAttention"): self.layer_index = ...` sets the member on whichever it is
            where = f"{self.file.rel}:{node.lineno}"
            for member in env[UNIONS][node.value.id]:
                self.usage.union_stores.append((member.cls, node.attr, where))
        elif isinstance(base, SuperOf) and not store:
            self._visit_super_member(node, base, key)
        elif isinstance(base, ClientSelf) and node.attr not in self.client_members(base.cls_name):
            vbases = self.client_class_vllm_bases.get(base.cls_name, [])
            if not vbases or (store and base.built):
                return  # (a member the client sets on an object of its own class it built is its own business)
            self.reported.add(key)
            if any(self._patched_on(v, node.attr) for v in vbases) or self._client_subclass_defines(base.cls_name, node.attr):
                return
            if not self._vllm_bases_decide(base.cls_name, node.attr):
                return
            results = [(v, self.api.class_member(v, node.attr)) for v in vbases]  # the client class's MRO: every vLLM base
            owner, result = next(((v, r) for v, r in results if not isinstance(r, Missing)), results[0])
            if isinstance(result, Missing) and base.cls_name.startswith(PATCH_SELF):
                # a function the client sets on vLLM's class: its `self` is any object of that class, a subclass's too
                # (`setattr(EngineCore, "abort_all_reqs", f)`, called on an EngineCoreProc that has `output_queue`)
                result = self._look_up(owner, node.attr, store)
            elif isinstance(result, Missing):
                result = self._created_elsewhere(owner, node.attr, store, result, self._client_is_module(base.cls_name))
            if isinstance(result, Missing) and not store and any(
                    node.attr in self.computed_members.get(n, ()) for n in [base.cls_name, *self._client_ancestors(base.cls_name)]):
                result = External(f"{base.cls_name}.{node.attr} (set by a computed name)")
            if isinstance(result, Missing) and not store and any(
                    e.split(".")[-1] == "Protocol" for v in vbases for e in self.api.mro(v)[2]):
                # a mixin of a Protocol: the concrete class it is mixed into supplies what the Protocol leaves out
                result = InSubclass(f"{owner.qualname}.{node.attr}", "", owner.path, owner.line)
            result = self._unread_may_set(node, result)
            self.usage.attrs.append(AttrUse(loc_of(self.file, node), owner, node.attr, store, result, node, self.file))

    def _visit_builtin_member(self, node: ast.Attribute, value: BuiltinValue, runtime_only: bool) -> None:
        """`QUANTIZATION_METHODS.keys()` where vLLM binds the name to a list (29c M1, flute-kernel): a member the
        builtin type lacks fails as a missing name of the value does (DC002), reading or setting it. A value the client
        itself rebinds on vLLM's module is the client's."""
        module, _, name = value.qualname.rpartition(".")
        kind = BUILTIN_TYPES[value.type_name]
        if (module, name) in self.usage.patched or hasattr(kind, node.attr):
            return
        members = tuple(n for n in dir(kind) if not n.startswith("_"))
        result = Missing(f"{value.qualname}.{node.attr}", f"a `{value.type_name}`", value.path, value.line, members)
        self.usage.module_attrs.append(ModuleAttrUse(loc_of(self.file, node), value.qualname, node.attr, result, runtime_only))

    def _visit_builtin_key(self, node: ast.Subscript, env: dict, runtime_only: bool) -> None:
        """`QUANTIZATION_METHODS["fp8"]` (read, set or deleted) where vLLM binds the name to a list, tuple or str (29g
        C1: a dict up to 0.6.4, a list of names since 0.6.5): a sequence is indexed by integers, so a str key raises
        TypeError. Kept as a member use of the value whose name is the key in brackets (DC113 words it)."""
        value = self.infer(node.value, env)
        if not isinstance(value, BuiltinValue) or value.type_name not in ("list", "tuple", "str"):
            return
        module, _, name = value.qualname.rpartition(".")
        if (module, name) in self.usage.patched:
            return  # (a value the client rebinds on vLLM's module is the client's)
        key = f"[{node.slice.value!r}]"
        result = Missing(f"{value.qualname}{key}", f"a `{value.type_name}`", value.path, value.line)
        self.usage.module_attrs.append(ModuleAttrUse(loc_of(self.file, node), value.qualname, key, result, runtime_only))

    def _narrowed_method(self, attr: ast.Attribute, env: dict, value: Instance) -> tuple[BoundMethod, Instance] | None:
        """The method a call reaches where an isinstance test has narrowed its receiver to one vLLM subclass of the
        class it is typed with (26i R1: vLLM 0.34.0's `assert isinstance(self.impl, MiniMaxM3SparseAiterPAImpl)` then
        `self.impl.forward(..., decode_sparse_table=...)`, which only that subclass's `forward` takes)."""
        ref = self._tested_class(attr, env)
        if ref is None or ref.cls.qualname == value.cls.qualname or \
                value.cls.qualname not in {c.qualname for c in self.api.mro(ref.cls)[0]}:
            return None
        method = self.api.class_member(ref.cls, attr.attr)
        if not (isinstance(method, Resolved) and method.kind == "method"):
            return None
        return BoundMethod(method, ref.cls), Instance(ref.cls)

    def _new_builds_subclass(self, cls: Resolved) -> bool:
        """The client replaces `cls.__new__` with a function that names a client subclass of it (MineDraft's
        `SchedulerRunningOutputsPatch.__new__` returning `MineSchedulerRunningOutputs.__new__(...)`, 26h F2): `Cls(...)`
        then runs that subclass's `__init__`, whose parameters driftcheck does not bind here."""
        rebound = self.usage.rebound.get((cls.qualname, "__new__"))
        if not rebound:
            return False
        subclasses = {label.rsplit(".", 1)[-1] for label, _rel, _line in
                      self.usage.subclass_members.get(cls.qualname, {}).values()}
        for r in rebound:
            found = replacement_function(self.usage, r.replacement)
            if found is not None and any(isinstance(n, ast.Name) and n.id in subclasses for n in walk(found[1])):
                return True
        return False

    def _tested_instance(self, node: ast.Attribute, env: dict) -> Instance | None:
        """An untyped receiver the code has just tested against one vLLM class (`if isinstance(response,
        ErrorResponse): response.code`; 26a's diffing-toolkit at 0.15.0): an object of that class there, as an
        annotation would make it. Not where the test allows several classes, or several tests narrow it."""
        ref = self._tested_class(node, env)
        if ref is None or ref.cls.cls is None or self._marker_base(ref.cls):
            return None
        for expr in excluded_classes(self.file.tree, node):
            other = self.infer(expr, env)
            if isinstance(other, ClassRef) and other.cls.qualname == ref.cls.qualname:
                return None  # an earlier test took every object of this class elsewhere: the line never runs for one
        return Instance(ref.cls)

    def _tested_as(self, node: ast.Attribute, env: dict, cls: Resolved) -> tuple[str, ...]:
        """The names (last part, as written) by which isinstance tests around `node` test its receiver against `cls`
        itself, an alias included (`AsyncLLMEngine = AsyncLLM`)."""
        key = receiver_key(node.value)
        if not key or key not in tested_receivers(self.file.tree):
            return ()
        names = set()
        for group in narrowing_classes(self.file.tree, node):
            for expr in group:
                ref = self.infer(expr, env)
                if isinstance(ref, ClassRef) and ref.cls.qualname == cls.qualname:
                    names.add((dotted_name(expr) or "").rpartition(".")[2])
        return tuple(sorted(names - {""}))

    def _tested_class(self, node: ast.Attribute, env: dict) -> ClassRef | None:
        """The one vLLM class an isinstance test (or a predicate of the file) has narrowed `node`'s receiver to."""
        key = receiver_key(node.value)
        if not key or key not in tested_receivers(self.file.tree):
            return None
        groups = narrowing_classes(self.file.tree, node)
        if len(groups) != 1 or len(groups[0]) != 1:
            return None
        ref = self.infer(groups[0][0], env)
        return ref if isinstance(ref, ClassRef) else None

    def _marker_base(self, cls: Resolved) -> bool:
        """A class an object tested against may be a subclass of: one with subclasses in vLLM or the client
        (`isinstance(spec, AttentionSpec)` picks a family, whose members differ), abstract (an ABC base, abstract
        methods) or with an empty body (vLLM's `class KVConnectorMetadata(ABC): pass`, which a third party's subclass
        fills: LMCache's metadata with its `requests`). Only a leaf class says what the object is. A concrete class
        below an ABC is a leaf (vLLM's `AsyncLLM(EngineClient)`, 26o M3): the class itself must list `ABC` or leave an
        abstract method unimplemented."""
        info = cls.cls
        if not (info.methods or info.fields or info.class_attrs or info.instance_attrs):
            return True
        if cls.qualname in self.usage.subclass_members or self.api.subclasses(cls):
            return True
        if any(b.rsplit(".", 1)[-1] == "ABC" for b in info.bases):
            return True
        winning: dict[str, list[str]] = {}  # the definition that wins through the MRO: an override implements one
        for c in self.api.mro(cls)[0]:
            for name, fn in c.cls.methods.items() if c.cls is not None else ():
                winning.setdefault(name, fn.decorators)
        return any(d.rsplit(".", 1)[-1] == "abstractmethod" for decorators in winning.values() for d in decorators)

    def _narrowed(self, node: ast.Attribute, env: dict, result):
        """The member as a class the code has just tested the receiver against defines it (`if not isinstance(self.
        connector, SupportsHMA): return`, then `self.connector.request_finished_all_groups()`; isinstance_narrowing.py):
        every class of the test's group must be a vLLM class that has it; else `result` as it was."""
        for group in narrowing_classes(self.file.tree, node):
            refs = [self.infer(c, env) for c in group]
            if not refs or not all(isinstance(r, ClassRef) for r in refs):
                continue
            found = [self._look_up(r.cls, node.attr, False) for r in refs]
            if all(isinstance(f, (Resolved, External)) for f in found):
                return found[0]
        return result

    def _visit_class_member(self, node: ast.Attribute, base: ClassRef, key: tuple, env: dict) -> None:
        """`Cls.m` read off a vLLM class itself (`Pooler.from_config_with_defaults(...)`, `RequestStatus.WAITING_FOR_FSM`):
        a member that neither the class, its bases, the subclasses it may stand for, nor the client (a patch, a store)
        gives it is an AttributeError when the line runs (HI2). Only a certain absence is reported: a member of a base
        driftcheck does not read, or one whose class is open, stays silent here, as do dunders and what `type` and the
        metaclasses of the standard library give every class."""
        attr = node.attr
        if attr.startswith("__") or attr in _TYPE_MEMBERS:
            return  # (a dunder, or a name a class body mangles); a `_private` one is what a monkey-patch reads (25a M1)
        if attr.startswith("_") and self._private_members_unseen(base.cls):
            return
        self.reported.add(key)
        if (self._patched_on(base.cls, attr) and id(node) not in read_before_own_store(self.file.tree)) \
                or self._replaced(base.cls, False):
            return
        result = self._look_up(base.cls, attr, False)
        if not isinstance(result, Missing):
            return  # the common case, answered before the file-wide questions below
        if any(c.cls is not None and c.cls.dynamic_class_names for c in self.api.mro(base.cls)[0]):
            # a method of the class sets members on it by a computed name: vLLM 0.32.0's
            # `AttentionBackendEnum.register(name, path)` does `setattr(cls, name, member)` (tpu-inference's tests
            # register "FAKE", then read `AttentionBackendEnum.FAKE`): any name may be there at run time
            return
        if isinstance(node.value, ast.Name) and node.value.id in self._names_bound_twice():
            return  # `if cuda: from vllm import _custom_ops as ops` / `elif xpu: from vllm._xpu_ops import xpu_ops as ops`
        if self._made_by_a_call(base.cls.cls.name, attr):
            return
        result = self._unread_may_set(node, result)
        if not isinstance(result, Missing):
            return
        self.usage.attrs.append(AttrUse(loc_of(self.file, node), base.cls, attr, False, result, node, self.file,
                                        plugin_may_set(self, node, result, env, base.cls)))

    def _private_members_unseen(self, cls) -> bool:
        """Whether the class may have `_private` members no source driftcheck reads shows: a base outside vLLM (abc.ABC's
        and every ABCMeta class's `_abc_impl`, an Enum's `_member_map_`, a NamedTuple's `_fields`, torch's
        `nn.Module._call_impl`: public members of those bases are known, private ones are not) or a metaclass."""
        order, _, externals = self.api.mro(cls)
        return any(not e.startswith("builtins.") for e in externals) or \
            any(c.cls is not None and "__metaclass__" in c.cls.decorator_kwargs for c in order)

    def _made_by_a_call(self, cls_name: str, attr: str) -> bool:
        """Whether a client file hands the class and the member's name to a call that may make it, other than the
        builtin probes: vllm-omni's `extend_enum(RequestStatus, "WAITING_FOR_CHUNK", -1)` (aenum's), which driftcheck
        does not read, adds the enum member its schedulers read."""
        pattern = re.compile(rf"\b(\w+)\(\s*[\w.]*\b{re.escape(cls_name)}\s*,\s*[\"']{re.escape(attr)}[\"']")
        return any(m.group(1) not in ("hasattr", "getattr") for f in self.usage.files if attr in f.text
                   for m in pattern.finditer(f.text))

    def _names_bound_twice(self) -> frozenset[str]:
        """Names the file binds in more than one place (imports, assignments, defs, loop and `with` targets): which
        object such a name holds where it is read depends on which binding ran, so a class read through it is not
        certainly that class (vLLM 0.16.0's `ops`, `_custom_ops` on CUDA and the `xpu_ops` class on XPU)."""
        if self._bound_twice is None:
            self._bound_twice = frozenset(name for name, kinds in binding_counts(self.file.tree).items()
                                          if kinds.get("import", 0) + kinds.get("def", 0) + kinds.get("store", 0) > 1)
        return self._bound_twice

    def _visit_super_member(self, node: ast.Attribute, base: SuperOf, key: tuple) -> None:
        """`super().m` in a method of a client class whose vLLM bases come next in its MRO: a member none of them has
        (nor a client ancestor, nor a base driftcheck does not read) is an AttributeError, since `super()` looks only at
        the classes after this one. Not where the class may sit before other bases in a subclass's MRO (a mixin
        another client class lists with more bases, a worker extension vLLM mixes into its worker): those come next
        there (JC3)."""
        name, attr = base.cls_name, node.attr
        if base.start is not None:
            return  # `super(Base, self).m`: its calls are checked (DC003/DC004); a missing member is not reported
        vbases = self.client_class_vllm_bases.get(name, [])
        results = [(v, self.api.class_member(v, attr)) for v in vbases]
        if not results or not all(isinstance(r, Missing) for _v, r in results):
            return  # a vLLM base has it: DC003/DC004 check the call itself (super().__init__(...))
        if attr in self._ancestor_members(name) or not self._vllm_bases_decide(name, attr) \
                or any(self._patched_on(v, attr) for v in vbases) or self._mixed_in(name):
            return
        owner, result = results[0]
        if any(e.split(".")[-1] == "Protocol" for v in vbases for e in self.api.mro(v)[2]):
            return  # a Protocol's member comes from whatever class implements it
        self.reported.add(key)
        self.usage.attrs.append(AttrUse(loc_of(self.file, node), owner, attr, False, result, node, self.file))

    def _mixed_in(self, cls_name: str) -> bool:
        """Whether another client class lists `cls_name` among several bases, or the client names it as a worker
        extension (mixed into vLLM's worker): `super()` in it may reach those other classes first."""
        if any(dotted.rpartition(".")[2] == cls_name for dotted, _loc in self.usage.worker_extensions):
            return True
        found = self._mixins.get(cls_name)
        if found is None:
            source = getattr(self, "client_source", None)
            files = [*(f for f in self.usage.files if cls_name in f.text),
                     *(source.other_files(containing=cls_name) if source is not None else ())]  # no vLLM import too
            found = self._mixins[cls_name] = any(
                len(c.bases) > 1 and any((base_name(b) or "").rpartition(".")[2] == cls_name for b in c.bases)
                for f in files for c in nodes_of(f.tree, ast.ClassDef))
        return found

    def _makes_mocks(self) -> bool:
        """Whether the file imports unittest.mock (or the `mock` backport) or takes pytest-mock's `mocker` fixture:
        its code may put a mock wherever a vLLM object is expected (TL4)."""
        if "_mocks" not in self.__dict__:
            found = False
            for node in walk(self.file.tree):
                if isinstance(node, ast.ImportFrom) and node.module in ("unittest.mock", "mock") \
                        or isinstance(node, ast.ImportFrom) and node.module == "unittest" \
                        and any(a.name == "mock" for a in node.names) \
                        or isinstance(node, ast.Import) and any(a.name in ("unittest.mock", "mock") for a in node.names) \
                        or isinstance(node, ast.arg) and node.arg == "mocker":
                    found = True
                    break
            self._mocks = found
        return self._mocks

    def _sibling_defining(self, cls: Resolved, attr: str) -> str | None:
        """A client class of the same kind as vLLM's `cls` (its name ends in the same word: the platform's
        `AscendMetadata` next to `AttentionMetadata`) that does not derive from it and defines `attr` (itself or
        through its client bases), when the tree uses `cls` as the name of a family (`names_a_family`): a value only
        annotated with `cls` may be the client's own object (vllm-ascend's models annotate `AttentionMetadata` and
        get the platform's metadata)."""
        kind = _kind_word(cls.cls.name)
        if not kind:
            return None
        table = self.usage.client_class_table
        for label in _classes_of_kind(self.usage).get(kind, ()):
            members, bases = table[label]
            if label.rsplit(".", 1)[-1] == cls.cls.name:
                continue
            seen, todo, found = {label}, list(bases), attr in members
            while todo and not found:
                b = todo.pop()
                if b == cls.qualname:
                    break  # derives from it: InSubclass's question, not this one
                if b in table and b not in seen:
                    seen.add(b)
                    found = attr in table[b][0]
                    todo += table[b][1]
            if found and cls.qualname not in bases and not self._derives_from(label, cls) and \
                    self.api.names_a_family(cls):
                return label
        return None

    def _derives_from(self, label: str, cls: Resolved) -> bool:
        """Whether the client class `label` derives from vLLM's `cls` through any of its bases: a vLLM base (the
        table keeps only client bases), itself or through its client bases, or a vLLM subclass of `cls` (FB2:
        tilelang-turboquant's `TileLangTQ3BitConfig(TileLangTQQuantizationConfig)`, whose base derives from
        `QuantizationConfig`, is a subclass the value may be, InSubclass's question, not a sibling's)."""
        for base in vllm_bases_through(self.usage, self.api, [label]):
            if base.qualname == cls.qualname or any(c.qualname == cls.qualname for c in self.api.mro(base)[0]):
                return True
        return False

    def _unread_sibling(self, cls: Resolved, receiver: ast.expr) -> str | None:
        """A class of the same kind as vLLM's `cls` (`AscendMetadata` next to `AttentionMetadata`) that a client
        file imports from a package driftcheck does not read (`unread_packages`) and annotates a value of the same
        name with (the same role: the client is handed such objects where it reads `cls`'s), when the tree uses `cls`
        as the name of a family: `receiver`, only annotated with `cls`, may be that package's object, whose members
        are not known (mindie-turbo 2.0rc1 reads `attn_metadata: AttentionMetadata` in one file and annotates
        `attn_metadata: AscendMetadata` from vllm_ascend in another). A class that only shares the kind word (vLLM's
        tree annotates `lmcache_config: LMCacheEngineConfig` and reads `quant_config: QuantizationConfig`) says nothing
        about what the value holds."""
        kind = _kind_word(cls.cls.name)
        name = receiver.id if isinstance(receiver, ast.Name) else receiver.attr if isinstance(receiver, ast.Attribute) else None
        if not kind or name is None:
            return None
        kinds = _unread_kinds(self.usage, unread_packages(self.usage, self.package, self.api.required_distributions()))
        found = [where for cls_name, where, names in kinds.get(kind, [])
                 if cls_name != cls.cls.name and name in names]
        return found[0] if found and self.api.names_a_family(cls) else None

    def _handed_to_unread(self, node: ast.Attribute) -> str | None:
        """`HummingMethod.prepare_layer_meta(layer=self.layer)` with HummingMethod from a third-party package: code
        driftcheck does not read gets `self.layer` and may set attributes on it (`self.layer.humming_metas`). The
        callee and line when this file hands the receiver itself to such a function, in the same class (for
        `self...`) or the same function."""
        if self._handed is None:
            self._handed, self._scope_of = {}, {}
            own = {f.module.split(".")[0] for f in self.usage.files}
            self._unread_reexports = {}  # `from vllm.utils.humming import HummingMethod`: vLLM hands out humming's class
            for imp in nodes_of(self.file.tree, ast.ImportFrom):
                if not imp.level and (imp.module or "").split(".")[0] == self.package:
                    for alias in imp.names:
                        found = self.api.resolve(f"{imp.module}.{alias.name}") if alias.name != "*" else None
                        if isinstance(found, (External, Unknown)):  # another package's, or served by __getattr__
                            self._unread_reexports[alias.asname or alias.name] = found.qualname
            self._index_handed(self.file.tree, None, None, own)
        scopes = self._scope_of.get(id(node))
        if scopes is None:
            return None
        dump = ast.dump(node.value)
        scope = scopes[0] if root_name(node.value) in ("self", "cls") else scopes[1]
        return self._handed.get((scope, dump))

    def _index_handed(self, node: ast.AST, cls: int | None, fn: int | None, own: set[str]) -> None:
        for child in children(node):
            if isinstance(child, ast.ClassDef):
                self._index_handed(child, id(child), None, own)
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self._index_handed(child, cls, id(child), own)
                continue
            if isinstance(child, ast.Attribute):
                self._scope_of[id(child)] = (cls, fn)
            elif isinstance(child, ast.Call):
                callee = dotted_name(child.func) or ""
                first, _, rest = callee.partition(".")
                source = self.foreign.get(first)
                reexported = self._unread_reexports.get(first) if source is None else None
                root = (source or "").split(".")[0]
                if reexported or (root and root not in own and root not in sys.stdlib_module_names):
                    imported = source is not None and source.split(".")[0] == first  # `import x` vs `from x import f`
                    name = callee if imported else f"{reexported}.{rest}".rstrip(".") if reexported else f"{source}.{callee}"
                    where = f"`{name}` (line {child.lineno})"
                    for arg in [*child.args, *(k.value for k in child.keywords)]:
                        arg = arg.value if isinstance(arg, ast.Starred) else arg
                        scope = cls if root_name(arg) in ("self", "cls") else fn
                        self._handed.setdefault((scope, ast.dump(arg)), where)
            self._index_handed(child, cls, fn, own)

    def _unread_may_set(self, node: ast.Attribute, result: object) -> object:
        """A member no class defines, read from an object this file hands to code driftcheck does not read: unknown."""
        if not isinstance(result, Missing) or stores_only(node, self.file.tree):
            return result
        callee = self._handed_to_unread(node)
        if callee is None:
            return result
        return Unknown(result.qualname, f"`{ast.unparse(node.value)}` is handed to {callee}, which driftcheck does not "
                       f"read and which may set '{node.attr}' on it")

    def _look_up(self, cls: Resolved, attr: str, store: bool = False) -> object:
        """A member of a vLLM-typed value: the declared class first, then the classes the value may really be."""
        result = self.api.class_member(cls, attr)
        if not isinstance(result, Missing):
            return result
        externals = self.api.mro(cls)[2]
        if any(e.split(".")[-1] == "Protocol" for e in externals):
            # a Protocol is a structural type: the object is any class that has what it needs
            return InSubclass(f"{cls.qualname}.{attr}", "", cls.path, cls.line)  # "" = any class
        # made on every such object by other code (a quant method's `layer.register_parameter("weight", ...)`): it
        # exists whatever subclass the object is, one that sets it itself too (26m N1: 0.34.0's
        # Step5FusedQKVIndexerLinear made `.weight` on any ColumnParallelLinear "defined only by" it)
        created = self._created_elsewhere(cls, attr, store, result)
        if created is not result:
            return created
        # a client class deriving from the receiver's class or from one of its bases: the receiver's type is often
        # only the first class vLLM assigns (`runner.attn_state`, built by the backend's `get_state_cls()`), and a
        # sibling may be what it holds (0.10.2's MLACommonState beside the CommonAttentionState it is typed as)
        for c in self.api.mro(cls)[0]:
            where = self.usage.subclass_members.get(c.qualname, {}).get(attr)
            if where is not None:
                # vLLM's own subclasses that define it count too (avater_voice's output processor beside vLLM's
                # SingleStepOutputProcessor and MultiStepOutputProcessor, which set `detokenizer` as well)
                theirs = self.api.member_in_subclass(cls, attr)
                others = 0 if theirs is None else 1 + theirs.others
                return InSubclass(f"{cls.qualname}.{attr}", *where, others=others)
        found = self.api.member_in_subclass(cls, attr)
        if found is not None:
            return found
        return self._created_elsewhere(cls, attr, store, result)

    def _client_is_module(self, cls_name: str) -> bool:
        """Whether a client class derives from torch's nn.Module itself (a base outside vLLM)."""
        for name in [cls_name, *self._client_ancestors(cls_name)]:
            cls = self.classes.get(name)
            for base in cls.bases if cls is not None else []:
                dotted = base_name(base) or ""
                source = self.foreign.get(dotted.split(".")[0], "")
                if source.split(".")[0] == "torch" and dotted.rsplit(".", 1)[-1] == "Module":
                    return True
        return False

    def _created_elsewhere(self, cls: Resolved, attr: str, store: bool, result: object, module: bool = False) -> object:
        """Missing from every class body, but made on the object by other code (the client's, or vLLM's own
        `layer.register_parameter("w13_weight", ...)`): it exists once that code ran."""
        if store:
            return result  # a write vLLM never reads: DC006 says so
        for registrar, where, how in self.usage.registered_by_name.get(attr, ()):
            # `module.register_buffer(name, t)` with `name` from checkpoint keys (or a loop): an object that has
            # the registrar may carry it (the names as vLLM's own computed-name setters are read)
            if not isinstance(self.api.class_member(cls, registrar), (Missing, Unknown)):
                return External(f"client-registered.{attr} ({where}, {registrar} by a computed name: {how})")
        if self.usage.set_on_results:
            for c in self.api.mro(cls)[0]:
                found = self.usage.set_on_results.get((c.qualname, attr))
                if found is not None:
                    where, method = found
                    return Unknown(f"{cls.qualname}.{attr}", f"the client's replacement of `{method}` sets '{attr}' on "
                                   f"objects driftcheck cannot type ({where}); the `{c.cls.name}` objects it returns may carry it")
        if not module and "torch.nn.Module" not in self.api.mro(cls)[2]:
            # only modules get members from their collaborators (quantization methods register weights on the
            # layer); anywhere else `obj.name = ...` on some other object says nothing about this class
            return result
        if attr in self.usage.client_set_attrs:
            return External(f"client-set.{attr}")  # the client itself sets it on some object
        outside = self.api.assigned_from_outside(attr)
        if outside is not None:
            return External(f"assigned-at.{outside[0]}:{outside[1]}")
        return result

    def _client_subclass_defines(self, cls_name: str, attr: str) -> bool:
        """`self.m` in a client class whose own subclasses define `m` (template methods)."""
        for name, cls in self.classes.items():
            if name != cls_name and attr in self.client_class_members.get(name, set()) and \
                    cls_name in self._client_ancestors(name):
                return True
        if attr in self.usage.client_subclass_members.get(f"{self.file.module}.{cls_name}", ()):
            return True  # a subclass in another client file defines it
        own = self.api.resolve(f"{self.file.module}.{cls_name}") if self.file.module.split(".")[0] == self.package else None
        if isinstance(own, Resolved) and own.kind == "class":  # the client is (a copy of) vLLM's own tree
            return self.api.member_in_subclass(own, attr, count=False) is not None
        return False

    def _vllm_bases_decide(self, cls_name: str, attr: str) -> bool:
        """Whether the vLLM bases alone decide `self.attr`: False when another base of the client class
        (torch's nn.Module, a third-party class we do not read) has, or may have, the member."""
        for name in [cls_name, *self._client_ancestors(cls_name)]:
            cls = self.classes.get(name)
            for base in cls.bases if cls is not None else []:
                node = base.value if isinstance(base, ast.Subscript) else base
                if isinstance(node, ast.Call):
                    return False  # a base a call makes (`class M(_create_pooling_model_cls(cls), ...)`): any members
                dotted = dotted_name(node)
                if dotted is None or dotted in self.classes or isinstance(self.infer(node, self.class_env(name)), ClassRef):
                    continue
                source = self.foreign.get(dotted.split(".")[0])
                if source is None:
                    if hasattr(builtins, dotted):
                        continue  # object, Exception...
                    return False
                root = source.split(".")[0]
                if root == "torch" and dotted.rsplit(".", 1)[-1] == "Module":
                    if attr in TORCH_NN_MODULE:
                        return False
                    continue  # nn.Module's members are known
                if root not in ("abc", "typing", "typing_extensions"):
                    return False
        return True

    # ------------------------------------------------------- bound functions
    def _find_bound_functions(self) -> None:
        found: dict[str, tuple[str, ast.AST]] = {}
        onto: dict[str, list[str | None]] = {}  # function -> where each of its assignments stores it unbound (or None)
        foreign_onto: dict[str, list[str | None]] = {}  # function -> the required package's object each stores it on
        instance_targets: set[int] | None = None  # read only for a function assigned somewhere (most files assign none)
        for node in nodes_of(self.file.tree, ast.Call, ast.Assign):
            if isinstance(node, ast.Call) and dotted_name(node.func) in ("types.MethodType", "MethodType") and node.args:
                first = node.args[0]
                if isinstance(first, ast.Name) and first.id in self.functions and not self._shadowed_at(first):
                    found.setdefault(first.id, ("method-type", node))
                    onto.setdefault(first.id, []).append(None)
                    foreign_onto.setdefault(first.id, []).append(None)
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.functions \
                            and not self._shadowed_at(node.value):
                        found.setdefault(node.value.id, ("forward-assignment", node))
                        if instance_targets is None:
                            instance_targets = self._instance_self_targets()
                        onto.setdefault(node.value.id, []).append(
                            dotted_name(t) if id(t) in instance_targets else self._module_named(t.value))
                        foreign_onto.setdefault(node.value.id, []).append(self._required_package_object(t.value))
        for name, (how, site) in found.items():
            fn = self.functions[name]
            bound = self._bound(fn, how, name)
            bound.site = loc_of(self.file, site)
            if how == "forward-assignment":
                bound.onto_class = next((c for t in site.targets if isinstance(t, ast.Attribute)
                                         for c in [self._target_class(t.value)] if c), None)
                places = onto.get(name, [])
                bound.stored_unbound = places[0] if places and all(places) else None
                objects = foreign_onto.get(name, [])
                bound.onto_foreign = objects[0] if objects and all(objects) and bound.onto_class is None else None
            self.usage.bound.append(bound)

    def _shadowed_at(self, name: ast.Name) -> bool:
        """Whether the function around `name` binds that name itself (a parameter, a store, an import or a nested
        definition; the module's `global` aside), so that it holds that value there, not the file's top-level function
        of the same name: vLLM's `init_app_state(engine_client, state)` stores its parameter with
        `state.engine_client = engine_client` beside the module's `def engine_client(request)` (TJ3)."""
        fn = enclosing_function(self.file.tree, name)
        if fn is None:
            return False
        args = fn.args
        if name.id in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}:
            return True
        local = False
        for n in walk(fn):
            if isinstance(n, ast.Global) and name.id in n.names:
                return False
            if isinstance(n, ast.Name) and n.id == name.id and isinstance(n.ctx, ast.Store) \
                    or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fn and n.name == name.id \
                    or isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                        (a.asname or a.name.split(".")[0]) == name.id for a in n.names):
                local = True
        return local

    def _required_package_object(self, node: ast.expr) -> str | None:
        """The object `node` names (as written, `transformers.PreTrainedModel`) where the file binds its first name
        only by imports of one package that vLLM itself requires (its metadata's Requires-Dist: torch, transformers)
        or of the standard library: such a package cannot import vLLM, so none of its classes is a vLLM class, and a
        function stored on one has no vLLM `self` (TJ1). None otherwise: a vLLM name, the client's own, a package
        that may depend on vLLM (a platform plugin's runner class), a name the file also binds another way, or a
        target without metadata (nothing is known to be required)."""
        dotted = dotted_name(node)
        if not dotted:
            return None
        root = dotted.split(".")[0]
        source = self.foreign.get(root)
        top = (source or "").split(".")[0]
        if not top or top == self.package or top in self.usage.client_packages() or top.startswith("_"):
            return None
        required = self.api.required_distributions()
        if top not in sys.stdlib_module_names and (required is None or top.lower() not in required):
            return None
        known = self.__dict__.setdefault("_only_imported", {})  # root -> answer: one walk of the file a name
        if root not in known:
            known[root] = self._bound_only_by_imports_of(root, top)
        return dotted if known[root] else None

    def _bound_only_by_imports_of(self, root: str, top: str) -> bool:
        """Whether the file binds `root` only by imports from the package `top` (no store, parameter or definition)."""
        for n in walk(self.file.tree):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    binds = a.asname or (a.name.split(".")[0] if isinstance(n, ast.Import) else a.name)
                    module = a.name if isinstance(n, ast.Import) else (n.module or "") if not n.level else ""
                    if binds == root and module.split(".")[0] != top:
                        return False
            elif isinstance(n, ast.Name) and n.id == root and not isinstance(n.ctx, ast.Load) \
                    or isinstance(n, ast.arg) and n.arg == root \
                    or isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == root:
                return False
        return True

    def _alias_value(self, name: str) -> ast.expr | None:
        """What a module-level name holds when the file binds it once, by one plain assignment (`_kv_cache_manager =
        sys.modules.get("vllm.v1.core.kv_cache_manager")`); None when it is bound otherwise or more than once."""
        values = [node.value for node in self.file.tree.body if isinstance(node, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
        others = [node for node in self.file.tree.body if not isinstance(node, ast.Assign) and name in {
            *(a.asname or a.name.split(".")[0] for a in getattr(node, "names", ()) if isinstance(node, (ast.Import, ast.ImportFrom))),
            *([node.name] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else [])}]
        return values[0] if len(values) == 1 and not others else None

    def _instance_self_targets(self) -> set[int]:
        """The `self.x` targets of assignments in instance methods (a method of a class, not a classmethod or a
        staticmethod, its first parameter): a function stored there is an instance attribute, never bound."""
        out: set[int] = set()
        stores = [n for n in nodes_of(self.file.tree, ast.Assign)  # the file's `name.x = ...`, read once
                  if any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) for t in n.targets)]
        for cls in nodes_of(self.file.tree, ast.ClassDef) if stores else ():
            for fn in cls.body:
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args \
                        or fn.name in ("__new__", "__init_subclass__", "__class_getitem__") or any(
                        (dotted_name(d) or "").rsplit(".", 1)[-1] in ("classmethod", "staticmethod") for d in fn.decorator_list):
                    continue
                me = fn.args.args[0].arg
                for node in within(stores, fn):  # the assignments in the method's lines: its body, nested scopes too
                    out |= {id(t) for t in node.targets if isinstance(t, ast.Attribute)
                            and isinstance(t.value, ast.Name) and t.value.id == me}
        return out

    def _module_named(self, node: ast.expr) -> str | None:
        """The module an expression certainly names: a vLLM module (`mamba_utils` from `from vllm... import
        mamba_utils`), or a module the file binds with `import x` / `import x.y as z` (`torch`); None otherwise (a
        class, an object, a name bound by `from x import y` outside vLLM, which may be either)."""
        if isinstance(self.infer(node, {}), ModRef):
            return dotted_name(node)
        if isinstance(node, ast.Call) and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in ("__import__", "import_module"):
            return ast.unparse(node)  # `__import__(name, fromlist=["_"]).f = fn`: a loader gives a module (16a)
        dotted = dotted_name(node)
        alias = self._alias_value(node.id) if isinstance(node, ast.Name) else None
        if alias is not None and _gets_a_module(alias):  # `_kv_cache_manager = sys.modules.get("vllm.v1.core...")`
            return dotted
        if not dotted:
            return None
        for imp in nodes_of(self.file.tree, ast.Import):
            for a in imp.names:
                if a.asname == dotted or a.asname is None and (a.name == dotted or a.name.startswith(dotted + ".")):
                    return dotted
        return dotted if isinstance(node, ast.Name) and self._only_vllm_modules(node.id) else None

    def _only_vllm_modules(self, name: str) -> bool:
        """Whether the file binds `name` only by `from vllm.x import mod` imports of modules the target has, wherever
        they are (a function's own `from vllm.distributed import communication_op as cop` before `cop.f = fn`: 28a U1)."""
        if set(binding_counts(self.file.tree).get(name, {})) != {"import"}:
            return False
        for imp in nodes_of(self.file.tree, ast.Import, ast.ImportFrom):
            for a in imp.names:
                if (a.asname or a.name).split(".")[0] != name:
                    continue
                if not (isinstance(imp, ast.ImportFrom) and not imp.level and imp.module
                        and imp.module.split(".")[0] == self.package
                        and self.api.module_path(f"{imp.module}.{a.name}") is not None):
                    return False
        return True

    def _target_class(self, node: ast.expr) -> str | None:
        """The target's class a function is assigned onto (`Cls.meth = fn`): one the target has, or a class name the file
        imports from the target's package, whether or not the target still has it (`ModelInputForGPUBuilder`)."""
        found = self.infer(node, {})
        if isinstance(found, ClassRef):
            return found.cls.qualname
        # a class through a module the file imports from the target's package (`moe_w2_delta.DeltaTier.m = fn` after
        # `from vllm.x.utils import moe_w2_delta`), whether or not the target has that module: where it is gone, its
        # import fails first (DC001/DC002)
        attr = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr[:1].isupper():
            attr, node = node.attr, node.value
        if not isinstance(node, ast.Name):
            return None
        for imp in nodes_of(self.file.tree, ast.ImportFrom, ast.Import):
            if isinstance(imp, ast.ImportFrom) and (imp.level or not imp.module or imp.module.split(".")[0] != self.package):
                continue
            for a in imp.names:
                if isinstance(imp, ast.Import):
                    if attr and a.asname == node.id and a.name.split(".")[0] == self.package:
                        return f"{a.name}.{attr}"  # `import vllm.x.mod as m` then `m.Cls`
                elif (a.asname or a.name) == node.id and (attr or a.name[:1].isupper()):
                    return f"{imp.module}.{a.name}" + (f".{attr}" if attr else "")
        return None

    def _bound(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, how: str, name: str, own_members: set[str] | None = None) -> BoundFunction:
        args = fn.args.posonlyargs + fn.args.args
        self_name = args[0].arg if args else "self"
        bound = BoundFunction(name, how, loc_of(self.file, fn), fn, self.file)
        stored = set(own_members or ())
        for node in walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
                if isinstance(node.ctx, ast.Store):
                    stored.add(node.attr)
        guarded = _hasattr_guarded(fn)
        for node in walk(fn):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
                if isinstance(node.ctx, ast.Load) and node.attr not in stored and not node.attr.startswith("__") \
                        and id(node) not in guarded:
                    bound.self_names.setdefault(node.attr, loc_of(self.file, node))
        return bound


def _hasattr_guarded(fn: ast.AST) -> set[int]:
    """Nodes under `a if hasattr(x, "n") else b` / `if hasattr(...)`: the client already handles both vLLMs."""
    out: set[int] = set()
    for node in walk(fn):
        if isinstance(node, (ast.IfExp, ast.If)) and "hasattr(" in ast.unparse(node.test):
            branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.body + node.orelse
            for branch in branches if isinstance(node, ast.IfExp) else [ast.Module(body=branches, type_ignores=[])]:
                out.update(id(n) for n in walk(branch))
    return out


def _annotated_names(tree: ast.AST) -> dict[str, set[str]]:
    """Word an annotation spells -> the parameters and variables annotated with it (`attn_metadata: AscendMetadata`;
    `self.meta: "AscendMetadata"` by its attribute; a string forward reference by its words)."""
    notes = [(a.arg, a.annotation) for a in nodes_of(tree, ast.arg) if a.annotation is not None]
    notes += [(n.target.id if isinstance(n.target, ast.Name) else n.target.attr, n.annotation)
              for n in nodes_of(tree, ast.AnnAssign) if isinstance(n.target, (ast.Name, ast.Attribute))]
    out: dict[str, set[str]] = {}
    for name, note in notes:
        for n in walk(note):
            words = [n.id] if isinstance(n, ast.Name) else [n.attr] if isinstance(n, ast.Attribute) else \
                re.findall(r"\w+", n.value) if isinstance(n, ast.Constant) and isinstance(n.value, str) else []
            for word in words:
                out.setdefault(word, set()).add(name)
    return out


def _classes_of_kind(usage) -> dict[str, list[str]]:
    """Kind word -> the labels of the client class table's classes of that kind, sorted: grouped once per table
    (`_sibling_defining` sorted and split the whole table for every member it was asked about)."""
    def build() -> dict[str, list[str]]:
        grouped: dict[str, list[str]] = {}
        for label in sorted(usage.client_class_table):
            grouped.setdefault(_kind_word(label.rsplit(".", 1)[-1]), []).append(label)
        return grouped
    return kept_on(usage, "_classes_of_kind", usage.client_class_table, build)


def _unread_kinds(usage, unread: dict) -> dict[str, list[tuple[str, str, set[str]]]]:
    """Kind word -> [(class name, where, the names it annotates)] for the classes the client's files import from
    the `unread` packages (`unread_packages`, one answer per client): made once per client, not once per file that
    asks (every file's visit read every file's imports and annotations again: O(files^2) on a whole platform)."""
    def build() -> dict[str, list[tuple[str, str, set[str]]]]:
        table: dict[str, list[tuple[str, str, set[str]]]] = {}
        for file in usage.files if unread else []:
            annotated: dict[str, set[str]] | None = None
            for imp in nodes_of(file.tree, ast.ImportFrom):
                if not imp.level and (imp.module or "").split(".")[0] in unread:
                    annotated = _annotated_names(file.tree) if annotated is None else annotated
                    for alias in imp.names:
                        names = annotated.get(alias.asname or alias.name)
                        if names:
                            table.setdefault(_kind_word(alias.name), []).append(
                                (alias.name, f"`{imp.module}.{alias.name}` ({file.rel}:{imp.lineno})", names))
        return table
    return kept_on(usage, "_unread_kinds", usage.files, build)


def _kind_word(name: str) -> str:
    """The last word of a CamelCase class name, which names its kind: `AscendMLAMetadata` -> "Metadata"."""
    words = re.findall(r"[A-Z][a-z0-9]+", name)
    return words[-1] if words else ""


def _gets_a_module(value: ast.expr) -> bool:
    """`sys.modules.get("name")` / `sys.modules["name"]`: a module (or None, where nothing is then stored)."""
    if isinstance(value, ast.Call) and dotted_name(value.func) == "sys.modules.get":
        return True
    return isinstance(value, ast.Subscript) and dotted_name(value.value) == "sys.modules"
