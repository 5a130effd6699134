"""DC122 post-init-arity: a client `__post_init__` on a vLLM dataclass no longer takes the InitVars vLLM declares.

A dataclass's generated `__init__` ends with `self.__post_init__(v1, v2, ...)`, one positional argument per `InitVar`
field of the whole class, in field order. A client subclass of a vLLM config dataclass that overrides `__post_init__`
therefore has to take exactly as many; when a release adds an `InitVar` to the base, every build of the client's class
fails: vllm-omni 0.14.0's `OmniModelConfig(ModelConfig).__post_init__(self, <12 InitVars>)` on vLLM 0.15.0, which
added `mm_encoder_only: InitVar[bool | None] = None` to `ModelConfig`: `TypeError: OmniModelConfig.__post_init__()
takes 13 positional arguments but 14 were given` (vllm-omni issue 1134; batch 21b's M3). Stdlib and pydantic
dataclasses call it the same way. No call of the method appears in any source: the caller is the generated code.

How driftcheck decides: for each top-level client class whose own body defines `__post_init__` and that derives,
through client classes, from one vLLM class whose constructor the target synthesises from dataclass fields, it counts
the `InitVar` fields of that class's dataclass MRO, plus those of the client's own dataclass-decorated classes in the
lineage, and compares the count with the positional parameters the override takes (after `self`, without `*args`).
A count outside what the override takes is reported:
- an error where the client's own vLLM (`--client-vllm`, or its declared requirement) fits the override (it ran
  there), or, without one, where the client builds the class itself (`Name(...)` in its files);
- a warning where neither is known (vLLM may build the class from a configured name);
- nothing where the client's own vLLM does not fit it either (the class was not built there as written), or where the
  class is a base of another client class that the client does not build.
No fix: which parameter is the new one, and what the override does with it, is the client's to write.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name
from driftcheck.client_model.imported_functions import imported_path
from driftcheck.client_model.client_classes import built_by_the_client, client_ancestry, client_class, vllm_bases_through
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.resolved import Resolved

RULE = Rule("DC122", "post-init-arity", "A client __post_init__ no longer takes the InitVars of its vLLM dataclass base",
            "error", kind="behaviour", raises=("TypeError",), baseline=True,
            whole_client=True)  # whether a class is built is read from every client file


def check(ctx: ScanContext):
    for file in ctx.usage.files:
        for node in file.tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            post_init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__post_init__"), None)
            if post_init is None:
                continue
            label = f"{file.module}.{node.name}"
            bases = vllm_bases_through(ctx.usage, ctx.api, [label])
            if len(bases) != 1:
                continue  # no vLLM base, or several whose fields would interleave: not counted
            base_fields = _fields(ctx.api, bases[0])
            fields = _with_client_fields(ctx, file, label, base_fields) if base_fields is not None else None
            if fields is None:
                continue
            count = sum(fields.values())
            if _takes(post_init, count):
                continue
            found = _finding(ctx, file, node, post_init, bases[0], fields, label)
            if found is not None:
                yield found


def _fields(api, cls: Resolved) -> dict[str, bool] | None:
    """The init fields of `cls`'s synthesised dataclass `__init__`, in field order, each with whether it is an
    `InitVar` (a subclass that declares a name again keeps its place and takes its new kind); None when `cls` is not
    built by a synthesised dataclass `__init__` (its own `__init__`, unread bases, no dataclass)."""
    sig = api.constructor(cls)
    if sig is None or sig.origin != "dataclass":
        return None
    order, _is_open, _externals = api.mro(cls)
    fields: dict[str, bool] = {}
    for c in reversed(order):
        if c.cls is not None and api.is_dataclass_like(c):
            for f in c.cls.fields:
                if not f.is_classvar:
                    fields[f.name] = f.is_initvar
    return fields


def _with_client_fields(ctx: ScanContext, file, label: str, fields: dict[str, bool]) -> dict[str, bool] | None:
    """`fields` with those the client's dataclasses of `label`'s lineage declare, from the top down (vllm-omni's
    `max_model_len: int | None` over `SchedulerConfig`'s `max_model_len: InitVar[int]` is a plain field: one InitVar
    fewer). None where a class of the lineage is not read, defines `__init__` itself, or has a decorator driftcheck
    cannot tell a dataclass maker from something that replaces `__init__`."""
    out = dict(fields)
    for key in reversed(client_ancestry(ctx.usage, [label])):
        found = client_class(ctx.client, key)
        if found is None:
            return None
        tree, node = found
        if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in ("__init__", "__new__")
                               for s in node.body):
            return None  # its own `__init__` is what runs, and calls `__post_init__` as it chooses
        kinds = [_decorator_kind(ctx, tree, d) for d in node.decorator_list]
        if None in kinds:
            return None
        if "dataclass" not in kinds:
            continue  # not a dataclass itself: its annotations make no fields
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                head = ast.unparse(stmt.annotation).split("[", 1)[0].rsplit(".", 1)[-1]
                if head != "ClassVar":
                    out[stmt.target.id] = head == "InitVar"
    return out


def _decorator_kind(ctx: ScanContext, tree: ast.Module, decorator: ast.expr) -> str | None:
    """"dataclass" for `@dataclass` / `@pydantic.dataclasses.dataclass(...)` / a vLLM decorator that makes one
    (`@config`), "plain" for one that leaves the class's construction as it is (`@final`, a registry's
    `@X.register(...)` of vLLM), None for anything else (the client's own decorator may replace `__init__`)."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = dotted_name(func) or ""
    if name.rsplit(".", 1)[-1] == "dataclass":
        return "dataclass"
    if name.rsplit(".", 1)[-1] in ("final", "total_ordering"):
        return "plain"
    path = imported_path(tree, name)
    target = ctx.api.resolve(path) if path else None
    if isinstance(target, Resolved) and target.func is not None:
        return "dataclass" if target.func.wraps_dataclass else \
            "plain" if _hands_back_its_argument(ctx.api, target) else None
    return None


def _hands_back_its_argument(api, fn: Resolved) -> bool:
    """A vLLM decorator whose body (its docstring aside) is `return <its first parameter>`: vLLM 0.15.0's `@config`."""
    node = api.function_node(fn)
    if node is None or not node.args.args:
        return False
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Name) \
        and body[0].value.id == node.args.args[0].arg


def _takes(fn: ast.FunctionDef, count: int) -> bool:
    """Whether `fn(self, *count positional values)` binds."""
    args = fn.args
    positional = len(args.posonlyargs) + len(args.args) - 1  # less `self`
    required = positional - len(args.defaults)
    missing_kw = any(d is None for d in args.kw_defaults)
    return not missing_kw and required <= count and (count <= positional or args.vararg is not None)


def _finding(ctx, file, node, post_init, base: Resolved, fields: dict[str, bool], label: str):
    positional = len(post_init.args.posonlyargs) + len(post_init.args.args) - 1
    initvars = [n for n, is_initvar in fields.items() if is_initvar]
    then = None
    baseline = ctx.baseline()
    if baseline is not None and baseline.version != ctx.api.version:
        old_base = baseline.resolve(base.qualname)
        old = _fields(baseline, old_base) if isinstance(old_base, Resolved) and old_base.kind == "class" else None
        old = _with_client_fields(ctx, file, label, old) if old is not None else None
        if old is not None:
            if not _takes(post_init, sum(old.values())):
                return None  # it did not fit the client's own vLLM either: not built there as written
            then = (baseline.version, [n for n, is_initvar in old.items() if is_initvar])
    built = built_by_the_client(ctx.client, file.module, node.name)
    severity = "error" if then is not None or built else "warning"
    added = [n for n in initvars if then is not None and n not in then[1]]
    change = (f" ({len(then[1])} in vLLM {then[0]}; new: {', '.join(added)})" if then is not None and added else
              f" ({len(then[1])} in vLLM {then[0]})" if then is not None else "")
    who = "" if then is not None or built else " (if vLLM builds the class from a configured name, there)"
    return ctx.finding(
        RULE, f"`{node.name}.__post_init__` takes {positional} argument(s) after `self`, but its InitVar fields in "
              f"{ctx.version_label()} (through `{base.qualname.rsplit('.', 1)[-1]}`) are {len(initvars)}{change}, "
              f"which the generated `__init__` passes to it positionally: TypeError when the class is built{who}. "
              f"Take them in field order: {', '.join(initvars) or 'none'}.",
        loc_of(file, post_init), ctx.vllm_location(base.path, base.line), f"{file.module}.{node.name}.__post_init__",
        severity=severity, when="call", fix=False, initvars=len(initvars), takes=positional,
    )


SIGNATURES = (
    Signature("`{0}.__post_init__` takes fewer (or more) positional arguments than the InitVar fields its vLLM dataclass "
              "base declares: the generated `__init__` passes every InitVar to it.",
              "vLLM added or removed an `InitVar` field of a config dataclass (0.15.0: `ModelConfig.mm_encoder_only`); "
              "take the InitVars in field order in the client's `__post_init__`.",
              message=r"(\w+)\.__post_init__\(\) (?:takes \d+ positional arguments? but \d+ (?:were|was) given|"
                      r"missing \d+ required positional arguments?)",
              exc_types=("TypeError",), priority=45),  # before DC004's "takes N positional arguments"
)
