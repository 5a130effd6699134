"""Client packages that refuse the target vLLM when they are imported: a package `__init__` whose module-level `if`
chain, evaluated for the target's version, takes a branch that raises (rlinf 0.3.0's rollout package:
`elif package_version >= parse("0.8.5") and package_version < parse("0.9.0"): ... else: raise ValueError(...)`).
Python runs a package's `__init__` before any module under it, so on that vLLM none of them runs: a finding in one is
a warning at most, naming the refusal. Only tests that can be decided are decided: comparisons of a name bound to vLLM's
version with a release, and `is None` (vLLM is installed); anything else leaves the package unjudged.
"""

from __future__ import annotations

import ast
import dataclasses
import operator
import re
from dataclasses import dataclass

from driftcheck.astnodes import dotted_name, nodes_of, own_scope, walk, walk_statements, within
from driftcheck.client_model.client import parse_client_file
from driftcheck.client_model.except_clauses import handler_catches, only_import_errors
from driftcheck.client_model.guards import NO_RETURN, Guard
from driftcheck.client_model.version_checks import VERSION_TEXT
from driftcheck.vllm_model.pysummary import resolve_relative

_OPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq,
        ast.NotEq: operator.ne}
_PARSERS = ("parse", "Version", "parse_version", "LooseVersion")  # what turns a version string into a comparable one


@dataclass(frozen=True)
class Refusal:
    """A package `__init__`'s raise that the target's version takes."""
    package: str
    rel: str  # the `__init__.py`
    line: int
    col: int
    code: str  # the raise, as written (its first line)
    test_line: int  # the `if` whose branch raises
    taken: bool  # whether that test is true for the target (its body raises) or false (its `else` does)


def refusals(files, source, version: str | None, package: str = "vllm") -> dict[str, Refusal]:
    """Package -> its refusal, for every package above a client module with vLLM (its `__init__` read even when it
    imports no vLLM itself)."""
    if not version:
        return {}
    by_module = {f.module: f for f in files}
    others = source.other_modules() if source is not None else {}
    out: dict[str, Refusal] = {}
    for pkg in sorted({".".join(f.module.split(".")[:i]) for f in files for i in range(1, len(f.module.split(".")))}):
        f = by_module.get(pkg)
        rel = f.rel if f is not None else others.get(pkg, "")
        if not rel.endswith("__init__.py"):
            continue
        if f is None:
            try:
                data = source.tree.read_bytes(rel)
                f = parse_client_file(source.tree, rel, data) if b"raise" in data or b"assert" in data else None
            except Exception:  # unreadable or not parseable here: nothing to judge
                f = None
        found = _raising(f.tree, version, package) if f is not None and _may_refuse(f.tree) else None
        if found is not None:
            raising, test, taken = found
            out[pkg] = Refusal(pkg, rel, raising.lineno, raising.col_offset + 1, f.code(raising.lineno), test.lineno, taken)
    return out


def refused_modules(files, source, version: str | None, package: str = "vllm", api=None) -> dict[str, Guard]:
    """File -> a guard for each client module (with vLLM) under a package whose `__init__` raises on vLLM `version`,
    and for each one that only branches `version` does not take load (`untaken_modules`)."""
    refused = refusals(files, source, version, package)
    out: dict[str, Guard] = untaken_modules(files, source, version, package, api)
    for f in files if refused else []:
        parts = f.module.split(".")
        for i in range(1, len(parts)):  # the packages above it, outermost first: each `__init__` runs before it
            found = refused.get(".".join(parts[:i]))
            if found is not None:
                out[f.rel] = Guard(1, 10 ** 9, "refused", frozenset(), found.line, where=f"{found.rel}:{found.line}")
                break
    return out


def untaken_modules(files, source, version: str | None, package: str = "vllm", api=None) -> dict[str, Guard]:
    """File -> a "dispatched" guard for each client module that only branches the target's version does not take
    load (ROLL 0.3.0 on vLLM 0.10.2: `elif Version("0.15") <= Version(vllm.__version__): import
    roll.third_party.vllm.patch_transformers`, and a class named there by string). A test is decided as a refusal's
    is (`_decide`: a name bound to vLLM's version, or `vllm.__version__`, compared with a release); one that cannot be
    decided counts as taken both ways. A test naming releases (`==`) is `dispatched_modules`' already, whatever the
    target; this also takes one bound (`>=`) where the target is on the other side of it. The version may also be a
    function's local or a `self.` attribute bound by a helper that returns it (`_bound_versions`; trinity-rft 0.5.2:
    `vllm_version = get_vllm_version()`, `if vllm_version <= parse_version("0.11.0"): from .api_patch import ...`), or
    imported as `from vllm import __version__ as VLLM_VERSION`. The statements after an `if` whose branch the target
    takes always leave the block (`return`, `raise`, `pytest.skip(...)`) do not run either (xinference 4.1.0: the V0
    engine loaded under `if version.parse(VLLM_VERSION) < version.parse("0.11.0")`, and a test that skips itself on a
    newer vLLM before importing the V0 scheduler). A predicate may come from another client module (`from pkg.utils
    import plugin_version_compatible`, one whose returns the target decides once the module's release constants are
    read in: `_returned_answer`), and a test `not envs.SKIP_CHECK and not plugin_version_compatible()` that the target
    decides but for an undecided part counts as taken (`_refuses_unless`): what follows runs there only if the user
    bypasses the check (arctic-inference 0.3.0's general plugin, which imports its patches only after it, PA1)."""
    from driftcheck.client_model.cross_file_guards import (
        _guards_for, _helper_call, _helper_lookup, _helpers_in, _load_edges, _loaded_only_guarded,
    )
    from packaging.version import InvalidVersion, Version

    if not version:
        return {}
    try:
        target = Version(version)
    except InvalidVersion:
        return {}

    by_module = {f.module: f for f in files}
    helpers_of: dict[str, dict[str, bool]] = {}
    registry_spans: dict[str, list[tuple[int, int]]] = {}  # file -> the spans a registry test decides (their wording)
    probe_spans: dict[str, list[tuple[int, int, str]]] = {}  # file -> spans a vLLM object's attribute decides, and why

    def helpers(module: str) -> dict[str, bool]:  # a client module's top-level functions that return vLLM's version
        if module not in helpers_of:
            f = by_module.get(module)
            found = (f.tree, True) if f is not None else source.module_tree(module) if source is not None else None
            helpers_of[module] = _version_helpers(found[0], package) if found is not None else {}
        return helpers_of[module]

    def untaken(f) -> list[tuple[int, int]]:
        ifs = [node for node in nodes_of(f.tree, ast.If) if _may_decide(node.test)]
        # `hasattr(envs, "VLLM_USE_V1")`, `envs` a vLLM module: the target's sources answer it (ROLL, LB2)
        probed = _module_attribute_probes(f, api, package) if api is not None else {}
        # `hasattr(parallel_config, "engine_core_launcher_cls")` on a vLLM object whose class lacks it (FE1)
        described: dict[str, str] = {}
        hooks: list[tuple[int, int, str]] = []  # `x.NAME = "pkg.mod.Cls"` where vLLM neither has nor reads NAME (FE2)
        names_a_module = heads_quoted is not None and heads_quoted.search(f.text) is not None  # (few files do)
        objects = _object_attribute_probes(f, api, package, described, hooks if names_a_module else None) \
            if api is not None else {}
        probed.update(objects)
        stored = [(a, b) for a, b, _what in hooks]  # a name handed only to an attribute vLLM never reads (FE2)
        probe_spans.setdefault(f.rel, []).extend(
            (a, b, f"a store into {what}, an attribute this vLLM neither has nor reads, so nothing loads it")
            for a, b, what in hooks)
        ifs += [node for node in nodes_of(f.tree, ast.If) if probed and node not in ifs and any(
            isinstance(n, ast.Call) and _call_key(n) in probed for n in walk(node.test))]
        # `if "DotsOCRForCausalLM" not in ModelRegistry.get_supported_archs():`: the target's registry answers it (QA1)
        shipped = _registry_probes(f, api, package) if api is not None else {}
        probed = {**probed, **shipped}
        ifs += [node for node in nodes_of(f.tree, ast.If) if shipped and node not in ifs and any(
            isinstance(n, ast.Compare) and _registry_key(n) in shipped for n in walk(node.test))]
        imported = _imported_predicates(f, predicates, client_modules)
        ifs += [node for node in nodes_of(f.tree, ast.If) if imported and node not in ifs and any(
            isinstance(n, ast.Call) and (dotted_name(n.func) or "") in imported for n in walk(node.test))]
        if not ifs:
            return stored  # (most files: what binds the version is read only for a test that may compare it)
        names = _version_names(f.tree, package)
        if _QUOTED_RELEASE.search(f.text) and any(_release(n) is not None for n in nodes_of(f.tree, ast.Constant, ast.Call)):
            # a release a test may name (a string starting "0.8"; the text says first whether the file has one)
            names = {**_bound_versions(f.tree, package, _helpers_seen_by(f, helpers, package)), **names}
        names[f"{package}.__version__"] = False
        calls = {**_predicates(f.tree, names, target), **imported, **probed}
        # `if not vllm_version_is("0.25.1"):` with a release-equality helper of the client (`_equality_helpers`, GA):
        # decided for the target's release like a comparison (RD)
        equal = {h for h in _helpers_in(f, f.rel.endswith("__init__.py"), equality) if "." not in h}
        for call in nodes_of(f.tree, ast.Call) if equal else ():
            if _helper_call(call, equal):
                try:
                    calls[_call_key(call)] = target == Version(call.args[0].value)
                except InvalidVersion:
                    pass
        if calls:  # also the tests that call one: `if not self._is_vllm_v1(): from .v0_executor import ...`
            ifs += [node for node in nodes_of(f.tree, ast.If) if not _may_decide(node.test) and any(
                isinstance(n, ast.Call) and (dotted_name(n.func) or "") in calls for n in walk(node.test))]
        spans: list[tuple[int, int]] = []
        decided: dict[int, bool] = {}
        for node in ifs:
            taken = _decide(node.test, names, target, calls)
            branch = node.body if taken is False else node.orelse if taken else []
            if branch:
                spans.append((branch[0].lineno, max(s.end_lineno or s.lineno for s in branch)))
            if taken is not None and _leaves(node.body if taken else node.orelse):
                decided[id(node)] = taken
            elif taken is None and _leaves(node.body) and _refuses_unless(node.test, names, target, calls):
                decided[id(node)] = True  # (what follows runs on the target only if the user bypasses the check)
        spans += _after_leaving(f.tree, decided)
        if shipped:
            registry_spans[f.rel] = _registry_decided(f.tree, ifs, spans, decided, shipped)
        for node in ifs if objects else ():  # what a test of a vLLM object's attribute decides, said as such (FE1)
            keys = [_call_key(n) for n in walk(node.test) if isinstance(n, ast.Call) and _call_key(n) in objects]
            if keys:
                ranges = [(b[0].lineno, max(st.end_lineno or st.lineno for st in b)) for b in (node.body, node.orelse) if b]
                ranges += _after_leaving(f.tree, {id(node): decided[id(node)]} if id(node) in decided else {})
                test = f"a test of whether {described[keys[0]]}, which it lacks here"
                probe_spans.setdefault(f.rel, []).extend((a, b, test) for a, b in ranges if (a, b) in spans)
        spans += stored
        return spans + _constants_used_only_in(f, spans, files, source)

    predicates_of: dict[str, dict[str, bool]] = {}

    def predicates(module: str) -> dict[str, bool]:  # a client module's version predicates (`_predicates`) on the target
        if module not in predicates_of:
            f = by_module.get(module)
            found = (f.tree, True) if f is not None else source.module_tree(module) if source is not None else None
            answers: dict[str, bool] = {}
            if found is not None and any(isinstance(c.value, str) and VERSION_TEXT.match(c.value)
                                         for c in nodes_of(found[0], ast.Constant)):  # a release it may compare with
                answers = {k: v for k, v in _predicates(found[0], {**_version_names(found[0], package),
                                                                   f"{package}.__version__": False}, target).items()
                           if "." not in k}
            predicates_of[module] = answers
        return predicates_of[module]

    others = source.other_modules() if source is not None else {}
    names = by_module.keys() | others.keys()
    client_modules = names
    client_heads = {part for m in names for part in m.split(".")[:2]}  # (a `src/` layout's packages are second)
    # `"head.` or `'head.` for any of them, one search per file
    heads_quoted = re.compile("[\"'](?:" + "|".join(map(re.escape, sorted(client_heads))) + r")\.") if client_heads else None
    equality = _helper_lookup(by_module, source, names)
    edges = _load_edges(files, names, spans_of=untaken)
    if not any(g and target in names for target, where in edges.items() for *_, g in where):
        return {}  # no load of a client module in a branch the target skips (most clients)
    if others:  # a file without vLLM may load such a module in a branch that runs
        for target_module, where in _load_edges((f for f in source.other_files() if f.module not in by_module), names,
                                                spans_of=untaken).items():
            edges.setdefault(target_module, []).extend(where)
    only_untaken = _loaded_only_guarded(edges)
    guards = _guards_for(only_untaken, edges, by_module)
    # a module also imported inside a `try` that catches ImportError (a test that skips itself when the import fails):
    # its import-time ImportErrors are handled wherever it is loaded on the target, its other findings are not (FE1)
    tried = _handled_import_loads(edges, files, source if others else None, names)
    if tried:
        loose = {m: [(i, r, line, g or (r, line) in tried) for i, r, line, g in where] for m, where in edges.items()}
        directly = {m for m, where in edges.items() if any(g for *_, g in where)}
        for rel, guard in _guards_for((_loaded_only_guarded(loose) - only_untaken) & directly, loose, by_module).items():
            if rel not in guards:
                guards[rel] = dataclasses.replace(guard, catches=frozenset({"ImportError", "ModuleNotFoundError"}))
    for rel, guard in guards.items():
        load_rel, _, load_line = guard.where.rpartition(":")
        if any(a <= int(load_line or 0) <= b for a, b in registry_spans.get(load_rel, ())):
            guards[rel] = dataclasses.replace(guard, test="a test of whether vLLM's model registry lists an architecture")
        # what a vLLM object's attribute decides (FE1, FE2); a test that exits before the store says more than it
        for a, b, test in sorted(probe_spans.get(load_rel, ()), key=lambda span: not span[2].startswith("a test")):
            if a <= int(load_line or 0) <= b:
                guards[rel] = dataclasses.replace(guards[rel], test=test)
                break
    return guards


_TRY = re.compile(r"\btry\s*:")


def _handled_import_loads(edges: dict, files, source, names) -> set[tuple[str, int]]:
    """("rel", line) of the unguarded imports of client modules that sit in the body of a `try` whose handlers catch
    ImportError (`ModuleNotFoundError`, `Exception`, a bare `except`): where such an import fails, its importer carries
    on. Only the files that load a module `edges` reaches unguarded are read."""
    wanted = {rel for where in edges.values() for _i, rel, _line, g in where if not g}
    out: set[tuple[str, int]] = set()
    # a file whose text has no `try:` has no such import: only the others are read (and, outside `files`, parsed)
    pool = [f for f in files if f.rel in wanted and _TRY.search(f.text)]
    if source is not None:
        have = {f.rel for f in files}
        for rel in sorted(wanted - have):
            try:
                data = source.tree.read_bytes(rel)
                if _TRY.search(data.decode("utf-8", "replace")):
                    pool.append(parse_client_file(source.tree, rel, data))
            except Exception:  # unreadable or not parseable here: it loads nothing we can see
                continue
    for f in pool:
        bodies: list[tuple[int, int]] = []  # the line spans of the `try` bodies whose handlers catch ImportError
        for node in nodes_of(f.tree, ast.Try):
            if node.body and any(handler_catches(h, "ModuleNotFoundError") for h in node.handlers):
                bodies.append((node.body[0].lineno, max(st.end_lineno or st.lineno for st in node.body)))
        if bodies:  # the file's imports from its node buckets, not a walk of each try body
            out |= {(f.rel, imp.lineno) for imp in nodes_of(f.tree, ast.Import, ast.ImportFrom)
                    if any(a <= imp.lineno <= b for a, b in bodies)}
    return out


def _registry_decided(tree: ast.Module, ifs: list, spans: list[tuple[int, int]], decided: dict[int, bool],
                      shipped: dict[str, bool]) -> list[tuple[int, int]]:
    """Those of `spans` that a registry-membership test decides (its untaken branch, and what follows it when its
    taken branch leaves the block): a load there is said to wait on the registry, not on a version check (QA1)."""
    tests = [node for node in ifs if any(isinstance(n, ast.Compare) and _registry_key(n) in shipped for n in walk(node.test))]
    out = [(b[0].lineno, max(st.end_lineno or st.lineno for st in b)) for node in tests
           for b in (node.body, node.orelse) if b and (b[0].lineno, max(st.end_lineno or st.lineno for st in b)) in spans]
    return out + _after_leaving(tree, {id(node): decided[id(node)] for node in tests if id(node) in decided})


_NO_RETURN = NO_RETURN  # calls that never return (guards.py)


def _imported_predicates(f, predicates, client_modules) -> dict[str, bool]:
    """The version predicates (`_predicates`) file `f` imports by name from another module of the client
    (`from arctic_inference.utils import plugin_version_compatible`) -> what each returns on the target, keyed by
    the name the file calls it by."""
    imported: dict[str, tuple[str, str]] = {}  # local name -> (client module, its name there)
    for node in nodes_of(f.tree, ast.ImportFrom):
        base = resolve_relative(f.module, f.rel.endswith("__init__.py"), node.level, node.module)
        if base and base != f.module and base in client_modules:
            imported.update({a.asname or a.name: (base, a.name) for a in node.names})
    if not imported:
        return {}
    tested = {dotted_name(n.func) for node in nodes_of(f.tree, ast.If) for n in walk(node.test)
              if isinstance(n, ast.Call) and not n.args and not n.keywords and isinstance(n.func, ast.Name)}
    out: dict[str, bool] = {}
    for name in tested & imported.keys():  # (only the names an `if` calls: most files test none)
        module, there = imported[name]
        found = predicates(module)
        if there in found:
            out[name] = found[there]
    return out


def _leaves(block: list[ast.stmt]) -> bool:
    """Whether a branch always leaves its block: it ends in `return`, `raise`, `continue`, `break` or a call that never
    returns (`pytest.skip(...)` in a test whose vLLM is too new)."""
    last = block[-1] if block else None
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
        (dotted_name(last.value.func) or "") in _NO_RETURN


def _after_leaving(tree: ast.Module, decided: dict[int, bool]) -> list[tuple[int, int]]:
    """The statements after an `if` whose branch the target takes always leaves the block (`if Version(vllm.__version__)
    >= Version("0.11.0"): pytest.skip(...)` then `from ..scheduler import XavierScheduler`): they do not run. A `try`
    whose body ends in such an `if` that returns leaves too (xinference's `try: if Version(package_version("vllm")) >=
    Version("0.23.0"): return COMPAT_MODEL_CLASS` / `except (PackageNotFoundError, InvalidVersion): pass` / `return
    MODEL_CLASS`): the handlers run only if deciding the test raises, which it does not on the target; a `raise` or
    `pytest.skip` there may be caught by them, so such a `try` leaves only when it has no handlers."""
    out: list[tuple[int, int]] = []
    if not decided:
        return out
    leaving = set(decided)
    # those that leave by `return`, `continue` or `break`, which no handler of an enclosing `try` catches
    uncaught = {id(n) for n in nodes_of(tree, ast.If) if id(n) in decided
                and isinstance((n.body if decided[id(n)] else n.orelse)[-1], (ast.Return, ast.Continue, ast.Break))}
    blocks = [getattr(node, name) for node in walk_statements(tree) for name in ("body", "orelse", "finalbody")
              if isinstance(getattr(node, name, None), list)]  # only statements hold statement lists
    grew = True
    while grew:  # a `try` whose body's last statement leaves uncaught, or without handlers, leaves (nested ones too)
        grew = False
        for node in nodes_of(tree, ast.Try):
            last = id(node.body[-1]) if node.body else None
            if id(node) not in leaving and (last in uncaught or (last in leaving and not node.handlers)):
                leaving.add(id(node))
                if last in uncaught:
                    uncaught.add(id(node))
                grew = True
    for block in blocks:
        for i, stmt in enumerate(block[:-1]):
            if id(stmt) in leaving:
                rest = block[i + 1:]
                out.append((rest[0].lineno, max(s.end_lineno or s.lineno for s in rest)))
                break
    return out


def _constants_used_only_in(f, spans: list[tuple[int, int]], files, source) -> list[tuple[int, int]]:
    """The line of a module-level `NAME = "pkg.mod:Cls"` whose every read in the file lies in `spans` (branches the
    target does not take) and that no other client file spells: the module it names is loaded by name only there
    (xinference's `MODEL_CLASS`, the vendored model registered below 0.23.0, returned only after the test that
    returns the compat model on newer releases)."""
    if not spans:
        return []
    out: list[tuple[int, int]] = []
    reads: dict[str, list[int]] | None = None
    for node in f.tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and "." in node.value.value):
            continue
        if reads is None:
            reads = {}
            for n in nodes_of(f.tree, ast.Name):
                if isinstance(n.ctx, ast.Load):
                    reads.setdefault(n.id, []).append(n.lineno)
        name = node.targets[0].id
        lines = reads.get(name, [])
        if not lines or not all(any(a <= line <= b for a, b in spans) for line in lines):
            continue
        if any(g.rel != f.rel and name in g.text for g in files) or (source is not None and any(
                g.rel != f.rel for g in source.other_files(containing=name))):
            continue  # another file may read it (`from pkg.navi import MODEL_CLASS`)
        out.append((node.lineno, node.end_lineno or node.lineno))
    return out


_IMPORTED_VERSION = ast.Constant(value=None)  # stands for `from vllm import __version__` among a name's bindings
_QUOTED_RELEASE = re.compile(r"""["']\d+\.\d+""")  # where a string constant `_release` takes may start


def _may_decide(test: ast.expr) -> bool:
    """Whether `_decide` may decide `test`: it compares something with a release spelled in it, or tests `is (not)
    None` (the version of an installed vLLM never is None)."""
    for node in walk(test):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and VERSION_TEXT.match(node.value):
            return True
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return True
    return False


def _helpers_seen_by(f, helpers, package: str) -> dict[str, bool]:
    """The version helpers (`_version_helpers`) a file can call by name: its own top-level ones and those it imports
    from another module of the client (`helpers(module)`)."""
    out = dict(_version_helpers(f.tree, package))
    root = f.module.split(".")[0]
    for node in nodes_of(f.tree, ast.ImportFrom):
        base = resolve_relative(f.module, f.rel.endswith("__init__.py"), node.level, node.module)
        if base and base != f.module and base.split(".")[0] == root:
            found = helpers(base)
            out.update({a.asname or a.name: found[a.name] for a in node.names if a.name in found})
    return out


def _version_helpers(tree: ast.Module, package: str) -> dict[str, bool]:
    """Top-level functions whose every `return` gives the installed vLLM's version -> whether parsed."""
    out: dict[str, bool] = {}
    functions = [fn for fn in tree.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return out
    # the file's returns and assignments from its node buckets, each function's by its lines (a walk per function
    # was most of this question on a whole-platform client)
    returns, assignments = nodes_of(tree, ast.Return), nodes_of(tree, ast.Assign, ast.AnnAssign, ast.AugAssign)
    for fn in functions:
        parsed = _returns_the_version(fn, package, within(returns, fn), within(assignments, fn))
        if parsed is not None:
            out[fn.name] = parsed
    return out


def _returns_the_version(fn, package: str, returns: list, assignments: list) -> bool | None:
    """Whether (parsed or not) every `return` of `fn` gives vLLM's version: `return parse(vllm.__version__)`, or a local
    name every binding of which reads it or, as a fallback, is one release (`v = parse("0.8.5")` for a version that does
    not parse), at least one reading it. None when some return gives something else. `returns` and `assignments`: those
    inside `fn`, nested functions' too (what walking `fn` finds)."""
    if not returns:
        return None
    local: dict[str, list[ast.expr]] = {}
    for node in assignments:
        for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
            if isinstance(t, ast.Name):
                local.setdefault(t.id, []).append(node.value if not isinstance(node, ast.AugAssign) else None)
    parsed_all = True
    for r in returns:
        value = r.value
        if value is None:
            return None
        values = local.get(value.id) if isinstance(value, ast.Name) else [value]
        if not values or any(v is None for v in values):
            return None
        reads = [v for v in values if _reads_the_version(v, package, set())]
        if not reads or any(v not in reads and _release(v) is None for v in values):
            return None
        parsed_all = parsed_all and all(_parses(v) for v in values)
    return parsed_all


def _bound_versions(tree: ast.Module, package: str, helpers: dict[str, bool]) -> dict[str, bool]:
    """Names and `self.` attributes (dotted) every binding of which in the file is vLLM's version -> whether parsed:
    read in place (`_reads_the_version`) or the call of a helper that returns it (`helpers`); a release bound in an
    `except` body is the fallback for a version that does not parse, which no release's does. A name that is also a
    parameter, a loop target or bound to anything else is left out."""
    bindings: dict[str, list] = {}  # (each name's values in any order: all must read the version)
    fallbacks = {id(stmt) for h in nodes_of(tree, ast.ExceptHandler) for stmt in h.body}
    absent = _without_package(tree, package)
    for node in nodes_of(tree, ast.Assign, ast.AnnAssign, ast.AugAssign):
        value = None if isinstance(node, ast.AugAssign) else node.value
        if id(node) in fallbacks and value is not None and _release(value) is not None:
            continue  # `except InvalidVersion: v = parse("0.8.5")`: a version that does not parse, never a release's
        if id(node) in absent:
            continue  # `except ImportError: VLLM_VERSION = None` after `import vllm`: vLLM is installed on the target
        for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
            name = dotted_name(t) if isinstance(t, (ast.Name, ast.Attribute)) else None
            for n in ([] if name else walk(t)):  # a tuple target: each name in it is bound to something else
                if isinstance(n, (ast.Name, ast.Attribute)) and dotted_name(n):
                    bindings.setdefault(dotted_name(n), []).append(None)
            if name:
                bindings.setdefault(name, []).append(value)
    for node in nodes_of(tree, ast.arg):
        bindings.setdefault(node.arg, []).append(None)
    for node in nodes_of(tree, ast.Import, ast.ImportFrom):  # `from vllm import __version__ as VLLM_VERSION`
        version_import = isinstance(node, ast.ImportFrom) and node.module == package and not node.level
        for a in node.names:
            name = a.asname or a.name.split(".")[0]
            bindings.setdefault(name, []).append(_IMPORTED_VERSION if version_import and a.name == "__version__" else None)
    for node in nodes_of(tree, ast.For, ast.AsyncFor, ast.comprehension, ast.withitem, ast.NamedExpr):
        target = node.optional_vars if isinstance(node, ast.withitem) else node.target
        for n in walk(target) if target is not None else []:
            if isinstance(n, (ast.Name, ast.Attribute)) and dotted_name(n):
                bindings.setdefault(dotted_name(n), []).append(None)
    out: dict[str, bool] = {}
    for name, values in bindings.items():
        parsed = []
        for value in values:
            if value is None:
                break
            if value is _IMPORTED_VERSION:
                parsed.append(False)  # the version string itself
            elif _reads_the_version(value, package, set()):
                parsed.append(_parses(value))
            elif isinstance(value, ast.Call) and not value.args and not value.keywords \
                    and (dotted_name(value.func) or "") in helpers:
                parsed.append(helpers[dotted_name(value.func)])
            else:
                break
        else:
            if parsed and (name.count(".") == 0 or name.startswith("self.")):
                out[name] = all(parsed)
    return out


def _without_package(tree: ast.Module, package: str) -> set[int]:
    """The statements of `except ImportError:` handlers of a `try` whose body imports `package`: what runs when it is
    not installed, which the target, installed, never takes."""
    out: set[int] = set()
    for node in nodes_of(tree, ast.Try):
        imports = any(isinstance(n, ast.Import) and any(a.name.split(".")[0] == package for a in n.names) or
                      isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").split(".")[0] == package
                      for stmt in node.body for n in walk(stmt))
        if not imports:
            continue
        for h in node.handlers:
            if only_import_errors(h):
                out |= {id(stmt) for stmt in h.body}
    return out


def _predicates(tree: ast.Module, names: dict[str, bool], target) -> dict[str, bool]:
    """Functions and methods without arguments (but `self`) that answer a version question: their first statement
    (after a docstring and imports) is `if <test the target decides true>: return True/False` (xinference 4.1.0's
    `_is_vllm_v1(self)`: `if VLLM_VERSION is not None and VLLM_VERSION > version.parse("0.11.0"): return True`) ->
    what they return on the target, keyed `name` (module level) or `self.name` (a method). A name defined twice is
    left out."""
    out: dict[str, bool | None] = {}
    releases: list[dict[str, str]] = []  # the file's release constants, read once a function may need them
    for owner in [tree, *nodes_of(tree, ast.ClassDef)]:
        for fn in owner.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list:
                continue
            params = fn.args.posonlyargs + fn.args.args
            method = owner is not tree
            if len(params) != int(method) or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs:
                continue
            key = f"self.{fn.name}" if method else fn.name
            body = [stmt for stmt in fn.body if not isinstance(stmt, (ast.Import, ast.ImportFrom)) and not (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str))]
            first = body[0] if body else None
            answer = None
            if isinstance(first, ast.If) and len(first.body) == 1 and isinstance(first.body[0], ast.Return) and \
                    isinstance(first.body[0].value, ast.Constant) and isinstance(first.body[0].value.value, bool) and \
                    _decide(first.test, names, target) is True:
                answer = first.body[0].value.value
            elif not method and any(isinstance(n, ast.Return) for n in fn.body[-1:]):
                if not releases:
                    releases.append(_release_constants_of(tree))
                answer = _returned_answer(fn, releases[0], names, target)
            out[key] = answer if key not in out else None
    return {k: v for k, v in out.items() if v is not None}


def _returned_answer(fn, releases: dict[str, str], names: dict[str, bool], target) -> bool | None:
    """What a module-level function without arguments returns on the target when every `return` of it is a test the
    target decides once the file's release constants are read in (arctic-inference 0.3.0's `plugin_version_compatible`:
    `want = get_compatible_vllm_version()`, a function that returns the module's `VLLM_PATCH_VERSION = "0.26.0"`, then
    `return want is not None and vllm.__version__ == want`); None otherwise (a generator, a nested function, a return
    without a value or one the target does not decide)."""
    returns = [n for n in walk(fn) if isinstance(n, ast.Return)]
    if not returns or any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                         ast.ClassDef)) and n is not fn for n in walk(fn)):
        return None
    if any(r.value is None for r in returns):
        return None
    answers = {_decide(_folded(r.value, fn, releases), names, target) for r in returns}
    return answers.pop() if len(answers) == 1 and None not in answers else None


def _release_constants_of(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound once, to a release (`VLLM_PATCH_VERSION = "0.26.0"`), and never rebound anywhere in
    the file, and the module's functions without arguments whose every return gives one -> that release, the
    functions keyed `name()`."""
    stored: dict[str, int] = {}
    for n in nodes_of(tree, ast.Name, ast.Global, ast.Nonlocal):  # (counts: the order does not matter)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stored[n.id] = stored.get(n.id, 0) + 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                stored[name] = stored.get(name, 0) + 2
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and stored.get(node.targets[0].id) == 1:
            found = _release(node.value)
            if found is not None and not found[1]:
                out[node.targets[0].id] = found[0]
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.decorator_list or fn.args.args \
                or fn.args.posonlyargs or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs:
            continue
        given = set()
        for r in (n for n in walk(fn) if isinstance(n, ast.Return)):
            value = r.value
            if isinstance(value, ast.Name) and value.id in out and not any(
                    isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load) for n in walk(fn)):
                given.add(out[value.id])
            elif value is not None and _release(value) is not None and not _release(value)[1]:
                given.add(_release(value)[0])
            else:
                given.add(None)
        if len(given) == 1 and None not in given:
            out[f"{fn.name}()"] = given.pop()
    return out


def _folded(value: ast.expr, fn, releases: dict[str, str]) -> ast.expr:
    """`value` with the release each name stands for read in: a module constant (`releases`), a local of `fn` bound
    once to one or to the call of a function that returns one; `<release> is (not) None` becomes the constant it is."""
    import copy

    if not releases:
        return value
    bindings: dict[str, list] = {}
    for n in walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bindings.setdefault(n.id, []).append(n)
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    local: dict[str, str] = {}
    for node in (n for n in walk(fn) if isinstance(n, ast.Assign)):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and \
                len(bindings.get(node.targets[0].id, ())) == 1 and node.targets[0].id not in params:
            v = node.value
            key = v.id if isinstance(v, ast.Name) else f"{dotted_name(v.func)}()" \
                if isinstance(v, ast.Call) and not v.args and not v.keywords and isinstance(v.func, ast.Name) else None
            if key is not None and key in releases and key.rstrip("()") not in bindings | dict.fromkeys(params):
                local[node.targets[0].id] = releases[key]
            elif _release(v) is not None and not _release(v)[1]:
                local[node.targets[0].id] = _release(v)[0]

    class Fold(ast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Load):
                if node.id in local:
                    return ast.copy_location(ast.Constant(local[node.id]), node)
                if node.id in releases and node.id not in bindings and node.id not in params:
                    return ast.copy_location(ast.Constant(releases[node.id]), node)
            return node

        def visit_Compare(self, node):
            self.generic_visit(node)
            if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) and \
                    isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) and \
                    isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
                return ast.copy_location(ast.Constant(isinstance(node.ops[0], ast.IsNot)), node)
            return node

    return Fold().visit(copy.deepcopy(value))


def _refuses_unless(test: ast.expr, names: dict[str, bool], target, calls: dict[str, bool]) -> bool:
    """`not envs.SKIP_VERSION_CHECK and not plugin_version_compatible()`: a conjunction of which one part the target
    decides true and none false, the rest undecided. A body that leaves under it leaves on the target unless the
    undecided parts are false (a bypass the user sets): what follows runs on the target only past a version check."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return False
    parts = [_decide(v, names, target, calls) for v in test.values]
    return True in parts and False not in parts and None in parts


def _may_refuse(tree: ast.Module) -> bool:
    """A module-level `if` and a `raise` somewhere, or a module-level `assert`: what a refusal needs (most `__init__`
    files have neither)."""
    return any(isinstance(stmt, ast.Assert) for stmt in tree.body) or \
        (any(isinstance(stmt, ast.If) for stmt in tree.body) and bool(nodes_of(tree, ast.Raise)))


def _raising(tree: ast.Module, version: str, package: str) -> tuple[ast.stmt, ast.stmt, bool] | None:
    """The `raise` the module-level `if` chains take on `version`, the `if` that takes it and how its test came out,
    when every test on the way decides; or a module-level `assert` whose test is false for `version` (itself twice)."""
    from packaging.version import InvalidVersion, Version  # here: a warm scan never imports it (test_package_metadata)

    try:
        target = Version(version)
    except InvalidVersion:
        return None
    names = _version_names(tree, package)
    names[f"{package}.__version__"] = False  # read in place: a string
    for stmt in tree.body:
        if isinstance(stmt, ast.Assert) and _decide(stmt.test, names, target) is False:
            # `assert vllm.__version__ >= "0.4.2"`: a string comparison, false for "0.34.0" (29g M2, OpenRLHF-RAG)
            return stmt, stmt, False
        while isinstance(stmt, ast.If):
            taken = _decide(stmt.test, names, target)
            if taken is None:  # a test we cannot decide: only one that raises in neither branch lets the import go on
                if any(isinstance(n, ast.Raise) for n in walk(stmt)):
                    return None
                break
            body = stmt.body if taken else stmt.orelse
            raising = next((s for s in body if isinstance(s, ast.Raise)), None)
            if raising is not None:
                return raising, stmt, taken
            stmt = body[0] if len(body) == 1 and isinstance(body[0], ast.If) else None  # an `elif`
    return None


def _version_names(tree: ast.Module, package: str) -> dict[str, bool]:
    """Module-level names bound to the installed vLLM's version -> whether the value is parsed (compares as a version,
    not as a string): `v = parse(version("vllm"))`, `v = vllm.__version__`, `v = get_version("vllm")` with a helper of
    the file that parses what it returns."""
    spelled = {t.id for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
               and node.value.value == package for t in node.targets if isinstance(t, ast.Name)}  # `name = "vllm"`
    bound = [node for node in tree.body if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and _reads_the_version(node.value, package, spelled)]
    if not bound:
        return {}  # (most files: the file's functions are walked only to tell how a version read here is parsed)
    parsing = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and any(isinstance(r, ast.Return) and r.value is not None and _parses(r.value) for r in walk(node))}
    out: dict[str, bool] = {}
    for node in bound:
        value = node.value
        out[node.targets[0].id] = _parses(value) or (isinstance(value, ast.Call) and (dotted_name(value.func) or "") in parsing)
    return out


def _reads_the_version(value: ast.expr, package: str, spelled: set[str]) -> bool:
    """`vllm.__version__`, `version("vllm")` / `get_version("vllm")` (a call named for a version, given the package's
    name or a name bound to it: `spelled`), `get_distribution("vllm").version`, each possibly parsed."""
    while _parses(value) and len(value.args) == 1:
        value = value.args[0]
    if isinstance(value, ast.Attribute) and value.attr in ("__version__", "version"):
        return dotted_name(value.value) == package or _imports_the_package(value.value, package, spelled) \
            or _reads_the_version(value.value, package, spelled)
    return isinstance(value, ast.Call) and any((isinstance(a, ast.Constant) and a.value == package)
                                               or (isinstance(a, ast.Name) and a.id in spelled) for a in value.args) \
        and ("version" in (dotted_name(value.func) or "").rsplit(".", 1)[-1].lower()
             or (dotted_name(value.func) or "").endswith("get_distribution"))


def _imports_the_package(value: ast.expr, package: str, spelled: set[str]) -> bool:
    """`importlib.import_module("vllm")` / `__import__("vllm")`: the package's module, as `vllm` itself (index-tts:
    `version.parse(importlib.import_module("vllm").__version__)`)."""
    return isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords \
        and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in ("import_module", "__import__") \
        and ((isinstance(value.args[0], ast.Constant) and value.args[0].value == package)
             or (isinstance(value.args[0], ast.Name) and value.args[0].id in spelled))


def _parses(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in _PARSERS


def _decide(test: ast.expr, names: dict[str, bool], target: Version, calls: dict[str, bool] | None = None) -> bool | None:
    """True / False for the target's version, None when driftcheck cannot tell; `calls`: what the file's version
    predicates return (`_predicates`)."""
    if isinstance(test, ast.Constant) and isinstance(test.value, bool):
        return test.value  # what `_returned_answer` folds `"0.26.0" is not None` to
    if isinstance(test, ast.Call) and calls:
        return calls.get((dotted_name(test.func) or "") if not test.args and not test.keywords else _call_key(test))
    if isinstance(test, ast.BoolOp):
        parts = [_decide(v, names, target, calls) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in parts else None if None in parts else True
        return True if True in parts else None if None in parts else False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decide(test.operand, names, target, calls)
        return None if inner is None else not inner
    if not isinstance(test, ast.Compare):
        return None
    key = _registry_key(test)
    if key:  # `"Arch" (not) in ModelRegistry.get_supported_archs()`: answered only for an architecture the target ships
        shipped = (calls or {}).get(key)
        return None if shipped is None else shipped == isinstance(test.ops[0], ast.In)
    result = True
    sides = [test.left, *test.comparators]
    for op, left, right in zip(test.ops, sides, sides[1:]):
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None \
                and _subject(left, names) is not None:
            decided = isinstance(op, ast.IsNot)  # the version of an installed vLLM is never None
        elif type(op) in _OPS:
            decided = _compare(_OPS[type(op)], left, right, names, target)
        elif isinstance(op, (ast.In, ast.NotIn)):
            decided = _contains(left, right, names, target)
            decided = None if decided is None else decided == isinstance(op, ast.In)
        else:
            return None
        if decided is None:
            return None
        result = result and decided
    return result


def _contains(left: ast.expr, right: ast.expr, names: dict[str, bool], target: Version) -> bool | None:
    """`"0.8.5" in vllm.__version__` (a substring of the version string) or `vllm.__version__ in ("0.8.4", "0.8.5")`
    (one of the literals), as Python answers them for the target's version string (ROLL's version dispatch, batch
    22b's S2); None for anything else, a parsed version included."""
    def text(node: ast.expr) -> str | None:  # a release written as a string (`"0.8.5"`; not `"dev"`, `"+cpu"`)
        release = _release(node)
        return release[0] if release is not None and not release[1] else None

    if _subject(right, names) is False and text(left) is not None:
        return text(left) in str(target)
    if _subject(left, names) is False and isinstance(right, (ast.Tuple, ast.List, ast.Set)) and right.elts \
            and all(text(e) is not None for e in right.elts):
        return str(target) in {text(e) for e in right.elts}
    return None


def _call_key(call: ast.Call) -> str:
    """`vllm_version_is("0.25.1")` (RD) or `hasattr(envs, "VLLM_USE_V1")` (LB2) as the key `_decide`'s `calls` holds
    its answer under; "" for any other call."""
    if call.keywords:
        return ""
    if len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
        return f"{dotted_name(call.func)}({call.args[0].value!r})"
    if len(call.args) == 2 and dotted_name(call.args[0]) and isinstance(call.args[1], ast.Constant):
        return f"{dotted_name(call.func)}({dotted_name(call.args[0])}, {call.args[1].value!r})"
    return ""


_REGISTRY_LIST = "get_supported_archs"  # `ModelRegistry.get_supported_archs()`: the architectures vLLM knows


def _registry_key(test: ast.Compare) -> str:
    """`"Arch" in X.get_supported_archs()` / `not in`: the key `_decide`'s `calls` holds the answer under (whether the
    target's registry lists "Arch"); "" for any other comparison."""
    if len(test.ops) != 1 or not isinstance(test.ops[0], (ast.In, ast.NotIn)):
        return ""
    left, right = test.left, test.comparators[0]
    if not (isinstance(left, ast.Constant) and isinstance(left.value, str) and isinstance(right, ast.Call)
            and not right.args and not right.keywords and isinstance(right.func, ast.Attribute)
            and right.func.attr == _REGISTRY_LIST and dotted_name(right.func.value)):
        return ""
    return f"{dotted_name(right.func.value)}.{_REGISTRY_LIST}()::{left.value}"


def _registry_probes(f, api, package: str) -> dict[str, bool]:
    """`"Arch" not in ModelRegistry.get_supported_archs()` in a file, `ModelRegistry` imported from vLLM (anywhere in
    the file: a plugin's `register()` imports it in its body) -> True when the target's registry is built with "Arch"
    among its architectures (`_shipped_architectures`). A plugin that imports its own model class only when vLLM lacks
    the architecture (Kalorda's `if "DotsOCRForCausalLM" not in ModelRegistry.get_supported_archs(): from
    .modeling_dots_ocr_vllm import ...`) never loads that module on a release that ships it. An architecture the
    target does not list is left undecided: the client may have registered it itself before the test runs."""
    if _REGISTRY_LIST not in f.text:
        return {}
    bound: dict[str, str | None] = {}  # local name -> the vLLM dotted name it is bound to (None: bound otherwise too)
    for node in nodes_of(f.tree, ast.ImportFrom):
        if node.level or (node.module or "").split(".")[0] != package:
            continue
        for a in node.names:
            name, dotted = a.asname or a.name, f"{node.module}.{a.name}"
            bound[name] = dotted if bound.get(name, dotted) == dotted else None
    out: dict[str, bool] = {}
    for cmp in nodes_of(f.tree, ast.Compare) if bound else ():
        key = _registry_key(cmp)
        if not key:
            continue
        head, _, rest = dotted_name(cmp.comparators[0].func.value).partition(".")
        if bound.get(head) is None:
            continue
        archs = _shipped_architectures(api, bound[head] + (f".{rest}" if rest else ""))
        if archs is not None and cmp.left.value in archs:
            out[key] = True
    return out


def _shipped_architectures(api, dotted: str) -> frozenset[str] | None:
    """The architectures vLLM's registry object `dotted` is built with: the object is bound at module level to
    `Cls({... for arch, ... in TABLE.items()})` (or `Cls(TABLE)`), `Cls.get_supported_archs` returns `self.F.keys()`
    (or `self.F`) with F the first field of the dataclass `Cls`, and TABLE a dict literal of that module, its `**OTHER`
    entries other such literals (vLLM 0.7.3 to 0.33.0's `_VLLM_MODELS`): the keys `_table_keys` finds there, a part of
    them at worst. None when any of that does not hold."""
    from driftcheck.vllm_model.resolved import Resolved

    found = api.resolve(dotted)
    if not (isinstance(found, Resolved) and found.kind == "value" and found.path):
        return None
    tree = api.parse(found.path)
    if tree is None:
        return None
    top: dict[str, ast.AST] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                if isinstance(t, ast.Name):
                    top[t.id] = stmt.value if t.id not in top else None  # bound twice: not followed
        elif isinstance(stmt, ast.ClassDef):
            top[stmt.name] = stmt
    made = top.get(dotted.rsplit(".", 1)[-1])
    if not (isinstance(made, ast.Call) and isinstance(made.func, ast.Name) and len(made.args) == 1 and not made.keywords):
        return None
    cls = top.get(made.func.id)
    if not isinstance(cls, ast.ClassDef) or not _lists_first_field(cls):
        return None
    arg = made.args[0]
    if isinstance(arg, ast.DictComp) and len(arg.generators) == 1:
        it = arg.generators[0].iter  # `for arch, ... in TABLE.items()` keyed by `arch`
        target = arg.generators[0].target
        first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
                and isinstance(it.func.value, ast.Name) and isinstance(first, ast.Name)
                and isinstance(arg.key, ast.Name) and arg.key.id == first.id) or arg.generators[0].ifs:
            return None
        arg = it.func.value
    return _table_keys(top, arg.id, set()) if isinstance(arg, ast.Name) else None


def _lists_first_field(cls: ast.ClassDef) -> bool:
    """`@dataclass class C: models: dict = ...; def get_supported_archs(self): return self.models.keys()`."""
    fields = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    if not fields or not any(dotted_name(d.func if isinstance(d, ast.Call) else d) in ("dataclass", "dataclasses.dataclass")
                             for d in cls.decorator_list):
        return False
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == _REGISTRY_LIST and fn.body:
            ret = fn.body[-1]
            value = ret.value if isinstance(ret, ast.Return) else None
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "keys" \
                    and not value.args:
                value = value.func.value
            return len(fn.body) == 1 and dotted_name(value) == f"self.{fields[0]}"
    return False


def _table_keys(top: dict, name: str, seen: set[str]) -> frozenset[str] | None:
    """String keys the module-level dict literal `name` certainly has: its constant keys and those of each `**OTHER`
    literal it spreads. A spread or key that is not read so (vLLM 0.13.0's `**{k: v for k, v in ... if ...}`) is left
    out: what is found is a part of the keys, never a key the dict lacks (a later entry replaces a value, not a key)."""
    table = top.get(name)
    if name in seen or not isinstance(table, ast.Dict):
        return None
    seen.add(name)
    keys: set[str] = set()
    for k, v in zip(table.keys, table.values):
        if k is None:
            keys |= (_table_keys(top, v.id, seen) if isinstance(v, ast.Name) else None) or frozenset()
        elif isinstance(k, ast.Constant) and isinstance(k.value, str):
            keys.add(k.value)
    return frozenset(keys)


def _module_attribute_probes(f, api, package: str) -> dict[str, bool]:
    """`hasattr(m, "NAME")` in a file, `m` bound by the file's module-level imports to a vLLM module -> whether the
    target's module has NAME (ROLL's `if not hasattr(envs, "VLLM_USE_V1") or envs.VLLM_USE_V1:` picks V1 or V0 by it).
    Only what the sources answer: a name that is there (or that a module `__getattr__` names) True, one certainly
    missing False; a module `__getattr__` that may serve anything decides nothing."""
    from driftcheck.vllm_model.resolved import External, Missing, Resolved

    if "hasattr(" not in f.text:
        return {}
    modules: dict[str, str] = {}  # local name -> the vLLM dotted name it is bound to
    for node in f.tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == package:
                    modules[a.asname or package] = a.name if a.asname else package
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == package:
            modules.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names if a.name != "*"})
    out: dict[str, bool] = {}
    for call in nodes_of(f.tree, ast.Call) if modules else ():
        if dotted_name(call.func) != "hasattr" or not _call_key(call) or not isinstance(call.args[1].value, str):
            continue
        head, _, rest = (dotted_name(call.args[0]) or "").partition(".")
        if head not in modules:
            continue
        dotted = modules[head] + (f".{rest}" if rest else "")
        module = api.resolve(dotted)
        if not (isinstance(module, Resolved) and module.kind == "module"):
            continue  # a class or an object: what it has at run time is not a module's names
        found = api.resolve(f"{dotted}.{call.args[1].value}")
        if isinstance(found, (Resolved, External)):
            out[_call_key(call)] = True
        elif isinstance(found, Missing):
            out[_call_key(call)] = False
    return out


def _object_attribute_probes(f, api, package: str, described: dict | None = None,
                             stores: list | None = None) -> dict[str, bool]:
    """`hasattr(x, "NAME")` in a function of the file, `x` a parameter annotated with a vLLM class (a name the file
    imports from vLLM, under TYPE_CHECKING or spelled as a string too) or a local the function binds once to an
    attribute of such a parameter (`parallel_config = vllm_config.parallel_config`: the attribute's annotated class)
    -> False, where the target's class certainly lacks NAME and no file of the target's tree spells NAME (nothing of
    vLLM's sets it on the object): vllm-tt-plugin's `if not hasattr(parallel_config, "engine_core_launcher_cls"):
    raise ...` before it hands vLLM a launcher module by name, a hook only a fork of vLLM has (FE1). A class that has
    NAME, a name the tree spells, or a receiver typed any other way decides nothing; two tests of one key that
    disagree decide nothing either. `stores`, when given, receives (first line, last line, what) of each statement
    `x.NAME = "pkg.mod.Cls"` (a constant or a name) on such a receiver: vLLM never reads what it stores (FE2: the same
    plugin at its 0.24.0 tag stores the launcher's name there without the test)."""
    from driftcheck.vllm_model.bodies import text_index_for
    from driftcheck.vllm_model.resolved import Missing

    if "hasattr(" not in f.text and stores is None:
        return {}
    out: dict[str, bool] = {}
    undecided: set[str] = set()

    def unknown_to_vllm(cls, name: str) -> bool:
        return cls is not None and isinstance(api.class_member(cls, name), Missing) \
            and not text_index_for(api).files_mentioning(name)

    # the lines a `hasattr(` is on: a function without one, when no store is asked for, has nothing to read
    probe_lines = [f.text.count("\n", 0, m.start()) + 1 for m in re.finditer(r"\bhasattr\(", f.text)]

    def wanted(fn) -> bool:
        return stores is not None or any(fn.lineno <= line <= (fn.end_lineno or fn.lineno) for line in probe_lines)

    for fn, scope, receiver_class in _vllm_typed_receivers(f, api, package, wanted):
        for call in scope:
            if not (isinstance(call, ast.Call) and dotted_name(call.func) == "hasattr" and _call_key(call)
                    and isinstance(call.args[0], ast.Name) and isinstance(call.args[1].value, str)):
                continue
            key, cls, name = _call_key(call), receiver_class(call.args[0].id), call.args[1].value
            if not unknown_to_vllm(cls, name):
                undecided.add(key)
                continue
            out[key] = False
            if described is not None:
                described[key] = f"vLLM's `{cls.qualname.rpartition('.')[2]}` has `{name}`"
        for node in scope if stores is not None else ():
            if not isinstance(node, ast.Assign) or len(node.targets) != 1 \
                    or not isinstance(node.value, (ast.Constant, ast.Name)):
                continue  # (a value computed there, `import_module(...)`, runs whatever reads it)
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                cls = receiver_class(target.value.id)
                if unknown_to_vllm(cls, target.attr):
                    stores.append((node.lineno, node.end_lineno or node.lineno,
                                   f"`{cls.qualname.rpartition('.')[2]}.{target.attr}`"))
    return {k: v for k, v in out.items() if k not in undecided}


def _vllm_typed_receivers(f, api, package: str, wanted=lambda fn: True):
    """(function, its own scope, receiver -> its vLLM class or None) for each function of the file that has a
    parameter annotated with a vLLM class the file imports and that probes or stores an attribute of some name:
    the parameter itself (not rebound), or a local bound once to one of its attributes (the class that attribute is
    annotated with). The function's bindings are read only when a receiver is asked about."""
    from driftcheck.client_model.inference import _bound_names
    from driftcheck.vllm_model.resolved import Resolved

    imported: dict[str, str] = {}  # local name -> the vLLM dotted name it is bound to (any `from vllm... import X`)
    for node in nodes_of(f.tree, ast.ImportFrom):
        if not node.level and (node.module or "").split(".")[0] == package:
            imported.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names if a.name != "*"})
    if not imported:
        return

    def vllm_class(annotation: ast.expr | None):
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        name = dotted_name(annotation) if annotation is not None else None
        head, _, rest = (name or "").partition(".")
        if head not in imported:
            return None
        found = api.resolve(imported[head] + (f".{rest}" if rest else ""))
        return found if isinstance(found, Resolved) and found.kind == "class" else None

    for fn in nodes_of(f.tree, ast.FunctionDef, ast.AsyncFunctionDef):
        args = fn.args
        typed = {a.arg: cls for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]
                 for cls in [vllm_class(a.annotation)] if cls is not None}
        if not typed or not wanted(fn):
            continue
        scope = own_scope(fn)
        bound: dict[str, list] = {}
        read: list[bool] = []  # whether `bound` is filled yet

        def receiver_class(receiver: str, typed=typed, bound=bound, read=read, scope=scope):
            if not read:
                read.append(True)
                for node in scope:
                    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr)):
                        targets = node.targets if isinstance(node, ast.Assign) else [
                            getattr(node, "target", None) or getattr(node, "optional_vars", None)]
                        for t in targets if not isinstance(node, ast.With) else [i.optional_vars for i in node.items]:
                            # not the `x` of `x.attr = ...`: that stores on the object
                            for n in (_bound_names(t) if t is not None else ()):
                                bound.setdefault(n, []).append(node)
            if receiver in typed:
                return typed[receiver] if receiver not in bound else None
            stores = bound.get(receiver, [])
            if len(stores) != 1 or not isinstance(stores[0], ast.Assign) or len(stores[0].targets) != 1:
                return None
            value = stores[0].value
            if not (isinstance(stores[0].targets[0], ast.Name) and isinstance(value, ast.Attribute)
                    and isinstance(value.value, ast.Name) and value.value.id in typed and value.value.id not in bound):
                return None
            member = api.class_member(typed[value.value.id], value.attr)
            cls = api.type_of(member) if isinstance(member, Resolved) and member.kind == "attribute" else None
            return cls if cls is not None and cls.kind == "class" else None

        yield fn, scope, receiver_class


def _compare(op, left: ast.expr, right: ast.expr, names: dict[str, bool], target: Version) -> bool | None:
    """`v >= parse("0.8.5")`, `"0.9" > v`: compared as versions when either side is parsed, else as strings."""
    subject, release, flipped = _subject(left, names), _release(right), False
    if subject is None or release is None:
        subject, release, flipped = _subject(right, names), _release(left), True
    if subject is None or release is None:
        return None
    from packaging.version import InvalidVersion, Version

    text, release_parsed = release
    try:
        if subject or release_parsed:
            mine, theirs = target, Version(text)
        else:
            mine, theirs = str(target), text  # plain strings compare character by character, as Python does
    except InvalidVersion:
        return None
    return op(theirs, mine) if flipped else op(mine, theirs)


def _subject(node: ast.expr, names: dict[str, bool]) -> bool | None:
    """Whether `node` is the vLLM version (a name bound to it, or `vllm.__version__`) parsed or not, None when it is not
    the version."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return names.get(dotted_name(node) or "")
    if _parses(node) and len(node.args) == 1 and _subject(node.args[0], names) is not None:
        return True
    if isinstance(node, ast.Call):  # read in the test itself: `Version(package_version("vllm")) >= Version("0.23.0")`
        package = next((k[:-len(".__version__")] for k in names if k.endswith(".__version__")), None)
        return False if package is not None and _reads_the_version(node, package, set()) else None
    return None


def _release(node: ast.expr) -> tuple[str, bool] | None:
    """("0.8.5", parsed) for `"0.8.5"` or `parse("0.8.5")`."""
    parsed = _parses(node) and len(node.args) == 1
    value = node.args[0] if parsed else node
    if isinstance(value, ast.Constant) and isinstance(value.value, str) and VERSION_TEXT.match(value.value):
        return value.value, parsed
    return None
