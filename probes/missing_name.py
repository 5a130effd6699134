"""DC002 missing-name: `from vllm.x import Name` (or `vllm.x.Name`) where the module no longer has it.

The module exists but the name is gone: removed, renamed, or moved to another module. The import
fails with `ImportError: cannot import name ...` at import time (or when the enclosing function
runs). driftcheck follows re-exports, `__all__`, star imports and module `__getattr__` maps before
concluding; when the same name is defined elsewhere in the target, the finding says where, and
the `move-import` fix rewrites the import. A home whose dotted name shares no part with the old module's, tied to it
by nothing but the name (no vLLM of the client's own to compare the objects with, no call of the file that its
function takes), is named as a hint and never moved to: a same-named class there is often another thing (26l's
`Tool`).
"""

from __future__ import annotations

import ast

from driftcheck.client_model.module_stand_ins import stood_in_for, through_stand_in
from driftcheck.client_model.overlay import copy_may_define
from driftcheck.client_model.source_diffs import diff_creates_module, diff_may_define
from driftcheck.client_model.uses import Loc, call_shape
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.receivers import files_calling_name
from driftcheck.vllm_model.signatures import check_call
from driftcheck.vllm_model.resolved import Missing, Resolved, Unknown
from driftcheck.vllm_model.same_named import same_named_modules
from driftcheck.vllm_model.same_object import unlike
from driftcheck.rules.context import ScanContext, once_per_client
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature

RULE = Rule("DC002", "missing-name", "Imported vLLM name does not exist in the target module", "error", fix="move-import",
            raises=("ImportError", "AttributeError"), baseline=True)  # a new home is checked against the old object


def _moved_to(ctx: ScanContext, name: str, module: str) -> list[str]:
    from driftcheck.vllm_model.bodies import text_index_for

    return text_index_for(ctx.api).defining_modules(name, near=module, leader=True)[:3]


def _calls_through(ctx: ScanContext, imp) -> tuple[list, int]:
    """The calls the importing file makes of what the import binds (`f(...)` through its local name), and the line of
    the first: none when the file binds that name in any other way too (a `def`, an assignment, another import), so
    what a call reaches is not certainly the imported function."""
    file = ctx.usage.file_at(imp.loc.path)
    if file is None or file.tree is None:
        return [], 0
    local = next((alias.asname or alias.name for node in ast.walk(file.tree) if isinstance(node, ast.ImportFrom)
                  and node.lineno <= imp.loc.line <= (node.end_lineno or node.lineno)
                  for alias in node.names if alias.name == imp.name), None)
    if local is None:
        return [], 0
    bindings = 0
    calls = []
    for node in ast.walk(file.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == local:
            return [], 0
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bindings += sum(1 for a in node.names if (a.asname or a.name.split(".")[0]) == local)
        elif isinstance(node, (ast.Name)) and node.id == local and isinstance(node.ctx, (ast.Store, ast.Del)):
            return [], 0
        elif isinstance(node, ast.arg) and node.arg == local:
            return [], 0
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == local:
            calls.append(node)
    if bindings != 1:
        return [], 0
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return [call_shape(c) for c in calls], (calls[0].lineno if calls else 0)


def _homes_taking_the_calls(ctx: ScanContext, imp, moved: list[str]) -> tuple[list[str], str | None]:
    """`moved` less the modules whose function of that name rejects every call the importing file makes of it: a
    same-named `def` that takes other arguments is another function, no new home (0.20.2 dropped the custom-op wrapper
    `unified_attention(query, key, value, layer_name)` from `vllm.model_executor.layers.attention.attention`; the
    `unified_attention(q, k, v, out, cu_seqlens_q, ...)` of `vllm.v1.attention.ops.triton_unified_attention` is a
    Triton kernel's launcher). With why the first dropped one is not it, for the message. A candidate that is not a
    plain function, or whose decorator may reshape its arguments, and a file that never calls the name, keep the
    hint: only a call proves another function."""
    shapes, line = _calls_through(ctx, imp)
    if not shapes:
        return moved, None

    def another_function(module: str, found) -> str | None:
        if isinstance(found, Resolved) and found.kind == "value" and not _called_in_vllm(ctx, imp.name):
            built = f" = {found.type_expr}" if found.type_expr else ""
            return (f" `{module}` has a `{imp.name}` too, but as a value (`{imp.name}{built}`, line {found.line}) that "
                    f"vLLM's own code never calls, while this file calls the name (line {line}): no new home is named.")
        if not isinstance(found, Resolved) or found.kind != "function" or found.func is None \
                or found.func.decorators or any(not check_call(found.func.signature, s) for s in shapes):
            return None
        params = [prm.name for prm in found.func.signature.params]
        shown = ", ".join(params[:5]) + (", ..." if len(params) > 5 else "")
        return (f" `{module}` defines a `{imp.name}({shown})` too, but that is another function: it rejects how "
                f"this file calls the name (line {line}), so no new home is named.")
    return _homes_without(ctx, imp.name, moved, another_function)


def _called_in_vllm(ctx: ScanContext, name: str) -> bool:
    """Whether some target file calls `name(...)`: a module-level value vLLM calls is a callable (a `lru_cache(...)` or
    lazy-import wrapper), one it never calls may be a flag (0.8.5's `is_hip = current_platform.is_rocm()` in the MLA
    backend, where `vllm.utils.is_hip()` was a function: batch 22a's R1)."""
    return next(files_calling_name(text_index_for(ctx.api), name), None) is not None


def _homes_without(ctx: ScanContext, name: str, moved: list[str], not_it) -> tuple[list[str], str | None]:
    """`moved` less the modules whose object `name` `not_it(module, object)` says is not the one imported (its reason,
    a sentence, or None), with the first reason."""
    kept: list[str] = []
    why = None
    for module in moved:
        mod = ctx.api.module(module)
        reason = not_it(module, ctx.api.module_member(mod, name) if mod is not None else None)
        if reason is None:
            kept.append(module)
        elif why is None:
            why = reason
    return kept, why


def _far_and_unchecked(ctx: ScanContext, old: str, new: str) -> bool:
    """A new home whose dotted name shares no part with the old module's (but `vllm`, `v1`), without a vLLM of the
    client's own to compare the two objects: a name found there may be another thing (26l: `Tool` from the tool-parser
    module sent to Harmony's `vllm.entrypoints.tool`; 26b: a KV-offload `Backend` sent to a GPU-architecture enum)."""
    baseline = ctx.baseline()
    if baseline is not None and baseline.version != ctx.api.version:
        return False  # `_homes_like_the_old` compared them
    common = {"vllm", "v1"}  # the package, and the prefix vLLM's V1 rewrite put before old homes' names
    return not (set(old.split(".")) - common) & (set(new.split(".")) - common)


def _calls_fit(ctx: ScanContext, imp, home: str) -> bool:
    """The file calls the name and the home's plain function takes every call: evidence beyond the name (TG1)."""
    shapes, _line = _calls_through(ctx, imp)
    mod = ctx.api.module(home)
    found = ctx.api.module_member(mod, imp.name) if mod is not None and shapes else None
    return isinstance(found, Resolved) and found.kind == "function" and found.func is not None \
        and not found.func.decorators and all(not check_call(found.func.signature, s) for s in shapes)


def _homes_like_the_old(ctx: ScanContext, imp, moved: list[str]) -> tuple[list[str], str | None]:
    """`moved` less the modules whose object of that name is another thing than the one the client's own vLLM had:
    another kind (0.16.0's `ProcessorInputs`, a type alias of the engine's inputs, against 0.33.0's dataclass of
    processor arguments in `vllm.multimodal.processing.inputs`), or a class that has none of the old class's own members
    (batch 21a: move-import pointed three clients' annotations at the unrelated class). Without the client's vLLM,
    `moved` as it is. With why the first dropped one is not it, for the message."""
    baseline = ctx.baseline()
    if baseline is None or baseline.version == ctx.api.version:
        return moved, None
    old_mod = baseline.module(imp.module)
    old = baseline.module_member(old_mod, imp.name) if old_mod is not None else None
    if not isinstance(old, Resolved):
        return moved, None

    def another_object(module: str, found) -> str | None:
        why = unlike(old, found, baseline.version) if isinstance(found, Resolved) else None
        return f" `{module}` defines a `{imp.name}` too, but another one ({why}), so no new home is named." \
            if why else None
    return _homes_without(ctx, imp.name, moved, another_object)


def _submodule_elsewhere(ctx: ScanContext, mod, module: str, name: str) -> str | None:
    """`from vllm.entrypoints.openai import cli_args` where that package no longer has the submodule: the closest
    module of that name elsewhere (0.32.0: `vllm.entrypoints.launchers.cli_args`), as DC001 names a moved module. A
    hint only, with no fix: what the client reads from the module may not be in the new one."""
    if not mod.is_package:
        return None
    found = same_named_modules(ctx.api, f"{module}.{name}")
    return found[0] if found else None


def _other_copy_defines(ctx: ScanContext, module: str, name: str) -> bool:
    """The client ships its own, different copy of this vLLM module (installed into vLLM's folder: overlay.py), and
    that copy may define the name: whether it is there depends on which copy was installed last."""
    shadow = ctx.usage.shadowed.get(module)
    return shadow is not None and copy_may_define(ctx.client, shadow[0], module, name)


def _other_copy(ctx: ScanContext, symbol: str) -> str:
    module = symbol.rsplit(".", 1)[0]
    if module in ctx.usage.redirected:
        copy, where = ctx.usage.redirected[module]
        return (f"cannot tell whether `{symbol}` exists: {ctx.version_label()} does not define it, but the client's import "
                f"hook ({where}) maps that module to its own `{copy}`, which may; whether an import runs after the hook "
                "is installed cannot be known")
    if module in ctx.usage.drop_ins:
        copy, where = ctx.usage.drop_ins[module]
        return (f"cannot tell whether `{symbol}` exists: {ctx.version_label()} does not define it, but the client's "
                f"`{copy}` is a copy of that module, which may, in a folder of copies of `{module.rpartition('.')[0]}`'s "
                f"files that import each other by vLLM's names ({where}); whether they are copied into vLLM's package "
                "cannot be known")
    if module in ctx.usage.mounted:
        copy, where = ctx.usage.mounted[module]
        return (f"cannot tell whether `{symbol}` exists: {ctx.version_label()} does not define it, but the client copies "
                f"or mounts its own `{copy}` over that module's file ({where}), which may; whether that ran first "
                "cannot be known")
    return (f"cannot tell whether `{symbol}` exists: {ctx.version_label()} does not define it, but the client ships its "
            f"own copy of `{module}` ({ctx.usage.shadowed[module][0]}), which may, and which of the two is installed "
            "depends on the order they were installed in")


def _patch_adds(ctx: ScanContext, mod, name: str) -> str | None:
    """The client ships a diff for vLLM's source that applies to this release and adds `name` to the module, or creates
    it as a submodule of the package (source_diffs.py, MA1), or a script that rewrites the module's file and defines
    `name` in its text (text_patchers.py): the name exists where that ran, which driftcheck cannot know."""
    if mod is None:
        return None
    if mod.is_package:  # `from vllm.x.utils import new_module`: a submodule the diff creates
        diff = diff_creates_module(ctx.client.tree, ctx.api.tree, f"{mod.name}.{name}")
        if diff is not None:
            return (f"{ctx.version_label()} has no such submodule, but the client ships a patch for vLLM's own source "
                    f"({diff}) that creates it and applies to this release; whether it was applied cannot be known")
    diff = diff_may_define(ctx.client.tree, ctx.api.tree, mod.path, name)
    if diff is None:
        script = ctx.usage.rewritten.get(mod.path)
        if script is not None and name in script[1]:  # text_patchers.py (batch 19a, F3)
            return (f"{ctx.version_label()} does not define it, but the client's script ({script[0]}) rewrites "
                    f"{mod.path} and its text defines `{name}`; whether it ran, and found what it looks for in this "
                    "release, cannot be known")
        return None
    return (f"{ctx.version_label()} does not define it, but the client ships a patch for vLLM's own source ({diff}) "
            f"that adds it to {mod.path} and applies to this release; whether it was applied cannot be known")




def check(ctx: ScanContext):
    for imp in ctx.usage.imports:
        if imp.unreached:
            continue  # a fallback that runs only when the try body's import fails, which it does not here
        if imp.name is None or imp.name == "*" or imp.type_only:
            continue
        mod = ctx.api.module(imp.module)
        if mod is None:
            continue  # DC001 reports the module
        result = ctx.api.module_member(mod, imp.name)
        symbol = f"{imp.module}.{imp.name}"
        if isinstance(result, Unknown):
            yield ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {result.reason}", imp.loc, symbol)
            continue
        if isinstance(result, Resolved) and result.type_only:
            # bound only under `if TYPE_CHECKING:` there: a runtime import of it fails all the same
            real = result.qualname if result.kind == "module" else result.qualname.rsplit(".", 1)[0]
            binding = mod.bindings.get(imp.name)
            message = (f"`{imp.name}` is only imported under `if TYPE_CHECKING:` in `{imp.module}` in {ctx.version_label()}: "
                       f"ImportError{' when this function runs.' if imp.runtime_only else ' at import time.'}"
                       f" It is defined in `{real}`.")
            yield ctx.finding(
                RULE, message, imp.loc, ctx.vllm_location(mod.path, binding.line if binding else 1), symbol,
                when="call" if imp.runtime_only else "import", severity="warning" if imp.guarded else None,
                moved_to=real, raises=["ImportError"],
            )
            continue
        if not isinstance(result, Missing):
            continue
        if _other_copy_defines(ctx, imp.module, imp.name):
            yield ctx.unknown(RULE, _other_copy(ctx, symbol), imp.loc, symbol)
            continue
        patched_in = _patch_adds(ctx, mod, imp.name)
        if patched_in:
            yield ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {patched_in}", imp.loc, symbol)
            continue
        installed = ctx.usage.installed.get(symbol) if mod.is_package else None
        if installed is not None:  # a submodule the client's setup copies in (launcher_copies.py, FB3)
            yield ctx.finding(
                RULE, f"`{imp.name}` is not in `{imp.module}` in {ctx.version_label()}, but the client's setup copies a "
                f"file to that submodule's path in the installed vLLM folder ({installed}), from a source driftcheck "
                "does not read: it exists where that step ran. If it did not, ImportError "
                + ("when this function runs." if imp.runtime_only else "at import time.") + imp.guard_note(),
                imp.loc, ctx.vllm_location(mod.path, 1), symbol, when="call" if imp.runtime_only else "import",
                severity="warning", fix=False, raises=["ImportError"])
            continue
        if (imp.module, imp.name) in ctx.usage.patched:
            if imp.runtime_only:
                continue  # the client sets it on the module (`parallel_state._SP = ...`) before such code runs
            yield ctx.finding(
                RULE, f"`{imp.name}` is not defined in `{imp.module}` in {ctx.version_label()}; the client sets it on that "
                "module itself, so this import-time import works only if that assignment ran first." + imp.guard_note(),
                imp.loc, ctx.vllm_location(mod.path, 1), symbol, when="import", severity="warning", fix=False)
            continue
        moved, other_function = _homes_taking_the_calls(ctx, imp, _moved_to(ctx, imp.name, imp.module))
        if moved and not other_function:
            moved, other_function = _homes_like_the_old(ctx, imp, moved)
        message = f"`{imp.name}` is not defined in `{imp.module}` in {ctx.version_label()}: ImportError"
        message += " when this function runs." if imp.runtime_only else " at import time."
        submodule = None if moved or other_function else _submodule_elsewhere(ctx, mod, imp.module, imp.name)
        unsure = bool(moved) and _far_and_unchecked(ctx, imp.module, moved[0]) and not _calls_fit(ctx, imp, moved[0])
        if moved:
            message += f" It is defined in `{moved[0]}` now."
        if unsure:
            message += (" That module is far from the old one and nothing but the name ties the two (no vLLM of the "
                        "client's own to compare with: `--client-vllm`), so the import is not moved: check it is the "
                        "same object.")
        elif other_function:
            message += other_function
        elif submodule:
            message += f" A module of that name is at `{submodule}`; check it has what the client uses from it."
        elif result.near:
            message += f" Similar names there: {', '.join(result.near)}."
        message += imp.guard_note()  # said as DC001 says it: a warning says why it is one (NA3)
        yield ctx.finding(
            RULE, message, imp.loc, ctx.vllm_location(mod.path, 1), symbol,
            when="call" if imp.runtime_only else "import", severity="warning" if imp.guarded else None,
            fix=bool(moved) and not unsure, moved_to=moved[0] if moved else None, move_unchecked=unsure or None,
            similar=result.near or None,
            fails=True if imp.guarded else None,  # a warning only for its try: its except fallback runs (guards.guard_at)
            raises=["ImportError"],  # an `except AttributeError` around the import does not handle it (MA)
        )
    unknown_seen: set[str] = set()
    for use in ctx.usage.module_attrs:
        if isinstance(use.result, Unknown):
            symbol = f"{use.module}.{use.attr}"
            if symbol not in unknown_seen:
                unknown_seen.add(symbol)
                yield once_per_client(ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {use.result.reason}", use.loc, symbol))
            continue
        if isinstance(use.result, Missing):
            symbol = f"{use.module}.{use.attr}"
            if _other_copy_defines(ctx, use.module, use.attr):
                yield ctx.unknown(RULE, _other_copy(ctx, symbol), use.loc, symbol)
                continue
            mod = ctx.api.module(use.module)
            if mod is None and use.result.path:  # a member of a value of a builtin type (inference.BuiltinValue)
                if use.attr.startswith("["):
                    continue  # a str key on a sequence: TypeError, DC113's
                value = _builtin_value_finding(ctx, use, symbol)
                if value is not None:
                    yield value
                continue
            patched_in = _patch_adds(ctx, mod, use.attr)
            if patched_in:
                yield ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {patched_in}", use.loc, symbol)
                continue
            # a module-level line (`vllm.x.y.f = mine` in a patch file) runs when its module is imported
            when = " when this line runs." if use.runtime_only else " at import time."
            yield ctx.finding(
                RULE, f"`{symbol}` does not exist in {ctx.version_label()}: AttributeError{when}",
                use.loc, ctx.vllm_location(mod.path, 1) if mod else None, symbol,
                when="call" if use.runtime_only else "import", fix=False, raises=["AttributeError"],
            )


    yield from _check_patch_paths(ctx)


def _builtin_value_finding(ctx: ScanContext, use, symbol: str):
    """`QUANTIZATION_METHODS.keys()` where the release binds the name to a list literal or `list(...)` (29c M1): the
    member is not the builtin type's. Nothing where another vLLM file sets the name on its module (`q.NAME = ...`):
    what it holds then depends on whether that ran."""
    name = use.module.rpartition(".")[2]
    if text_index_for(ctx.api).set_on_module_elsewhere(name, use.result.path):
        return None
    kind = use.result.reason  # "a `list`"
    near = f" Similar: {', '.join(use.result.near)}." if use.result.near else ""
    return ctx.finding(
        RULE, f"`{name}` is {kind} in {ctx.version_label()} ({use.result.path}:{use.result.line}), which has no "
        f"attribute '{use.attr}': AttributeError when this line runs.{near}",
        use.loc, ctx.vllm_location(use.result.path, use.result.line), symbol, when="call" if use.runtime_only else "import",
        fix=False, raises=["AttributeError"])


def _check_patch_paths(ctx: ScanContext):
    """A patch that names a vLLM name the release lacks by a string (`mock.patch("vllm.x.f")`, wrapt's
    `wrap_function_wrapper("vllm.engine.metrics", "StatLogger.__init__", w)`, `client_model/patch_paths.py`): it
    raises AttributeError when it starts. A mock path that goes on past the missing name is DC001's (mock imports it
    as a module)."""
    api = ctx.api
    files = {file.rel: file for file in ctx.usage.files}
    for pp in ctx.usage.patch_paths:  # the visit's records (`client_model/patch_paths.py`)
        file = files.get(pp.rel)
        if file is None or through_stand_in(pp.path, stood_in_for(ctx, file)):
            continue  # resolved through the client's stand-in in `sys.modules` (28e F1)
        parts = pp.path.split(".")
        if not all(p.isidentifier() for p in parts):
            continue
        if pp.module is not None:
            known = len(pp.module.split("."))
            if api.module_path(pp.module) is None:
                continue  # a module the release lacks: the import fails first (not a name)
        else:
            known = 1
            while known < len(parts) and api.module_path(".".join(parts[:known + 1])) is not None:
                known += 1
        rest = parts[known:]
        mod = api.module(".".join(parts[:known])) if rest else None
        if mod is None:
            continue
        result = api.module_member(mod, rest[0])
        symbol = f"{mod.name}.{rest[0]}"
        if isinstance(result, Missing) and pp.module is None and len(rest) > 1:
            continue  # mock imports `vllm.x.Gone` as a module: DC001 reports it
        if isinstance(result, Resolved) and result.kind == "class" and len(rest) > 1:
            member = api.class_member(result, rest[1])
            if not isinstance(member, Missing):
                continue
            symbol, result = f"{symbol}.{rest[1]}", member
        if isinstance(result, Unknown):
            yield ctx.unknown(RULE, f"cannot tell whether `{symbol}` exists: {result.reason}", _loc(file, pp.node), symbol)
        elif isinstance(result, Missing):
            yield ctx.finding(
                RULE, f"`{symbol}` does not exist in {ctx.version_label()}: the patch of "
                f"`{pp.path}` looks it up when it starts and raises AttributeError.",
                _loc(file, pp.node), ctx.vllm_location(mod.path, 1), symbol, when="call", fix=False,
                raises=["AttributeError"])


def _loc(file, node: ast.AST) -> Loc:
    line = file.lines[node.lineno - 1] if node.lineno <= len(file.lines) else ""
    return Loc(file.rel, node.lineno, node.col_offset + 1, line.strip(), node.end_lineno or node.lineno,
               (node.end_col_offset or 0) + 1)


# ------------------------------------------------------------------------------------- traceback signatures
def _confirm_cannot_import(api, _tb, m):
    r = api.resolve(f"{m.group(2)}.{m.group(1)}")
    return isinstance(r, Missing), f"{m.group(2)}.{m.group(1)}: {type(r).__name__}"


SIGNATURES = (
    Signature("{1} no longer defines {0} (renamed, moved or removed).", "A vLLM name moved or was removed.",
              message=r"cannot import name '(\w+)' from '(vllm[\w.]*)'", confirm=_confirm_cannot_import, priority=10),
)
