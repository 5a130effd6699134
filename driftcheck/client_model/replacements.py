"""Classes whose `__new__` builds another class: vLLM's `PluggableLayer` and `CustomOp` hand back the class an
out-of-tree plugin registered (`@Wrapper.register_oot class X(Wrapper)`), so `Wrapper(...)` runs X's `__init__`
(Python calls `type(obj).__init__` when `__new__` returns an instance of the class called). A client subclass
handed to a method of a vLLM class is recorded in the class phase (`Usage.replacements`); a construction is then
checked against each replacement registered through a method that fills the container `__new__` reads.
"""

from __future__ import annotations

import ast
import weakref

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.inference import ClassRef
from driftcheck.client_model.uses import Usage
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.signatures import check_call


def registered_with(analyzer, name: str, cls: ast.ClassDef) -> list[tuple[str, str]]:
    """(vLLM class, method) for each method of a vLLM class a client class is handed to: decorated by it
    (`@Wrapper.register_oot`, `@CustomOp.register_oot(name="RMSNorm")`) or passed to it in this file
    (`CustomOp.register_oot(_decorated_op_cls=X, name=...)`)."""
    out: list[tuple[str, str]] = []
    callees = [d.func if isinstance(d, ast.Call) else d for d in cls.decorator_list]
    callees += _callees_given(analyzer.file.tree).get(name, [])
    for callee in callees:
        if isinstance(callee, ast.Attribute):
            owner = analyzer.infer(callee.value, {})
            if isinstance(owner, ClassRef) and (owner.cls.qualname, callee.attr) not in out:
                out.append((owner.cls.qualname, callee.attr))
    return out


_GIVEN: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _callees_given(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """Name -> the callee of each call of the file that is given that name as an argument, in the file's order:
    listed once per file, not searched once per client class (a file of many classes read its calls again each)."""
    found = _GIVEN.get(tree)
    if found is None:
        found = _GIVEN[tree] = {}
        for call in nodes_of(tree, ast.Call):
            for name in dict.fromkeys(a.id for a in [*call.args, *(k.value for k in call.keywords)] if isinstance(a, ast.Name)):
                found.setdefault(name, []).append(call.func)
    return found


def built_as_replacement(api, usage: Usage, cls: Resolved, shape) -> bool:
    """`Wrapper(..., gate_is_fused=True)` where the client registers `@Wrapper.register_oot class X(Wrapper)` whose
    `__init__` accepts the call, and a `__new__` of Wrapper's MRO picks the class to build from the container that
    registrar fills (or reads none: any registration counts). A registrar that fills another container
    (`CustomOp.register`, in-tree names) replaces nothing."""
    candidates = usage.replacements.get(cls.qualname)
    chooser = api.new_chooses_class(cls) if candidates else None
    if chooser is None:
        return False
    order = {c.qualname: c for c in api.mro(cls)[0]}
    for _label, sig, registrars in candidates:
        if check_call(sig.without_first(), shape):
            continue
        for owner, method in registrars:
            if owner in order and (not chooser[1] or chooser[1] & api.containers_filled_by(order[owner], method)):
                return True
    return False
