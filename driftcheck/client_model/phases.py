"""The phases that run over every client file before any use is checked: imports (a try body's import
wins over its `except ImportError:` fallback), the patches the client sets on vLLM classes and modules,
client classes and their vLLM bases, members client subclasses add, and worker extensions named by string.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.client_model.inference import (
    ABSENT, ANY_MODULE, ClassRef, Instance, ModRef, REGISTRARS, base_name, same_value, settle_absent,
)
from driftcheck.client_model.uses import ImportUse, loc_of
from driftcheck.vllm_model.resolved import External, Missing, Resolved
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.signatures import signature_from_args


def _sys_modules_loop_names(tree: ast.AST) -> set[str]:
    """Names bound to each loaded module by a loop over `sys.modules` (`for name, module in list(sys.modules.items())`)."""
    out: set[str] = set()
    for loop in nodes_of(tree, ast.For):
        if not any(dotted_name(n) == "sys.modules" for n in ast.walk(loop.iter) if isinstance(n, ast.Attribute)):
            continue
        values = any(isinstance(n, ast.Attribute) and n.attr == "values" for n in ast.walk(loop.iter))
        target = loop.target
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name):
            out.add(target.elts[1].id)  # .items(): (name, module)
        elif isinstance(target, ast.Name) and values:
            out.add(target.id)  # .values(): module
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return dotted_name(test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _catches_import_error(handlers: list[ast.ExceptHandler]) -> bool:
    for h in handlers:
        if h.type is None:
            return True
        names = [dotted_name(t) for t in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])]
        if any(n in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException") for n in names):
            return True
    return False


class ClientPhases:
    """What one file defines, imports and patches, known to every file before the visits."""

    # -------------------------------------------------------------- imports
    def collect_imports(self) -> None:
        self._imports_in(self.file.tree.body, runtime_only=False, guarded=False, type_only=False, env=self.module_env)
        settle_absent(self.module_env)
        for node in self.file.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            else:
                continue
            if node.name in self.module_env:  # `class LlamaDecoderLayer(LlamaDecoderLayer)`: the client's own wins
                del self.module_env[node.name]

    def _imports_in(self, body: list[ast.stmt], runtime_only: bool, guarded: bool, type_only: bool, env: dict) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._record_import(node, runtime_only, guarded, type_only, env)
            elif isinstance(node, ast.If):
                tc = _is_type_checking(node.test)
                self._imports_in(node.body, runtime_only, guarded, type_only or tc, env)
                self._imports_in(node.orelse, runtime_only, guarded, type_only, env)
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                g = guarded or _catches_import_error(node.handlers)
                body_env: dict = {}
                self._imports_in(node.body, runtime_only, g, type_only, body_env)
                body_runs = self._imports_resolve(node.body)
                for h in node.handlers:
                    handler_env: dict = {}
                    first = len(self.usage.imports)
                    self._imports_in(h.body, runtime_only, guarded, type_only, handler_env)
                    if body_runs:  # the try body's vLLM imports all exist here: this fallback never runs
                        for use in self.usage.imports[first:]:
                            use.unreached = True
                    # The handler's import is the fallback: it binds a name only when the try body's own
                    # import of it fails on this target (a vLLM name it lacks), never over the client's own.
                    for name, value in handler_env.items():
                        if name not in body_env or body_env[name] is ABSENT:
                            body_env[name] = value
                env.update({k: (None if v is ABSENT else v) for k, v in body_env.items()})
                self._imports_in(node.orelse, runtime_only, guarded, type_only, env)
                self._imports_in(node.finalbody, runtime_only, guarded, type_only, env)
            elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
                self._imports_in(node.body, runtime_only, guarded, type_only, env)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not runtime_only:
                pass  # function bodies are handled with their own environment
            elif isinstance(node, ast.ClassDef) and not runtime_only:
                self._imports_in(node.body, runtime_only, guarded, type_only, env)

    def _imports_resolve(self, body: list[ast.stmt]) -> bool:
        """Whether every import statement directly in `body` is a vLLM import the target has."""
        imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
        if not imports:
            return False
        for n in imports:
            names = [(a.name, None) for a in n.names] if isinstance(n, ast.Import) else [(n.module or "", a.name) for a in n.names]
            for module, name in names:
                if n.__class__ is ast.ImportFrom and (n.level or not module):
                    return False
                if module.split(".")[0] != self.package or self.api.module(module) is None:
                    return False
                if name not in (None, "*") and not isinstance(self.api.resolve(f"{module}.{name}"), (Resolved, External)):
                    return False
        return True

    def _record_import(self, node: ast.Import | ast.ImportFrom, runtime_only: bool, guarded: bool, type_only: bool, env: dict) -> None:
        loc = loc_of(self.file, node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if alias.name.split(".")[0] != self.package:
                    env[bound] = None  # someone else's module: shadows any earlier vLLM binding of the name
                    self.foreign[bound] = alias.name
                    continue
                self.usage.imports.append(ImportUse(loc, alias.name, None, runtime_only, guarded, type_only))
                env[bound] = ModRef(alias.name if alias.asname else bound)
            return
        if node.level or not node.module or node.module.split(".")[0] != self.package:
            for alias in node.names:
                if alias.name != "*":
                    env[alias.asname or alias.name] = None  # the client's own (or a third party's) name
                    is_pkg = self.file.rel.endswith("__init__.py")
                    self.foreign[alias.asname or alias.name] = (
                        resolve_relative(self.file.module, is_pkg, node.level, node.module) if node.level else node.module or "")
            return
        for alias in node.names:
            self.usage.imports.append(ImportUse(loc, node.module, alias.name, runtime_only, guarded, type_only))
            if alias.name == "*":
                continue
            result = self.api.resolve(f"{node.module}.{alias.name}")
            value = self._value_of(result)
            env[alias.asname or alias.name] = ABSENT if isinstance(result, Missing) else value

    # ------------------------------------------------------------- classes
    def prepare_classes(self) -> None:
        for name, cls in self.classes.items():
            members: set[str] = set()
            vbases: list[Resolved] = []
            for base in cls.bases:
                value = self.infer(base, {})
                if isinstance(value, ClassRef):
                    vbases.append(value.cls)
                elif isinstance(base, ast.Subscript) and self._is_patch_base(base.value):
                    # `class P(SomePatch[GPUModelRunner])`: P's methods are grafted onto the class in brackets
                    for arg in base.slice.elts if isinstance(base.slice, ast.Tuple) else [base.slice]:
                        target = self.infer(arg, {})
                        if isinstance(target, ClassRef):
                            vbases.append(target.cls)
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members.add(stmt.name)
                elif isinstance(stmt, ast.Assign):
                    members.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    members.add(stmt.target.id)
            self.client_class_members[name] = members
            self.client_class_vllm_bases[name] = vbases
        for name, grafted in self.patch_bases.items():
            if name in self.client_class_vllm_bases:
                self.client_class_vllm_bases[name] += grafted
        for name in self.classes:  # a client class inherits the vLLM bases of its client bases
            for ancestor in self._client_ancestors(name):
                for vbase in self.client_class_vllm_bases.get(ancestor, []):
                    if all(v.qualname != vbase.qualname for v in self.client_class_vllm_bases[name]):
                        self.client_class_vllm_bases[name].append(vbase)
        # Two rounds so that `self.a = X(); self.b = self.a.f()` settles.
        for _ in range(2):
            for name, cls in self.classes.items():
                types: dict[str, object] = self.self_types.setdefault(name, {})
                conflicting = self._conflicting.setdefault(name, set())
                for stmt in cls.body:
                    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    env = self.build_env(stmt, self.module_env, name)
                    first = (stmt.args.posonlyargs + stmt.args.args)[0].arg if (stmt.args.posonlyargs + stmt.args.args) else None
                    for node in self._scope(stmt.body):
                        targets: list[ast.expr] = []
                        value_node = None
                        if isinstance(node, ast.Assign):
                            targets, value_node = node.targets, node.value
                        elif isinstance(node, ast.AnnAssign):
                            targets = [node.target]
                        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                                and node.func.value.id == first and node.args and isinstance(node.args[0], ast.Constant) \
                                and isinstance(node.args[0].value, str) and (node.func.attr in REGISTRARS or node.func.attr == "setattr"):
                            self.client_class_members[name].add(node.args[0].value)  # nn.Module's registered members
                        if isinstance(node, ast.Call) and (dotted_name(node.func) or "").rstrip("_").endswith("setattr") \
                                and len(node.args) >= 2 and isinstance(node.args[0], ast.Name) and node.args[0].id == first \
                                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                            # setattr(self, "x", v) and object.__setattr__(self, "x", v)
                            self.client_class_members[name].add(node.args[1].value)
                        for t in targets:
                            if isinstance(t, (ast.Tuple, ast.List)):
                                # `(self.a, self.b) = ...`: members, types unknown
                                for elt in ast.walk(t):
                                    if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == first:
                                        self.client_class_members[name].add(elt.attr)
                                continue
                            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == first:
                                self.client_class_members[name].add(t.attr)
                                if isinstance(node, ast.AnnAssign):
                                    value = self._declared_value(node, env, name)
                                else:
                                    value = self.infer(value_node, env)
                                previous = types.get(t.attr)
                                if t.attr in conflicting:
                                    continue
                                if value is None and not (isinstance(value_node, ast.Constant) and value_node.value is None) \
                                        and not isinstance(node, ast.AnnAssign):
                                    # `self.experts = ClientExperts(...)` in one branch, `= vllm.Factory(...)` in
                                    # another: a value we cannot type makes the attribute's type unknown
                                    conflicting.add(t.attr)
                                    types.pop(t.attr, None)
                                    continue
                                if previous is not None and value is not None and not same_value(previous, value):
                                    conflicting.add(t.attr)  # `self.drafter = A(...)` here, `= B(...)` there: do not guess
                                    types.pop(t.attr, None)
                                elif value is not None:
                                    types[t.attr] = value

    # --------------------------------------------------------------- patches
    def collect_patches(self) -> None:
        """What the client sets on vLLM classes and modules (`Cls.m = f`, `setattr(Cls, "m", f)`, `mod._X = None`):
        those names exist at run time, and a function set on a class is that class's method. A name set on each
        module of a loop over `sys.modules` is set on every vLLM module (`ANY_MODULE`)."""
        loaded = _sys_modules_loop_names(self.file.tree)
        for node in nodes_of(self.file.tree, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Call):
            pairs: list[tuple[ast.expr, str, ast.expr | None]] = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for elt in ast.walk(t):
                        if isinstance(elt, ast.Attribute) and isinstance(elt.ctx, ast.Store):
                            pairs.append((elt.value, elt.attr, node.value if isinstance(elt, type(t)) and elt is t else None))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                pairs.append((node.args[0], node.args[1].value, node.args[2] if len(node.args) > 2 else None))
            if isinstance(node, ast.Call):
                created = self._attribute_created_by(node)
                if created:
                    self.usage.client_set_attrs.add(created)
            for obj, attr, value in pairs:
                if not (isinstance(obj, ast.Name) and obj.id == "self"):
                    self.usage.client_set_attrs.add(attr)
                if isinstance(obj, ast.Name) and obj.id in loaded:
                    self.usage.patched.add((ANY_MODULE, attr))
                    continue
                base = self.infer(obj, self.module_env)
                if isinstance(base, ModRef):
                    self.usage.patched.add((base.module, attr))
                elif isinstance(base, (ClassRef, Instance)):
                    self.usage.patched.add((base.cls.qualname, attr))
                    if isinstance(base, ClassRef):
                        self._graft(value, base.cls)

    def _attribute_created_by(self, call: ast.Call) -> str | None:
        """`layer.register_parameter("w", ...)`, or `self._set_buffer(layer, "w", ...)` where that helper of the
        client's sets an attribute by the name it is given: the attribute name the call creates."""
        name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) else None
        if name is None:
            return None
        if name in REGISTRARS and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            return call.args[0].value
        if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str) \
                and name in self._named_setters():
            return call.args[1].value
        return None

    def _named_setters(self) -> set[str]:
        """The file's functions that set an attribute by a name they are given (setattr / register_* with a variable)."""
        if self._setters is None:
            self._setters = set()
            for fn in nodes_of(self.file.tree, ast.FunctionDef, ast.AsyncFunctionDef):
                for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                    callee = dotted_name(call.func) or ""
                    args = call.args
                    if (callee.rstrip("_").endswith("setattr") and len(args) >= 2 and not isinstance(args[1], ast.Constant)) or \
                            (callee.rsplit(".", 1)[-1] in REGISTRARS and args and not isinstance(args[0], ast.Constant)):
                        self._setters.add(fn.name)
                        break
        return self._setters

    def _graft(self, value: ast.expr | None, cls: Resolved) -> None:
        if isinstance(value, ast.Name) and value.id in self.functions:
            self.patched_functions[value.id] = cls
        elif isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in self.classes:
            self.patch_bases.setdefault(value.value.id, []).append(cls)

    def _patch_self(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: Resolved) -> str:
        """A synthetic client class for a module function set on a vLLM class: its `self` is that class."""
        name = f"<patch {fn.name}>"
        args = fn.args.posonlyargs + fn.args.args
        first = args[0].arg if args else None
        self.client_class_members[name] = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                                           and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) and n.value.id == first}
        self.client_class_vllm_bases[name] = [cls]
        return name

    def _base_label(self, base: ast.expr) -> str | None:
        """A base as "module.Name": a class of this file, or a name imported from another module."""
        dotted = base_name(base) or ""
        first = dotted.split(".")[0]
        if dotted in self.classes:
            return f"{self.file.module}.{dotted}"
        if first in self.foreign:
            return f"{self.foreign[first]}.{dotted}" if self.foreign[first] else dotted
        return None

    def _inherited_members(self, name: str) -> set[str]:
        """A client class's members with those of its client ancestors in any file (`class AsyncOmni(AsyncOmniBase,
        EngineClient)` where AsyncOmniBase derives from OmniBase, defined in a third file)."""
        out = set(self.client_members(name))
        todo = [b for b in (self._base_label(b) for b in self.classes[name].bases) if b]
        seen: set[str] = set()
        while todo:
            label = todo.pop()
            if label in seen or len(seen) > 50:
                continue
            seen.add(label)
            own, bases = self.usage.client_class_table.get(label, (set(), []))
            out |= own
            todo += bases
        return out

    def record_client_classes(self) -> None:
        for name, cls in self.classes.items():
            self.usage.client_class_table[f"{self.file.module}.{name}"] = (
                set(self.client_members(name)), [b for b in (self._base_label(b) for b in cls.bases) if b])

    def register_subclasses(self) -> None:
        """Members client subclasses add to vLLM classes: a value typed as the base may be one of them."""
        for name, cls in self.classes.items():
            label = f"{self.file.module}.{name}"
            for base in cls.bases:  # and to the client's own classes, across files (template methods)
                base_label = self._base_label(base)
                if base_label is not None:
                    self.usage.client_subclass_members.setdefault(base_label, set()).update(self.client_members(name))
            inherited = self._inherited_members(name) if self.client_class_vllm_bases.get(name) else set()
            for vbase in self.client_class_vllm_bases.get(name, []):
                order, _, _ = self.api.mro(vbase)
                for c in order:
                    table = self.usage.subclass_members.setdefault(c.qualname, {})
                    for member in inherited:
                        table.setdefault(member, (label, self.file.rel, cls.lineno))
                    overrides = self.usage.client_overrides.setdefault(c.qualname, {})
                    for stmt in cls.body:
                        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            overrides.setdefault(stmt.name, []).append(
                                (f"{label}.{stmt.name}", signature_from_args(stmt.args, self.file.rel, stmt.lineno)))

    def collect_worker_extensions(self) -> None:
        """`worker_extension_cls="pkg.mod.Cls"` as a keyword, a dict entry, `setdefault` or an item assignment."""
        key = "worker_extension_cls"
        for node in nodes_of(self.file.tree, ast.keyword, ast.Dict, ast.Call, ast.Assign):
            values: list[ast.expr] = []
            if isinstance(node, ast.keyword) and node.arg == key:
                values.append(node.value)
            elif isinstance(node, ast.Dict):
                values += [v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == key]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("setdefault", "update") \
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value == key:
                values.append(node.args[1])
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant)
                                                      and t.slice.value == key for t in node.targets):
                values.append(node.value)
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    self.usage.worker_extensions.append((value.value, loc_of(self.file, value)))

    def _client_ancestors(self, cls_name: str, _seen: frozenset = frozenset()) -> set[str]:
        out: set[str] = set()
        cls = self.classes.get(cls_name)
        if cls is None or cls_name in _seen:
            return out
        for base in cls.bases:
            name = base_name(base)
            if name in self.classes:
                out |= {name} | self._client_ancestors(name, _seen | {cls_name})
        return out

    def add_worker_extension(self, class_name: str) -> None:
        cls = self.classes.get(class_name)
        if cls is None:
            return
        members = set(self.client_class_members.get(class_name, set()))
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.usage.bound.append(self._bound(stmt, "worker-extension", f"{class_name}.{stmt.name}", members))
