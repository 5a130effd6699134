"""DC001 missing-module: the client imports a vLLM module that the target does not have.

vLLM moves modules between releases (`vllm.worker` -> `vllm.v1.worker`, `vllm.utils` split into
submodules). An `import` of a module that is gone fails with `ModuleNotFoundError` at import time
(or, for an import inside a function, when that function first runs). The finding names the
closest existing package in the target and, when a module of the same name exists elsewhere in
the target, where it went. Where the client spells the module's name as a string it may register the module itself (a
warning), unless every such string is only handed to a loader (`importlib.import_module`, `find_spec`, `__import__`,
directly or as a candidate of the loop that does): loading by name registers nothing (NB4). A module whose file a diff
the client ships for vLLM's source creates, where that diff applies to the release, is unknown: it exists where the
diff was applied (source_diffs.py; MA1, vLLM-Moet's fork diff). A module only a flat folder of the client's copies of a
vLLM package's files holds is unknown too (drop_ins.py; NH1). A dotted patch path (`mock.patch("vllm.a.b.C.m")`,
`monkeypatch.setattr("vllm.a.b.f", x)`) that runs through a module the target lacks fails the same way when the patch
starts: mock imports the path's modules (batch 19c, VLM-R1's `vllm.worker.worker.Worker...` at 0.33.0).
`importlib.import_module("vllm.x.y")` with the whole name as a constant is an import of that module (29e M1); no fix
rewrites a call.
"""

from __future__ import annotations

import ast
import itertools

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.client_model.source_diffs import diff_creates_module
from driftcheck.vllm_model.other_builds import built_elsewhere, imported_by_vllm
from driftcheck.client_model.client import is_test_path
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.resolved import External, Missing, Resolved
from driftcheck.client_model.module_stand_ins import stood_in_for, through_stand_in
from driftcheck.client_model.patch_paths import BY_PATH, PATCH_WORDS, patcher
from driftcheck.client_model.usage import client_provides
from driftcheck.client_model.uses import Loc
from driftcheck.vllm_model.same_named import own_objects, same_named_modules
from driftcheck.vllm_model.same_object import unlike

RULE = Rule("DC001", "missing-module", "Imported vLLM module does not exist in the target", "error", fix="move-import",
            raises=("ImportError", "ModuleNotFoundError"), baseline=True)  # a home of a gone module's name is checked
            # against the client's own vLLM's object (`_another_object`)


def _nearest_package(ctx: ScanContext, module: str) -> tuple[str, str]:
    parts = module.split(".")
    for i in range(len(parts) - 1, 0, -1):
        found = ctx.api.module_path(".".join(parts[:i]))
        if found:
            return ".".join(parts[:i]), found[0]
    return "", ""


def _has_names(ctx: ScanContext, module: str, names: frozenset[str]) -> bool:
    """Whether `module` certainly gives every one of `names` (defined, re-exported, a submodule): a suggestion the
    `move-import` fix acts on needs each found, not only not ruled out (a module that hands out `globals()`)."""
    mod = ctx.api.module(module)
    return mod is not None and all(isinstance(ctx.api.module_member(mod, name), (Resolved, External)) for name in names)


def _proves_home(ctx: ScanContext, module: str, names: frozenset[str], gone: str) -> bool:
    """Whether `module` has every one of `names` and one of them is not an object `module` made for itself: its own
    `logger = init_logger(__name__)` is another logger than the gone module's, and says nothing of where that went
    (NA1). An import that takes no name (`import M`, nothing read through it) keeps the module's name as its evidence."""
    return _has_names(ctx, module, names) and (not names or bool(names - own_objects(ctx.api, module, names, gone).keys()))


def _own_note(ctx: ScanContext, gone: str, names: frozenset[str]) -> str:
    """Why no home is named for names that every module defining them binds for itself (`logger =
    init_logger(__name__)` in each): empty when some name has a home or none is such an object (NA1)."""
    from driftcheck.vllm_model.bodies import text_index_for

    index = text_index_for(ctx.api)
    example = ""
    for name in sorted(names):
        if index.defining_modules(name, near=gone):
            return ""
        for rel, line, kind in index.top_level_definitions(name):
            own = index.own_object_at(rel, line) if kind == "assign" and rel.split("/")[0] == ctx.api.package else None
            if own is not None:
                example = example or f" (`{own[0]}`)"
                break
        else:
            return ""
    return (f" {', '.join(f'`{n}`' for n in sorted(names))} is each module's own object{example}: another module's is "
            "not the one this import took, so no module is named as where it went.") if example else ""


def _imported_names(ctx: ScanContext, module: str, rel: str, line: int) -> frozenset[str]:
    """The names the import statement at `rel:line` takes from `module`: its `from M import a, b` names, or, for
    `import M`, the names the file reads through M's dotted path (`M.a.b` -> `a`). Asked only of a missing module."""
    names = {imp.name for imp in ctx.usage.imports
             if imp.module == module and imp.loc.path == rel and imp.loc.line == line and imp.name and imp.name != "*"}
    return frozenset(names) if names else frozenset(_read_through(ctx, rel, module))


def _read_through(ctx: ScanContext, rel: str, module: str) -> set[str]:
    """The first names after `module` in the dotted paths the client file `rel` reads (`M.a.b = x`, `M.a(...)`)."""
    client_file = ctx.client.file_at(rel)
    if client_file is None:
        return set()
    prefix = module + "."
    out = set()
    for node in nodes_of(client_file.tree, ast.Attribute):
        dotted = dotted_name(node)
        if dotted and dotted.startswith(prefix):
            out.add(dotted[len(prefix):].split(".", 1)[0])
    return out



def _names_defined_at(ctx: ScanContext, module: str, names: frozenset[str]) -> dict[str, str]:
    """Where the names the client takes from a missing module are defined now, when no module of its name has them
    (`...v1.nixl_connector` became the package `...v1.nixl`: `NixlConnector` is in `...v1.nixl.connector`): a hint
    only, with no fix of its own (a module may define a name it does not export the same way). Empty when a name has
    no likely home."""
    from driftcheck.vllm_model.bodies import text_index_for

    if not names or len(names) > 3:
        return {}
    index = text_index_for(ctx.api)
    homes = {}
    for name in sorted(names):
        found = index.defining_modules(name, near=module, leader=True)
        if not found or not _nearer_than_the_package(ctx.api, module, found[0]):
            return {}
        homes[name] = found[0]
    return homes


def _another_object(ctx: ScanContext, gone: str, homes: dict[str, str]) -> str | None:
    """Why a home `_names_defined_at` found holds another thing than the client's own vLLM had in the gone module (30d
    MSG-2: 0.11.0's V1 `SamplingMetadata` shares no member with V0's), for the message; None where none does or there is
    no vLLM of the client's own to compare with."""
    baseline = ctx.baseline() if homes else None
    old_mod = baseline.module(gone) if baseline is not None and baseline.version != ctx.api.version else None
    for name, home in homes.items() if old_mod is not None else ():
        old, mod = baseline.module_member(old_mod, name), ctx.api.module(home)
        new = ctx.api.module_member(mod, name) if mod is not None else None
        why = unlike(old, new, baseline.version) if isinstance(old, Resolved) and isinstance(new, Resolved) else None
        if why:
            return f" `{home}` defines a `{name}`, but another one ({why}), so no new home is named."
    return None


def _nearer_than_the_package(api, gone: str, home: str) -> bool:
    """Whether `home` is a likely new home of a name from the gone module `gone`: it shares more than the package with
    it, or vLLM's own code imports from it (any name: 0.34.0's `StatLoggerBase` is only defined in
    `vllm.v1.metrics.loggers`, whose other names vLLM imports). 28a H1: `from vllm.scripts import serve` was sent to a
    vendored library's `third_party.deep_gemm.utils.mlopart`, a module only that library reaches (relatively)."""
    return home.split(".")[:2] == gone.split(".")[:2] or imported_by_vllm(api, home) is not None


def _installed_by_setup(ctx: ScanContext, imp, where: str) -> str:
    """Why a module the release lacks is not certainly missing: the client's shell setup copies a file to its path in
    the installed vLLM folder (launcher_copies.py), from a source driftcheck may not read (FB3)."""
    return (f"`{imp.module}` does not exist in {ctx.version_label()}, but the client's setup copies a file to that path "
            f"in the installed vLLM folder ({where}), from a source driftcheck does not read: it exists where that step "
            "ran. If it did not, ModuleNotFoundError " + ("when this function runs." if imp.runtime_only else
                                                          "at import time."))


def _named_by_client(ctx: ScanContext, module: str, importer: str) -> str | None:
    """Where the client spells the module's dotted name as a string literal (file:line), if it does where it may
    provide the module to the file `importer`: a test file's stand-in (`sys.modules["vllm.x"] = MagicMock()` in
    tests/test_*.py, so the package imports without vLLM) exists only while tests run, so it provides nothing to a
    file outside tests, which vLLM loads without them (`quoted_names` answers with a test file only where no other
    file spells the name)."""
    where = ctx.client.quoted_names().get(module)
    if where is not None and is_test_path(where.rsplit(":", 1)[0]) and not is_test_path(importer):
        return None
    if where is not None and _only_loaded(ctx, module):
        return None
    return where


LOADERS = ("import_module", "find_spec", "__import__")
LOGGERS = ("getLogger", "init_logger")  # a logger's name is often its module's: naming one registers no module (23b's R1)


def _only_loaded(ctx: ScanContext, module: str) -> bool:
    """Whether every place the client spells `module` as a string hands it to a loader (`importlib.import_module`,
    `find_spec`, `__import__`) or names a logger with it (`logging.getLogger("vllm.x.y")`: NeMo-RL quiets the module
    it imports, 23b's R1), directly or as a candidate of the `for` loop that hands its variable to one
    (Model-Optimizer's `for module_name in ("vllm.attention.layer", ...): importlib.import_module(module_name)`, NB4),
    or compares with it in an `except` clause (`exc.name != "vllm.x.y"`, OB2): loading a module by its name, or
    telling which import failed, registers nothing that is not there."""
    memo = ctx.once(_loaded_memo)
    if module not in memo:
        memo[module] = _spelled_only_as_loaded(ctx, module)
    return memo[module]


def _loaded_memo(_ctx: ScanContext) -> dict[str, bool]:
    return {}


def _spelled_only_as_loaded(ctx: ScanContext, module: str) -> bool:
    needles = (f'"{module}"'.encode(), f"'{module}'".encode())
    seen = False
    for rel in ctx.client.tree.iter_files(""):
        try:
            data = ctx.client.tree.read_bytes(rel)
        except Exception:
            continue
        if not any(n in data for n in needles):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            return False
        spelled = [n for n in nodes_of(tree, ast.Constant) if n.value == module]
        loaded = _loader_arguments(tree) | _compared(tree)
        if any(id(n) not in loaded for n in spelled):
            return False
        seen = seen or bool(spelled)
    return seen


def _compared(tree: ast.Module) -> set[int]:
    """The nodes a comparison in an `except` clause reads (`if exc.name != "vllm.x.y": raise` in the `except
    ModuleNotFoundError as exc:` that tells a missing module from a failing import inside it, kvbm's pd_connector.py,
    OB2; `exc.name in ("vllm.x", ...)`): telling which import failed registers nothing. A comparison elsewhere may be
    an import hook's (`def find_spec(self, fullname, ...): if fullname == "vllm.x.y": ...`), which does."""
    out: set[int] = set()
    for handler in nodes_of(tree, ast.ExceptHandler):
        for stmt in handler.body:
            for cmp in (n for n in ast.walk(stmt) if isinstance(n, ast.Compare)):
                for operand in (cmp.left, *cmp.comparators):
                    out.add(id(operand))
                    if isinstance(operand, (ast.Tuple, ast.List, ast.Set)):
                        out |= {id(e) for e in operand.elts}
    return out


def _loader_arguments(tree: ast.Module) -> set[int]:
    """The nodes a loader (or a logger's) call is handed as the module's name: its first argument, and each literal
    candidate of a `for` loop whose variable is that argument."""
    out: set[int] = set()
    handed: set[str] = set()
    # `from logging import getLogger as _getLogger` (NeMo-RL's worker): the alias is the same function
    aliases = {a.asname for n in nodes_of(tree, ast.ImportFrom) for a in n.names if a.asname and a.name in LOADERS + LOGGERS}
    for call in nodes_of(tree, ast.Call):
        name = dotted_name(call.func)
        if name is not None and (name.rsplit(".", 1)[-1] in LOADERS + LOGGERS or name in aliases) and call.args:
            out.add(id(call.args[0]))
            if isinstance(call.args[0], ast.Name):
                handed.add(call.args[0].id)
    lists = {t.id: n.value for n in getattr(tree, "body", []) if isinstance(n, ast.Assign)
             and isinstance(n.value, (ast.Tuple, ast.List)) for t in n.targets if isinstance(t, ast.Name)}
    for loop in nodes_of(tree, ast.For):
        # `for name in ("vllm.a", ...)`, or `for name, why in CHECKS` over a module-level list of tuples (26g M3)
        names = [loop.target] if isinstance(loop.target, ast.Name) else list(loop.target.elts) \
            if isinstance(loop.target, ast.Tuple) else []
        items = loop.iter if isinstance(loop.iter, (ast.Tuple, ast.List)) else \
            lists.get(loop.iter.id) if isinstance(loop.iter, ast.Name) else None
        for i, var in enumerate(names):
            if items is None or not (isinstance(var, ast.Name) and var.id in handed) or not any(
                    id(n) in out and isinstance(n, ast.Name) and n.id == var.id for stmt in loop.body for n in ast.walk(stmt)):
                continue
            for e in items.elts:
                if len(names) == 1:
                    out.add(id(e))
                elif isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == len(names):
                    out.add(id(e.elts[i]))
    return out


def check(ctx: ScanContext):
    yield from _check_patched(ctx)
    seen: set[tuple[str, int, str]] = set()
    for imp in ctx.usage.imports:
        if imp.unreached:
            continue  # a fallback that runs only when the try body's import fails, which it does not here
        if imp.type_only or ctx.api.module(imp.module) is not None:
            continue
        key = (imp.loc.path, imp.loc.line, imp.module)
        if key in seen:
            continue
        seen.add(key)
        parent, parent_path = _nearest_package(ctx, imp.module)
        same_named = same_named_modules(ctx.api, imp.module)
        # the message names a new home only where every imported name is (`from M import Attention` is not sent to a
        # `vllm.config.attention` without `Attention`: TA); `move-import` still starts from the closest module of that
        # name and moves each name only to a module that has it (its own per-name check: SB)
        taken = _imported_names(ctx, imp.module, imp.loc.path, imp.loc.line)
        moved = [m for m in same_named if _proves_home(ctx, m, taken, imp.module)]
        start = moved or same_named
        message = f"`{imp.module}` does not exist in {ctx.version_label()}: ModuleNotFoundError"
        message += " when this function runs." if imp.runtime_only else " at import time."
        homes = {} if moved else _names_defined_at(ctx, imp.module, taken)
        other = _another_object(ctx, imp.module, homes)
        if other is not None:
            homes = {}
        if moved:
            message += f" A module of that name is at `{moved[0]}`."
        elif other is not None:
            message += other
        elif homes:
            message += " Where what the client takes from it is defined now: " + \
                ", ".join(f"`{name}` in `{home}`" for name, home in homes.items()) + "."
        else:
            message += _own_note(ctx, imp.module, taken)
        # `moved_to` says where the names went, as the message does: a module of that name that has them, or the one
        # home they all have now; `move-import` otherwise starts from the closest module of that name (`search_from`)
        # and moves each name only to a module that has it (28a H1: `moved_to` named an EPLB policy's `abstract`
        # while the message sent `AttentionType` to `vllm.v1.attention.backend`)
        moved_to = moved[0] if moved else next(iter(homes.values())) if len(set(homes.values())) == 1 else None
        severity = "warning" if imp.guarded else None
        diff = diff_creates_module(ctx.client.tree, ctx.api.tree, imp.module)
        if diff is not None:  # the client's patch for vLLM's source creates the module's file (source_diffs.py)
            yield ctx.unknown(RULE, f"cannot tell whether `{imp.module}` exists: {ctx.version_label()} has no such module, "
                                    f"but the client ships a patch for vLLM's own source ({diff}) that creates it and "
                                    "applies to this release; whether it was applied cannot be known", imp.loc, imp.module)
            continue
        dropped = ctx.usage.drop_ins.get(imp.module)
        if dropped is not None:  # a flat folder of copies of the package's files holds it (drop_ins.py, NGA)
            yield ctx.unknown(RULE, f"cannot tell whether `{imp.module}` exists: {ctx.version_label()} has no such module, "
                                    f"but the client's `{dropped[0]}` is a copy of it, in a folder of copies of "
                                    f"`{imp.module.rpartition('.')[0]}`'s files that import each other by vLLM's names "
                                    f"({dropped[1]}); whether they are copied into vLLM's package cannot be known",
                              imp.loc, imp.module)
            continue
        installed = ctx.usage.installed.get(imp.module)
        if installed is not None:
            yield ctx.finding(RULE, _installed_by_setup(ctx, imp, installed) + imp.guard_note(), imp.loc, None, imp.module,
                              when="call" if imp.runtime_only else "import", severity="warning", fix=False)
            continue
        provided = built_elsewhere(ctx.api, imp.module)
        registered = _named_by_client(ctx, imp.module, imp.loc.path)
        if provided is None and registered is not None:
            # `sys.modules["vllm.x.y"] = mod` / `alias_frozen_module("vllm.x.y", ...)`: the client may provide it
            yield ctx.finding(
                RULE, f"`{imp.module}` does not exist in {ctx.version_label()}, but the client names it as a string "
                f"({registered}): it may register the module itself (sys.modules, an import hook). If it does not, "
                "ModuleNotFoundError " + ("when this function runs." if imp.runtime_only else "at import time."),
                imp.loc, None, imp.module, when="call" if imp.runtime_only else "import", severity="warning", fix=False)
            continue
        if provided is not None:
            build = ctx.api.build or "the build read here"
            what = "it" if provided[2] == imp.module else f"`{provided[2]}`, the package above it, which is absent too"
            message = (f"`{imp.module}` is absent from {build}, but vLLM's own code imports {what} ({provided[0]}:"
                       f"{provided[1]}): other builds provide it (a compiled extension or files copied in at build time). "
                       "It fails here only if this build is the one that runs.")
            severity = "warning"
            yield ctx.finding(RULE, message, imp.loc, ctx.vllm_location(provided[0], provided[1]), imp.module,
                              when="call" if imp.runtime_only else "import", severity=severity, fix=False, build_variant=build)
            continue
        message += imp.guard_note()
        yield ctx.finding(
            RULE, message, imp.loc, ctx.vllm_location(parent_path, 1) if parent_path else None, imp.module,
            when="call" if imp.runtime_only else "import", severity=severity, fix=bool(start) and not imp.by_name,
            moved_to=moved_to, search_from=start[0] if start and not moved_to else None, nearest_package=parent or None,
            fails=True if imp.guarded else None,  # a warning only for its try: its except fallback runs (guards.guard_at)
            # names the client sets on that module itself (`old.f = own_f`): the import takes the client's, and
            # move-import leaves them (batch 20h's W3: vllm-ascend's `chunk_gated_delta_rule`)
            client_replaces=ctx.usage.set_by_path.get(imp.module) or None,
        )


def _patched_modules(ctx: ScanContext):
    """(module, loc) for each `patch("vllm.a.b.C.attr")` / `monkeypatch.setattr("vllm.a.b.f", x)` whose path runs
    through a module the target lacks: the patch imports the path's modules when it starts (mock's `_importer`,
    monkeypatch's `derive_importpath`) and raises ModuleNotFoundError (VLM-R1 patches
    `vllm.worker.worker.Worker._assert_memory_footprint_increased_during_profiling` around `LLM(...)`: 0.33.0 has no
    `vllm.worker`; batch 19c). A path whose last module exists but lacks the next name is left to the name rules."""
    for file in ctx.usage.files:
        if not any(word in file.text for word in PATCH_WORDS):
            continue  # no patcher named: no call to read (most files of a big client)
        for node in nodes_of(file.tree, ast.Call):
            callee = patcher(file.tree, node.func)
            if not (node.args and callee in BY_PATH and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str) and node.args[0].value.startswith(ctx.api.package + ".")):
                continue
            parts = node.args[0].value.split(".")
            if not all(p.isidentifier() for p in parts) or through_stand_in(node.args[0].value, stood_in_for(ctx, file)):
                continue
            known = 1  # the longest prefix that is a module of the target
            while known < len(parts) and ctx.api.module_path(".".join(parts[:known + 1])) is not None:
                known += 1
            if known + 1 >= len(parts):
                continue  # every module is there (or only the patched attribute follows the last one)
            owner = ".".join(parts[:known])
            if isinstance(ctx.api.resolve(f"{owner}.{parts[known]}"), Missing):
                # mock resolves the path with `pkgutil.resolve_name` from Python 3.11 (AttributeError on the missing
                # part; an import before: ModuleNotFoundError); monkeypatch imports it (ImportError)
                raises = ("ImportError",) if callee == "monkeypatch.setattr" else \
                    ("AttributeError", "ModuleNotFoundError")
                yield ".".join(parts[:known + 1]), _node_loc(file, node), raises



def _node_loc(file, node: ast.AST) -> Loc:
    line = file.lines[node.lineno - 1] if node.lineno <= len(file.lines) else ""
    return Loc(file.rel, node.lineno, node.col_offset + 1, line.strip(), node.end_lineno or node.lineno,
               (node.end_col_offset or 0) + 1)


def _wrapped_modules(ctx: ScanContext):
    """wrapt imports the module it is given (`wrap_function_wrapper("vllm.engine.metrics", ...)`, 27d M1): (module,
    loc, raises) for each such module the target lacks, from the visit's records (`Usage.patch_paths`)."""
    files = {file.rel: file for file in ctx.usage.files}
    for pp in ctx.usage.patch_paths:
        if pp.module is not None and pp.rel in files and all(p.isidentifier() for p in pp.module.split(".")) and \
                ctx.api.module_path(pp.module) is None and not through_stand_in(pp.path, stood_in_for(ctx, files[pp.rel])):
            yield pp.module, _node_loc(files[pp.rel], pp.node), ("ModuleNotFoundError",)


def _check_patched(ctx: ScanContext):
    for module, loc, raises in itertools.chain(_patched_modules(ctx), _wrapped_modules(ctx)):
        if client_provides(ctx.usage, ctx.client.tree, ctx.api.tree, module):
            continue
        parent, parent_path = _nearest_package(ctx, module)
        built = built_elsewhere(ctx.api, module)
        if built is not None:
            yield ctx.finding(RULE, f"`{module}`, which this patch's path runs through, is absent from "
                                    f"{ctx.api.build or 'the build read here'}, but vLLM's own code imports `{built[2]}` "
                                    f"({built[0]}:{built[1]}): other builds provide it. It fails here only if this build "
                                    "is the one that runs.", loc, ctx.vllm_location(built[0], built[1]), module,
                              when="call", severity="warning", fix=False)
            continue
        yield ctx.finding(RULE, f"`{module}`, which this patch's path runs through, does not exist in "
                                f"{ctx.version_label()}: the patch looks it up when it starts and raises {raises[0]}"
                                + (f" ({raises[1]} before Python 3.11)." if len(raises) > 1 else "."),
                          loc, ctx.vllm_location(parent_path, 1) if parent_path else None, module, when="call", fix=False,
                          nearest_package=parent or None, raises=list(raises))


# ------------------------------------------------------------------------------------- traceback signatures
SIGNATURES = (
    Signature("module {0} does not exist in this vLLM (moved or removed).", "A vLLM module moved or was removed.",
              message=r"No module named '(vllm[\w.]*)'", priority=20,
              confirm=lambda api, _tb, m: (api.module(m.group(1)) is None, m.group(1))),
)
