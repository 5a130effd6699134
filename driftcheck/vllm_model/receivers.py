"""What class a receiver in vLLM's own code is (`self`, an annotated parameter, a typed `self` attribute), and which
files of the tree call a method name at all.

DC109 asks it of vLLM's calls of a method a client class overrides (does the call reach the client's object?), and
the orphaned-override check asks it of every mention of a method vLLM's base no longer has (may any of them still
call the client's method?). An answer of no class means "not known", never "none".
"""

from __future__ import annotations

import ast
import re
import weakref

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


_FILES_CALLING: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_METHOD_CALL = re.compile(rb"\.(\w+)\s*\(")  # `.name(`: one dot, so no match can hide another inside it


def files_calling(api, index, name: str) -> list[str]:
    """The target's files with a `.name(` call, in the tree's order. Every method name is listed in one pass over the
    release (0.05 s for 0.23.0's 1,806 files), not in a search of the whole tree per name: a plugin overriding
    dozens of methods asked for hundreds of names. A name outside ASCII (which `\\w` over bytes does not match) is
    searched alone."""
    if not name.isascii():
        call = re.compile(rb"\." + re.escape(name.encode()) + rb"\s*\(")
        return [rel for rel in index.files_mentioning(name) if call.search(index.blob(rel))]
    table = _FILES_CALLING.get(api)
    if table is None:
        table = {}
        for rel, data in index.blobs().items():
            for called in set(_METHOD_CALL.findall(data)):
                table.setdefault(called, []).append(rel)
        _FILES_CALLING[api] = table
    return table.get(name.encode(), [])


def files_calling_name(index, name: str):
    """The target's files that call `name(...)`, bare or through an attribute (not a `def` / `class` line), lazily:
    asked for a rare name (DC002's candidate home that is a value), so searched in the files mentioning it rather
    than listed for every name as `files_calling` is."""
    call = re.compile(rb"(?<!\w)(?<!def )(?<!class )" + re.escape(name.encode()) + rb"\s*\(")
    return (rel for rel in index.files_mentioning(name) if call.search(index.blob(rel)))


_FILES_GETATTR: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_GETATTR_READ = re.compile(rb"""\bgetattr\(\s*[^,()]+,\s*["'](\w+)["']""")  # `getattr(module, "name"`


def files_reading_by_getattr(api, index, name: str) -> list[str]:
    """The target's files that read `name` through `getattr(x, "name"...)` (a hook a method may be called through),
    listed for every name in one pass over the release, as `files_calling` is."""
    table = _FILES_GETATTR.get(api)
    if table is None:
        table = {}
        for rel, data in index.blobs().items():
            if b"getattr(" in data:
                for read in set(_GETATTR_READ.findall(data)):
                    table.setdefault(read, []).append(rel)
        _FILES_GETATTR[api] = table
    return table.get(name.encode(), [])
