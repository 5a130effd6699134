"""DC003 unknown-keyword: a vLLM call passes a keyword the target's signature does not accept.

`get_kv_cache_config_from_groups(kv_cache_specs=...)` (the parameter was dropped in 0.12) or
`Request(eos_token_id=...)` (dropped later) raise `TypeError: ... got an unexpected keyword
argument` when the line runs. For vLLM's pydantic `@config` classes (extra="forbid", from 0.16.0)
the same mistake is a `ValidationError`; a pydantic dataclass that does not forbid extras (`@config` up to
0.15.1 only returns the class, and pydantic's default is extra="ignore") drops the value silently: a warning,
no fix. Constructors of dataclasses and `@config` classes are synthesised
from their fields, so this covers `SchedulerConfig(...)`, `CacheConfig(...)` and friends. The finding tells the
fix when the keyword's value is wanted elsewhere: the callee now reads a value of that name from a parameter the
call does not pass (`get_rope(base=)` on 0.20: `base = rope_parameters.get("rope_theta", 10000)`), the call also
lacks a required parameter, or the client defines its own function of that name taking the keyword.
"""

from __future__ import annotations

import ast
import difflib

from driftcheck.astnodes import dotted_name, functions_at, nodes_of
from driftcheck.client_model.client import kept_on
from driftcheck.rules.callcheck import baseline_signature, bound_calls, when_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Fact, Signature, called_name, confirm_param
from driftcheck.vllm_model.signatures import POS, POSONLY, VARARG, VARKW

RULE = Rule("DC003", "unknown-keyword", "Call passes a keyword the target vLLM does not accept", "error", fix="drop-keyword", raises=("TypeError",),
            baseline=True)  # a rename's types are checked against the client's own vLLM


def _sharing_a_word(keyword: str, names: list[str]) -> list[str]:
    """The names whose words (split at `_`) are all words of `keyword`, or hold all of its words: `uniform` for
    `uniform_decode`, `block_size_tokens` for `block_size`; not names that merely share a common word (`max_tokens`
    and `eos_token_id`)."""
    words = {w for w in keyword.lower().split("_") if w}
    out = []
    for n in names:
        theirs = {w for w in n.lower().split("_") if w}
        if theirs and words and (theirs <= words or words <= theirs):
            out.append(n)
    return out[:3]


def check(ctx: ScanContext):
    for bc in bound_calls(ctx):
        for problem in bc.problems:
            if problem.kind != "unknown-keyword":
                continue
            sig = bc.signature
            unpassed = _unpassed(sig, bc.use.shape)  # a parameter passed by position is no rename target (a duplicate)
            renamed = difflib.get_close_matches(problem.name, [n for n in sig.names() if n in unpassed], n=1, cutoff=0.75)
            # a parameter the call does not pass that shares a word with the keyword may be what it became
            # (`BatchDescriptor(uniform_decode=)` -> `uniform`, `skip_prefixes` -> `ignore_unexpected_prefixes`):
            # no rename is certain, and no drop either (batch 20h)
            near = [] if renamed else _sharing_a_word(problem.name, [n for n in sig.names() if n in unpassed])
            extra = ctx.api.unknown_keywords(bc.use.target) if bc.use.kind == "construct" else None
            if extra in (None, "forbid"):
                message = (
                    f"{bc.callee} got an unexpected keyword argument '{problem.name}' in {ctx.version_label()}: "
                    f"{'ValidationError (extra fields forbidden)' if extra else 'TypeError'} when this line runs. "
                    f"The signature is now {sig.render()}."
                )
                severity, fix = None, True
            else:
                # a pydantic dataclass that does not forbid extras: no error, but the value never reaches a field
                what = {"ignore": "its config does not forbid extra keywords, so pydantic silently drops the value",
                        "allow": "its config allows extra keywords, so the value is kept as an attribute no field declares",
                        "unknown": "driftcheck cannot read its pydantic config: unless it forbids extra keywords, "
                                   "pydantic drops the value without an error"}[extra]
                message = (f"{bc.callee} has no field '{problem.name}' in {ctx.version_label()}: {what}, and "
                           f"the setting has no effect. The fields are now {sig.render()}.")
                severity, fix = "warning", False
            spelled = bc.use.shape.splatted.get(problem.name)
            if spelled:  # not a keyword of the call itself: the codemod has nothing to edit there
                message += f" It is a key of the dict the call unpacks with `**` (line {spelled})."
                fix = False
            conflict = _rename_conflict(ctx, bc, problem.name, renamed[0]) if renamed else None
            if renamed:
                message += f" Renamed to '{renamed[0]}'?" + (f" Its type differs ({conflict})." if conflict else "")
            elif near:
                message += f" Perhaps it became {', '.join(repr(n) for n in near)}."
            moved = None if renamed else _moved_into(ctx.api, sig, problem.name, unpassed)
            yield bc.qualify(ctx.finding(
                RULE, message, bc.use.loc, ctx.vllm_location(sig.path, sig.line), f"{bc.use.target.qualname}({problem.name}=)",
                when=when_of(bc.use), severity=severity, fix=fix, keyword=problem.name,
                renamed_to=renamed[0] if renamed else None, rename_conflict=conflict, near=near or None, signature=sig.render(), pydantic_extra=extra,
                moved_into=moved, call_misses=[p.name for p in bc.problems if p.kind == "missing-argument"] or None,
                # pydantic's ValidationError is a ValueError: `except ValueError` / `pytest.raises(ValueError)` catch it
                raises=["ValidationError", "ValueError"] if extra == "forbid" else None,
                client_defines=_client_defines(ctx, bc.use.target.qualname.rsplit(".", 1)[-1], problem.name, bc.use.loc),
                value_asks=_value_asks(bc.use, problem.name),
                value_literal=_literal_type(next((k.value for k in bc.use.node.keywords if k.arg == problem.name), None)) is not None,
            ))


def _value_asks(use, keyword: str) -> str | None:
    """Where the value a keyword passes asks for something: the keyword's own literal (`use_beam_search=True`), or,
    for a name, an assignment in the function around the call (or the module) holding such a literal, or a mutation
    that adds to it (`.append`, `.extend`, `+=`). vllm-omni's `skip_prefixes = ["talker.", "token2wav."]` then
    `AutoWeightsLoader(self, skip_prefixes=skip_prefixes)` (batch 21a): dropping the keyword loads weights it meant to
    skip. None where nothing says so (`kv_cache_specs=spec`, a value some call made, `None`, `[]`)."""
    value = next((k.value for k in use.node.keywords if k.arg == keyword), None)
    if value is not None and _asks(value):
        return f"`{ast.unparse(value)[:80]}` (line {value.lineno})"
    if not isinstance(value, ast.Name):
        return None
    tree = use.file.tree
    scope = (functions_at(tree, use.node.lineno) or [tree])[-1]
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and any(
                isinstance(t, ast.Name) and t.id == value.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            if _asks(node.value):
                return f"`{ast.unparse(node)[:80]}` (line {node.lineno})"
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == value.id:
            return f"`{ast.unparse(node)[:80]}` (line {node.lineno})"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == value.id and node.func.attr in ("append", "extend", "update", "add", "insert"):
            return f"`{ast.unparse(node)[:80]}` (line {node.lineno})"
    return None


def _asks(value: ast.AST) -> bool:
    """A value written as a literal that requests something: True, a non-zero number, a non-empty string or collection
    display, either branch of a conditional (`["lm_head."] if tied else []`); not a value some call returns."""
    if isinstance(value, ast.Constant):
        return bool(value.value) and value.value is not Ellipsis
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        return _asks(value.operand)  # `-1`
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return bool(value.elts)
    if isinstance(value, ast.Dict):
        return bool(value.keys)
    if isinstance(value, ast.IfExp):
        return _asks(value.body) or _asks(value.orelse)
    if isinstance(value, ast.BoolOp):
        return any(_asks(v) for v in value.values)
    return False


def _rename_conflict(ctx: ScanContext, bc, keyword: str, new_name: str) -> str | None:
    """Why the close name `new_name` is not the keyword renamed: the client's own vLLM annotates the keyword with
    another type than the target annotates `new_name`, or the call passes a literal the new annotation does not take
    (vllm-ascend 0.11.0's `SchedulerOutput(structured_output_request_ids={})` at 0.33.0, whose close name is
    `has_structured_output_requests: bool`; batch 20h's Q2). A name alike is no proof; a type unlike is proof enough."""
    new = next((p.annotation for p in bc.signature.params if p.name == new_name), None)
    if not new:
        return None
    value = next((k.value for k in bc.use.node.keywords if k.arg == keyword), None)
    literal = _literal_type(value)
    if literal is not None and not _takes(new, literal):
        return f"a {literal} is passed, '{new_name}' takes {new}"
    baseline = ctx.baseline()
    old_sig = baseline_signature(baseline, bc.use) if baseline is not None and baseline.version != ctx.api.version else None
    old = next((p.annotation for p in old_sig.params if p.name == keyword), None) if old_sig is not None else None
    before, now = _union_members(old or ""), _union_members(new)
    builtin = set(_BUILTIN_TYPES)  # classes of a hierarchy driftcheck does not walk here are never "unlike"
    if before and now and before | now <= builtin and not (before - {"None"}) & (now - {"None"}):  # none in common
        return f"'{keyword}: {old}' in vLLM {baseline.version or 'the client was written for'}, '{new_name}: {new}' now"
    return None


_BUILTIN_TYPES = {"bool": bool, "int": int, "float": float, "complex": complex, "str": str, "bytes": bytes,
                  "list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "dict": dict, "None": type(None)}


def _literal_type(value: ast.expr | None) -> str | None:
    """The builtin type's name of a literal value (`{}`: dict), None for anything else."""
    if value is None:
        return None
    try:
        literal = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return next((name for name, kind in _BUILTIN_TYPES.items() if type(literal) is kind), None)


def _takes(annotation: str, literal: str) -> bool:
    """Whether an annotation made of builtin types (`bool`, `dict[str, int] | None`, `Optional[list[int]]`) takes a
    literal of that type (an int is a float, a bool an int, as type checkers read them); True for any annotation
    naming something else, which driftcheck does not judge."""
    members = _union_members(annotation)
    if members is None or not members <= set(_BUILTIN_TYPES):
        return True
    accepted = {literal, *({"bool": ["int", "float", "complex"], "int": ["float", "complex"], "float": ["complex"]}
                           .get(literal, []))}
    return bool(members & accepted)


def _union_members(annotation: str) -> set[str] | None:
    """The outer types an annotation allows, by their last name (`Optional[dict[str, int]]`: dict and None,
    `"torch.Tensor"`: Tensor, `typing.List[int]`: list); None where it has another form."""
    try:
        node = ast.parse(annotation.strip(), mode="eval").body
    except SyntaxError:
        return None
    out: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        head = n.value if isinstance(n, ast.Subscript) else n
        name = dotted_name(head) if isinstance(head, (ast.Name, ast.Attribute)) else None
        last = _TYPING_ALIASES.get(name.rsplit(".", 1)[-1], name.rsplit(".", 1)[-1]) if name else None
        if isinstance(n, ast.Constant) and isinstance(n.value, str):  # a forward reference
            try:
                todo.append(ast.parse(n.value.strip(), mode="eval").body)
            except SyntaxError:
                return None
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            todo += [n.left, n.right]
        elif isinstance(n, ast.Subscript) and last in ("Optional", "Union"):
            todo += list(n.slice.elts) if isinstance(n.slice, ast.Tuple) else [n.slice]
            out |= {"None"} if last == "Optional" else set()
        elif last is not None:
            out.add(last)
        elif isinstance(n, ast.Constant) and n.value is None:
            out.add("None")
        else:
            return None
    return out


# typing's capitalised aliases of builtin types: `List[int]` and `list[int]` are one type
_TYPING_ALIASES = {"List": "list", "Dict": "dict", "Set": "set", "FrozenSet": "frozenset", "Tuple": "tuple",
                   "Type": "type"}


def _client_defines(ctx: ScanContext, name: str, keyword: str, call) -> str | None:
    """Where the client defines a function of the callee's name that takes the keyword (file:line): a copy of vLLM's
    module the client mounts or patches in (genesis' PR overlay ships `block_pool.py` whose `cache_full_blocks` takes
    `block_mask`). The call may reach that one; then the keyword is not the target's to drop. The function the call
    is in does not count: vllm-ascend's `capture(..., lora_capture_hook=None)` override calls `super().capture(...,
    lora_capture_hook=...)`, which is vLLM's."""
    if name in ("__init__", "__call__") or not name.isidentifier():
        return None
    # the vLLM-importing files' functions by name, made once per client (a finding in each of thousands of calls read
    # every file's text once per finding: batch 22c's P12), then the other files that define one of this name
    table = kept_on(ctx.client, "_functions_by_name", ctx.client.files, lambda: _functions_by_name(ctx.client.files))
    memo = ctx.client.__dict__.setdefault("_other_functions_named", {})  # outside the dataclass fields, as kept_on
    if name not in memo:
        memo[name] = _functions_by_name(ctx.client.other_files(containing=f"def {name}(")).get(name, [])
    others = memo[name]
    for rel, node in [*table.get(name, []), *others]:
        if not (rel == call.path and node.lineno <= call.line <= (node.end_lineno or node.lineno)):
            args = node.args
            if any(a.arg == keyword for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)):
                return f"{rel}:{node.lineno}"
    return None


def _functions_by_name(files) -> dict[str, list]:
    """name -> [(file, def node)] over the files, in their order."""
    out: dict[str, list] = {}
    for file in files:
        for node in nodes_of(file.tree, ast.FunctionDef, ast.AsyncFunctionDef):
            out.setdefault(node.name, []).append((file.rel, node))
    return out


def _unpassed(sig, shape) -> set[str]:
    """The target's parameters this call does not pass (by keyword or by position)."""
    named = [p for p in sig.params if p.kind not in (VARARG, VARKW)]
    by_position = {p.name for p in [p for p in named if p.kind in (POSONLY, POS)][:shape.n_positional]}
    return {p.name for p in named} - set(shape.keywords) - by_position


def _moved_into(api, sig, keyword: str, unpassed: set[str]) -> dict | None:
    """Where the target's callee now computes a value named like the rejected keyword from a parameter this call does
    not pass: get_rope's `base = rope_parameters.get("rope_theta", 10000)` says `base=` went into `rope_parameters`.
    Dropping the keyword would then run the call with the target's default instead of the client's value."""
    if sig.origin != "def" or not sig.path or not unpassed:
        return None
    tree = api.parse(sig.path)
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno == sig.line),
              None) if tree is not None else None
    if fn is None:
        return None
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if not any(isinstance(t, ast.Name) and t.id == keyword
                   or isinstance(t, ast.Attribute) and t.attr == keyword and isinstance(t.value, ast.Name) and t.value.id == "self"
                   for t in targets):
            continue
        read = [n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in unpassed]
        if read:
            return {"parameter": read[0], "line": node.lineno, "code": ast.unparse(node)[:120]}
    return None


# ------------------------------------------------------------------------------------- traceback signatures
# `LLM.generate() got ...`: the whole qualified name (a method's class says which `generate`), `Request.__init__()`: the class
UNEXPECTED_KW = r"([\w.]+?)(?:\.__init__)?\(\) got an unexpected keyword argument '(\w+)'"

SIGNATURES = (
    Signature("{0}() no longer accepts '{1}' in this vLLM (parameter removed or renamed).",
              "A vLLM function dropped or renamed a parameter.",
              message=UNEXPECTED_KW, priority=60,
              confirm=lambda api, tb, m: confirm_param(api, called_name(tb, m.group(1)), m.group(2), absent=True),
              facts=(Fact("get_kv_cache_config_from_groups() lost kv_cache_specs= in vLLM 0.12.", when=r"'kv_cache_specs'"),
                     Fact("Request() lost eos_token_id= after vLLM 0.16.", when=r"'eos_token_id'"))),
)
