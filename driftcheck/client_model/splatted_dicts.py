"""The keys a call certainly passes through `**d`: a dict the code spells out.

`engine_kwargs = dict(model=m, device=device, disable_log_requests=True, **kwargs); AsyncEngineArgs(**engine_kwargs)`
(Fast-Spark-TTS, 26h M1) passes `device` and `disable_log_requests` as keywords as surely as a literal keyword would:
vLLM 0.10.0's EngineArgs has no `device`, a TypeError. Read only where the dict is certain: a `{...}` literal or a
`dict(...)` call in the call itself, or one such value bound to a name once in the function around the call (or the
module) and no key taken away before it: no `del d[k]`, no method but those that add keys or read (`d["k"] = v` and
`d.update(...)` keep what the literal spells), not handed to another call that may pop a key. Keys beyond those
(`**kwargs` inside the dict, a key computed) leave the call open, as `**` always did: only a key the dict certainly
holds is checked, never a missing argument.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import functions_at, own_scope


def splatted_keys(call: ast.Call, tree: ast.Module) -> dict[str, int]:
    """Keyword name -> the line that spells it, for the keys of the dicts `call` unpacks with `**`."""
    out: dict[str, int] = {}
    for kw in call.keywords:
        if kw.arg is not None:
            continue
        value = kw.value
        if isinstance(value, ast.Name):
            value = _bound_once(value, call, tree)
        for name, line in _spelled_keys(value):
            out.setdefault(name, line)
    return out


def _spelled_keys(value: ast.expr | None) -> list[tuple[str, int]]:
    if isinstance(value, ast.Dict):
        return [(k.value, k.lineno) for k in value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value.isidentifier()]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" and not value.args:
        return [(k.arg, k.value.lineno) for k in value.keywords if k.arg is not None]
    return []


def _bound_once(name: ast.Name, call: ast.Call, tree: ast.Module) -> ast.expr | None:
    """The dict literal or `dict(...)` a name holds at `call`: its one binding in the scope around the call, before
    it, and nothing between that may change the dict."""
    around = functions_at(tree, call.lineno)
    scope = own_scope(around[-1] if around else tree)
    binding: ast.Assign | ast.AnnAssign | None = None
    for node in scope:
        if isinstance(node, ast.Name) and node.id == name.id and not isinstance(node.ctx, ast.Load):
            # `kw = {...}` or `kw: dict[str, Any] = dict(...)` (26o M2)
            parent = next((a for a in scope if isinstance(a, ast.Assign) and node in a.targets
                           or isinstance(a, ast.AnnAssign) and a.target is node and a.value is not None), None)
            if binding is not None or parent is None:
                return None  # bound twice, or not by a plain assignment (a loop, a `with`, an augmented store)
            binding = parent
        elif isinstance(node, ast.arg) and node.arg == name.id:
            return None
    if binding is None or binding.lineno >= call.lineno or not _spelled_keys(binding.value):
        return None
    for node in scope:
        if not binding.end_lineno < getattr(node, "lineno", 0) <= call.lineno or node is call:
            continue
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name.id \
                and isinstance(node.ctx, ast.Del):
            return None  # `del d["k"]`
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name.id \
                and node.attr not in _ADDING:
            return None  # `d.pop("k")`, `d.clear()`, or anything else done with it
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == name.id for a in node.args):
            return None  # handed to a call that may change it
    return binding.value


# what adds keys or reads, and takes none away: the keys the literal spells are still there (`d["k"] = v` too; 26j M2)
_ADDING = {"update", "setdefault", "get", "keys", "items", "values", "copy"}
