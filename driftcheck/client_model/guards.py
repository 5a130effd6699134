"""Guarded uses: client code that already expects a vLLM API may be absent or different.

A use inside `try:` whose handler catches the exception the drift raises, inside an `if` that tests
`hasattr`/`getattr`, the vLLM version, or `isinstance`, is handled by the client: it is reported as a
warning at most and `fix` never rewrites it (the fallback branch is the client's own answer).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from driftcheck.astnodes import dotted_name, nodes_of
from driftcheck.vllm_model.pysummary import resolve_relative

_TRY_STAR = (ast.TryStar,) if hasattr(ast, "TryStar") else ()

ANY = "*"  # a bare `except:`, `except Exception` or `except BaseException` catches every drift
_BROAD = {"Exception", "BaseException"}
_VERSION_WORD = re.compile(r"version", re.I)


@dataclass(frozen=True)
class Guard:
    start: int
    end: int
    kind: str  # try | fallback | hasattr | version | isinstance | dispatched | replaced
    catches: frozenset[str]  # exception names a `try` guard catches (ANY for all)
    line: int  # the guarding statement
    names: frozenset[str] = frozenset()  # hasattr/getattr: the attribute names the test checks
    via: int = 0  # a function called only under this guard: the line of that call
    where: str = ""  # kind "dispatched": the file:line that loads this module under a version check

    def covers(self, line: int, raises: tuple[str, ...], text: str = "") -> bool:
        if not self.start <= line <= self.end:
            return False
        if self.kind == "replaced":
            return True  # a body that never runs
        if self.kind == "hasattr" and self.names:
            # `if not hasattr(layer, "kv_cache"): continue` guards uses of kv_cache, not every line after it
            return any(re.search(rf"\b{re.escape(n)}\b", text) for n in self.names)
        if self.kind not in ("try", "fallback"):
            return True  # version, isinstance, dispatched
        return ANY in self.catches or bool(self.catches & set(raises))

    def describe(self) -> str:
        if self.kind == "replaced":
            name = next(iter(self.names), "")
            return f"in the body of `{name}`, which line {self.line} replaces at import (this body never runs)"
        if self.kind == "dispatched":
            return f"in a module the client loads only by import_module under a vLLM version check ({self.where})"
        if self.via:
            inner = Guard(self.start, self.end, self.kind, self.catches, self.line, self.names)
            return f"in a function called only from line {self.via}, which is {inner.describe()}"
        names = "everything" if ANY in self.catches else ", ".join(sorted(self.catches))
        if self.kind == "try":
            return f"inside a try (line {self.line}) that catches {names}"
        if self.kind == "fallback":
            # `try: new_call() except TypeError: legacy_call()`: runs only where the try body failed
            return f"in the `except {names}` fallback of a try (line {self.line}), which runs only if its body failed"
        return {"hasattr": "under a hasattr/getattr check", "version": "under a vLLM version check",
                "isinstance": "under an isinstance check"}[self.kind] + f" (line {self.line})"


def _span(body: list[ast.stmt]) -> tuple[int, int]:
    return body[0].lineno, max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in body)


def _handler_names(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {ANY}
    elts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = set()
    for e in elts:
        name = e.attr if isinstance(e, ast.Attribute) else e.id if isinstance(e, ast.Name) else None
        if name:
            names.add(ANY if name in _BROAD else name)
    return names


def _reraises(handler: ast.ExceptHandler) -> bool:
    """`except X: raise ...` turns one error into another: not a fallback."""
    return bool(handler.body) and isinstance(handler.body[-1], ast.Raise)


def _negated(test: ast.expr) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)


def _checked_names(test: ast.expr) -> frozenset[str]:
    """The attribute names a test checks with hasattr(x, "n") / getattr(x, "n", ...)."""
    return frozenset(n.args[1].value for n in ast.walk(test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id in ("hasattr", "getattr") and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant)
                     and isinstance(n.args[1].value, str))


def _version_aliases(tree: ast.AST) -> set[str]:
    """Names bound to a version (`release = vllm.__version_tuple__[:3]`): a test on them is a version check."""
    out: set[str] = set()
    for node in nodes_of(tree, ast.Assign):
        if any(_VERSION_WORD.search(n.id if isinstance(n, ast.Name) else n.attr) for n in ast.walk(node.value)
               if isinstance(n, (ast.Name, ast.Attribute))):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _test_kind(test: ast.expr, aliases: frozenset[str] | set[str] = frozenset()) -> str | None:
    kinds = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("hasattr", "getattr"):
                kinds.add("hasattr")
            elif node.func.id == "isinstance":
                kinds.add("isinstance")
        if isinstance(node, ast.Call) and (dotted_name(node.func) or "").rsplit(".", 1)[-1] == "find_spec":
            kinds.add("version")  # `importlib.util.find_spec("vllm.profiler.wrapper") is None`: which vLLM this is
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name and (_VERSION_WORD.search(name) or (isinstance(node, ast.Name) and name in aliases)):
            kinds.add("version")
    for kind in ("version", "hasattr", "isinstance"):
        if kind in kinds:
            return kind
    return None


def guards_of(tree: ast.AST) -> list[Guard]:
    out: list[Guard] = []
    imported = _imported_roots(tree)
    aliases = _version_aliases(tree)
    for node in nodes_of(tree, ast.Try, *_TRY_STAR, ast.If, ast.IfExp):
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            catches: set[str] = set()
            for h in node.handlers:
                if not _reraises(h):
                    catches |= _handler_names(h)
            if catches and node.body:
                start, end = _span(node.body)
                out.append(Guard(start, end, "try", frozenset(catches), node.lineno))
            for h in node.handlers:
                names = _handler_names(h)
                if h.body and not _reraises(h) and (names - {ANY}):  # a named exception: a fallback for another vLLM
                    start, end = _span(h.body)
                    out.append(Guard(start, end, "fallback", frozenset(names), node.lineno))
        elif isinstance(node, (ast.If, ast.IfExp)):
            kind = _test_kind(node.test, aliases)
            if kind is None:
                continue
            if isinstance(node, ast.IfExp):
                parts = [node.body] + ([node.orelse] if kind != "isinstance" else [])
                start = min(p.lineno for p in parts)
                end = max(getattr(p, "end_lineno", p.lineno) or p.lineno for p in parts)
                out.append(Guard(start, end, kind, frozenset(), node.lineno, _checked_names(node.test)))
                continue
            # the test itself reads the attribute it checks; the branches hold the two answers
            branches = [node.body] + ([node.orelse] if node.orelse and kind != "isinstance" else [])
            names = _checked_names(node.test)
            probes_module = kind == "hasattr" and _tests_imported_module(node.test, imported)
            out.append(Guard(node.lineno, node.test.end_lineno or node.lineno, kind, frozenset(), node.lineno, names))
            for body in branches:
                start, end = _span(body)
                # the branch taken when `hasattr(x, "a")` holds runs on the vLLM that has `a` (and what came
                # with it): all of it is guarded; the other branch only for the names checked
                # ...and `if hasattr(vllm_module, "New"): ... else: vllm_module.Old` is a version switch: its other
                # branch is the client's code for the vLLM without `New`, whatever it uses
                whole = (body is node.body and not _negated(node.test)) or probes_module
                out.append(Guard(start, end, kind, frozenset(), node.lineno, frozenset() if whole else names))
    out += _early_exit_guards(tree) + _replaced_methods(tree)
    return out + _caller_guards(tree, out)


def _replaced_methods(tree: ast.AST) -> list[Guard]:
    """`MyMoE.forward = patched_forward` at module level after `class MyMoE` defines `forward`: the original body
    never runs (unless the file reads `MyMoE.forward` first to wrap it, or calls it through super())."""
    body = getattr(tree, "body", [])
    classes = {n.name: n for n in body if isinstance(n, ast.ClassDef)}
    read = {(n.value.id, n.attr) for n in nodes_of(tree, ast.Attribute)
            if isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name)}
    supered = {n.func.attr for n in nodes_of(tree, ast.Call) if isinstance(n.func, ast.Attribute)
               and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name) and n.func.value.func.id == "super"}
    out: list[Guard] = []
    for stmt in body:
        if not isinstance(stmt, ast.Assign):
            continue
        for target in stmt.targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            cls = classes.get(target.value.id)
            if cls is None or cls.lineno > stmt.lineno or (cls.name, target.attr) in read or target.attr in supered:
                continue
            for fn in cls.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == target.attr and fn.body:
                    start, end = _span(fn.body)
                    out.append(Guard(start, end, "replaced", frozenset(), stmt.lineno, names=frozenset({fn.name})))
    return out


def _caller_guards(tree: ast.AST, guards: list[Guard]) -> list[Guard]:
    """A private function of this file that is only ever called under a guard (`if getattr(envs, "X", None): return
    self._legacy()`) runs only where the guard let it: its body is guarded the same way."""
    calls: dict[str, list[int]] = {}
    for node in nodes_of(tree, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
            and f.value.id in ("self", "cls") else None
        if name:
            calls.setdefault(name, []).append(node.lineno)
    out: list[Guard] = []
    for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        if not fn.name.startswith("_") or fn.name.endswith("__"):
            continue  # only private helpers have all their callers here (vLLM and other files call the rest)
        lines = [n for n in calls.get(fn.name, []) if not fn.lineno <= n <= (fn.end_lineno or fn.lineno)]
        covering = [min((g for g in guards if g.start <= n <= g.end), key=lambda g: g.end - g.start, default=None) for n in lines]
        if not lines or any(g is None for g in covering) or not fn.body:
            continue
        first = covering[0]
        start, end = _span(fn.body)
        out.append(Guard(start, end, first.kind, first.catches, first.line, first.names, via=lines[0]))
    return out


def _imported_roots(tree: ast.AST) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for n in nodes_of(tree, ast.Import, ast.ImportFrom) for a in n.names}


def _tests_imported_module(test: ast.expr, imported: set[str]) -> bool:
    """`hasattr(fused_moe, "X")` where `fused_moe` is a name the file imports (a module, not an object)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "hasattr" and n.args
               and isinstance(n.args[0], ast.Name) and n.args[0].id in imported for n in ast.walk(test))


def _early_exit_guards(tree: ast.AST) -> list[Guard]:
    """`if not isinstance(x, C): ...; return` (or `if not hasattr(...)`): the rest of the block runs only
    when the check passed, so it is guarded like the body of `if isinstance(x, C):`."""
    out: list[Guard] = []
    for owner in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.While, ast.With, ast.Try):
        for block in (getattr(owner, "body", None), getattr(owner, "orelse", None)):
            if not block:
                continue
            end = max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in block)
            for stmt in block:
                if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) \
                        and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                    kind = _test_kind(stmt.test.operand)
                    if kind in ("isinstance", "hasattr") and (stmt.end_lineno or stmt.lineno) < end:
                        out.append(Guard((stmt.end_lineno or stmt.lineno) + 1, end, kind, frozenset(), stmt.lineno,
                                         _checked_names(stmt.test.operand)))
    return out


def guard_at(guards: list[Guard], line: int, raises: tuple[str, ...], text: str = "") -> Guard | None:
    for g in guards:
        if g.covers(line, raises, text):
            return g
    return None


def dispatched_modules(files) -> dict[str, Guard]:
    """Client modules loaded only by `import_module(".vendored_v028", __package__)` inside vLLM version checks and
    never imported by name: per-release copies, of which the target runs at most the one for itself. A finding in
    one is a warning at most (the client handles the other releases by not loading it)."""
    loads: dict[str, list[tuple[str, int, bool]]] = {}
    static: set[str] = set()
    for f in files:
        is_package = f.rel.endswith("__init__.py")
        for node in nodes_of(f.tree, ast.Import, ast.ImportFrom):
            if isinstance(node, ast.Import):
                static |= {a.name for a in node.names}
            else:
                base = resolve_relative(f.module, is_package, node.level, node.module)
                static |= {base} | {f"{base}.{a.name}" for a in node.names}
        if not any((dotted_name(c.func) or "").rsplit(".", 1)[-1] == "import_module" for c in nodes_of(f.tree, ast.Call)):
            continue
        # the names it loads: every module-like string of this file (`return ".vendored_v028", "schedule"` from a
        # selector the call uses), each guarded or not by a version check
        version_guards = [g for g in guards_of(f.tree) if g.kind == "version"]
        for const in nodes_of(f.tree, ast.Constant):
            name = const.value if isinstance(const.value, str) else ""
            if "." not in name or not re.fullmatch(r"\.*[A-Za-z_]\w*(?:\.\w+)*", name):
                continue
            level = len(name) - len(name.lstrip("."))
            target = resolve_relative(f.module, is_package, level, name.lstrip("."))
            guarded = any(g.start <= const.lineno <= g.end for g in version_guards)
            loads.setdefault(target, []).append((f.rel, const.lineno, guarded))
    out: dict[str, Guard] = {}
    by_module = {f.module: f for f in files}
    for module, where in loads.items():
        if module in static or module not in by_module or not all(g for _, _, g in where):
            continue
        rel, line, _ = where[0]
        out[by_module[module].rel] = Guard(1, 10 ** 9, "dispatched", frozenset(), line, where=f"{rel}:{line}")
    return out
