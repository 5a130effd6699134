"""DC007 unknown-rpc-method: `collective_rpc("name")` names a method no worker defines.

`collective_rpc` dispatches by string to every worker process, so no type checker sees it. When a
vLLM release renames a worker method, the call fails inside the workers (`AttributeError`, wrapped
in `Worker failed with error ...`) after the model has loaded. driftcheck looks the name up on the
target's worker classes (`vllm/v1/worker/*worker*.py`), on the client's own worker extension
(`worker_extension_cls="pkg.mod.Class"`) and on a worker a platform plugin names (`worker_cls="pkg.mod.Worker"`,
built by vLLM's worker wrapper whatever its bases). A client that names no extension but, in the file that sends
the rpc, reads the configured `worker_extension_cls` or passes on its caller's (client_model/open_extensions.py)
gets unknown: the class is chosen by whoever builds the engine. A read elsewhere is not enough (vLLM's own worker
wrapper reads it to mix the class in, and its executors' rpcs to methods no worker has are real).
`self.collective_rpc(...)` in a client subclass of a vLLM class whose own `collective_rpc` replaces vLLM's without
handing the call on sends to workers the client picks: a method the client defines outside the sending class is
served there; any other goes on to vLLM's worker, and is checked (VC1).
A release whose own platform list names a platform class from outside its tree (`vllm/platforms/tpu.py`'s
`TpuPlatform = tpu_inference.platforms.TpuPlatform`, picked by `tpu_platform_plugin()`) runs on a worker driftcheck
cannot read: a method no readable worker defines may be that worker's, so DC007 is unknown unless the client defines
a method of that name itself (then it is the client's own method, which no platform's worker serves).
An extension or worker class whose bases include one driftcheck cannot read (an installed library's class, a module
the tree lacks, `from lib import Base` or `import lib` then `lib.Base`; not vLLM's own nor the standard library's)
may inherit the method from it: a method no class read defines is unknown, naming that base, not an error; the
methods the class and its readable bases define still answer (12b, 12c). An extension module the tree lacks from its
root is looked for in the folders the naming file puts on `sys.path` when it runs (client_model/script_paths.py: a
script's own folder, a folder it inserts from `__file__`), as Python and vLLM's workers find it (12b).
"""

from __future__ import annotations

import ast
import re
import sys

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.client_model.script_paths import script_folders
from driftcheck.vllm_model.class_summary import flatten_class_body
from driftcheck.vllm_model.resolved import External, Resolved
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule

_STDLIB = frozenset(sys.stdlib_module_names) | {"typing_extensions"}  # bases that define no rpc method (ABC, Generic)
from driftcheck.vllm_model.pysummary import resolve_relative

RULE = Rule("DC007", "unknown-rpc-method", "collective_rpc names a method no worker class defines", "error", raises=("AttributeError", "RuntimeError"))

WORKER_DIRS = ("v1/worker", "worker")


def worker_classes(ctx: ScanContext) -> list[Resolved]:
    out: list[Resolved] = []
    for sub in WORKER_DIRS:
        prefix = f"{ctx.api.package}/{sub}"
        if not ctx.api.tree.is_dir(prefix):
            continue
        for rel in ctx.api.tree.iter_files(prefix):
            base = rel.rsplit("/", 1)[-1]
            if rel.count("/") != prefix.count("/") + 1 or "worker" not in base:
                continue
            module = rel.removesuffix(".py").replace("/", ".")
            info = ctx.api.module(module)
            if info is None:
                continue
            for name in info.classes:
                if "Worker" in name:
                    r = ctx.api.module_member(info, name)
                    if isinstance(r, Resolved) and r.kind == "class":
                        out.append(r)
    return out


def own_workers(ctx: ScanContext) -> list[str]:
    """The worker classes the client names as `worker_cls` outside vLLM's own package."""
    return [d for d, _loc in ctx.usage.worker_classes if d.split(".")[0] != ctx.api.package]


def _client_extension_methods(ctx: ScanContext) -> tuple[set[str], list[tuple[str, str]]]:
    """The methods of the client's worker extensions and of the workers it names as `worker_cls` (vLLM's worker
    wrapper builds that class by name and forwards attributes to it, whatever its bases), and the classes not read
    whole: (dotted path, "") for one that could not be read, (dotted path, base) for one whose base could not."""
    names: set[str] = set()
    unread: list[tuple[str, str]] = []  # (class, the base of it driftcheck cannot read, or "")
    # a worker_cls in vLLM's own package is one of the target's workers (looked at already) or a module it lacks
    own = set(own_workers(ctx))
    named = [*ctx.usage.worker_extensions, *((d, loc) for d, loc in ctx.usage.worker_classes if d in own)]
    for dotted, loc in named:
        bases: list[str] = []
        found = _class_methods(ctx, dotted, 0, bases)
        beside = _beside_script(ctx, loc.path, dotted) if found is None else None
        if beside is not None:
            found = _class_methods(ctx, beside, 0, bases)
        if found is None:
            unread.append((dotted, ""))
        else:
            names |= found  # its own methods and those of the bases read
            if bases:  # and a base that may define others
                unread.append((dotted, bases[0]))
    return names, unread


def _beside_script(ctx: ScanContext, path: str, dotted: str) -> str | None:
    """`dotted` as a module of a folder the file naming it puts on `sys.path` when it runs (client_model/script_paths:
    its own folder when it is a script, a folder it inserts from `__file__`): "dft_ext.DumpExt" named in
    `tools/dft/extract_hidden.py` is `tools/dft/dft_ext.py`, where the tree has no such module from its root (12b)."""
    module = dotted.rpartition(".")[0]
    if not module or ctx.client.module_tree(module) is not None:
        return None
    named_in = ctx.client.file_at(path)
    try:
        tree = named_in.tree if named_in is not None else ast.parse(ctx.client.tree.read_text(path))
    except Exception:  # unreadable or not Python: no script to say where it runs
        return None
    for folder in script_folders(tree, path):
        if folder and all(part.isidentifier() for part in folder.split("/")):
            nearby = f"{folder.replace('/', '.')}.{dotted}"
            if ctx.client.module_tree(nearby.rpartition(".")[0]) is not None:
                return nearby
    return None


def _class_methods(ctx: ScanContext, dotted: str, depth: int, unread_bases: list[str] | None = None) -> set[str] | None:
    """Methods of the client class `pkg.mod.Class`, following `from x import Class` re-exports and client bases,
    as `resolve_obj_by_qualname` imports it; None when it cannot be read. A base it imports that cannot be read (an
    installed library's class, a module the tree lacks) may define more: its dotted path goes to `unread_bases`. A
    base from the target's own package adds nothing (its workers are looked at already), nor one from the standard
    library."""
    module, _, cls_name = dotted.rpartition(".")
    found = ctx.client.module_tree(module) if module and depth < 8 else None
    if found is None:
        return None
    tree, is_package = found
    imported = _imported_names(tree, module, is_package)
    top = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == cls_name]
    if not top and any(isinstance(node, ast.ClassDef) and node.name == cls_name for node in nodes_of(tree, ast.ClassDef)):
        # a class a function defines and hands over as a class object (`worker_cls=TestWorker`: NA4): the methods of
        # every class of that name in the module, with the imports of any scope for its bases
        imported = _imported_names(tree, module, is_package, anywhere=True)
        top = [node for node in nodes_of(tree, ast.ClassDef) if node.name == cls_name]
    found_methods: set[str] = set()
    for node in top:
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            names = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            local = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
            for base in node.bases:  # client bases add their methods (a vLLM base is a worker class already)
                if isinstance(base, ast.Name) and base.id in imported:
                    names |= _base_methods(ctx, imported[base.id], depth + 1, unread_bases)
                elif isinstance(base, ast.Attribute) and _module_path(tree, base) is not None:
                    # `ray_ext.BaseExtension` after `import ray_ext` (or `import pkg.base as base_mod`)
                    names |= _base_methods(ctx, _module_path(tree, base), depth + 1, unread_bases)
                elif isinstance(base, ast.Name) and base.id in local and base.id != cls_name:
                    # a mixin defined above it in the same module (`class Ext(CheckpointMixin, BaseExt)`)
                    names |= _class_methods(ctx, f"{module}.{base.id}", depth + 1, unread_bases) or set()
            found_methods |= names | _patched_onto(ctx).get(f"{module}.{cls_name}", set())
    if top:
        return found_methods
    if cls_name in imported:
        return _class_methods(ctx, imported[cls_name], depth + 1, unread_bases)
    for node in tree.body:  # bound some other way (`Ext = make()`, `from x import *`): cannot tell
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == cls_name for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            return None
    return set()  # the module has no such class: the extension adds nothing


_PATCHED: dict[int, tuple[object, dict[str, set[str]]]] = {}  # id(ClientSource) -> (it, `_patched_onto`'s answer)


def _patched_onto(ctx: ScanContext) -> dict[str, set[str]]:
    """Dotted client class -> the names a client file with vLLM sets on it by name (`WorkerHelper.custom_wakeup =
    custom_wakeup`, `setattr(WorkerHelper, "m", f)`), the class imported with `from x import Cls` or defined in that
    file: ROLL's tests add rpc targets to the base of the worker class its engine names (HH3)."""
    held = _PATCHED.get(id(ctx.client))
    if held is not None and held[0] is ctx.client:
        return held[1]
    found: dict[str, set[str]] = {}
    for f in ctx.client.files:
        if f.tree is None or ".__class__" in f.text or not re.search(r"^\s*\w+\.\w+\s*=|setattr\(", f.text, re.M):
            continue
        is_package = f.rel.endswith("__init__.py")
        imported = _imported_names(f.tree, f.module, is_package, anywhere=True)
        classes = {n.name for n in f.tree.body if isinstance(n, ast.ClassDef)}

        def owner(node: ast.expr) -> str | None:
            if not isinstance(node, ast.Name):
                return None
            return imported.get(node.id) or (f"{f.module}.{node.id}" if node.id in classes else None)

        for node in nodes_of(f.tree, ast.Assign, ast.Call):  # the file's buckets (a walk was 1.4 s of a big client)
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    cls = owner(t.value) if isinstance(t, ast.Attribute) else None
                    if cls:
                        found.setdefault(cls, set()).add(t.attr)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                    and len(node.args) == 3 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                cls = owner(node.args[0])
                if cls:
                    found.setdefault(cls, set()).add(node.args[1].value)
    if len(_PATCHED) > 8:
        _PATCHED.clear()  # (one scan reads one client; a long-lived process keeps none for long)
    _PATCHED[id(ctx.client)] = (ctx.client, found)
    return found


def _base_methods(ctx: ScanContext, path: str, depth: int, unread_bases: list[str] | None) -> set[str]:
    """The methods a base of a client class adds; a base that cannot be read, unless vLLM's own or the standard
    library's, goes to `unread_bases` (it may define more)."""
    inherited = _class_methods(ctx, path, depth, unread_bases)
    if inherited is None and path.split(".")[0] not in (ctx.api.package, *_STDLIB) and unread_bases is not None:
        unread_bases.append(path)
    return inherited or set()


def _module_path(tree: ast.Module, node: ast.Attribute) -> str | None:
    """The dotted path `mod.sub.Cls` is, where `mod` is a module the module's top-level `import` statements bind
    (`import mod.sub`, `import x.y as mod`); None otherwise."""
    written = dotted_name(node)
    if written is None:
        return None
    root, _, rest = written.partition(".")
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if (a.asname or a.name.split(".")[0]) == root and rest:
                    return f"{a.name if a.asname else root}.{rest}"
    return None


def _imported_names(tree: ast.Module, module: str, is_package: bool, anywhere: bool = False) -> dict[str, str]:
    """name -> dotted path of what `from x import name` binds at the top of a module (`anywhere`: in any scope)."""
    out: dict[str, str] = {}
    for node in nodes_of(tree, ast.ImportFrom) if anywhere else tree.body:
        if isinstance(node, ast.ImportFrom):
            source = resolve_relative(module, is_package, node.level, node.module)
            for a in node.names:
                out[a.asname or a.name] = f"{source}.{a.name}"
    return out


def external_platforms(ctx: ScanContext) -> list[tuple[str, str, int]]:
    """(class, path, line) for each platform that vLLM's built-in platform list (the `*_platform_plugin` functions of
    `<package>/platforms/__init__.py`) returns and whose class is not in the tree (a package outside it, directly or
    through an in-tree alias): its worker is chosen by code driftcheck does not read."""
    path = f"{ctx.api.package}/platforms/__init__.py"
    tree = ctx.api.parse(path) if ctx.api.tree.is_file(path) else None
    if tree is None:
        return []
    out: list[tuple[str, str, int]] = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not fn.name.endswith("_platform_plugin"):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) \
                    and "." in node.value.value:
                found = ctx.api.resolve(node.value.value)
                if isinstance(found, External) and all(found.qualname != q for q, _p, _l in out):
                    out.append((found.qualname, path, node.lineno))
    return out


def _client_defines(ctx: ScanContext, names: set[str]) -> set[str]:
    """Which of `names` the client defines as a function or method somewhere in its own code: its files that import
    vLLM, and those that do not but spell `def <name>` (read one at a time, only for the names asked)."""
    out: set[str] = set()
    for file in ctx.client.files:
        out |= {n.name for n in nodes_of(file.tree, ast.FunctionDef, ast.AsyncFunctionDef) if n.name in names}
    for name in sorted(names - out):
        for file in ctx.client.other_files(containing=f"def {name}"):
            if any(n.name == name for n in nodes_of(file.tree, ast.FunctionDef, ast.AsyncFunctionDef)):
                out.add(name)
                break
    return out


def _defined_outside(ctx: ScanContext, name: str, path: str, sender: frozenset[str]) -> bool:
    """Whether the client defines `name` as a function or method anywhere but in the classes of `path` named in
    `sender` (an executor's `def execute_model(self): return self.collective_rpc("execute_model")` is no worker's)."""
    for file in [*ctx.client.files, *ctx.client.other_files(containing=f"def {name}")]:
        owner = {id(stmt): cls.name for cls in nodes_of(file.tree, ast.ClassDef) for stmt in flatten_class_body(cls.body)}
        for node in nodes_of(file.tree, ast.FunctionDef, ast.AsyncFunctionDef):
            if node.name == name and not (file.rel == path and owner.get(id(node)) in sender):
                return True
    return False


def check(ctx: ScanContext):
    rpcs = [r for r in ctx.usage.rpcs if r.method]
    if not rpcs:
        return
    workers = worker_classes(ctx)
    for w in list(workers):  # and the tree's other subclasses of them (RayWorkerWrapper in executor/ray_utils.py)
        workers += [s for s in ctx.api.subclasses(w) if all(s.qualname != x.qualname for x in workers)]
    if not workers:
        for r in rpcs:
            yield ctx.unknown(RULE, f"no worker classes found in {ctx.version_label()} to check `{r.method}` against", r.loc, r.method)
        return
    extension, unread = _client_extension_methods(ctx)
    for w in workers:  # a platform plugin's own worker (a client subclass of a vLLM worker) serves its methods too
        for c in ctx.api.mro(w)[0]:
            extension.update(ctx.usage.subclass_members.get(c.qualname, {}))
    outside: list[tuple[str, str, int]] | None = None
    own: set[str] | None = None
    for r in rpcs:
        if r.method in extension:
            continue
        found = [w for w in workers if isinstance(ctx.api.class_member(w, r.method), Resolved)]
        if found:
            continue
        # the client's own `collective_rpc` sends to workers of its own, which serve what the client defines outside
        # the sending class and hand the rest to vLLM's worker (VC1)
        if r.own_override is not None and _defined_outside(ctx, r.method, r.loc.path, r.sender):
            continue
        unknown = [w for w in workers if not isinstance(ctx.api.class_member(w, r.method), Resolved) and ctx.api.mro(w)[1]]
        names = ", ".join(w.qualname.rsplit(".", 1)[-1] for w in workers[:6])
        message = (f"collective_rpc(\"{r.method}\") names a method that no worker class defines in {ctx.version_label()} "
                   f"(looked at {names}{', ...' if len(workers) > 6 else ''}"
                   f"{' and the client worker extension' if ctx.usage.worker_extensions else ''}"
                   f"{' and the worker the client names as worker_cls' if own_workers(ctx) else ''}): "
                   "AttributeError inside the workers after the model has loaded.")
        if unknown and len(unknown) == len(workers):
            yield ctx.unknown(RULE, message, r.loc, r.method)
            continue
        # the file that sends it names no extension but relies on the one whoever builds the engine names
        relied = [(how, where) for how, where in ctx.usage.open_extensions if where.path == r.loc.path]
        if relied and not ctx.usage.worker_extensions and not own_workers(ctx):
            how, where = relied[0]
            yield ctx.unknown(RULE, f"cannot tell whether `{r.method}` exists: the client names no worker extension but "
                              f"{how} ({where.path}:{where.line}), so the engine's builder may give the workers a class "
                              "that defines it", r.loc, r.method)
            continue
        if unread:  # the client's own extension may define it
            dotted, base = unread[0]
            module = dotted.rpartition(".")[0]
            why = f"derives from {base}, which driftcheck cannot read (a module outside the client's tree)" if base else \
                "is in a module the client's tree does not hold (it may be installed from elsewhere)" \
                if module and ctx.client.module_tree(module) is None else \
                "is bound in a way driftcheck does not follow (a star import, an assignment, or a re-export from a " \
                "module the tree does not hold)"
            yield ctx.unknown(RULE, f"cannot tell whether `{r.method}` exists: the worker extension or worker {dotted} "
                              f"named by the client {why}", r.loc, r.method)
            continue
        if outside is None:
            outside = external_platforms(ctx)
            own = _client_defines(ctx, {x.method for x in rpcs}) if outside else set()
        if outside and r.method not in (own or set()):  # the worker of a platform from outside the tree may define it
            cls, where, line = outside[0]
            yield ctx.unknown(RULE, f"cannot tell whether `{r.method}` exists: no worker class in {ctx.version_label()} "
                              f"defines it, but vLLM's own platform list names {cls} ({where}:{line}), a platform from "
                              "outside its tree whose worker driftcheck cannot read", r.loc, r.method)
            continue
        yield ctx.finding(RULE, message, r.loc, ctx.location_of(workers[0]), r.method, when="call")
