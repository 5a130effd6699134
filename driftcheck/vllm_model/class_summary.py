"""One class summarised: bases, decorators, fields (dataclass, pydantic, attrs, `field(...)` options),
methods, and the instance attributes its methods assign.
"""

from __future__ import annotations

import ast
import bisect
import re

from driftcheck.astnodes import dotted_name, first_line, source_text, walk, walk_statements
from driftcheck.vllm_model.conditional_attrs import conditions
from driftcheck.vllm_model.function_summary import MODULE_REGISTRARS, attr_targets, decorator_name, summarise_function
from driftcheck.vllm_model.module_summary import ClassInfo, FieldInfo


def assigned_names(target: ast.expr) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        out: list[ast.Name] = []
        for elt in target.elts:
            out.extend(assigned_names(elt.value if isinstance(elt, ast.Starred) else elt))
        return out
    return []


def _field_call_info(value: ast.expr) -> tuple[bool, str | None, bool, bool | None]:
    """(has_default, default_src, init, kw_only) for `field(...)`/`Field(...)` or a plain value."""
    if isinstance(value, ast.Call):
        fname = (dotted_name(value.func) or "").split(".")[-1]
        if fname in ("field", "Field"):
            kws = {k.arg: k.value for k in value.keywords if k.arg}
            has_default = "default" in kws or "default_factory" in kws
            default_src = ast.unparse(kws["default"]) if "default" in kws else (
                ast.unparse(kws["default_factory"]) + "()" if "default_factory" in kws else None
            )
            if fname == "Field" and value.args:
                first = value.args[0]
                if not (isinstance(first, ast.Constant) and first.value is Ellipsis):
                    has_default, default_src = True, ast.unparse(first)
            init = True
            if "init" in kws and isinstance(kws["init"], ast.Constant) and kws["init"].value is False:
                init = False
            kw_only = None
            if "kw_only" in kws and isinstance(kws["kw_only"], ast.Constant):
                kw_only = bool(kws["kw_only"].value)
            return has_default, default_src, init, kw_only
    return True, ast.unparse(value), True, None


def summarise_class(node: ast.ClassDef, path: str, *, scan_calls: bool | list[int] = True,
                    setattr_at: list[int] | None = None) -> ClassInfo:
    deco_kwargs: dict[str, str] = {}
    for d in node.decorator_list:
        if isinstance(d, ast.Call):
            for k in d.keywords:
                if k.arg:
                    deco_kwargs[k.arg] = ast.unparse(k.value)
    cls = ClassInfo(
        name=node.name,
        line=node.lineno,
        end_line=getattr(node, "end_lineno", node.lineno) or node.lineno,
        bases=[source_text(b) for b in node.bases],
        decorators=[decorator_name(d) for d in node.decorator_list],
        decorator_kwargs=deco_kwargs,
    )
    for k in node.keywords:
        if k.arg == "metaclass":
            cls.decorator_kwargs["__metaclass__"] = ast.unparse(k.value)
        if k.arg:
            cls.class_kwargs[k.arg] = ast.unparse(k.value)
    declared: set[str] = set()  # instance attributes a bare `self.x: T` declares, in any method of the class
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for stmt in flatten_class_body(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(stmt)
            statements = list(walk_statements(stmt))  # one walk for the summary and the attributes it sets
            fn = summarise_function(stmt, path, scan_calls=scan_calls, statements=statements)
            if ("overload" in fn.decorators or "typing.overload" in fn.decorators) and stmt.name in cls.methods:
                continue
            if any(d.endswith((".setter", ".deleter")) for d in fn.decorators) and stmt.name in cls.methods:
                continue
            cls.methods[stmt.name] = fn
            if stmt.name in ("__getattr__", "__getattribute__"):
                cls.dynamic_attrs = True
            _collect_instance_attrs(stmt, cls, declared, full_walk=_may_set_by_name(stmt, setattr_at), statements=statements)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            annotation = source_text(stmt.annotation)
            if stmt.value is None:
                has_default, default, init, kw_only = False, None, True, None
            else:
                has_default, default, init, kw_only = _field_call_info(stmt.value)
            cls.fields.append(
                FieldInfo(stmt.target.id, stmt.lineno, annotation, stmt.value is not None, has_default, default, init, kw_only)
            )
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in assigned_names(target):
                    cls.class_attrs.setdefault(name.id, stmt.lineno)
            if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and _is_attrs_field(stmt.value):
                # attrs' `x = attr.ib(...)`: an init field with no annotation
                has_default, default, init, kw_only = _field_call_info(stmt.value)
                if not any(k.arg in ("default", "factory") for k in stmt.value.keywords):
                    has_default, default = False, None
                else:
                    has_default = True
                cls.fields.append(FieldInfo(stmt.targets[0].id, stmt.lineno, "", True, has_default, default, init, kw_only))
        elif isinstance(stmt, ast.ClassDef):
            cls.class_attrs.setdefault(stmt.name, stmt.lineno)
    init = next((s for s in functions if s.name == "__init__"), None)
    if init is not None and not cls.dynamic_names and not cls.dynamic_attrs:
        found = {name: at for name, at in conditions(init, functions).items()
                 if name not in cls.class_attrs and name not in declared and all(f.name != name for f in cls.fields)}
        cls.conditional_attrs = {name: (line, test) for name, (line, test, _flags) in found.items()}
        cls.condition_flags = {name: flags for name, (_line, _test, flags) in found.items() if flags}
    return cls


def _is_attrs_field(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and (dotted_name(value.func) or "") in ("attr.ib", "attr.attrib", "attrs.field", "attr.field")


def flatten_class_body(body: list[ast.stmt]) -> list[ast.stmt]:
    """Class bodies sometimes define members under `if`/`try`/`with`; treat them as defined."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, ast.If):
            out.extend(flatten_class_body(stmt.body))
            out.extend(flatten_class_body(stmt.orelse))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):  # `with open(path) as f: table = set(json.load(f))`
            out.extend(flatten_class_body(stmt.body))
        elif isinstance(stmt, ast.Try):
            out.extend(flatten_class_body(stmt.body))
            for h in stmt.handlers:
                out.extend(flatten_class_body(h.body))
            out.extend(flatten_class_body(stmt.orelse))
            out.extend(flatten_class_body(stmt.finalbody))
        else:
            out.append(stmt)
    return out


def _may_set_by_name(fn: ast.FunctionDef | ast.AsyncFunctionDef, setattr_at: list[int] | None) -> bool:
    """Whether `fn`'s lines (its decorators' too: `ast.walk(fn)` visits them) hold a `setattr`, `register_*` or
    `add_module` (pysummary.setattr_lines): only then can an expression in it create an attribute."""
    if setattr_at is None:
        return True
    start = first_line(fn)
    end = getattr(fn, "end_lineno", None) or fn.lineno
    i = bisect.bisect_left(setattr_at, start)
    return i < len(setattr_at) and setattr_at[i] <= end


def _first_is_the_class(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether `fn`'s first parameter is the class, not an instance: what it sets there, a read off the class sees."""
    return fn.name in ("__new__", "__init_subclass__", "__class_getitem__") or \
        any(dotted_name(d) in ("classmethod", "builtins.classmethod") for d in fn.decorator_list)


def _collect_instance_attrs(fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: ClassInfo, declared: set[str],
                            full_walk: bool = True, statements: list[ast.AST] | None = None) -> None:
    """Attributes assigned on the first parameter anywhere in `fn`. `full_walk=False` skips expressions:
    only right when the module never calls `setattr` (the one expression-level form). `declared`: the attributes a
    bare annotation of the class declares (filled here): their type is the declaration's, whatever is assigned."""
    if not fn.args.args and not fn.args.posonlyargs:
        return
    first = (fn.args.posonlyargs + fn.args.args)[0].arg
    param_annotations = {a.arg: a.annotation for a in fn.args.args + fn.args.kwonlyargs if a.annotation is not None}
    for sub in walk(fn) if full_walk else (walk_statements(fn) if statements is None else statements):
        targets: list[ast.expr] = []
        annotation: str | None = None
        value: ast.expr | None = None
        if isinstance(sub, ast.Assign):
            targets, value = sub.targets, sub.value
        elif isinstance(sub, ast.AnnAssign):
            targets, value, annotation = [sub.target], sub.value, source_text(sub.annotation)
        elif isinstance(sub, ast.AugAssign):
            targets = [sub.target]
        elif isinstance(sub, (ast.For, ast.AsyncFor, ast.withitem)):
            targets = [sub.target] if isinstance(sub, (ast.For, ast.AsyncFor)) else [sub.optional_vars] if sub.optional_vars else []
        elif isinstance(sub, ast.Call) and dotted_name(sub.func) == "setattr" and len(sub.args) >= 2:
            obj, name = sub.args[0], sub.args[1]
            if isinstance(obj, ast.Name) and obj.id == first and isinstance(name, ast.Constant) and isinstance(name.value, str):
                cls.instance_attrs.setdefault(name.value, (sub.lineno, None))
            elif isinstance(obj, ast.Name) and obj.id == first:
                cls.dynamic_names = True
                cls.dynamic_class_names = cls.dynamic_class_names or _first_is_the_class(fn)
            continue
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in MODULE_REGISTRARS \
                and isinstance(sub.func.value, ast.Name) and sub.func.value.id == first and sub.args \
                and isinstance(sub.args[0], ast.Constant) and isinstance(sub.args[0].value, str):
            # torch.nn.Module serves registered buffers/parameters/submodules as attributes
            cls.instance_attrs.setdefault(sub.args[0].value, (sub.lineno, None))
            continue
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in MODULE_REGISTRARS \
                and isinstance(sub.func.value, ast.Name) and sub.func.value.id == first and sub.args:
            cls.dynamic_names = True
            continue
        for target in targets:
            for t in attr_targets(target):
                if isinstance(t.value, ast.Name) and t.value.id == first:
                    type_expr = annotation
                    ctor = dotted_name(value.func) if isinstance(value, ast.Call) else None
                    if ctor and annotation is not None and ctor != annotation:
                        # `self.x: A = B(...)` holds a B if B is a class, whatever A says: "B(A)" (see api_index)
                        type_expr = f"{ctor}({annotation})"
                    elif type_expr is None and ctor:
                        type_expr = ctor
                    elif type_expr is None and isinstance(value, ast.Name) and value.id in param_annotations:
                        type_expr = ast.unparse(param_annotations[value.id])
                    elif type_expr is None and isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) \
                            and value.value.id in param_annotations:
                        # `self.model_config = vllm_config.model_config` with `vllm_config: VllmConfig`: what that
                        # class's attribute holds ("VllmConfig.model_config", read by value_types; HB)
                        owner = _one_class_name(param_annotations[value.value.id])
                        type_expr = f"{owner}.{value.attr}" if owner else None
                    declared_only = annotation is not None and type_expr == annotation  # a bare declaration is authoritative
                    prev = cls.instance_attrs.get(t.attr)
                    if declared_only and value is None:
                        declared.add(t.attr)
                    if prev is None or (prev[1] is None and type_expr) or (declared_only and prev[1] != annotation):
                        cls.instance_attrs[t.attr] = (t.lineno, type_expr)
                    elif t.attr in declared and annotation is None:
                        # `self.model: nn.Module` then `self.model = get_model(...)`: the declaration says what it holds
                        continue
                    elif type_expr and prev[1] and type_expr not in split_union(prev[1]):
                        # `self.experts = MegaMoEExperts(...)` here, `= FusedMoEFactory(...)` there: one of these,
                        # not one type (a union resolves to no single class)
                        cls.instance_attrs[t.attr] = (prev[0], f"{prev[1]} | {type_expr}")


def _one_class_name(annotation: ast.expr) -> str | None:
    """`VllmConfig`, `"VllmConfig"`, `config.VllmConfig`: the one class an annotation names (None for a union, a
    container, `Optional[...]`)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.strip()
        return text if re.fullmatch(r"[A-Za-z_][\w.]*", text) else None
    return dotted_name(annotation) if isinstance(annotation, (ast.Name, ast.Attribute)) else None


def split_union(expr: str) -> list[str]:
    """`A | B(C | None) | None` -> ["A", "B(C | None)", "None"]: the `|` outside brackets and parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(expr):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(expr[start:i].strip())
            start = i + 1
    parts.append(expr[start:].strip())
    return parts
