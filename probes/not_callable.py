"""DC116 not-callable: the client calls a vLLM member that the target makes a property or a plain value.

A method that becomes a property (or a field) between releases leaves `obj.num_reqs()` calling the value the
property returns: `TypeError: 'int' object is not callable`, when the line runs. The reverse change (a property
that becomes a method) is DC006's and the type checks' business; this rule reads calls.

The rule takes a call whose callee is an attribute read on a vLLM object driftcheck types (`obj.name(...)`) that
resolves, in the target, to a property or to a data member (a class attribute, a dataclass field, an instance
attribute) with an annotation, and calls it an error when that annotation (a property's return annotation) names
a value that cannot be called:
- a builtin value type: `int`, `float`, `bool`, `str`, `bytes`, `list[...]`, `dict[...]`, `set[...]`,
  `tuple[...]`, `None`, or one of those or None;
- a vLLM class with no `__call__` in its MRO whose every base is read (a `torch.nn.Module` is callable, a base
  from outside vLLM keeps it unknown).
`Callable[...]`, `type[...]`, `Any`, a type variable, a union with anything else, or no annotation say nothing. A
member the client itself stores on such objects may be its own callable, and says nothing either.
No fix: dropping the parentheses is right only when the property returns what the method did.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.source_diffs import changed_files
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.facts import value_type_without
from driftcheck.vllm_model.resolved import Resolved

RULE = Rule("DC116", "not-callable", "Client calls a vLLM member the target makes a property or a plain value",
            "error", kind="behaviour", raises=("TypeError",))

def _member_annotation(resolved: Resolved) -> tuple[str, str] | None:
    """(what the member is, its annotation): a property's return annotation, a data member's annotation."""
    if resolved.func is not None:
        return ("a property", resolved.func.returns) if resolved.func.is_property and resolved.func.returns else None
    return ("a value", resolved.type_expr) if resolved.type_expr and "self." not in resolved.type_expr else None


def check(ctx: ScanContext):
    callees: dict[str, set[int]] = {}
    for a in ctx.usage.attrs:
        if a.store or not isinstance(a.result, Resolved) or a.result.kind != "attribute" or a.attr in ctx.usage.client_set_attrs:
            continue
        if a.file.rel not in callees:
            callees[a.file.rel] = {id(c.func) for c in nodes_of(a.file.tree, ast.Call)}
        if id(a.node) not in callees[a.file.rel]:
            continue
        member = _member_annotation(a.result)
        if member is None or a.result.path in changed_files(ctx.client.tree, ctx.api.tree):
            continue  # a diff the client ships for the member's vLLM file may make it a method again
        what, expr = member
        type_name = value_type_without(ctx.api, a.result, expr, "__call__")
        if type_name is None:
            continue
        owner = a.owner.qualname.rsplit(".", 1)[-1]
        yield ctx.finding(
            RULE, f"`{owner}.{a.attr}` is {what} in {ctx.version_label()} (`{expr.strip(chr(39) + chr(34))}`), not a "
                  f"method: calling it calls the {'value it returns' if what == 'a property' else 'value'}, and this "
                  f"line raises TypeError: '{type_name}' object is not callable.",
            loc_of(a.file, a.node), ctx.location_of(a.result), f"{a.owner.qualname}.{a.attr}", when="call", fix=False)


SIGNATURES = (
    Signature("the client calls a vLLM member that is a property or a value in this vLLM, not a method.",
              "A method of a vLLM class became a property or a field (the client's `obj.name()` now calls what it "
              "returns); read it without the call, if it returns what the method did.",
              message=r"'(?:int|float|bool|str|bytes|list|dict|set|tuple)' object is not callable",
              exc_types=("TypeError",), code=r"\.\w+\(", priority=5),
)
