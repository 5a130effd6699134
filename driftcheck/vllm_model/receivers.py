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

from driftcheck.astnodes import dotted_name
from driftcheck.vllm_model.pysummary import resolve_relative
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
            if a.arg == recv.id:
                return None
        built = _bound_from_call(api, mod, fn, recv.id, scope_cls)
        return built if built is not None else _annotated_global(api, mod, fn, recv.id)
    if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == first and scope_cls is not None:
        member = api.class_member(scope_cls, recv.attr)
        if isinstance(member, Resolved) and member.kind == "attribute":
            return next(iter(api.possible_types(member)), None)  # `self.model_runner`: the first class assigned
    return None


def _bound_from_call(api, mod, fn, name: str, scope_cls: Resolved | None = None) -> Resolved | None:
    """The class a local the function binds once, to a call of a vLLM function annotated to return it, holds
    (`loader = get_model_loader(load_config)` then `loader.load_model(..., prefix=prefix)` in 0.34.0's `get_model`, where
    `get_model_loader` is `-> BaseModelLoader`: 30c M1, union's model loader without `prefix`)."""
    if mod is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    stores, bound = 0, None  # one walk: how often the name is bound, and the plain `name = ...` among them
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            stores += 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id == name:
            bound = node
    call = bound.value if stores == 1 and bound is not None else None
    callee = dotted_name(call.func) if isinstance(call, ast.Call) else None
    params = fn.args.posonlyargs + fn.args.args
    head, _, method = (callee or "").partition(".")
    if scope_cls is not None and params and head == params[0].arg and method and "." not in method \
            and not decorated_with(fn, "staticmethod"):
        # `tokenizer = self.get_tokenizer_group()` (`-> BaseTokenizerGroup`; 31c M4, 0.7.2's InputPreprocessor)
        found = api.class_member(scope_cls, method)
    else:
        found = (_locally_imported(api, mod, fn, callee) or api.resolve_in_scope(mod, callee)) if callee else None
    if not (isinstance(found, Resolved) and found.kind in ("function", "method")):
        return None
    made = api.type_of(found)
    return made if made is not None and made.kind == "class" else None


def _locally_imported(api, mod, fn, dotted: str):
    """What `dotted` names through a `from m import name` in the function's own body (0.34.0's
    `SupportsMultiModal` imports `get_offloader` inside the method that calls it: 29h O1), else None."""
    head, _, rest = dotted.partition(".")
    for node in ast.walk(fn):
        if isinstance(node, ast.ImportFrom):
            alias = next((a for a in node.names if (a.asname or a.name) == head), None)
            if alias is not None:
                module = resolve_relative(mod.name, mod.is_package, node.level, node.module)
                found = api.resolve(".".join(p for p in (module, alias.name, rest) if p))
                return found if isinstance(found, Resolved) else None
    return None


def _annotated_global(api, mod, fn, name: str) -> Resolved | None:
    """The class a module-level global another vLLM module annotates (`current_platform: Platform`, which
    `vllm.platforms.__getattr__` serves) holds, where the function reads it as imported (`from vllm.platforms import
    current_platform` in its body or at the top of its module) and binds it no other way (26k M1: every platform
    plugin's `get_attn_backend_cls` is called through it)."""
    if mod is None:
        return None
    source = None  # (module, name) the function imports it as
    for node in ast.walk(fn) if fn is not None else ():
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            alias = next((a for a in node.names if (a.asname or a.name) == name), None)
            if alias is not None:
                source = (node.module, alias.name)
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return None
    binding = mod.bindings.get(name)
    if source is None and binding is not None and binding.kind == "import" and "." in binding.target:
        source = tuple(binding.target.rsplit(".", 1))
    home = api.module(source[0]) if source else None
    expr = home.annotations.get(source[1]) if home is not None else None
    return api.class_from_annotation(home, expr) if expr else None


def annotated_globals(api, index, short: str) -> list[str]:
    """Names vLLM's modules annotate at their top level with the class `short` (`current_platform: Platform`), from
    the files that name the class: the globals a call site may reach its objects through."""
    kept = _ANNOTATED.setdefault(index, {})
    if short not in kept:
        # at most one indent: the module's top or an `if TYPE_CHECKING:` block there
        pattern = re.compile(rb"^(?: {4})?(\w+)\s*:\s*[\"']?" + re.escape(short.encode()) + rb"[\"']?\s*$", re.M)
        kept[short] = sorted({m.group(1).decode() for rel in index.files_mentioning(short)
                              for m in pattern.finditer(index.blob(rel))})
    return kept[short]


_ANNOTATED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


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
