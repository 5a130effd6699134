"""Client objects that stand in for a vLLM class without deriving from it (duck typing): the client annotates an
object of its own class as the vLLM class (`async_omni: EngineClient | None = AsyncOmni(...)`), or hands one straight to
a parameter annotated so. A value typed as the vLLM class may then be that object: a member only the client class has
is unknown (`Usage.stand_ins`, read by the visit), and a call its method accepts is no certain failure
(`Usage.client_overrides`, read by callcheck). A class phase, after the client class table is complete.

A client class that bears the name of a vLLM class the client imports, and does not derive from it, is a copy of it
(an engine vendored from an old vLLM: chattts 0.2.5 keeps its own `ModelConfig`, `CacheConfig`... and annotates its
engine's parameters with vLLM's, which its imports name): where the client builds the copy, its object stands in for
vLLM's class as well, since the copy's objects are what the engine is handed (`cls(*engine_args.create_engine_configs())`).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import attribute_stores_within, dotted_name, nodes_of, within
from driftcheck.client_model.client import kept_on
from driftcheck.client_model.inference import ClassRef, ClientFunc, FuncRef, base_name
from driftcheck.vllm_model.class_summary import flatten_class_body
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.signatures import signature_from_args


class StandIns:
    """The phase `register_stand_ins`, a part of the file analyzer (its `infer`, `_base_label`, `_union_members`)."""

    def register_stand_ins(self) -> None:
        """A client class that does not derive from a vLLM class, whose object the client itself puts where that class
        is expected: `x: EngineClient | None = AsyncOmni(...)` (or `x = AsyncOmni(...)` in the scope that annotates
        `x` so), or `AsyncOmni(...)` passed straight to a parameter
        annotated `EngineClient` (of vLLM's function or `__init__`, also one a client class inherits, or of the
        client's own function). A value typed as the vLLM class may be that object: its members are not missing
        for certain (`Usage.stand_ins`), and a call of one of its methods may bind its signature (`client_overrides`)."""
        annotated = [n for n in nodes_of(self.file.tree, ast.AnnAssign) if isinstance(n.target, ast.Name)]
        if annotated:  # `x: V | None = None` ... `x = C(...)` in the same scope (or `x: V = C(...)`)
            scopes = [self.file.tree.body] + [f.body for f in nodes_of(self.file.tree, ast.FunctionDef, ast.AsyncFunctionDef)
                                              if within(annotated, f)]
            for body in scopes:
                notes: dict[str, list[ast.expr]] = {}
                built: dict[str, list[tuple[str, ast.AST]]] = {}
                for node in self._scope(body):
                    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                        notes.setdefault(node.target.id, []).append(node.annotation)
                        targets = [node.target] if node.value is not None else []
                    elif isinstance(node, ast.Assign):
                        targets = [t for t in node.targets if isinstance(t, ast.Name)]
                    else:
                        continue
                    label = self._client_built(node.value) if targets else None
                    for t in targets if label else ():
                        built.setdefault(t.id, []).append((label, node))
                for name, made in built.items():
                    for note in notes.get(name, ()):
                        for value in self._union_members(note):
                            for label, node in made:
                                self._stand_in(label, value.cls, node)
        calls = nodes_of(self.file.tree, ast.Call)
        built_by = {id(node): self._client_built(node) for node in calls}  # each call once, though it is an argument too
        for node in calls:
            copy = built_by[id(node)]
            for cls in self._vllm_namesakes(copy) if copy else ():
                self._stand_in(copy, cls, node, f"{self.file.rel}:{node.lineno} builds it, a class of the client's that "
                               f"bears the name of vLLM's `{cls.qualname}`")
            args = [(i, a) for i, a in enumerate(node.args)] + [(k.arg, k.value) for k in node.keywords if k.arg]
            for key, arg in args:
                if isinstance(arg, ast.Starred):
                    break
                label = built_by.get(id(arg))
                for cls in self._parameter_classes(node, key) if label else ():
                    self._stand_in(label, cls, node)

    def _client_built(self, node: ast.expr | None) -> str | None:
        """`AsyncOmni(...)` of a client class (this file's or imported from another client file): its label."""
        if not isinstance(node, ast.Call) or dotted_name(node.func) is None:
            return None
        label = self._base_label(node.func)
        return label if label is not None and self._client_class_info(label) is not None else None

    def _client_class_info(self, label: str) -> tuple[set[str], list[str], object, ast.ClassDef] | None:
        """A client class by label, in any client module (also one that imports no vLLM, read on demand): its members
        (body names and `self.x` stores, and those the client class table holds when this file first asks), its
        bases' labels, its file's path and its definition."""
        cache = self.__dict__.setdefault("_class_infos", {})
        if label in cache:
            return cache[label]
        # what the class's tree says is the same for every file that asks: read once per client, not once per file
        shapes = kept_on(self.usage, "_client_class_shapes", self.usage.files, dict)
        if label not in shapes:
            shapes[label] = self._class_shape(label)
        shape = shapes[label]
        if shape is None:
            cache[label] = None
            return None
        members, bases, rel, cdef = shape
        table = self.usage.client_class_table.get(label)
        cache[label] = (members | table[0] if table is not None else set(members), bases, rel, cdef)
        return cache[label]

    def _class_shape(self, label: str) -> tuple[frozenset[str], list[str], str, ast.ClassDef] | None:
        """A client class's members, bases' labels, path and definition as its module's tree gives them."""
        module, _, name = label.rpartition(".")
        file = self.usage.file_of_module(module)
        source = getattr(self, "client_source", None)
        found = (file.tree, file.rel.endswith("__init__.py")) if file is not None else \
            source.module_tree(module) if source is not None and module and module.split(".")[0] != self.package else None
        if found is None:
            return None
        tree, is_package = found
        rel = file.rel if file is not None else module.replace(".", "/") + ("/__init__.py" if is_package else ".py")
        cdef = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if cdef is None:
            return None
        members: set[str] = set()
        for stmt in flatten_class_body(cdef.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                members.add(stmt.name)
                params = stmt.args.posonlyargs + stmt.args.args if not isinstance(stmt, ast.ClassDef) else []
                members |= {t.attr for t, _line in attribute_stores_within(tree, stmt) if params
                            and isinstance(t.value, ast.Name) and t.value.id == params[0].arg}
            elif isinstance(stmt, ast.Assign):
                members.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                members.add(stmt.target.id)
        own_classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        imported: dict[str, str] = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                origin = resolve_relative(module, is_package, node.level, node.module)
                imported.update({(a.asname or a.name): f"{origin}.{a.name}" for a in node.names if a.name != "*"})
            elif isinstance(node, ast.Import):
                imported.update({(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0])
                                 for a in node.names})
        bases: list[str] = []
        for base in cdef.bases:
            dotted = base_name(base) or ""
            first, _, rest = dotted.partition(".")
            if first in own_classes and not rest:
                bases.append(f"{module}.{dotted}")
            elif first in imported:
                bases.append(imported[first] + (f".{rest}" if rest else ""))
        return frozenset(members), bases, rel, cdef

    def _parameter_classes(self, call: ast.Call, key: int | str) -> list[Resolved]:
        """The vLLM classes the parameter a call's argument binds to is annotated with."""
        func = self.infer(call.func, {})
        fn, skip = None, 0
        if isinstance(func, ClassRef):
            fn, skip = self.api.class_member(func.cls, "__init__"), 1
        elif isinstance(func, FuncRef):
            fn = func.func
        elif isinstance(func, ClientFunc):
            params = func.node.args.posonlyargs + func.node.args.args
            param = params[key] if isinstance(key, int) and key < len(params) else \
                next((a for a in params + func.node.args.kwonlyargs if a.arg == key), None)
            return [v.cls for v in self._union_members(param.annotation)] if param is not None and param.annotation else []
        else:
            label = self._client_built(call)
            if label is not None:  # a client class built: the `__init__` it inherits from vLLM, if no client class defines one
                fn, skip = self._inherited_init(label), 1
        if not (isinstance(fn, Resolved) and fn.func is not None):
            return []
        params = fn.func.signature.params[skip:]
        if isinstance(key, int):
            param = params[key] if key < len(params) and params[key].kind in ("posonly", "pos") else None
        else:
            param = next((p for p in params if p.name == key and p.kind in ("pos", "kwonly")), None)
        scope = fn.module or (fn.owner.module if fn.owner is not None else None)
        if param is None or not param.annotation or scope is None:
            return []
        found = self.api.class_from_annotation(scope, param.annotation)
        return [found] if found is not None else []

    def _inherited_init(self, label: str) -> Resolved | None:
        todo, seen = [label], set()
        while todo and len(seen) < 50:
            current = todo.pop(0)
            if current in seen:
                continue
            seen.add(current)
            info = self._client_class_info(current)
            if info is not None:
                own, bases = info[0], info[1]
                if "__init__" in own:
                    return None  # the client's own constructor takes it
                todo += bases
                continue
            vbase = self.api.resolve(current)
            if isinstance(vbase, Resolved) and vbase.kind == "class":
                found = self.api.class_member(vbase, "__init__")
                return found if isinstance(found, Resolved) and found.kind == "method" else None
        return None

    def _vllm_namesakes(self, label: str) -> list[Resolved]:
        """The vLLM classes of the client class `label`'s name that a client file imports by that name (`from
        vllm.config import ModelConfig` next to the client's own `ModelConfig`): those it is a copy of. None for a class
        vLLM itself defines (vLLM's tree scanned as a client: its classes are the ones imported)."""
        name = label.rpartition(".")[2]
        if not name or isinstance(self.api.resolve(label), Resolved):
            return []
        return [c for c in _vllm_class_imports(self).get(name, ()) if c.qualname != label]

    def _stand_in(self, label: str, cls: Resolved, node: ast.AST, where: str | None = None) -> None:
        members: set[str] = set()
        todo, seen, client = [label], set(), []
        while todo and len(seen) < 50:  # the class and its client ancestors; not one deriving from `cls`
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            info = self._client_class_info(current)
            if info is None:
                vbase = self.api.resolve(current)
                if isinstance(vbase, Resolved) and vbase.kind == "class" and \
                        cls.qualname in {c.qualname for c in self.api.mro(vbase)[0]}:
                    return  # a subclass: register_subclasses' question
                continue
            members |= info[0]
            client.append((current, info))
            todo += info[1]
        where = where or f"{self.file.rel}:{node.lineno}"
        found = self.usage.stand_ins.setdefault(cls.qualname, {})
        for member in sorted(members):
            found.setdefault(member, (label, where))
        overrides = self.usage.client_overrides.setdefault(cls.qualname, {})
        for current, (_own, _bases, rel, cdef) in client:
            for stmt in cdef.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    entry = (f"{current}.{stmt.name}", signature_from_args(stmt.args, rel, stmt.lineno))
                    if all(e[0] != entry[0] for e in overrides.get(stmt.name, [])):
                        overrides.setdefault(stmt.name, []).append(entry)


def _vllm_class_imports(analyzer) -> dict[str, list[Resolved]]:
    """Name -> the vLLM classes the client's files import by that name (`from vllm.config import ModelConfig`), for the
    names of the client's own classes only: made once per client class table."""
    usage, api = analyzer.usage, analyzer.api

    def build() -> dict[str, list[Resolved]]:
        names = {label.rpartition(".")[2] for label in usage.client_class_table}
        found: dict[str, list[Resolved]] = {}
        for file in usage.files:
            for imp in nodes_of(file.tree, ast.ImportFrom):
                if imp.level or (imp.module or "").split(".")[0] != api.package:
                    continue
                for alias in imp.names:
                    if alias.name not in names:
                        continue
                    cls = api.resolve(f"{imp.module}.{alias.name}")
                    if isinstance(cls, Resolved) and cls.kind == "class" \
                            and all(c.qualname != cls.qualname for c in found.get(alias.name, ())):
                        found.setdefault(alias.name, []).append(cls)
        return found
    return kept_on(usage, "_vllm_class_imports", usage.client_class_table, build)
