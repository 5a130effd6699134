"""Code that runs in vLLM's process but that driftcheck does not read: packages the client imports that are
neither the client's, vLLM, the standard library nor one of vLLM's own requirements (which cannot import vLLM).
Such a package may be a vLLM plugin the client runs under (a platform plugin such as a host NPU backend), and
it can reach what vLLM hands out from its module state (`get_forward_context()`): a member missing from such
an object's class may be set by it, which driftcheck cannot know.
"""

from __future__ import annotations

import ast
import sys

from driftcheck.astnodes import nodes_of, stores_only, within
from driftcheck.client_model.inference import FuncRef
from driftcheck.client_model.uses import Usage
from driftcheck.vllm_model.bodies import enclosing_function
from driftcheck.vllm_model.resolved import Missing, Resolved


def unread_packages(usage: Usage, package: str, required: frozenset[str] | None) -> dict[str, str]:
    """Top-level package -> "file:line" of its first import, for the client's imports of packages that may
    depend on vLLM: not the client's own, not vLLM, not the standard library, not a requirement of vLLM's
    (when vLLM's metadata is there; without it every other package may). Computed once per client."""
    if usage.unread_packages is not None:
        return usage.unread_packages
    own = {f.module.split(".")[0] for f in usage.files}
    out: dict[str, str] = {}
    for file in usage.files:
        for node in nodes_of(file.tree, ast.Import, ast.ImportFrom):
            if isinstance(node, ast.ImportFrom):
                if node.level or not node.module:
                    continue
                names = [node.module]
            else:
                names = [a.name for a in node.names]
            for name in names:
                top = name.split(".")[0]
                if top in own or top == package or top in sys.stdlib_module_names or top.startswith("_") \
                        or (required is not None and top.lower() in required):
                    continue
                out.setdefault(top, f"{file.rel}:{node.lineno}")
    usage.unread_packages = out
    return out


def handed_out_by(receiver: ast.expr, tree: ast.Module, scope: ast.AST | None, is_vllm_function) -> str | None:
    """The vLLM function whose result `receiver` is: the call itself (`get_forward_context().x`) or a name the
    enclosing scope binds to such a call (`ctx = get_forward_context()`); None otherwise. `is_vllm_function`
    says, for a callee expression, the vLLM function's name or None."""
    if isinstance(receiver, ast.Call):
        return is_vllm_function(receiver.func)
    if not isinstance(receiver, ast.Name):
        return None
    if scope is not None:
        bindings = within(nodes_of(tree, ast.Assign, ast.AnnAssign, ast.NamedExpr), scope)
    else:
        bindings = [n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))]
    for node in bindings:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == receiver.id for t in targets) and isinstance(node.value, ast.Call):
            found = is_vllm_function(node.value.func)
            if found is not None:
                return found
    return None


def takes_new_attributes(api, cls) -> bool:
    """Whether other code can set a new attribute on an object of `cls`: not on a frozen dataclass, nor when
    every class of the MRO declares `__slots__` (no `__dict__`)."""
    order, _, externals = api.mro(cls)
    if any(c.cls is not None and c.cls.decorator_kwargs.get("frozen") == "True" for c in order):
        return False
    slotted = all(c.cls is not None and "__slots__" in c.cls.class_attrs for c in order)
    return not (slotted and all(e == "builtins.object" for e in externals))


PLATFORM_HOOK = "vllm.platforms.interface.Platform.check_and_update_config"


def platform_hook_classes(api) -> frozenset[str]:
    """The classes of what vLLM hands each platform plugin to change before anything runs: the parameters of
    `Platform.check_and_update_config` (a `VllmConfig`, on which tpu-inference sets `sharding_config`), read from the
    target's own annotation. Kept per target."""
    found = api.__dict__.get("_platform_hook_classes")
    if found is None:
        out: set[str] = set()
        hook = api.resolve(PLATFORM_HOOK)
        if isinstance(hook, Resolved) and hook.func is not None and hook.module is not None:
            for param in hook.func.signature.params[1:]:
                cls = api.resolve_in_scope(hook.module, param.annotation.strip("'\"")) if param.annotation else None
                if isinstance(cls, Resolved) and cls.kind == "class":
                    out.add(cls.qualname)
        found = api.__dict__["_platform_hook_classes"] = frozenset(out)
    return found


def plugin_may_set(analyzer, node: ast.Attribute, result: object, env: dict, cls) -> str | None:
    """Why a member no class defines may still be on the object read: vLLM hands it out (`get_forward_context()`)
    to all code in its process, and the client imports a package driftcheck does not read that may be a vLLM plugin
    the client runs under. `AttrUse.unread_may_set`: applied once the client's own stores are credited."""
    if not isinstance(result, Missing) or stores_only(node, analyzer.file.tree):
        return None
    required = analyzer.api.required_distributions()
    # a package of the client's own tree whose modules import no vLLM is no plugin vLLM loads: it cannot reach what
    # vLLM hands out from its module state (vllm_for_sp2's `sse_swa_moba_hf`, the Hugging Face twin of its model)
    unread = {top: where for top, where in unread_packages(analyzer.usage, analyzer.package, required).items()
              if top not in analyzer.usage.own_packages}
    if not unread or not takes_new_attributes(analyzer.api, cls):
        return None
    tree = analyzer.file.tree
    made_by = handed_out_by(node.value, tree, enclosing_function(tree, node),
                            lambda f: v.func.qualname if isinstance(v := analyzer.infer(f, env), FuncRef) else None)
    handed = f"`{cls.cls.name}` objects are handed out by `{made_by}` to all code in vLLM's process" if made_by else None
    if handed is None and cls.qualname in platform_hook_classes(analyzer.api):
        # maxtext's `vllm_config.sharding_config`, which tpu-inference's platform sets there (25e F1)
        handed = f"vLLM hands the `{cls.cls.name}` to every platform plugin's `{PLATFORM_HOOK}` before anything runs"
    if handed is None:
        return None
    # the package this file imports first, if any: the likeliest plugin of the code read here
    mine = [top for top, where in unread.items() if where.startswith(analyzer.file.rel + ":")]
    package = mine[0] if mine else next(iter(unread))
    where = unread[package]
    more = f" (and {len(unread) - 1} other package(s))" if len(unread) > 1 else ""
    why = "which vLLM does not require" if required is not None else \
        "which may depend on vLLM (the sources hold no vLLM metadata to tell)"
    return (f"{handed}, and the client imports `{package}` ({where}){more}, which driftcheck does not read and {why}: "
            f"a plugin the client runs under may set '{node.attr}' on them")
