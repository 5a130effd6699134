"""DC118 await-drift: the client awaits a vLLM method the target made synchronous, or drops the coroutine of one it
made `async`.

vLLM moves methods between `def` and `async def`: `AsyncLLM.get_tokenizer` was a coroutine until 0.14.0 and is a
plain method returning the tokenizer from 0.15.0; `OpenAIServing._normalize_prompt_text_to_input` went the other way
in 0.10.0. The name, the signature and the class stay, so no import or signature check sees it:
- `tokenizer = await engine.get_tokenizer()` raises `TypeError: object ... can't be used in 'await' expression` on
  0.15.0 and later (so does handing the result to `asyncio.run`, `create_task`, `ensure_future`, `gather`,
  `wait_for`, `shield` or `run_until_complete`, which want an awaitable);
- `serving._normalize_prompt_text_to_input(...)` left un-awaited makes a coroutine that never runs (an `async def`
  that yields is an async generator, for `async for`, and is left alone): as a statement
  the method's work silently does not happen (a warning); read as a value (`.attr`, `[i]`, a `for` loop) it fails at
  once (`'coroutine' object has no attribute ...`).

How driftcheck decides: the call resolves to a vLLM function or method (not one a client override or replacement may
stand for). An awaited call is an error when the target's function is a plain, undecorated `def` whose return
annotation names a value that cannot be awaited: `None`, a builtin value type, or a vLLM class with no `__await__`
in an MRO read whole (a vLLM Protocol that declares none counts only where the client's own vLLM had the function as
`async def`); `Awaitable`, `Future`, `Any`, a type variable or no annotation say nothing. An un-awaited call of an `async def` is reported only where the client's own vLLM had it as a plain `def`
(the drift), or where its value is read at once (a certain failure whatever the client's vLLM).
No fix: whether to drop the `await` (or add one, which makes the caller a coroutine) is the author's design.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.callcheck import may_reach_the_client
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.facts import STRUCTURAL_BASES, value_type_without
from driftcheck.vllm_model.resolved import Resolved

RULE = Rule("DC118", "await-drift", "Client awaits a vLLM method the target made synchronous, or drops one it made async",
            "error", kind="behaviour", raises=("TypeError", "AttributeError", "ValueError"), baseline=True)

_SCHEDULERS = {"run", "create_task", "ensure_future", "gather", "wait_for", "shield", "run_coroutine_threadsafe"}
_LOOP_METHODS = {"run_until_complete", "create_task"}  # an event loop's: each wants an awaitable too
_PASSIVE = {"staticmethod", "classmethod", "override", "typing.override", "typing_extensions.override"}


def _positions(tree: ast.Module) -> dict[int, str]:
    """id(call) -> how its value is used: "await", "scheduled", "statement" or "read" (an attribute, a subscript,
    a loop over it)."""
    out: dict[int, str] = {}
    for node in nodes_of(tree, ast.Await):
        out[id(node.value)] = "await"
    from_asyncio = {a.asname or a.name for node in nodes_of(tree, ast.ImportFrom) if node.module == "asyncio"
                    for a in node.names}
    for call in nodes_of(tree, ast.Call):
        if _schedules(dotted_name(call.func) or "", from_asyncio):
            for arg in call.args:
                out.setdefault(id(arg), "scheduled")
    for node in nodes_of(tree, ast.Expr):
        out.setdefault(id(node.value), "statement")
    for node in nodes_of(tree, ast.Attribute, ast.Subscript):
        out.setdefault(id(node.value), "read")
    for node in nodes_of(tree, ast.For, ast.comprehension):
        out.setdefault(id(node.iter), "read")
    return out


def _schedules(name: str, from_asyncio: set[str]) -> bool:
    """Whether a call of `name` hands its arguments to asyncio as awaitables: `asyncio.gather(...)`, a name the file
    imports from asyncio (`from asyncio import run`), or an event loop's `run_until_complete` / `create_task` (on a
    name with "loop" in it). A function of the client's own named `run` is not one."""
    head, _, last = name.rpartition(".")
    if not head:
        return last in from_asyncio and last in _SCHEDULERS
    if head == "asyncio":
        return last in _SCHEDULERS
    return last in _LOOP_METHODS and "loop" in head.rsplit(".", 1)[-1].lower()


def _baseline_async(ctx: ScanContext, qualname: str) -> bool | None:
    """Whether the client's own vLLM had the function as `async def`; None without a baseline or the function."""
    baseline = ctx.baseline()
    if baseline is None or baseline.version == ctx.api.version:
        return None
    old = baseline.resolve(qualname)
    if not (isinstance(old, Resolved) and old.func is not None) or old.func.async_generator:
        return None  # an async generator was never awaited either
    return old.func.is_async


def check(ctx: ScanContext):
    by_file: dict[str, dict[int, str]] = {}
    for call in ctx.usage.calls:
        target = call.target
        if call.kind not in ("function", "method") or not isinstance(target, Resolved) or target.func is None:
            continue
        if call.file.rel not in by_file:
            by_file[call.file.rel] = _positions(call.file.tree)
        how = by_file[call.file.rel].get(id(call.node))
        fn = target.func
        if how in ("await", "scheduled") and not fn.is_async:
            found = _awaited_sync(ctx, call, how)
        elif how in ("statement", "read") and fn.is_async and not fn.async_generator:
            found = _dropped_coroutine(ctx, call, how)
        else:
            continue
        if found is not None:
            yield found


def _shown(call) -> str:
    parts = call.target.qualname.rsplit(".", 2)
    return ".".join(parts[-2:]) if call.kind == "method" else parts[-1]


def _awaited_sync(ctx: ScanContext, call, how: str):
    fn = call.target.func
    if fn.is_property or any(d not in _PASSIVE for d in fn.decorators) or not fn.returns:
        return None  # a decorator may make it return an awaitable; no annotation says what it returns
    if may_reach_the_client(ctx, call):
        return None
    value = value_type_without(ctx.api, call.target, fn.returns, "__await__")
    was = _baseline_async(ctx, call.target.qualname)
    if value is None and was:
        # a Protocol (`TokenizerLike`) declares no `__await__`, and the client's vLLM had a coroutine here: the await
        # was written for that coroutine, and what conforms to the Protocol now (a tokenizer) is no awaitable
        value = value_type_without(ctx.api, call.target, fn.returns, "__await__", STRUCTURAL_BASES)
    if value is None:
        return None
    history = f" (it was `async def` in vLLM {ctx.baseline().version})" if was else ""
    failure = (f"TypeError: object {value} can't be used in 'await' expression" if how == "await" else
               f"the asyncio call it is handed to wants an awaitable and gets a {value} (TypeError or ValueError)")
    return ctx.finding(
        RULE, f"the client {'awaits' if how == 'await' else 'hands asyncio'} `{_shown(call)}()`, which "
              f"{ctx.version_label()} defines as a plain `def` returning "
              f"`{fn.returns.strip(chr(39) + chr(34))}`{history}: {failure} when this line runs. Use its result "
              f"without awaiting it.",
        loc_of(call.file, call.node), ctx.location_of(call.target), call.target.qualname, when="call", fix=False,
        awaited=how, present=call.target.qualname.rsplit(".", 1)[-1])


def _dropped_coroutine(ctx: ScanContext, call, how: str):
    if any(d not in _PASSIVE for d in call.target.func.decorators) or may_reach_the_client(ctx, call):
        return None  # a decorator may run the coroutine itself (a sync wrapper)
    was = _baseline_async(ctx, call.target.qualname)
    if how == "statement" and was is not False:
        return None  # no sign it ever ran without an await: a slip of the client's, not this release's drift
    history = f" (a plain `def` in vLLM {ctx.baseline().version})" if was is False else ""
    if how == "statement":
        return ctx.finding(
            RULE, f"`{_shown(call)}()` is `async def` in {ctx.version_label()}{history}: called without `await`, it "
                  f"only makes a coroutine, and its body never runs (Python warns that the coroutine was never "
                  f"awaited).", loc_of(call.file, call.node), ctx.location_of(call.target), call.target.qualname,
            when="silent", severity="warning", fix=False, awaited="never", present=call.target.qualname.rsplit(".", 1)[-1])
    return ctx.finding(
        RULE, f"`{_shown(call)}()` is `async def` in {ctx.version_label()}{history}: called without `await`, it "
              f"returns a coroutine, and reading its result fails when this line runs ('coroutine' object has no "
              f"such attribute, is not subscriptable or not iterable).",
        loc_of(call.file, call.node), ctx.location_of(call.target), call.target.qualname, when="call", fix=False,
        awaited="never", present=call.target.qualname.rsplit(".", 1)[-1])


SIGNATURES = (
    Signature("the client awaits a vLLM method that is a plain method in this vLLM.",
              "A vLLM coroutine became a plain method (`AsyncLLM.get_tokenizer` in 0.15.0): drop the `await`.",
              message=r"object \w+ can't be used in 'await' expression", exc_types=("TypeError",), code=r"\bawait\b",
              priority=10),
    Signature("the client reads the result of a vLLM method that is a coroutine in this vLLM.",
              "A vLLM method became `async def`: await it (from a coroutine) before using what it returns.",
              message=r"'coroutine' object (?:has no attribute|is not subscriptable|is not iterable)",
              exc_types=("AttributeError", "TypeError"), priority=40),  # before DC008's any missing attribute
)
