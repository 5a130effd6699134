"""Guards one client file puts on another: method bodies another file replaces at import, and modules
loaded only for other vLLM releases (`dispatched_modules`: per-release vendored copies picked by `import_module` under
a version check or by a static import under a test naming releases, and what only those copies import).
"""

from __future__ import annotations

import ast
import re

from driftcheck.astnodes import dotted_name, nodes_of, nodes_within, walk
from driftcheck.client_model.guards import Guard, body_span, guards_of
from driftcheck.client_model.version_checks import (
    VERSION_TEXT, calls_one_of, module_version_aliases, test_kind, version_aliases)
from driftcheck.vllm_model.pysummary import resolve_relative


def replaced_elsewhere(files) -> dict[str, list[Guard]]:
    """`_module.AXK2MoE.forward = patched` at the top of one client file, for a class defined in one other client
    file (reached through an import or a module loaded by path): that method's original body never runs. Only
    when the assigning file does not read the original first (`orig = _module.AXK2MoE.forward` wraps it)."""
    defined: dict[str, list] = {}
    for f in files:
        for node in f.tree.body:
            if isinstance(node, ast.ClassDef):
                defined.setdefault(node.name, []).append((f, node))
    out: dict[str, list[Guard]] = {}
    for f in files:
        read: set | None = None  # (owner, method) the file reads, computed only for a file that replaces one
        for stmt in f.tree.body:
            for target in stmt.targets if isinstance(stmt, ast.Assign) else []:
                if not isinstance(target, ast.Attribute):
                    continue
                owner = target.value
                cls_name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else None
                homes = defined.get(cls_name or "", [])
                if len(homes) != 1 or homes[0][0] is f:
                    continue
                if read is None:
                    read = {(dotted_name(n.value), n.attr) for n in nodes_of(f.tree, ast.Attribute) if isinstance(n.ctx, ast.Load)}
                if (dotted_name(owner), target.attr) in read:
                    continue
                home, cls = homes[0]
                for fn in cls.body:
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == target.attr and fn.body:
                        start, end = body_span(fn.body)
                        out.setdefault(home.rel, []).append(Guard(start, end, "replaced", frozenset(), stmt.lineno,
                                                                  names=frozenset({fn.name}), where=f"{f.rel}:{stmt.lineno}"))
    return out


def imported_version_aliases(files, source=None) -> dict[str, frozenset[str]]:
    """File -> the names it imports from another client module that binds them to a version or defines them as a
    version check (oumi 0.9: `from oumi.utils.packaging import is_vllm_v0_12_or_later`, a helper that compares
    `importlib.metadata.version("vllm")` with "0.12.0"): a test on them in this file asks which vLLM runs. The module
    imported from may import no vLLM itself (then it is read for this, once); its own imports are not followed."""
    by_module = {f.module: f for f in files}
    others = source.other_modules() if source is not None else {}
    exported: dict[str, frozenset[str]] = {}

    def exports(module: str) -> frozenset[str]:
        if module not in exported:
            f = by_module.get(module)
            found = (f.tree, True) if f is not None else source.module_tree(module)  # read once, not kept
            exported[module] = module_version_aliases(found[0]) if found is not None else frozenset()
        return exported[module]

    out: dict[str, frozenset[str]] = {}
    for f in files:
        package = f.rel.endswith("__init__.py")
        names = {a.asname or a.name for node in nodes_of(f.tree, ast.ImportFrom)
                 for base in [resolve_relative(f.module, package, node.level, node.module)]
                 if base != f.module and (base in by_module or base in others)
                 for a in node.names if a.name in exports(base)}
        if names:
            out[f.rel] = frozenset(names)
    return out


def dispatched_modules(files, source=None, version: str | None = None, package: str = "vllm") -> dict[str, Guard]:
    """Client modules that only a branch for other vLLM releases loads: per-release copies (verl's
    `elif package_version == "0.5.4": from .vllm_v_0_5_4.llm import LLM`, or `import_module(".vendored_v028",
    __package__)` under any version check), and the modules only those copies import, transitively. The target runs at
    most the copy for itself, so a finding in one is a warning at most (the client handles the other releases by not
    loading it). A static import counts as a dispatch only under a test that names releases (`==`, `in`, `startswith`
    on the version): `if version >= "0.7": from .v1 import X` loads `v1` on every newer vLLM, the target included.
    A module imported anywhere else without such a test (or named by a string there) stays checked. `source`: the
    client (`ClientSource`), whose files that import no vLLM are read once a load under a release test names a client
    module: they import copies too (ucm's `sparse_patch.py`, loaded only for 0.11.0, imports that release's copies and
    no vLLM itself) and may load one unguarded. `version`: the target's release; a branch whose release test it
    passes (every earlier test of its `elif` chain failing) loads the copy the target runs, and is no guard (HH1)."""
    by_module = {f.module: f for f in files}
    others = source.other_modules() if source is not None else {}
    names = by_module.keys() | others.keys()
    helpers = _helper_lookup(by_module, source, names)
    target = _target_release(version, package)
    edges = _load_edges(files, names, helpers, on=target)

    def reaches_the_client(found: dict) -> bool:  # a load under a release test of a client module
        return any(g and target in names for target, where in found.items() for *_, g in where)

    # the files without vLLM are read only when a load under a release test reaches a client module, from a file with
    # vLLM or from one of them that spells a release (rlinf's package `__init__` imports its 0.8.5 copy, no vLLM) or
    # names a class holding releases (ChatLearn's hooks `__init__`: `== VLLMVersion.v_0_6_3`, HC)
    if others and (reaches_the_client(edges) or reaches_the_client(_load_edges(
            _spelling_releases(source, by_module, files), names, helpers, on=target))):
        for module, where in _load_edges((f for f in source.other_files() if f.module not in by_module), names,
                                         helpers, on=target).items():
            edges.setdefault(module, []).extend(where)  # after those of the files with vLLM (file order)
    return _guards_for(_loaded_only_guarded(edges), edges, by_module)


def _target_release(version: str | None, package: str):
    """(the target's parsed release, its package name), or None where it has no release driftcheck can parse."""
    from packaging.version import InvalidVersion, Version  # (a warm scan imports no requirement parser)

    try:
        return (Version(version), package) if version else None
    except InvalidVersion:
        return None


def _spelling_releases(source, by_module: dict, files) -> list:
    """The client files without vLLM that spell a quoted release, or name a class of the client's whose members hold
    releases (`VLLMVersion.`, defined in any of those files or in one with vLLM)."""
    spelled = [f for f in source.other_files(matching=_RELEASE_TEXT) if f.module not in by_module]
    classes = {m.partition(".")[0] for f in [*files, *spelled] for m in _release_members(f.tree)}
    if not classes:
        return spelled
    naming = re.compile(rb"\b(?:" + b"|".join(re.escape(c.encode()) for c in sorted(classes)) + rb")\b")
    seen = {f.module for f in spelled}
    return spelled + [f for f in source.other_files(matching=naming) if f.module not in by_module and f.module not in seen]


def _loaded_only_guarded(edges: dict) -> set[str]:
    """The modules a guarded load reaches, keeping only those every load of which is guarded or comes from another of
    them (the greatest such set: copies import one another)."""
    imports: dict[str, set[str]] = {}
    for target, where in edges.items():
        for importer, _rel, _line, _g in where:
            imports.setdefault(importer, set()).add(target)
    todo = [m for m, where in edges.items() if any(g for *_, g in where)]
    reached: set[str] = set()
    while todo:
        m = todo.pop()
        if m not in reached and "." in m:  # a top-level package is the client's entry point, whoever imports it
            reached.add(m)
            todo += imports.get(m, ())
    changed = True
    while changed:
        changed = False
        for m in list(reached):
            if any(not g and importer not in reached for importer, _rel, _line, g in edges.get(m, ())):
                reached.discard(m)
                changed = True
    return reached


def _guards_for(reached: set[str], edges: dict, by_module: dict) -> dict[str, Guard]:
    """File -> a "dispatched" guard naming the guarded load each of the `reached` client modules comes from."""
    out: dict[str, Guard] = {}
    for module in sorted(reached & by_module.keys()):
        rel, line, via = _first_load(module, edges, reached)
        out[by_module[module].rel] = Guard(1, 10 ** 9, "dispatched", frozenset(), line, where=f"{rel}:{line}",
                                           names=frozenset({via}) if via else frozenset())
    return out


_RELEASE_TEXT = re.compile(rb"""["']\d+\.\d+""")  # a quoted release: what a test naming releases spells somewhere


def _load_edges(files, names, helpers=None, spans_of=None, on=None) -> dict[str, list[tuple[str, str, int, bool]]]:
    """Module -> (importer, "rel", line, under a release test) for each import or load by name in `files` (walked
    once) of a module (and each package above it); `names`: the client modules a string or a `from x import y`
    may name; `helpers(module)`: the release-equality helpers a client module defines (`_equality_helpers`);
    `spans_of(file)`: the branches that count as guarded instead of those naming releases (`untaken_branches`);
    `on`: (release, package) of the target (`_target_release`): a release branch it takes is no guard."""
    edges: dict[str, list[tuple[str, str, int, bool]]] = {}  # module -> (importer, "rel", line, under a release test)
    inside = _names_inside_source_folders(names)

    def add(importer, rel: str, module: str, line: int, guarded: bool) -> None:
        head = importer.module.partition(".")[0]
        if head != importer.module and head not in names and f"{head}.{module}" in names:
            module = f"{head}.{module}"  # a script's folder comes first on its path: its own copy of the package
        parts = inside.get(module, module).split(".")
        for i in range(1, len(parts) + 1):  # `import a.b.c` runs a/__init__, a/b/__init__ and a/b/c
            target = ".".join(parts[:i])
            if importer.module != target and not importer.module.startswith(target + "."):  # its own packages ran
                edges.setdefault(target, []).append((importer.module, rel, line, guarded))

    for f in files:
        is_package = f.rel.endswith("__init__.py")
        spans = spans_of(f) if spans_of is not None else \
            _release_branches(f.tree, _helpers_in(f, is_package, helpers) if helpers else frozenset(), on)
        for node in nodes_of(f.tree, ast.Import, ast.ImportFrom):
            guarded = any(a <= node.lineno <= b for a, b in spans)
            if isinstance(node, ast.Import):
                for a in node.names:
                    add(f, f.rel, a.name, node.lineno, guarded)
            else:
                base = resolve_relative(f.module, is_package, node.level, node.module)
                add(f, f.rel, base, node.lineno, guarded)
                for a in node.names:
                    if f"{base}.{a.name}" in names or f"{base}.{a.name}" in inside:  # `from .copy import parallel_state`: a submodule
                        add(f, f.rel, f"{base}.{a.name}", node.lineno, guarded)
        # the names it loads: every module-like string of this file (`return ".vendored_v028", "schedule"` from a
        # selector the call uses), each guarded or not by a version check; elsewhere an absolute module name as a
        # string may be loaded by name (`worker_cls="pkg.copy.Worker"`): an edge unless under a release test
        loads = any(calls_one_of(c, ("import_module",)) for c in nodes_of(f.tree, ast.Call))
        version_guards = [g for g in guards_of(f.tree) if g.kind == "version"] if loads and spans_of is None else []
        keys = _sys_modules_keys(f.tree) if "sys.modules" in (getattr(f, "text", None) or "sys.modules") else set()
        # `assert pc.launcher_cls == "pkg.launcher.Launcher"`: a name compared is not loaded (FE1)
        keys |= {id(n) for c in nodes_of(f.tree, ast.Compare) for n in [c.left, *c.comparators] if isinstance(n, ast.Constant)}
        for const in nodes_of(f.tree, ast.Constant):
            name = const.value if isinstance(const.value, str) else ""
            if id(const) in keys:
                continue  # `monkeypatch.setitem(sys.modules, "pkg.legacy", stub)`: a stand-in, not a load
            if "." not in name or not re.fullmatch(r"\.*[A-Za-z_]\w*(?:\.\w+)*(?::\w+)?", name):
                continue
            name = name.split(":")[0]
            level = len(name) - len(name.lstrip("."))
            if loads:
                target = resolve_relative(f.module, is_package, level, name.lstrip("."))
                guarded = any(g.start <= const.lineno <= g.end for g in version_guards) if spans_of is None else \
                    any(a <= const.lineno <= b for a, b in spans)
            elif level:
                continue
            else:
                target = name if name in names or name in inside else name.rpartition(".")[0]
                guarded = any(a <= const.lineno <= b for a, b in spans)
            if target in names or target in inside:
                add(f, f.rel, target, const.lineno, guarded)
    return edges


def _names_inside_source_folders(names) -> dict[str, str]:
    """The name Python imports a client module by when its first folder is no package (a src-layout's `src/`, whose
    packages pip installs at the top: `src.vllm_plugin_meralion2.vllm085` is `vllm_plugin_meralion2.vllm085`) -> the
    module's name here; a name another module already has, or that two modules would share, is left out."""
    names = set(names)
    found: dict[str, list[str]] = {}
    for module in names:
        head, _, rest = module.partition(".")
        if rest and head not in names and rest not in names:
            found.setdefault(rest, []).append(module)
    return {rest: modules[0] for rest, modules in found.items() if len(modules) == 1}


def _sys_modules_keys(tree: ast.Module) -> set[int]:
    """The string constants a file uses as keys of `sys.modules` (`sys.modules["m"]`, `sys.modules.pop("m")`,
    `setitem(sys.modules, "m", stub)`, `patch.dict(sys.modules, {"m": stub})`): naming a module there reads or
    replaces the entry, it never imports the module."""
    out: set[int] = set()
    for node in nodes_of(tree, ast.Subscript, ast.Call):
        if isinstance(node, ast.Subscript) and dotted_name(node.value) == "sys.modules":
            out.add(id(node.slice))
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and dotted_name(func.value) == "sys.modules" and node.args:
                out.add(id(node.args[0]))
            elif len(node.args) >= 2 and dotted_name(node.args[0]) == "sys.modules":
                second = node.args[1]
                out |= {id(k) for k in second.keys if k is not None} if isinstance(second, ast.Dict) else {id(second)}
    return out


def _first_load(module: str, edges: dict, dispatched: set[str]) -> tuple[str, int, str]:
    """("rel", line) of the guarded load a dispatched module is reached from, and the file that imports it when that is
    another dispatched module (breadth first, in file order)."""
    seen = {module}
    queue = [(module, "")]
    while queue:
        m, via = queue.pop(0)
        where = edges.get(m, [])
        for importer, rel, line, g in where:
            if g:
                return rel, line, via
        for importer, rel, line, g in where:
            if importer in dispatched and importer not in seen:
                seen.add(importer)
                queue.append((importer, via or rel))
    return "", 0, ""


def _release_branches(tree: ast.AST, helpers: frozenset[str] = frozenset(), target=None) -> list[tuple[int, int]]:
    """The bodies of `if` tests that ask whether vLLM is one of some named releases: `package_version == "0.5.4"`,
    `version in ("0.6.3", "0.6.3+rocm624")`, `vllm.__version__.startswith("0.5")`, `v == V0120` or
    `V0120 < v < V0170` with `V0120 = parse_version("0.12.0")` (on a name the file binds to a version, or a helper of
    the file that returns one), `is_vllm_equal("0.8.0")` (a call of a client helper that compares vLLM's version
    for equality with its argument: `helpers`), and the `case "0.11.0":` bodies of a `match` on the version. What
    such a body imports runs on those releases only. `target`: (release, package); a test the target's release
    passes, every earlier test of its `elif` chain failing, is left out: its body runs on the target (HH1)."""
    constants = _release_constants(tree) | {h for h in helpers if "." in h}  # and the release members it imports
    tests = [node for node in nodes_of(tree, ast.If) if _names_releases(node.test, constants, helpers)]
    if tests and target is not None:
        taken = _taken_by_target(tree, tests, target, helpers)
        tests = [node for node in tests if id(node) not in taken]
    cases = [(match, case) for match in nodes_of(tree, ast.Match) for case in match.cases
             if _pattern_names_releases(case.pattern)]
    if not tests and not cases:
        return []  # the aliases cost a pass over the file; most files name no release in a test
    aliases = version_aliases(tree)
    spans = [body_span(node.body) for node in tests
             if test_kind(node.test, aliases) == "version" or _asks_helpers(node.test, helpers)]
    return spans + [body_span(case.body) for match, case in cases
                    if case.body and test_kind(match.subject, aliases) == "version"]


def _taken_by_target(tree: ast.AST, tests: list[ast.If], target, helpers: frozenset[str]) -> set[int]:
    """ids of the `tests` the target's release certainly passes (ROLL's `elif Version("0.11.0") ==
    Version(vllm.__version__):` at 0.11.0), each earlier test of its `elif` chain certainly failing: the copy the body
    loads is the target's own. A test driftcheck cannot decide (another condition beside the release, a version it
    does not see bound) is not taken."""
    from packaging.version import Version

    from driftcheck.client_model.refusals import _call_key, _decide, _version_names
    release, package = target
    names = {**_version_names(tree, package), f"{package}.__version__": False}
    calls = {_call_key(c): release == Version(c.args[0].value) for c in nodes_of(tree, ast.Call)
             if helpers and _helper_call(c, helpers) and _parsable(c.args[0].value)}
    earlier = {id(p.orelse[0]): p for p in nodes_of(tree, ast.If) if len(p.orelse) == 1 and isinstance(p.orelse[0], ast.If)}
    out: set[int] = set()
    for node in tests:
        if _decide(node.test, names, release, calls) is not True:
            continue
        before = earlier.get(id(node))
        while before is not None and _decide(before.test, names, release, calls) is False:
            before = earlier.get(id(before))
        if before is None:
            out.add(id(node))
    return out


def _parsable(text: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _release_constants(tree: ast.AST) -> frozenset[str]:
    """Names the file binds to one release: `V0120 = parse_version("0.12.0")`, `OLDEST = "0.5.4"`, and the members of
    its classes that hold one (`VLLMVersion.v_0_6_3`, `_release_members`)."""
    out: set[str] = set()
    for node in nodes_of(tree, ast.Assign):
        if _one_release(node.value):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(out) | _release_members(tree)


def _one_release(value: ast.expr) -> bool:
    """`"0.6.3"` or `parse_version("0.12.0")`."""
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    return isinstance(value, ast.Constant) and isinstance(value.value, str) and VERSION_TEXT.match(value.value) is not None


def _release_members(tree: ast.AST) -> frozenset[str]:
    """`Class.member` for each member a top-level class of the module binds to one release in its body:
    ChatLearn's `class VLLMVersion(str, Enum): v_0_6_3 = "0.6.3"`, compared with as `version == VLLMVersion.v_0_6_3`
    (HC)."""
    return frozenset(f"{cls.name}.{t.id}" for cls in getattr(tree, "body", ()) if isinstance(cls, ast.ClassDef)
                     for node in cls.body if isinstance(node, ast.Assign) and _one_release(node.value)
                     for t in node.targets if isinstance(t, ast.Name))


def _names_releases(test: ast.expr, constants: frozenset[str] = frozenset(), helpers: frozenset[str] = frozenset()) -> bool:
    if isinstance(test, ast.BoolOp):
        # `a == "0.5.4" or a == "0.5.5"` names releases; `and` does when one of its parts does
        parts = [_names_releases(v, constants, helpers) for v in test.values]
        if isinstance(test.op, ast.Or):
            return all(parts)
        return any(parts) or _bounded_both_ways(test.values, constants)
    if isinstance(test, ast.Compare):
        if len(test.ops) == 2:  # `V0120 < v < V0170`: the releases between two named ones
            up = all(isinstance(op, (ast.Lt, ast.LtE)) for op in test.ops)
            down = all(isinstance(op, (ast.Gt, ast.GtE)) for op in test.ops)
            return (up or down) and _strings(test.left, constants) and _strings(test.comparators[1], constants)
        return len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In)) and any(
            _strings(side, constants) for side in (test.left, test.comparators[0]))
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith":
        return bool(test.args) and _strings(test.args[0], constants)
    return _helper_call(test, helpers)


def _bounded_both_ways(parts: list[ast.expr], constants: frozenset[str]) -> bool:
    """`v >= parse("0.8.5") and v < parse("0.9.0")`: one expression bounded below and above by releases, the releases
    between two named ones (as `V0120 < v < V0170` is). One bound alone (`v >= "0.7"`) runs on every newer release."""
    bounds: dict[str, set[bool]] = {}  # the bounded expression -> which bounds (True: from above)
    for part in parts:
        if not (isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))):
            continue
        left, right = part.left, part.comparators[0]
        below_right = isinstance(part.ops[0], (ast.Lt, ast.LtE))  # `left < right`: right bounds left from above
        if _strings(right, constants) and not _strings(left, constants):
            bounds.setdefault(ast.dump(left), set()).add(below_right)
        elif _strings(left, constants) and not _strings(right, constants):
            bounds.setdefault(ast.dump(right), set()).add(not below_right)
    return any(len(sides) == 2 for sides in bounds.values())


def _given_one_release(call: ast.Call) -> bool:
    """`f("0.8.0")`: a call of a plain name given one release and nothing else."""
    return (isinstance(call.func, ast.Name) and len(call.args) == 1 and not call.keywords
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
            and VERSION_TEXT.match(call.args[0].value) is not None)


def _helper_call(test: ast.expr, helpers: frozenset[str]) -> bool:
    """`is_vllm_equal("0.8.0")`: a release-equality helper (`_equality_helpers`) given one release."""
    return isinstance(test, ast.Call) and _given_one_release(test) and test.func.id in helpers


def _asks_helpers(test: ast.expr, helpers: frozenset[str]) -> bool:
    """A test made only of release-equality helper calls (`is_vllm_equal("0.8.0") or is_vllm_equal("0.8.1")`)."""
    if isinstance(test, ast.BoolOp):
        return all(_asks_helpers(v, helpers) for v in test.values)
    return _helper_call(test, helpers)


def _equality_helpers(tree: ast.Module) -> frozenset[str]:
    """The module's top-level functions that answer "is the running vLLM this release": each `return` of one
    compares two values for equality (`return vllm_base_version == target_base_version`; `return False` from an
    `except` aside), and the function reads vLLM's version (`vllm.__version__`, `importlib.metadata.version("vllm")`)
    and its first parameter (the release asked about). A helper with an ordering (`>=`) answers for every newer
    release, not for one."""
    out: set[str] = set()
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args:
            continue
        values = [n.value for n in nodes_within(tree, fn, ast.Return) if n.value is not None
                  and not (isinstance(n.value, ast.Constant) and n.value.value is False)]
        if not values or not all(isinstance(v, ast.Compare) and len(v.ops) == 1 and isinstance(v.ops[0], ast.Eq)
                                 for v in values):
            continue
        nodes = list(walk(fn))  # one small function of a module another file calls with a release
        param = fn.args.args[0].arg
        reads_version = any(isinstance(n, ast.Attribute) and n.attr == "__version__" or
                            isinstance(n, ast.Call) and calls_one_of(n, ("version",)) and n.args
                            and isinstance(n.args[0], ast.Constant) and n.args[0].value == "vllm" for n in nodes)
        if reads_version and any(isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load) for n in nodes):
            out.add(fn.name)
    return frozenset(out)


def _helper_lookup(by_module: dict, source, names):
    """module -> its release-equality helpers and its classes' release members (`VLLMVersion.v_0_6_3`), read once per
    client module (one without vLLM through `source`)."""
    found: dict[str, frozenset[str]] = {}

    def helpers(module: str) -> frozenset[str]:
        if module not in names:
            return frozenset()
        if module not in found:
            f = by_module.get(module)
            tree = f.tree if f is not None else (source.module_tree(module) or (None,))[0] if source is not None else None
            found[module] = _equality_helpers(tree) | _release_members(tree) if tree is not None else frozenset()
        return found[module]
    return helpers


def _helpers_in(f, is_package: bool, helpers) -> frozenset[str]:
    """The release-equality helpers file `f` defines or imports by name from another client module, and the release
    members of the classes it imports (`from pkg.constant import VLLMVersion`: `VLLMVersion.v_0_6_3`), looked up only
    in a file that calls a name with one release or tests `==` / `in` against an attribute (most files do neither)."""
    if not any(_given_one_release(c) for c in nodes_of(f.tree, ast.Call)) and not _tests_an_attribute(f.tree):
        return frozenset()
    out = set(helpers(f.module))
    for node in nodes_of(f.tree, ast.ImportFrom):
        base = resolve_relative(f.module, is_package, node.level, node.module)
        if base != f.module:
            mine = helpers(base)
            out |= {a.asname or a.name for a in node.names if a.name in mine}
            out |= {f"{a.asname or a.name}.{m.partition('.')[2]}" for a in node.names
                    for m in mine if m.partition(".")[0] == a.name}
    return frozenset(out)


def _tests_an_attribute(tree: ast.AST) -> bool:
    """An `if a == X.y` / `if a in (X.y, X.z)` in the file."""
    def attributes(node: ast.expr) -> bool:
        items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
        return bool(items) and all(isinstance(e, ast.Attribute) for e in items)
    return any(isinstance(n.test, ast.Compare) and isinstance(n.test.ops[0], (ast.Eq, ast.In))
               and attributes(n.test.comparators[0]) for n in nodes_of(tree, ast.If))


def _pattern_names_releases(pattern: ast.pattern) -> bool:
    """`case "0.11.0":`, `case "0.11.0" | "0.11.1":` (a wildcard, a capture or a class pattern names none)."""
    if isinstance(pattern, ast.MatchOr):
        return bool(pattern.patterns) and all(_pattern_names_releases(p) for p in pattern.patterns)
    return isinstance(pattern, ast.MatchValue) and _strings(pattern.value)


def _strings(node: ast.expr, constants: frozenset[str] = frozenset()) -> bool:
    """A string literal, a release parsed in place (`parse("0.8.5")`, `Version("0.9.0")`), a name the file binds to one
    release, or a tuple / list / set of them."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_strings(e, constants) for e in node.elts)
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.Attribute):
        return dotted_name(node) in constants  # `VLLMVersion.v_0_6_3`
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        arg = node.args[0]
        return isinstance(arg, ast.Constant) and isinstance(arg.value, str) and VERSION_TEXT.match(arg.value) is not None
    return isinstance(node, ast.Constant) and isinstance(node.value, str)
