"""The class phases over every client file: client classes and their vLLM bases, members client subclasses
add (also from outside the class), the classes' ancestors across files, `super()` in their methods, and
worker extensions named by string (or by a parameter's default value).
"""

from __future__ import annotations

import ast
import bisect
import re

from driftcheck.astnodes import (attribute_stores, attribute_stores_within, dotted_name, first_line, functions_at, nodes_of,
                                 nodes_within, own_scope, walk)
from driftcheck.client_model.computed_names import computed_names, module_bindings, string_constants
from driftcheck.client_model.replacements import registered_with, registrations
from driftcheck.client_model.inference import ClassRef, ClientSelf, REGISTRARS, SuperOf, base_name, same_value
from driftcheck.client_model.stand_ins import StandIns
from driftcheck.client_model.uses import loc_of
from driftcheck.vllm_model.class_summary import flatten_class_body
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.signatures import signature_from_args


def _members_set_from_outside(tree: ast.AST, classes: set[str]) -> dict[str, set[str]]:
    """Members this file adds to its own classes from outside their bodies: `Cls.x = ...`, `setattr(Cls, "x", ...)`,
    and `setattr(Cls, name, property(...))` in a loop over literal names, also when the names are a parameter
    of the function holding the loop and every call of it in the file passes literal names."""
    out: dict[str, set[str]] = {}
    calls = nodes_of(tree, ast.Call)
    by_variable: dict[str, list[str]] = {}  # setattr(Cls, <variable>, ...): variable -> classes
    for call in calls:
        if isinstance(call.func, ast.Name) and call.func.id == "setattr" and len(call.args) >= 2 \
                and isinstance(call.args[0], ast.Name) and call.args[0].id in classes:
            name = call.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                out.setdefault(call.args[0].id, set()).add(name.value)
            elif isinstance(name, ast.Name):
                by_variable.setdefault(name.id, []).append(call.args[0].id)
    if by_variable:  # rare: only then look for the loops that bind those variables
        for fn in [tree, *nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef)]:
            params = [] if isinstance(fn, ast.Module) else [a.arg for a in fn.args.posonlyargs + fn.args.args]
            body = fn.body
            for loop in (n for stmt in body for n in walk(stmt) if isinstance(n, ast.For)):
                if not (isinstance(loop.target, ast.Name) and loop.target.id in by_variable):
                    continue
                names = _literal_names(loop.iter)
                if names is None and isinstance(loop.iter, ast.Name) and loop.iter.id in params:
                    names = _names_passed(calls, fn.name, params.index(loop.iter.id), loop.iter.id)
                for cls in by_variable[loop.target.id] if names else ():
                    out.setdefault(cls, set()).update(names)
    stores = attribute_stores(tree)
    for target, _line in stores:
        if isinstance(target.value, ast.Name) and target.value.id in classes:
            out.setdefault(target.value.id, set()).add(target.attr)
    for cls_name, attr in _set_on_built_instances(tree, classes, stores):
        out.setdefault(cls_name, set()).add(attr)
    return out


def _set_on_built_instances(tree: ast.AST, classes: set[str], stores: list) -> list[tuple[str, str]]:
    """(class, member) for `w.x = ...` in a function that binds `w` once to an instance of a class of this file: `C(...)`,
    `object.__new__(C)` / `C.__new__(C)`, or in a classmethod of C `cls(...)` / `object.__new__(cls)` (vLLM's test
    stub `fresh()` builds a worker without `__init__` and sets its fields; its other methods read them on `self`)."""
    names = {t.value.id for t, _ in stores if isinstance(t.value, ast.Name) and t.value.id not in ("self", "cls")}
    if not names:
        return []
    lines = sorted(line for t, line in stores if isinstance(t.value, ast.Name) and t.value.id in names)
    out: list[tuple[str, str]] = []
    owner_of: dict[int, str] = {}  # a classmethod of a file class -> that class
    for cls in nodes_of(tree, ast.ClassDef):
        if cls.name in classes:
            for stmt in cls.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        any(dotted_name(d) == "classmethod" for d in stmt.decorator_list):
                    owner_of[id(stmt)] = cls.name
    for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        i = bisect.bisect_left(lines, first_line(fn))
        if i == len(lines) or lines[i] > (fn.end_lineno or fn.lineno):
            continue  # no store on such a name in its lines
        params = fn.args.posonlyargs + fn.args.args
        first = params[0].arg if params and id(fn) in owner_of else None

        def class_of(expr: ast.expr) -> str | None:
            if isinstance(expr, ast.Name):
                return expr.id if expr.id in classes else owner_of[id(fn)] if expr.id == first else None
            return None

        built: dict[str, str | None] = {}
        for node in nodes_within(tree, fn, ast.Assign):
            if not (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and node.targets[0].id in names):
                continue
            value, found = node.value, None
            if isinstance(value, ast.Call):
                if isinstance(value.func, ast.Attribute) and value.func.attr == "__new__" and value.args:
                    found = class_of(value.args[0])
                else:
                    found = class_of(value.func)
            key = node.targets[0].id
            built[key] = found if key not in built else None  # bound twice: not one class
        for target, _line in attribute_stores_within(tree, fn):
            if isinstance(target.value, ast.Name) and built.get(target.value.id):
                out.append((built[target.value.id], target.attr))
    return out


def _literal_names(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _names_passed(calls: list[ast.Call], fn_name: str, index: int, param: str) -> list[str] | None:
    """The literal names every call of `fn_name` in the file passes for one parameter (None if any passes other)."""
    out: list[str] = []
    sites = [c for c in calls if isinstance(c.func, ast.Name) and c.func.id == fn_name]
    for call in sites:
        value = call.args[index] if index < len(call.args) else next((k.value for k in call.keywords if k.arg == param), None)
        names = _literal_names(value) if value is not None else None
        if names is None:
            return None
        out += names
    return out or None


def _sets_on(scope: list[ast.AST], first: str | None) -> bool:
    """Whether a method's own scope assigns `first.x = ...` (or `first.x: T = ...`), the statements whose value
    prepare_classes types."""
    if first is None:
        return False
    for node in scope:
        if node.__class__ is ast.Assign:
            targets = node.targets
        elif node.__class__ is ast.AnnAssign:
            targets = [node.target]
        else:
            continue
        if any(t.__class__ is ast.Attribute and t.value.__class__ is ast.Name and t.value.id == first for t in targets):
            return True
    return False


def _named_on(call: ast.Call, first: str | None) -> ast.expr | None:
    """The name argument of a call that creates an attribute on `first` (the method's `self`):
    `self.register_buffer(name, ...)` (and the other nn.Module registrars), `self.setattr(name, ...)`,
    `setattr(self, name, ...)`, `object.__setattr__(self, name, ...)`."""
    func, args = call.func, call.args
    if first is None or not args:
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == first \
            and (func.attr in REGISTRARS or func.attr == "setattr"):
        return args[0]
    if (dotted_name(func) or "").rstrip("_").endswith("setattr") and len(args) >= 2 \
            and isinstance(args[0], ast.Name) and args[0].id == first:
        return args[1]
    return None


DOTTED_CLASS = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")  # `pkg.mod.Cls`, as resolve_obj_by_qualname takes it


def flag_values(tree: ast.AST, flag: str) -> list[ast.expr]:
    """The values a command line written as a list or tuple literal gives `--flag` (its dashed or underscored
    spelling, as vLLM's `FlexibleArgumentParser` reads both): the item after a `"--flag"` item, or the tail of one
    `"--flag=value"` item, as a string constant at that item's place (FA1: `args += ["--worker-extension-cls",
    WORKER_CLASS]` before `os.execv(..., ["-m", "vllm.entrypoints.cli.main", "serve", *args])`)."""
    spellings = {flag, "--" + flag[2:].replace("-", "_")}
    out: list[ast.expr] = []
    for node in nodes_of(tree, ast.List, ast.Tuple):
        items = node.elts
        for i, item in enumerate(items):
            if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
                continue
            head, eq, tail = item.value.partition("=")
            if head not in spellings:
                continue
            if eq:
                out.append(ast.copy_location(ast.Constant(value=tail), item))
            elif i + 1 < len(items) and not isinstance(items[i + 1], ast.Starred):
                out.append(items[i + 1])
    return out


class ClientClasses(StandIns):
    """Client classes, their bases and members, known to every file before the visits."""

    # ------------------------------------------------------------- classes
    def prepare_classes(self) -> None:
        for name, cls in self.classes.items():
            members: set[str] = set()
            vbases: list[Resolved] = []
            for base in cls.bases:
                value = self.infer(base, self.class_env(name))
                if isinstance(value, ClassRef):
                    vbases.append(value.cls)
                elif isinstance(base, ast.Subscript) and self._is_patch_base(base.value):
                    # `class P(SomePatch[GPUModelRunner])`: P's methods are grafted onto the class in brackets
                    for arg in base.slice.elts if isinstance(base.slice, ast.Tuple) else [base.slice]:
                        target = self.infer(arg, self.class_env(name))
                        if isinstance(target, ClassRef):
                            vbases.append(target.cls)
            for stmt in flatten_class_body(cls.body):  # also what `if` / `try` / `with` in the body define
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    members.add(stmt.name)
                elif isinstance(stmt, ast.Assign):
                    members.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    members.add(stmt.target.id)
            self.client_class_members[name] = members
            self.client_class_vllm_bases[name] = vbases
        for name, added in _members_set_from_outside(self.file.tree, set(self.classes)).items():
            self.client_class_members[name] |= added
        for name, grafted in [*self.patch_bases.items(),
                              *((n, self._grafted_from_elsewhere(n)) for n in self.classes)]:
            if name in self.client_class_vllm_bases:
                self.client_class_vllm_bases[name] += grafted
        for name in self.classes:  # a client class inherits the vLLM bases of its client bases
            for ancestor in self._client_ancestors(name):
                for vbase in self.client_class_vllm_bases.get(ancestor, []):
                    if all(v.qualname != vbase.qualname for v in self.client_class_vllm_bases[name]):
                        self.client_class_vllm_bases[name].append(vbase)
        # Two rounds so that `self.a = X(); self.b = self.a.f()` settles; when the first typed no attribute of any class
        # of the file, every `self.x` reads as unknown in a second one too, which would change nothing.
        for round_ in range(2):
            if round_ and not any(self.self_types.get(name) for name in self.classes):
                break
            for name, cls in self.classes.items():
                types: dict[str, object] = self.self_types.setdefault(name, {})
                conflicting = self._conflicting.setdefault(name, set())
                for stmt in flatten_class_body(cls.body):  # a method an `if` of the body defines (one a release)
                    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    first = (stmt.args.posonlyargs + stmt.args.args)[0].arg if (stmt.args.posonlyargs + stmt.args.args) else None
                    scope = self._scope(stmt.body)
                    # the environment types what `self.x = ...` holds: most methods set nothing on self, and skip it
                    env = self.build_env(stmt, self.class_env(name) or self.module_env, name) \
                        if _sets_on(scope, first) else None
                    if env is None and any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in scope):
                        self.local_imports(stmt, record=False)  # the names building it binds (`self.foreign`)
                    for node in self._binding_nodes(stmt.body):  # the scope's calls and assignments, in order
                        targets: list[ast.expr] = []
                        value_node = None
                        if isinstance(node, ast.Assign):
                            targets, value_node = node.targets, node.value
                        elif isinstance(node, ast.AnnAssign):
                            targets = [node.target]
                        if isinstance(node, ast.Call):
                            created = _named_on(node, first)
                            if isinstance(created, ast.Constant) and isinstance(created.value, str):
                                self.client_class_members[name].add(created.value)  # nn.Module's registered members
                            elif created is not None:
                                # `for n in ("a", "b"): self.register_buffer(n, ...)`: the loop's names are members;
                                # a name computed from data may be any of the file's strings, as vLLM's own such
                                # classes are read: those only stand for members the class otherwise lacks
                                names, how = computed_names(self.file.tree, node, created)
                                if how == "loop":
                                    self.client_class_members[name] |= names
                                else:
                                    self.computed_members.setdefault(name, set()).update(names)
                        for t in targets:
                            if isinstance(t, (ast.Tuple, ast.List)):
                                # `(self.a, self.b) = ...`: members, types unknown; like an untyped `self.a = f()`,
                                # the unpacking makes `a`'s type unknown where another method sets a vLLM object
                                # (`self.model, self.tok = other_backend.load()` beside `self.model = LLM(...)`)
                                for elt in walk(t):
                                    if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == first:
                                        self.client_class_members[name].add(elt.attr)
                                        conflicting.add(elt.attr)
                                        types.pop(elt.attr, None)
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
                                stored = node.value if isinstance(node, ast.AnnAssign) else value_node
                                if value is None and stored is not None \
                                        and not (isinstance(stored, ast.Constant) and stored.value is None):
                                    # `self.experts = ClientExperts(...)` in one branch, `= vllm.Factory(...)` in
                                    # another: a value we cannot type makes the attribute's type unknown; so does
                                    # `self.experts: nn.Module = experts_cls(...)`, whose annotation names no vLLM
                                    # class (QE4; a bare `self.x: T` declaration stores nothing)
                                    conflicting.add(t.attr)
                                    types.pop(t.attr, None)
                                    continue
                                if previous is not None and value is not None and not same_value(previous, value):
                                    conflicting.add(t.attr)  # `self.drafter = A(...)` here, `= B(...)` there: do not guess
                                    types.pop(t.attr, None)
                                elif value is not None:
                                    types[t.attr] = value

    def _grafted_from_elsewhere(self, name: str) -> list:
        """vLLM classes other files copy this class's methods onto. They name it by import (`from vllm_ascend.ops.gdn
        import X`), which is this module's name or, for a client given as its package folder, ends with it."""
        own = f"{self.file.module}.{name}"
        return [c for label, classes in self.usage.grafted_classes.items() if label == own or label.endswith("." + own)
                for c in classes]

    def _base_label(self, base: ast.expr) -> str | None:
        """A base as "module.Name": a class of this file, or a name imported from another module."""
        dotted = base_name(base) or ""
        first = dotted.split(".")[0]
        if dotted in self.classes:
            return f"{self.file.module}.{dotted}"
        if first in self.foreign:
            return f"{self.foreign[first]}.{dotted}" if self.foreign[first] else dotted
        return None

    def _super(self, node: ast.Call, env: dict) -> SuperOf | None:
        """`super()` / `super(Cls, self)` inside a method of a client class of this file with vLLM bases."""
        if node.args:
            value = self.infer(node.args[1], env) if len(node.args) == 2 else None
            named = node.args[0].id if isinstance(node.args[0], ast.Name) else None
            if not isinstance(value, ClientSelf) or value.built:
                return None
            if named != value.cls_name:
                return self._super_past_base(node.args[0], value.cls_name, env)  # super(Base, self)
        else:
            selves = {v.cls_name for v in env.values() if isinstance(v, ClientSelf)}
            value = ClientSelf(selves.pop()) if len(selves) == 1 else None
        if value is None or value.cls_name not in self.classes or not self.client_class_vllm_bases.get(value.cls_name):
            return None
        return SuperOf(value.cls_name)

    def _super_past_base(self, named: ast.expr, cls_name: str, env: dict) -> SuperOf | None:
        """`super(Base, self)` in a method of a client class whose only base is the vLLM class `Base` (Python 2's
        spelling, or a skip past Base's own method: BentoVLLM's `super(OpenAIServingChat, self).__init__(...)`): the
        lookup starts at Base's one base, a vLLM class, and goes on through its MRO. Anything else (several bases, a
        base driftcheck cannot read, another class) is not followed."""
        cls = self.classes.get(cls_name)
        if cls is None or len(cls.bases) != 1 or cls.keywords:
            return None
        past, base = self.infer(named, env), self.infer(cls.bases[0], self.class_env(cls_name))
        if not (isinstance(past, ClassRef) and isinstance(base, ClassRef) and past.cls.qualname == base.cls.qualname):
            return None
        order, _open, externals = self.api.mro(past.cls)
        if past.cls.cls is None or len(past.cls.cls.bases) != 1 or len(order) < 2 or externals:
            return None
        return SuperOf(cls_name, start=order[1])

    def _ancestor_members(self, name: str) -> set[str]:
        """Members of a client class's client ancestors (in this file or others), not its own."""
        out: set[str] = set()
        for base in self.classes[name].bases:
            dotted = base_name(base)
            if dotted in self.classes:
                out |= self._inherited_members(dotted)
                continue
            label = self._base_label(base)
            if label is not None:
                out |= self._members_up_from([label])
        return out

    def _inherited_members(self, name: str) -> set[str]:
        """A client class's members with those of its client ancestors in any file (`class AsyncOmni(AsyncOmniBase,
        EngineClient)` where AsyncOmniBase derives from OmniBase, defined in a third file)."""
        return set(self.client_members(name)) | self._members_up_from(
            [b for b in (self._base_label(b) for b in self.classes[name].bases) if b])

    def _members_up_from(self, labels: list[str]) -> set[str]:
        """The members of the client classes `labels` name and of their client ancestors, in any client file: one
        that imports vLLM (`client_class_table`) or one that imports none, read on demand (`class
        SequenceGroupLlumnix(SequenceGroup, LlumnixRequest)`, whose mixin defines `reset_status` in a file without
        vLLM). A label of vLLM or of a third-party package adds nothing."""
        out: set[str] = set()
        for entry in self._ancestry(labels).values():
            out |= entry[0]
        return out

    def _ancestry(self, labels: list[str]) -> dict[str, tuple[set[str], list[str]]]:
        """`labels` and their client ancestors in any client file, each with its (members, base labels)."""
        out: dict[str, tuple[set[str], list[str]]] = {}
        todo = list(labels)
        while todo:
            label = todo.pop()
            if label in out or len(out) > 50:
                continue
            entry = self.usage.client_class_table.get(label)
            if entry is None:
                info = self._client_class_info(label)
                entry = (info[0], info[1]) if info is not None else (set(), [])
            out[label] = entry
            todo += entry[1]
        return out

    def record_client_classes(self) -> None:
        for name, cls in self.classes.items():
            self.usage.client_class_table[f"{self.file.module}.{name}"] = (
                set(self.client_members(name)), [b for b in (self._base_label(b) for b in cls.bases) if b])
            if self.client_class_vllm_bases.get(name):
                self.usage.client_vllm_bases[f"{self.file.module}.{name}"] = [
                    v.qualname for v in self.client_class_vllm_bases[name]]
        for label, registrars in registrations(self).items():  # read by register_subclasses, the next phase
            found = self.registered_classes.setdefault(label, [])
            found += [r for r in registrars if r not in found]

    def register_subclasses(self) -> None:
        """Members client subclasses add to vLLM classes: a value typed as the base may be one of them."""
        for name, cls in self.classes.items():
            label = f"{self.file.module}.{name}"
            # and to the client's own classes, across files (template methods), grandparents too: a base class's
            # `self._dflash_num_context` that only a class two levels below it sets (RB)
            for base_label in self._ancestry([b for b in (self._base_label(b) for b in cls.bases) if b]):
                self.usage.client_subclass_members.setdefault(base_label, set()).update(self.client_members(name))
            inherited = self._inherited_members(name) if self.client_class_vllm_bases.get(name) else set()
            registrars = registered_with(self, name, cls)
            init = next((s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"), None)
            for vbase in self.client_class_vllm_bases.get(name, []):
                order, _, _ = self.api.mro(vbase)
                for c in order:
                    table = self.usage.subclass_members.setdefault(c.qualname, {})
                    for member in inherited:
                        table.setdefault(member, (label, self.file.rel, cls.lineno))
                    if registrars and init is not None:
                        # `@Base.register_oot class X(Base)`: a `__new__` that looks X up may build an X for `Base(...)`
                        self.usage.replacements.setdefault(c.qualname, []).append(
                            (label, signature_from_args(init.args, self.file.rel, init.lineno), registrars))
                    self._record_overrides(label, cls, c)
            if not self.client_class_vllm_bases.get(name):
                # `class MyDflash(MyBase)` with MyBase(vLLM's Base) in another file: its methods override Base's too
                for vbase in self._vllm_bases_across_files(name):
                    for c in self.api.mro(vbase)[0]:
                        self._record_overrides(label, cls, c)

    def _record_overrides(self, label: str, cls: ast.ClassDef, vllm_class: Resolved) -> None:
        """The methods of a client class, as overrides a call typed as the vLLM class may reach (callcheck)."""
        overrides = self.usage.client_overrides.setdefault(vllm_class.qualname, {})
        for stmt in flatten_class_body(cls.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                overrides.setdefault(stmt.name, []).append(
                    (f"{label}.{stmt.name}", signature_from_args(stmt.args, self.file.rel, stmt.lineno)))

    def _vllm_bases_across_files(self, name: str) -> list[Resolved]:
        """The vLLM classes a client class derives from through client classes of other files, which its own file's
        phases do not see."""
        labels = [b for b in (self._base_label(b) for b in self.classes[name].bases) if b]
        return vllm_bases_through(self.usage, self.api, labels)

    def collect_worker_extensions(self) -> None:
        """`worker_extension_cls="pkg.mod.Cls"` as a keyword, a dict entry, `setdefault`, an item assignment, or the
        default of a field or variable of that name (a dataclass of server flags); the string may come from a
        function of this file that returns it. `worker_cls` the same way (`parallel_config.worker_cls = "pkg.Worker"`
        in a platform's config hook): vLLM's worker wrapper builds that class by name and forwards every attribute
        to it, so it is the worker whatever its bases (`Usage.worker_classes`)."""
        spelled = self.file.text.lower()  # every form spells the key (a name matched case-insensitively)
        for key, found in (("worker_extension_cls", self.usage.worker_extensions), ("worker_cls", self.usage.worker_classes)):
            for text, value in self._named_by_key(key) if key in spelled else ():
                found.append((text, loc_of(self.file, value)))
        # the serve flag in an argument list (`[..., "--worker-extension-cls", "pkg.Ext"]`): the same key (FA1)
        for value in flag_values(self.file.tree, "--worker-extension-cls") if "worker" in spelled else ():
            for text in self._strings_of(value):
                if DOTTED_CLASS.match(text):
                    self.usage.worker_extensions.append((text, loc_of(self.file, value)))

    def _named_by_key(self, key: str) -> list[tuple[str, ast.expr]]:
        out: list[tuple[str, ast.expr]] = []
        for node in nodes_of(self.file.tree, ast.keyword, ast.Dict, ast.Call, ast.Assign, ast.AnnAssign):
            values: list[ast.expr] = []
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and any(
                    (t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else "").lower() == key
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
                values.append(node.value)
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
                for text in self._strings_of(value):
                    if DOTTED_CLASS.match(text):  # not the empty default of a config field, nor "auto"
                        out.append((text, value))
        if key == "worker_cls":
            # the class object itself, handed to vLLM (`LLM(..., worker_cls=TestWorker)`; the engine pickles it): a class
            # of this file, also one a function defines (torchtune's test: NA4), named by its module and name. Only in
            # a call of a name bound from vLLM: `worker_cls=` also names ray / trainer worker classes
            for call in nodes_of(self.file.tree, ast.Call):
                for k in call.keywords:
                    if k.arg == key and isinstance(k.value, ast.Name) and self._defines_class(k.value.id) \
                            and self._bound_from_vllm(call.func):
                        out.append((f"{self.file.module}.{k.value.id}", k.value))
        return out

    def _defines_class(self, name: str) -> bool:
        """Whether this file defines a class `name` with a `class` statement at any depth (a function's own too)."""
        return any(c.name == name for c in nodes_of(self.file.tree, ast.ClassDef))

    def _bound_from_vllm(self, func: ast.expr) -> bool:
        """Whether the callee's first name is bound by an import of vLLM anywhere in this file (`from vllm import LLM`
        in a function, `import vllm` for `vllm.LLM`)."""
        first = (dotted_name(func) or "").split(".")[0]
        for node in nodes_of(self.file.tree, ast.ImportFrom, ast.Import) if first else ():
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == self.package \
                    and any((a.asname or a.name) == first for a in node.names):
                return True
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == self.package
                                                    and (a.asname or a.name.split(".")[0]) == first for a in node.names):
                return True
        return False

    def _strings_of(self, value: ast.expr) -> list[str]:
        """A string constant, a module constant (`_EXT = "pkg.mod.Cls"` in this file, or imported from another
        client file), a class attribute of this file (`self._ext_cls`), or the constants a function of this file
        returns when called (`self._ext_cls()`). A conditional expression (`"pkg.A" if cfg else "pkg.B"`) or an
        `or` / `and` of such values names each of its parts: the engine gets one of them (NeMo-RL's two extension
        classes, picked by whether a checkpoint engine is configured)."""
        if isinstance(value, ast.IfExp):
            return self._strings_of(value.body) + self._strings_of(value.orelse)
        if isinstance(value, ast.BoolOp):
            return [text for part in value.values for text in self._strings_of(part)]
        if isinstance(value, ast.JoinedStr):
            # f"{__name__}.MonoProbe": a class of this very module (vLLM's own DeepSeek test names its extension so)
            named = _own_module_string(value, self.file.module)
            return [named] if named is not None else []
        if isinstance(value, ast.Constant) and isinstance(value.value, str) or isinstance(value, ast.Attribute):
            return string_constants(value, self.file.tree)
        if isinstance(value, ast.Name):
            if value.id in self.functions or value.id in self.classes:
                return []
            local = _local_strings(self.file.tree, value)
            if local is not None:  # `worker_ext = "pkg.Ext"; args.worker_extension_cls = worker_ext` (26p)
                return local
            source = self.foreign.get(value.id)
            if source is None:
                return string_constants(value, self.file.tree) or _own_module_strings(self.file, value.id)
            # `from pkg.consts import _EXT`: the constant as that client file binds it (the import's own name); also
            # `_EXT = f"{__name__}.Ext"` there (SkyRL's worker wrap module names its extension so, 12c)
            imported = next((a.name for n in nodes_of(self.file.tree, ast.ImportFrom) for a in n.names
                             if (a.asname or a.name) == value.id), None)
            file = self.usage.file_of_module(source)
            if file is None or imported is None:
                return []
            return string_constants(ast.Name(id=imported, ctx=ast.Load()), file.tree) or _own_module_strings(file, imported)
        name = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else \
            value.func.attr if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) else None
        out: list[str] = []
        for fn in nodes_of(self.file.tree, ast.FunctionDef) if name else ():
            returns = [n.value for n in walk(fn) if isinstance(n, ast.Return)] if fn.name == name else []
            if returns and all(isinstance(r, ast.Constant) and isinstance(r.value, str) for r in returns):
                out += [r.value for r in returns]
        return out

    def _client_ancestors(self, cls_name: str, _seen: frozenset = frozenset()) -> list[str]:
        """The file's client classes `cls_name` derives from, depth first from its first base (as written): a list, so
        that the first ancestor to answer and the vLLM bases they hand down come in the same order in every process (a
        set's order changes with the hash seed, and with it the global facts every unit's cache key reads)."""
        out: list[str] = []
        cls = self.classes.get(cls_name)
        if cls is None or cls_name in _seen:
            return out
        for base in cls.bases:
            name = base_name(base)
            if name in self.classes:
                for found in (name, *self._client_ancestors(name, _seen | {cls_name})):
                    if found not in out:
                        out.append(found)
        return out

    def add_worker_extension(self, class_name: str) -> None:
        cls = self.classes.get(class_name)
        if cls is None:
            return
        members = set(self.client_class_members.get(class_name, set()))
        for stmt in flatten_class_body(cls.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.usage.bound.append(self._bound(stmt, "worker-extension", f"{class_name}.{stmt.name}", members))


def _table_key(table: dict, label: str) -> str:
    """The first key of `table` (in its order) that `label` ends with after a dot, else `label`: looked up by the
    label's dotted tails, not by a scan of the table (a whole-platform client's thousands of classes, for each
    base outside it: 6 s of vLLM 0.16.0's self-scan)."""
    parts = label.split(".")
    hits = {tail for tail in (".".join(parts[i:]) for i in range(1, len(parts))) if tail in table}
    if len(hits) <= 1:
        return next(iter(hits), label)
    return next(k for k in table if k in hits)


def client_ancestry(usage, labels: list[str]) -> list[str]:
    """The client classes with these labels and every client class they derive from, as keys of
    `client_class_table` (a label may be longer than the table's key when the client is given as its package
    folder), depth first; at most 51."""
    table, known = usage.client_class_table, usage.client_vllm_bases
    seen: list[str] = []
    todo = list(labels)
    while todo and len(seen) <= 50:
        at = todo.pop()
        key = at if at in table or at in known else _table_key(table, at)
        if key in seen:
            continue
        seen.append(key)
        todo += table.get(key, (set(), []))[1]
    return seen


def vllm_bases_through(usage, api, labels: list[str]) -> list[Resolved]:
    """The vLLM classes that client classes with these labels derive from, through client classes of any file
    importing vLLM (`client_vllm_bases`, walked up `client_class_table`)."""
    out: list[Resolved] = []
    for key in client_ancestry(usage, labels):
        for qualname in usage.client_vllm_bases.get(key, ()):
            found = api.resolve(qualname)
            if isinstance(found, Resolved) and found.kind == "class" and all(v.qualname != qualname for v in out):
                out.append(found)
    return out


def grafted_class(usage, label: str) -> bool:
    """Whether the client class `label` is one whose methods another client file copies onto vLLM classes (a
    patch's source: `Scheduler.schedule_hook = MyScheduler.schedule_hook`), by the table the class phase fills."""
    return any(key == label or key.endswith("." + label) or label.endswith("." + key) for key in usage.grafted_classes)


def client_class(client, label: str) -> tuple[ast.Module, ast.ClassDef] | None:
    """The module tree and top-level class a client label ("pkg.mod.Name") names, in any client file (one that
    imports no vLLM too); None where no client module defines it at its top level."""
    module, _, name = label.rpartition(".")
    found = client.module_tree(module) if module else None
    node = next((n for n in found[0].body if isinstance(n, ast.ClassDef) and n.name == name), None) if found else None
    return (found[0], node) if node is not None else None


def built_by_the_client(client, module: str, name: str) -> bool:
    """Whether some client file calls `name(...)` where the name is this class: in its own module, or in a file that
    imports it from there (`from <module> import name`, relative or absolute) or from the package above it when that
    package's `__init__` imports it from the module (vllm-omni's `from vllm_omni.config import OmniModelConfig`)."""
    homes = {module.split(".")[-1]}
    package, _, leaf = module.rpartition(".")
    if package and _reexports(client, package, leaf, name):
        homes.add(package.split(".")[-1])

    def builds(tree: ast.Module, own: bool) -> bool:
        bound = own or any(isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[-1] in homes
                           and any(a.name == name and (a.asname or a.name) == name for a in n.names)
                           for n in nodes_of(tree, ast.ImportFrom))
        return bound and any(isinstance(c.func, ast.Name) and c.func.id == name for c in nodes_of(tree, ast.Call))

    return any(builds(f.tree, f.module == module) for f in client.files if name in f.text) or \
        any(builds(f.tree, f.module == module) for f in client.other_files(containing=name))


def _reexports(client, package: str, leaf: str, name: str) -> bool:
    """Whether the client package's `__init__` imports `name` from its submodule `leaf` (`from .model import Name`)."""
    found = client.module_tree(package)
    return found is not None and any(
        isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[-1] == leaf and any(a.name == name for a in n.names)
        for n in found[0].body)


def _own_module_string(value: ast.JoinedStr, module: str) -> str | None:
    """`f"{__name__}.Cls"` as the module that evaluates it spells it (`pkg.mod.Cls`); None for any other f-string."""
    parts = value.values
    if len(parts) == 2 and isinstance(parts[0], ast.FormattedValue) and isinstance(parts[0].value, ast.Name) \
            and parts[0].value.id == "__name__" and parts[0].format_spec is None and parts[0].conversion == -1 \
            and isinstance(parts[1], ast.Constant) and isinstance(parts[1].value, str):
        return module + parts[1].value
    return None


def _own_module_strings(file, name: str) -> list[str]:
    """What a module-level name of `file` holds when every binding of it is `f"{__name__}.Cls"`."""
    values = module_bindings(file.tree, name)
    named = [_own_module_string(v, file.module) if isinstance(v, ast.JoinedStr) else None for v in values]
    return named if named and all(n is not None for n in named) else []  # type: ignore[return-value]


def _local_strings(tree: ast.Module, name: ast.Name) -> list[str] | None:
    """The strings a name is bound to in the function that reads it, where every binding there is a plain assignment
    of a string constant (None where the function binds it no way: a module-level name; [] where a binding is
    anything else: a parameter, a loop or `with` target, another value)."""
    around = functions_at(tree, name.lineno)
    if not around:
        return None
    fn = around[-1]
    if any(a.arg == name.id for a in ast.walk(fn.args) if isinstance(a, ast.arg)):
        return []
    scope = own_scope(fn)
    assigned = {id(t): n.value for n in scope if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name) and t.id == name.id}
    stores = [n for n in scope if isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load)]
    if not stores:
        return None
    values = [assigned.get(id(n)) for n in stores]
    if all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
        return [v.value for v in values]
    return []
