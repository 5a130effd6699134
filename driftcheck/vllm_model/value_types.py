"""The type of a value in the target: an attribute's or a function's annotated (or constructed) class, the
classes a factory builds, types from outside the target, a class named by an annotation.
"""

from __future__ import annotations

import ast
import dataclasses
import re

from driftcheck.vllm_model.class_summary import split_union
from driftcheck.vllm_model.module_summary import ModuleInfo
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.resolved import External, Resolved


class ValueTypes:
    """Types of attributes, functions' returns and annotations."""

    def type_of(self, resolved: Resolved) -> Resolved | None:
        """The class an attribute/property/function call evaluates to, when annotated or constructed. A method reached
        through a class name an `if` rebinds (`class_member`'s `otherwise`: the other class's method of that name)
        gives its class with the other method's as what it is otherwise, or None when the other's is not known."""
        mine = self._type_of(resolved)
        other = resolved.otherwise if resolved.kind in ("method", "attribute") else None
        if mine is None or other is None:
            return mine
        theirs = self._type_of(other)
        if theirs is None or theirs.kind != "class" or mine.kind != "class":
            return None  # which class the call gives depends on a branch taken at import: one of them is not known
        # the other method's annotation may name the rebound name itself, `-> "AsyncLLMEngine"`: its class and what
        # it holds otherwise
        alternatives = [c for c in (mine.otherwise, theirs, theirs.otherwise) if c is not None and c.qualname != mine.qualname]
        if not alternatives:
            return mine
        return dataclasses.replace(mine, otherwise=dataclasses.replace(alternatives[0], otherwise=None))

    def _type_of(self, resolved: Resolved) -> Resolved | None:
        expr: str | None = None
        scope = resolved.module
        if resolved.kind in ("function", "method") and resolved.func is not None:
            expr = resolved.func.returns
        elif resolved.kind == "attribute":
            expr = resolved.type_expr
            if expr and scope is not None and "self." in expr:
                kinds = self.possible_types(resolved)  # built by a factory method: one class, or none
                return kinds[0] if len(kinds) == 1 else None
        if not expr or scope is None:
            return None
        return self.class_from_annotation(scope, expr)

    def possible_types(self, resolved: Resolved) -> list[Resolved]:
        """Each class an attribute may hold: its one type, every class of `A | B` (assigned in different places),
        or each class a factory method builds (`self.model_runner: V1 = self._make_model_runner()` returning V2 or V1)."""
        expr = resolved.type_expr if resolved.kind == "attribute" else None
        if not expr or resolved.module is None:
            one = self.type_of(resolved)
            return [one] if one else []
        out: dict[str, Resolved] = {}
        for part in split_union(expr):
            for c in self._classes_of(resolved, part):
                out.setdefault(c.qualname, c)
        return list(out.values())

    def _classes_of(self, resolved: Resolved, part: str) -> list[Resolved]:
        built = _BUILT.fullmatch(part.strip())
        if built and built.group(1).startswith("self.") and resolved.owner is not None:
            factory = self.class_member(resolved.owner, built.group(1)[len("self."):])
            made = self._built_by(factory) if isinstance(factory, Resolved) else []
            if made:
                return made
            part = built.group(2)
        c = self.class_from_annotation(resolved.module, part)
        return [c] if c is not None else []

    def _built_by(self, factory: Resolved) -> list[Resolved]:
        """The classes a function's `return X(...)` statements build."""
        if factory.func is None or factory.module is None:
            return []
        out = []
        for name in factory.func.returns_built:
            if ":" in name:
                source, _, short = name.partition(":")
                level = len(source) - len(source.lstrip("."))
                mod = resolve_relative(factory.module.name, factory.module.is_package, level, source.lstrip(".") or None)
                found = self.resolve(f"{mod}.{short}" if mod else short)
            else:
                found = self.resolve_in_scope(factory.module, name)
            if isinstance(found, Resolved) and found.kind == "class":
                out.append(found)
        return out

    def foreign_type(self, resolved: Resolved) -> str | None:
        """The class outside vLLM an attribute is annotated or built with (`hf_config: PretrainedConfig`), if one."""
        expr = resolved.type_expr if resolved.kind == "attribute" else None
        if not expr or resolved.module is None:
            return None
        parts = [p for p in split_union(expr) if p.strip("'\" ") != "None"]
        built = _BUILT.fullmatch(parts[0]) if len(parts) == 1 else None
        candidates = [_strip_annotation(built.group(2) if built else expr)]
        if built and built.group(1).rsplit(".", 1)[-1][:1].isupper():
            candidates.append(built.group(1))  # `self.x = SomeClass(...)` (a function's result says nothing)
        for name in filter(None, candidates):
            found = self.resolve_in_scope(resolved.module, name)
            if isinstance(found, External) and not found.qualname.startswith("builtins."):
                return found.qualname
        return None

    def classes_in_return(self, resolved: Resolved) -> list[Resolved]:
        """The vLLM classes a function's return annotation names anywhere in it: `RequestOutput`,
        `list[RequestOutput]`, `AsyncGenerator[RequestOutput | PoolingRequestOutput, None]` (what its callers get,
        or get items of)."""
        expr = resolved.func.returns if resolved.func is not None else None
        if not expr or resolved.module is None:
            return []
        try:
            tree = ast.parse(expr.strip(), mode="eval")
        except SyntaxError:
            return []
        out: dict[str, Resolved] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):  # `list["RequestOutput"]`
                name = node.value.strip()
            elif isinstance(node, (ast.Name, ast.Attribute)):
                name = ast.unparse(node)
            else:
                continue
            found = self.class_from_annotation(resolved.module, name) if re.fullmatch(r"[A-Za-z_][\w.]*", name) else None
            if found is not None:
                out.setdefault(found.qualname, found)
        return list(out.values())

    def element_type_of(self, resolved) -> Resolved | None:
        """`scheduled_new_reqs: list[NewRequestData]`: the one class of a container attribute's elements."""
        expr = resolved.type_expr if isinstance(resolved, Resolved) and resolved.kind == "attribute" else None
        found = _CONTAINER.fullmatch(expr.strip()) if expr and resolved.module is not None else None
        return self.class_from_annotation(resolved.module, found.group(1)) if found else None

    def class_from_annotation(self, scope: ModuleInfo, expr: str, _depth: int = 0) -> Resolved | None:
        parts = [p for p in split_union(expr) if p.strip("'\" ") != "None"]
        if len(parts) > 1:
            return None  # one of several classes: no single type
        built = _BUILT.fullmatch(parts[0]) if parts else None
        if built:  # "B(A)": `self.x: A = B(...)` holds a B when B is a class, else what A says
            made = self.resolve_in_scope(scope, built.group(1))
            if isinstance(made, Resolved) and made.kind == "class":
                return made
            return self.class_from_annotation(scope, built.group(2))
        name = _strip_annotation(expr)
        if not name:
            return None
        result = self.resolve_in_scope(scope, name)
        if isinstance(result, Resolved) and result.kind == "class":
            return result
        if isinstance(result, Resolved) and result.kind == "attribute" and "." in name and _depth < 4:
            # "VllmConfig.model_config" (class_summary: `self.x = param.attr`): the class that attribute holds
            inner = result.type_expr
            if inner and result.module is not None and "self." not in inner:
                return self.class_from_annotation(result.module, inner, _depth + 1)
        if isinstance(result, Resolved) and result.kind in ("function", "method") and result.func is not None \
                and result.func.returns and _depth < 4:
            # `self.llm_engine = LLMEngine.from_engine_args(...)` (class_summary keeps the callee's name): the one class
            # the function's return annotation names, with the class its name holds otherwise (`type_of`; JC4); not
            # a factory whose returns build several classes (`create_request_queue(policy) -> RequestQueue` builds
            # an FCFS or a priority queue): the value is one of those, as `possible_types` says
            if len(set(result.func.returns_built)) > 1:
                return None
            made = self.type_of(result)
            return made if made is not None and made.kind == "class" else None
        return None


_CONTAINER = re.compile(r"(?:typing\.|collections\.abc\.)?(?:list|List|Sequence|Iterable|set|Set|frozenset|tuple|Tuple)"
                        r"\[(.+?)(?:,\s*\.\.\.)?\]")
_BUILT = re.compile(r"([A-Za-z_][\w.]*)\((.*)\)", re.S)


def _strip_annotation(expr: str) -> str | None:
    """`Optional["X"]`, `X | None`, `'X'` -> `X`; containers and unions of classes -> None."""
    expr = expr.strip().strip("'\"")
    m = re.fullmatch(r"(?:typing\.)?Optional\[(.*)\]", expr)
    if m:
        expr = m.group(1).strip().strip("'\"")
    parts = [p.strip().strip("'\"") for p in expr.split("|")]
    parts = [p for p in parts if p and p != "None"]
    if len(parts) != 1:
        return None
    name = parts[0]
    if not re.fullmatch(r"[A-Za-z_][\w.]*", name):
        return None
    return name
