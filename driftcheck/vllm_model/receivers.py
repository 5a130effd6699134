"""What class a receiver in vLLM's own code is: `self`, an annotated parameter, a typed `self` attribute.

DC109 asks it of vLLM's calls of a method a client class overrides (does the call reach the client's object?), and
the orphaned-override check asks it of every mention of a method vLLM's base no longer has (may any of them still
call the client's method?). An answer of no class means "not known", never "none".
"""

from __future__ import annotations

import ast

from driftcheck.vllm_model.resolved import Resolved


def receiver_classes(api, mod, scope_cls: Resolved | None, fn: ast.AST | None, recv: ast.expr) -> list[Resolved]:
    """Each class the receiver may be (`self.model_runner`, built by a factory, is either runner)."""
    if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and scope_cls is not None and fn is not None:
        args = getattr(fn, "args", None)
        params = (args.posonlyargs + args.args) if args is not None else []
        if params and recv.value.id == params[0].arg:
            member = api.class_member(scope_cls, recv.attr)
            if isinstance(member, Resolved) and member.kind == "attribute":
                return api.possible_types(member)
    one = receiver_class(api, mod, scope_cls, fn, recv)
    return [one] if one is not None else []


def receiver_class(api, mod, scope_cls: Resolved | None, fn: ast.AST | None, recv: ast.expr) -> Resolved | None:
    """The vLLM class a receiver is typed as: self, an annotated parameter, a typed self attribute."""
    args = (fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    first = args[0].arg if args else None
    if isinstance(recv, ast.Name):
        if scope_cls is not None and recv.id == first and not decorated_with(fn, "staticmethod"):
            return scope_cls
        for a in args:
            if a.arg == recv.id and a.annotation is not None and mod is not None:
                return api.class_from_annotation(mod, ast.unparse(a.annotation))
        return None
    if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == first and scope_cls is not None:
        member = api.class_member(scope_cls, recv.attr)
        if isinstance(member, Resolved) and member.kind == "attribute":
            return next(iter(api.possible_types(member)), None)  # `self.model_runner`: the first class assigned
    return None


def decorated_with(fn, name: str) -> bool:
    return any(ast.unparse(d).endswith(name) for d in getattr(fn, "decorator_list", []))
