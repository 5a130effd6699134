"""DC115 unpack-count: the client unpacks a vLLM call's result into a number of names the target no longer returns.

Internal helpers that plugins call on vLLM's own classes return tuples whose length changes between releases:
`GPUModelRunner._prepare_inputs` returned six values in 0.11.0, two in 0.16.0 and three in 0.32.0; a platform
plugin's model runner that does `attn_metadata, logits_indices, spec_decode_metadata = self._prepare_inputs(out)`
(written for one of them) fails on the others with `ValueError: too many values to unpack (expected 3)` or
`not enough values to unpack (expected 3, got 2)`, on the first step, after the model has loaded.

The rule takes a plain unpacking assignment (`a, b, c = f(...)`, no starred name) of a call driftcheck resolves to a
vLLM function or method, and counts what the target's function returns by reading its body: every `return`
statement of the function itself must return a tuple display of one length M (no `*x` in it), there must be one
at least, and the function must be no generator; when the function is annotated with a fixed-length tuple, the
annotation must say M as well. It is an error when the client unpacks into another number of names. It says
nothing where the call may reach the client's own code instead (a replacement of the function, an override of
the method in a client subclass, a diff the client ships for the function's vLLM file), nor of a function whose returns are not all tuple displays of one length, nor of a call the target's signature
rejects (it raises TypeError before returning, which DC003/DC004/DC005 report).
No fix: which of the values the client needs is for its author to decide (the message gives the target's return
line).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.source_diffs import changed_files
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.callcheck import bound_calls, may_reach_the_client
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature

RULE = Rule("DC115", "unpack-count", "Client unpacks a vLLM call's result into a number of names the target does not return",
            "error", kind="behaviour", raises=("ValueError",))


def _own_returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return] | None:
    """The function's own `return` statements (not those of functions or lambdas defined in it); None for a
    generator."""
    out: list[ast.Return] = []
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, ast.Return):
            out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def returned_count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, ast.Return] | None:
    """(M, the first return) when every return of `fn` is a tuple display of M values (and its annotation, if it
    is a fixed-length `tuple[...]`, says M too); None otherwise."""
    returns = _own_returns(fn)
    if not returns:
        return None
    sizes = set()
    for r in returns:
        if not isinstance(r.value, ast.Tuple) or any(isinstance(e, ast.Starred) for e in r.value.elts):
            return None
        sizes.add(len(r.value.elts))
    if len(sizes) != 1:
        return None
    [count] = sizes
    said = _tuple_elements(ast.unparse(fn.returns)) if fn.returns is not None else None
    if said is False or (said and not any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in said)
                         and len(said) != count):
        return None  # the annotation and the body disagree (or it cannot be read): not certain
    return count, min(returns, key=lambda r: r.lineno)


def _tuple_elements(returns: str) -> list[ast.expr] | None | bool:
    """The elements of a `tuple[A, B, C]` return annotation (given as text, quoted or not); None for any other
    annotation, False for one that does not parse."""
    try:
        ann = ast.parse(returns.strip().strip("'\""), mode="eval").body
    except SyntaxError:
        return False
    if isinstance(ann, ast.Subscript) and ast.unparse(ann.value) in ("tuple", "Tuple", "typing.Tuple"):
        return ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    return None


def _annotated_count(returns: str | None) -> int | None:
    """The length a fixed-length `tuple[A, B, C]` return annotation says; None for any other."""
    said = _tuple_elements(returns) if returns else None
    if not said or any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in said):
        return None
    return len(said)


def _unpacked_calls(tree: ast.Module) -> dict[int, int]:
    """id(call) -> the number of names a plain unpacking assignment of it binds."""
    out: dict[int, int] = {}
    for node in nodes_of(tree, ast.Assign):
        if len(node.targets) != 1 or not isinstance(node.value, (ast.Call, ast.Await)):
            continue
        target = node.targets[0]
        value = node.value.value if isinstance(node.value, ast.Await) else node.value
        if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
            out[id(value)] = len(target.elts)
    return out


def _raises_before_returning(ctx: ScanContext) -> set[int]:
    """id(call node) of each call the target's signature certainly rejects (DC003/DC004/DC005 report it): it raises
    TypeError before the function returns anything, so no ValueError of the unpacking can follow. A rejection that a
    subclass's override, the other class of an `if`, a Protocol or a replacement may accept is not certain."""
    out: set[int] = set()
    for bc in bound_calls(ctx):
        if bc.fits_override or bc.otherwise_fits or bc.structural or bc.rebound or bc.rebound_unread:
            continue
        if any(p.kind in ("too-many-positional", "unknown-keyword", "missing-argument") for p in bc.problems):
            out.add(id(bc.use.node))
    return out


def check(ctx: ScanContext):
    by_file: dict[str, dict[int, int]] = {}
    rejected: set[int] | None = None
    for call in ctx.usage.calls:
        if call.kind not in ("function", "method") or call.target.func is None:
            continue
        file = call.file
        if file.rel not in by_file:
            by_file[file.rel] = _unpacked_calls(file.tree)
        names = by_file[file.rel].get(id(call.node))
        if names is None or may_reach_the_client(ctx, call) or \
                call.target.path in changed_files(ctx.client.tree, ctx.api.tree):
            continue  # a diff the client ships for this vLLM file may change what the function returns
        if _annotated_count(call.target.func.returns) == names:
            continue  # what the annotation says the client unpacks: no body to read (the body alone could only agree)
        fn = ctx.api.function_node(call.target)
        counted = returned_count(fn) if fn is not None else None
        if counted is None or counted[0] == names:
            continue
        if rejected is None:
            rejected = _raises_before_returning(ctx)
        if id(call.node) in rejected:
            continue  # the call raises TypeError first (reported by the call rules): the unpacking never runs
        count, first = counted
        what = call.target.qualname.rsplit(".", 2)
        shown = ".".join(what[-2:]) if call.kind == "method" else what[-1]
        error = f"too many values to unpack (expected {names})" if count > names else \
            f"not enough values to unpack (expected {names}, got {count})"
        yield ctx.finding(
            RULE, f"the client unpacks `{shown}()` into {names} names; in {ctx.version_label()} it returns {count} "
                  f"values (every return of its body is a tuple of {count}): ValueError: {error}.",
            loc_of(file, call.node), ctx.vllm_location(call.target.path, first.lineno), call.target.qualname,
            when="call", fix=False, returned=count, unpacked=names)


SIGNATURES = (
    Signature("the client unpacks a vLLM call's result into a number of names the call no longer returns.",
              "A vLLM internal returns a tuple of another length in this release (`GPUModelRunner._prepare_inputs`: "
              "six values in 0.11.0, two in 0.16.0, three in 0.32.0); unpack what the target returns.",
              message=r"(?:too many|not enough) values to unpack \(expected \d+", exc_types=("ValueError",), priority=10),
)
