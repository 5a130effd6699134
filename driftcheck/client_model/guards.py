"""Guarded uses: client code that already expects a vLLM API may be absent or different.

A use inside `try:` whose handler catches the exception the drift raises, inside an `if` that tests
`hasattr`/`getattr`, the vLLM version, or `isinstance`, is handled by the client: it is reported as a
warning at most and `fix` never rewrites it (the fallback branch is the client's own answer).
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from driftcheck.astnodes import binding_counts, dotted_name, is_type_checking, nodes_of, own_scope, source_text, walk, walk_statements
from driftcheck.client_model.asserted_probes import asserted_probes
from driftcheck.client_model.computed_names import string_constants
from driftcheck.client_model.except_clauses import ANY, exception_tuples, handler_names
from driftcheck.client_model.path_inserts import outside_path_inserts
from driftcheck.client_model.preconditions import checked_rests, try_check
from driftcheck.client_model.probe_results import probed_branches
from driftcheck.client_model.version_checks import (
    VERSION_WORD, calls_one_of, checked_names, is_probe, other_version_names, probe_aliases, probe_of, test_kind,
    version_aliases,
)


_TRY_STAR = (ast.TryStar,) if hasattr(ast, "TryStar") else ()

_BUILTIN_NAMES = frozenset(dir(builtins))  # `except TypeError`: no need to look for a tuple of that name


@dataclass(frozen=True)
class Guard:
    start: int
    end: int
    kind: str  # try | fallback | hasattr | version | isinstance | dispatched | replaced | capability | precondition
    # | rebound | refused | unreachable | dead | expected (a test's `with pytest.raises(E):` body)
    # | elsewhere (below a module-level `sys.path.insert(0, ...)` of a folder outside the client: FB1)
    catches: frozenset[str]  # exception names a `try` guard catches (ANY for all)
    line: int  # the guarding statement
    names: frozenset[str] = frozenset()  # hasattr/getattr: the attribute names the test checks; "dispatched": the
    # dispatched module that imports this one, when it is not loaded under the version check itself
    via: int = 0  # a function called only under this guard: the line of that call
    where: str = ""  # kind "dispatched": the file:line that loads this module under a version check; "refused": the
    # raise in the package `__init__` that refuses the target
    receivers: frozenset[str] = frozenset()  # hasattr/getattr: the objects probed (`spec`): the other spelling on them
    body: tuple[int, int] = (0, 0)  # "fallback": the try body whose failure runs it; "precondition": the check's one
    handed_out: bool = False  # `via` hands the function out as a value (`op_func=_impl`) rather than calling it
    test: str = ""  # kind "precondition" (inline): "passes" where its imports work on the target; kind "dispatched": what the guarding test asks, where it is not vLLM's version (QA1's registry);
    # kind "dead": "function" for a top-level function (QA2's script-only files), where the default says "method";
    # kind "unreachable": "import" after an import of the same try body that fails on the target (TF2)
    imports: tuple[tuple[int, int], ...] = ()  # kind "try": the spans of the import statements at the body's top level
    handlers: tuple[tuple[int, int], ...] = ()  # kind "try": the spans of the bodies of the handlers that catch
    probed: frozenset[str] = frozenset()  # kind "hasattr": the names the test probes, also where `names` is empty (a
    # branch guarded whole): a finding about a member the target has is not guarded by a probe of it (26e W1); kind
    # "isinstance": the classes tested: a finding about a member of one of them runs for its objects (26a)
    # kind "try" / "expected": bodies of functions defined inside it that nothing there calls (a kernel class's methods
    # a registration hands to vLLM): they run later, outside the try (26k W2)
    holes: tuple[tuple[int, int], ...] = ()

    def covers(self, line: int, raises: tuple[str, ...], text: str = "", code: str = "") -> bool:
        if not self.start <= line <= self.end:
            return False
        if any(a <= line <= b for a, b in self.holes):
            return False
        if self.kind in ("replaced", "unreachable", "dead"):
            return True  # a body that never runs
        if self.kind == "rebound":
            # a name another branch of a module-level `if` binds to something else: uses of that name only
            return any(re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", code or text) for n in self.names)
        if self.kind == "precondition" and not self.where and self.test != "passes" \
                and not {"ImportError", "ModuleNotFoundError"} & set(raises):
            # after an inline import probe whose `except` exits (`_after_import_probe`), where driftcheck cannot tell
            # that its imports work on the target (`preconditions.passing_probes`): the rest runs only on a vLLM where
            # they do, so its other drift is guarded as the body of `if hasattr(...)` is
            return True
        if self.kind in ("capability", "precondition"):
            # a check the client makes of a package or module it names: what it guards is importing from there
            return bool({"ImportError", "ModuleNotFoundError"} & set(raises)) and \
                any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", text) for n in self.names)
        if self.kind == "hasattr" and self.names:
            # `if not hasattr(layer, "kv_cache"): continue` guards uses of kv_cache, not every line after it;
            # `v = getattr(spec, "new", None); if v is not None: return v; return spec.old` guards spec's other spelling
            return any(re.search(rf"\b{re.escape(n)}\b", text) for n in self.names) or \
                any(re.search(rf"(?<![\w.]){re.escape(r)}\s*\.", code) for r in self.receivers)
        if self.kind == "dispatched" and self.catches:
            # also imported inside a try that catches ImportError: only its import-time ImportErrors are handled (FE1)
            return bool(self.catches & set(raises))
        if self.kind not in ("try", "fallback", "expected"):
            return True  # version, isinstance, dispatched
        if self.kind == "fallback" and {"ImportError", "ModuleNotFoundError"} & self.catches:
            # `except ImportError:` after imports: the client's code for the releases those imports fail on. It runs
            # only where the try body fails (`guard_at`'s `failing` says where that is certain), so it guards
            # whatever fails in it, not only its imports (vllm-spyre 1.6.1's `Pooler.for_embed(...)` under `except
            # ImportError:  # vllm < v0.14.0`, HI2)
            return True
        return ANY in self.catches or bool(self.catches & set(raises))

    def describe(self) -> str:
        if self.kind == "elsewhere":
            return (f"below line {self.line}, which puts {self.where} first on `sys.path` before the file imports "
                    f"vLLM: the vLLM imported here is the one in that folder wherever it exists, a folder outside the "
                    f"client that driftcheck does not read")
        if self.kind == "dead":
            return f"in a {self.test or 'method'} that never runs: {self.where}"
        if self.kind == "unreachable" and self.names and self.where.endswith("()"):
            return (f"under `if` (line {self.line}) that calls `{self.where}`, a function of this file that only ever "
                    f"returns a false constant: this code runs only if code outside the file rebinds it")
        if self.kind == "unreachable" and self.names:
            return (f"under `if` (line {self.line}) that tests `{self.where}`, which this file only ever sets to a "
                    f"false constant: this code runs only if code outside the file sets it")
        if self.kind == "unreachable" and self.test == "import":
            return (f"in the try at line {self.where}, after its import at line {self.line}, which fails on this vLLM "
                    f"(the try's `except` takes over): this code never runs")
        if self.kind == "unreachable":
            return f"after `{self.where}` (line {self.line}), which always raises or exits: this code never runs"
        if self.kind == "replaced":
            name = next(iter(self.names), "")
            by = self.where or f"line {self.line}"
            return f"in the body of `{name}`, which {by} replaces at import (this body never runs)"
        if self.kind == "dispatched":
            via = next(iter(self.names), "")
            test = self.test or "a vLLM version check"
            tried = " or inside a try that catches ImportError" if self.catches else ""
            if via:
                return f"in a module only {via} imports, itself loaded only under {test} ({self.where}){tried}"
            return f"in a module the client loads only under {test} ({self.where}){tried}"
        if self.kind == "rebound":
            return self.where
        if self.kind == "refused":
            return f"in a package whose `__init__` refuses this vLLM when imported ({self.where} raises before it runs)"
        if self.kind == "precondition" and not self.where:
            return (f"after the import probe at line {self.line}, whose `except` exits unless "
                    f"`{', '.join(sorted(self.names))}` can be imported: this code runs only on a vLLM where it can")
        if self.kind == "precondition":
            return (f"after the call to `{self.where or 'a check'}` (line {self.line}), which raises its own error unless "
                    f"`{', '.join(sorted(self.names))}` can be imported")
        if self.kind == "capability":
            return (f"reached only when the client's own check of `{', '.join(sorted(self.names))}` passes (line "
                    f"{self.line}), a check driftcheck does not follow")
        if self.kind == "hasattr" and self.where:
            return self.where  # an import-time `assert hasattr(...)` (asserted_probes)
        if self.via:
            inner = Guard(self.start, self.end, self.kind, self.catches, self.line, self.names,
                          where=self.where if self.kind == "fallback" else "")  # a flag's fallback names its `if`
            used = "handed out only at" if self.handed_out else "called only from"
            return f"in a function {used} line {self.via}, which is {inner.describe()}"
        names = "everything" if ANY in self.catches else ", ".join(sorted(self.catches))
        if self.kind == "try" and self.where:
            return f"inside a try (line {self.line}) {self.where}"
        if self.kind == "try":
            return f"inside a try (line {self.line}) that catches {names}"
        if self.kind == "expected" and _SUPPRESSING.search(self.where.partition("(")[0]):
            return f"inside `{self.where}` (line {self.line}), which suppresses {names}"
        if self.kind == "expected":
            return f"inside `{self.where}` (line {self.line}), where the test expects {names} to be raised"
        if self.kind == "fallback" and self.where:
            return self.where  # `if not patched:` after the try that sets `patched` (`_flag_fallbacks`)
        if self.kind == "fallback":
            # `try: new_call() except TypeError: legacy_call()`: runs only where the try body failed
            return f"in the `except {names}` fallback of a try (line {self.line}), which runs only if its body failed"
        return {"hasattr": "under a hasattr/getattr check", "version": "under a vLLM version check",
                "isinstance": "under an isinstance check"}[self.kind] + f" (line {self.line})"


def body_span(body: list[ast.stmt]) -> tuple[int, int]:
    return body[0].lineno, max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in body)


def _reraises(handler: ast.ExceptHandler) -> bool:
    """`except X: raise ...` turns one error into another: not a fallback."""
    return bool(handler.body) and isinstance(handler.body[-1], ast.Raise)


def _release_decider(tree: ast.AST, release: str | None):
    """test -> True / False where the target's `release` decides a version test of this file (a comparison of
    `version("vllm")`, `vllm.__version__` or a module-level name bound to one with a release, as the client compares:
    `refusals._decide`), None where it cannot be told or no release is known. A branch the release takes is the code
    that runs there, not a guard (HI1: lm-eval 0.4.11's `if parse_version(version("vllm")) >= parse_version("0.8.3"):
    from vllm.entrypoints.chat_utils import resolve_hf_chat_template`, which fails on 0.22)."""
    if not release or not isinstance(tree, ast.Module):
        return lambda test: None
    from packaging.version import InvalidVersion, Version

    from driftcheck.client_model.refusals import _decide, _version_names  # (refusals imports this module)
    try:
        target = Version(release)
    except InvalidVersion:
        return lambda test: None
    names: dict[str, bool] | None = None

    def decide(test: ast.expr) -> bool | None:
        nonlocal names
        if names is None:
            names = {**_version_names(tree, "vllm"), "vllm.__version__": False}
        return _decide(test, names, target)
    return decide


def _negated(test: ast.expr) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)


def guards_of(tree: ast.AST, reached: frozenset[str] | None = None, version_imports: frozenset[str] = frozenset(),
              release: str | None = None) -> list[Guard]:
    """Every guard of one client file. `reached`: the names other client files import or read as attributes
    (`reached_names`); a public module function outside it is called only from this file. `version_imports`: the names
    it imports that other client files bind to a version (`imported_version_aliases`). `release`: the target's vLLM
    version, where a guard can be decided against it (`_ranged_functions`)."""
    out: list[Guard] = []
    imported = _imported_roots(tree)
    aliases = version_aliases(tree, version_imports)
    other_versions = other_version_names(tree)
    probes = probe_aliases(tree)
    tuples: dict[str, list[ast.expr]] | None = None
    decided = _release_decider(tree, release)
    for node in nodes_of(tree, ast.Try, *_TRY_STAR, ast.If, ast.IfExp):
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            if tuples is None and any(isinstance(e, ast.Name) and e.id not in _BUILTIN_NAMES for h in node.handlers
                                      for e in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])):
                tuples = exception_tuples(tree)
            catches: set[str] = set()
            for h in node.handlers:
                if not _reraises(h):
                    catches |= handler_names(h, tuples)
            swallowed = _finally_returns(node)
            if swallowed:
                catches.add(ANY)  # a `return` in `finally:` drops whatever the body raised (26g R2)
            if catches and node.body:
                start, end = body_span(node.body)
                imports = tuple((n.lineno, n.end_lineno or n.lineno) for n in node.body
                                if isinstance(n, (ast.Import, ast.ImportFrom)))
                handlers = tuple(body_span(h.body) for h in node.handlers if h.body and not _reraises(h))
                out.append(Guard(start, end, "try", frozenset(catches), node.lineno, imports=imports, handlers=handlers,
                                 where=f"whose `finally:` returns (line {swallowed}), which drops what it raised"
                                 if swallowed else "", holes=later_bodies(node.body)))
            for h in node.handlers:
                names = handler_names(h, tuples)
                if h.body and not _reraises(h) and (names - {ANY}):  # a named exception: a fallback for another vLLM
                    start, end = body_span(h.body)
                    out.append(Guard(start, end, "fallback", frozenset(names), node.lineno, body=body_span(node.body)))
        elif isinstance(node, (ast.If, ast.IfExp)):
            kind = test_kind(node.test, aliases, probes, other_versions)
            if kind is None:
                checked = host_checked(node.test)
                if checked and isinstance(node, ast.If) and not _negated(node.test):
                    start, end = body_span(node.body)
                    out.append(Guard(start, end, "capability", frozenset(), node.lineno, checked))
                continue
            names, receivers = probe_of(node.test, probes)
            names |= _probed_names(node.test, tree)
            if isinstance(node, ast.IfExp):
                parts = [node.body] + ([node.orelse] if kind != "isinstance" else [])
                start = min(p.lineno for p in parts)
                end = max(getattr(p, "end_lineno", p.lineno) or p.lineno for p in parts)
                out.append(Guard(start, end, kind, frozenset(), node.lineno, names))
                continue
            # the test itself reads the attribute it checks; the branches hold the two answers
            branches = [node.body] + ([node.orelse] if node.orelse and kind != "isinstance" else [])
            probes_module = kind == "hasattr" and _tests_imported_module(node.test, imported)
            probed = names if kind == "hasattr" else _tested_classes(node.test) if kind == "isinstance" else frozenset()
            out.append(Guard(node.lineno, node.test.end_lineno or node.lineno, kind, frozenset(), node.lineno, names,
                             probed=probed))
            present = _branch_where_present(node, kind)
            # `if parse(version("vllm")) >= parse("0.8.3"): from vllm.x import y`: on a release the test decides, the
            # branch it takes is no guard, it is the code that runs there (HI1); the other branch stays one
            taken = decided(node.test) if kind == "version" else None
            for body in branches:
                if taken is not None and body is (node.body if taken else node.orelse):
                    continue
                start, end = body_span(body)
                # the branch taken when `hasattr(x, "a")` holds runs on the vLLM that has `a` (and what came
                # with it): all of it is guarded; the other branch only for the names checked and x's other spelling
                # ...and `if hasattr(vllm_module, "New"): ... else: vllm_module.Old` is a version switch: its other
                # branch is the client's code for the vLLM without `New`, whatever it uses
                whole = body is present or probes_module
                out.append(Guard(start, end, kind, frozenset(), node.lineno, frozenset() if whole else names,
                                 receivers=frozenset() if whole else receivers, probed=probed))
    out += _early_exit_guards(tree, aliases, probes, decided) + _probe_fallbacks(tree) + replaced_methods(tree) + _shape_switches(tree)
    out += _rebound_in_branches(tree) + _ranged_functions(tree, release) + _returned_for_other_releases(tree, release)
    out += _skipped_tests(tree, aliases, probes, other_versions, decided)
    out += _after_no_return(tree) + _flag_never_set(tree) + _helper_never_true(tree) + _after_import_probe(tree)
    out += _flag_fallbacks(tree) + _handler_flags(tree) + _expected_failures(tree, tuples) + _coroutine_switches(tree)
    out += [Guard(r.start, r.end, "precondition", frozenset({"ImportError", "ModuleNotFoundError"}), r.call, r.check.names,
                  where=r.check.helper, body=r.check.body) for r in checked_rests(tree)]
    out += [Guard(start, end, "hasattr", frozenset(), probe) for start, end, probe in probed_branches(tree)]
    out += _after_outside_path_insert(tree)
    # `try: assert hasattr(ops, "gptq_marlin_gemm"); AVAILABLE = True except AssertionError: ...` at import: the
    # file's uses of that name wait on the recorded answer (asserted_probes); after the caller guards, which they
    # would otherwise hand to every private function of the file
    end = max((getattr(n, "end_lineno", 0) or 0 for n in getattr(tree, "body", [])), default=0)
    probed = [Guard(1, end, "hasattr", frozenset(), line, frozenset({attr}),
                    where=f"in a file whose import-time probe `assert hasattr({obj}, \"{attr}\")` (line {line}) sits "
                          f"in a try (line {at}) that catches its failure and records it")
              for line, obj, attr, at in asserted_probes(tree)]
    out = [g for g in out if g.test == "other" and g.kind == "rebound"] + [g for g in out if not (g.test == "other" and g.kind == "rebound")]
    return out + _caller_guards(tree, out, reached) + probed


# `with pytest.raises(E):`, `with raises(E):` (from pytest), `with self.assertRaises(E):` (and the Regex forms); and
# `with contextlib.suppress(E, ...):`
_EXPECTING = re.compile(r"(?:^|\.)(?:raises|assertRaises|assertRaisesRegex|assertRaisesRegexp)$")
_SUPPRESSING = re.compile(r"(?:^|\.)suppress$")


def _expected_failures(tree: ast.AST, tuples: dict[str, list[ast.expr]] | None) -> list[Guard]:
    """The body of a test's `with pytest.raises(E):` (or `self.assertRaises(E)`): the test expects the call there to
    raise E, so a drift that raises E is what it checks for (vLLM's own test `with pytest.raises(ValidationError):
    SchedulerConfig()`). It covers what E catches, as an `except E:` would; so does `with contextlib.suppress(E):`
    (vLLM's test `with contextlib.suppress(Exception): llm.shutdown()`, on a release whose LLM has no `shutdown`)."""
    out: list[Guard] = []
    for node in nodes_of(tree, ast.With, ast.AsyncWith):
        for item in node.items:
            call = item.context_expr
            if not isinstance(call, ast.Call) or not call.args:
                continue
            callee = dotted_name(call.func) or ""
            if not (_EXPECTING.search(callee) or _SUPPRESSING.search(callee)):
                continue
            if tuples is None:
                tuples = exception_tuples(tree)
            kinds = call.args if _SUPPRESSING.search(callee) else call.args[:1]
            elts = [x for k in kinds for x in (k.elts if isinstance(k, ast.Tuple) else [k])]
            catches = handler_names(ast.ExceptHandler(type=ast.Tuple(elts=elts), name=None, body=[]), tuples)
            if catches and node.body:
                start, end = body_span(node.body)
                out.append(Guard(start, end, "expected", frozenset(catches), node.lineno,
                                 where=f"{callee}({', '.join(source_text(k) for k in kinds)})"))
    return out


def _if_chain(node: ast.If) -> list[tuple[ast.expr | None, list[ast.stmt]]]:
    """`if A: ... elif B: ... else: ...` as [(A, body), (B, body), (None, body)]."""
    chain: list[tuple[ast.expr | None, list[ast.stmt]]] = []
    while True:
        chain.append((node.test, node.body))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if node.orelse:
            chain.append((None, node.orelse))
        return chain


def _branch_bindings(body: list[ast.stmt], out: dict[str, set[str]]) -> None:
    """The names a branch binds at import, each as "vllm" (an import from vLLM) or "other" (any other import, a
    def, a class, an assignment); through nested try / if / with, not into function or class bodies."""
    for node in body:
        if isinstance(node, ast.Import):
            for a in node.names:
                kind = "vllm" if a.name.split(".")[0] == "vllm" else "other"
                out.setdefault(a.asname or a.name.split(".")[0], set()).add(kind)
        elif isinstance(node, ast.ImportFrom):
            kind = "vllm" if not node.level and (node.module or "").split(".")[0] == "vllm" else "other"
            for a in node.names:
                if a.name != "*":
                    out.setdefault(a.asname or a.name, set()).add(kind)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(node.name, set()).add("other")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, set()).add("other")
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            for part in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                _branch_bindings(part, out)
        elif isinstance(node, ast.If):
            _branch_bindings(node.body, out)
            _branch_bindings(node.orelse, out)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            _branch_bindings(node.body, out)


def _rebound_in_branches(tree: ast.AST) -> list[Guard]:
    """`if _use_aiter: from aiter import rmsnorm2d_fwd as rms_norm / elif _is_hip: from vllm._custom_ops import
    rms_norm` at module level: what the name holds is the client's choice at import, vLLM's function in one
    branch and another package's (or the client's own) in another, so a use of it is checked against a signature
    it may not have (sglang's layernorm.py, `forward_aiter` calling aiter's `rms_norm(x, w, eps)`). Its uses in the
    file are guarded, except where the file's own test rules the other binding out: the `else` (or the body of
    `if not`) of the chain's first test, when only that first branch binds the other one (miles-rl's
    `if _use_aiter: ... else: <vLLM's call>`). The chain itself is not covered (its imports are uses of vLLM)."""
    out: list[Guard] = []
    first: list[Guard] = []  # uses under the test that picked the other binding: said before any other guard's reason
    body = getattr(tree, "body", [])
    end = max((getattr(n, "end_lineno", 0) or 0 for n in body), default=0)
    for stmt in body:
        if not isinstance(stmt, ast.If) or is_type_checking(stmt.test):
            continue
        chain = _if_chain(stmt)
        if len(chain) < 2:
            continue
        kinds: list[dict[str, set[str]]] = []
        for _, branch in chain:
            found: dict[str, set[str]] = {}
            _branch_bindings(branch, found)
            kinds.append(found)
        names = {n for k in kinds for n, v in k.items() if "vllm" in v}
        for name in sorted(names):
            if not any("other" in k.get(name, ()) for k in kinds):
                continue  # every branch that binds it binds vLLM's (or none does): one vLLM answer
            excluded = [(stmt.lineno, stmt.end_lineno or stmt.lineno)]
            if kinds[0].get(name) == {"other"} and not any("other" in k.get(name, ()) for k in kinds[1:]):
                wanted = ast.dump(chain[0][0])
                for node in nodes_of(tree, ast.If):
                    negated = _negated(node.test)
                    if node is stmt or ast.dump(node.test.operand if negated else node.test) != wanted:
                        continue
                    branch, other = (node.body, node.orelse) if negated else (node.orelse, node.body)
                    if branch:
                        excluded.append(body_span(branch))
                    if other:  # the branch of the test that picked the other binding: the name is not vLLM's there
                        a, b = body_span(other)
                        first.append(Guard(a, b, "rebound", frozenset(), stmt.lineno, frozenset({name}), test="other",
                                           where=f"of `{name}` under the test at line {node.lineno}, the one that binds "
                                                 f"it to another package's function (or the client's own) at line "
                                                 f"{stmt.lineno}: there the name is not vLLM's"))
            where = (f"of `{name}`, which the `if` at line {stmt.lineno} binds to vLLM's in one branch and to another "
                     f"package's (or the client's own) in another (the client's choice at import)")
            start = 1
            for a, b in sorted(excluded):
                if a > start:
                    out.append(Guard(start, a - 1, "rebound", frozenset(), stmt.lineno, frozenset({name}), where=where))
                start = max(start, b + 1)
            if start <= end:
                out.append(Guard(start, end, "rebound", frozenset(), stmt.lineno, frozenset({name}), where=where))
    return first + out


def _truthy_default_probe(test: ast.expr) -> bool:
    """`getattr(envs, "VLLM_USE_V1", True)`: a getattr whose default is a true constant. Where the attribute is
    missing it answers True, so the test is false only where the attribute exists (and is false)."""
    return is_probe(test) and test.func.id == "getattr" and len(test.args) == 3 and \
        isinstance(test.args[2], ast.Constant) and bool(test.args[2].value)


def _branch_where_present(node: ast.If, kind: str) -> list[ast.stmt] | None:
    """The branch of an `if` that is guarded whole: the body of `if <version or probe>:` (not negated), which for a
    probe runs only on a vLLM that has the attribute. For a getattr with a true default, the other one:
    in `if getattr(envs, "VLLM_USE_V1", True): A else: B`, B runs only where `VLLM_USE_V1` exists (and is false),
    A also where it is missing (torchrl 0.14.1 vllm_async.py:355-358)."""
    if kind != "hasattr":
        return None if _negated(node.test) else node.body
    test, negated = (node.test.operand, True) if _negated(node.test) else (node.test, False)
    if _truthy_default_probe(test):
        return node.body if negated else node.orelse
    return None if negated else node.body


# the skip markers of pytest and unittest: whether the test runs when their condition holds
_SKIPS = {"skipif": False, "skipIf": False, "skipUnless": True}


def _skipped_tests(tree: ast.AST, aliases, probes, other_versions, decided) -> list[Guard]:
    """A test a skip marker decorates with a vLLM version test (`@pytest.mark.skipif(vllm_version >= (0, 11, 0))`,
    `@unittest.skipIf(...)`, `skipUnless`): its body is the client's code for the releases the test runs on, as an
    `if` on the version's branch is (28e F2: vllm-tgis-adapter's test imports `vllm.engine.multiprocessing`, which
    0.11.0 dropped, only where it is not skipped). Where the target decides the test and the body runs there, no
    guard."""
    out: list[Guard] = []
    for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        for deco in fn.decorator_list:
            name = (dotted_name(deco.func) or "").rsplit(".", 1)[-1] if isinstance(deco, ast.Call) else ""
            if name not in _SKIPS or not deco.args:
                continue
            test = deco.args[0]
            if test_kind(test, aliases, probes, other_versions) != "version":
                continue
            if decided(test) is _SKIPS[name]:
                continue  # the test runs on the target: its body is the code that runs there
            start, end = body_span(fn.body)
            out.append(Guard(start, end, "version", frozenset(), deco.lineno))
    return out


# a version specifier: an operator, then a release (">=0.8.4,<0.9.0", "==0.9.2", "~=0.10")
_SPECIFIER = re.compile(r"^\s*(===?|[<>!~]=|[<>])\s*v?\d+\.\d+")


def _ranged_functions(tree: ast.AST, release: str | None = None) -> list[Guard]:
    """A function whose decorator is given a version specifier, written out or as a module-level constant of the file
    (kvcached's `VLLM_V8_RANGE = ">=0.8.4,<0.9.0"` / `@version_range(VLLM_V8_RANGE) def patch_initialize_kv_cache`,
    whose dispatcher calls only the methods whose range holds the running vLLM): the client's code for the releases
    it names, as the body of an `if` on the vLLM version is. A decorator given anything else guards nothing. When the
    target's `release` is known and every range given parses, a function whose range holds it runs there: no guard."""
    out: list[Guard] = []
    for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        for deco in fn.decorator_list:
            if not isinstance(deco, ast.Call) or not (deco.args or deco.keywords):
                continue
            given = [text for a in [*deco.args, *(k.value for k in deco.keywords)] for text in string_constants(a, tree)]
            ranges = [text for text in given if _SPECIFIER.match(text)]
            if ranges:
                if not _holds_release(ranges, release):
                    start, end = body_span(fn.body)
                    out.append(Guard(start, end, "version", frozenset(), deco.lineno))
                break
    return out


_STR_OPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _decide_given_version(test: ast.expr, params: set[str], release: str) -> bool | None:
    """`vllm_version >= "0.4.3"` where `vllm_version` is a parameter of the function: its value with the parameter
    given the target's release, compared as the client compares it (as strings); None when it cannot be told."""
    if isinstance(test, ast.BoolOp):
        values = [_decide_given_version(v, params, release) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        value = _decide_given_version(test.operand, params, release)
        return None if value is None else not value
    if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id in params):
        return None
    left: str = release
    for op, right in zip(test.ops, test.comparators):
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)) or type(op) not in _STR_OPS:
            return None
        if not _STR_OPS[type(op)](left, right.value):
            return False
        left = right.value
    return True


def _returned_for_other_releases(tree: ast.AST, release: str | None) -> list[Guard]:
    """A factory that defines one nested function per vLLM line and returns the one for the version it is given
    (MInference's `minference_vllm_forward(config, vllm_version)`: `if vllm_version in "0.4.1": return forward elif
    vllm_version == "0.4.2": return forward_vllm_042 elif vllm_version >= "0.4.3": return forward_vllm_043`, called
    with `vllm.__version__`). A nested function whose every use in the factory is such a `return`, each under a test
    of a version-named parameter that the target's release decides against, is the client's code for other
    releases: its body is guarded like the branch of an `if` on the version. The function returned for the target's
    release, or under a test that cannot be decided, is not."""
    if not release:
        return []
    out: list[Guard] = []
    for outer in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        args = outer.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if VERSION_WORD.search(a.arg)}
        nested = {n.name: n for n in outer.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if not params or not nested:
            continue
        returns: dict[str, list[tuple[int, bool]]] = {}  # name -> (line, decided against the release)
        others: set[str] = set()

        def visit(stmts: list[ast.stmt], conditions: list[tuple[ast.expr, bool]]) -> None:
            for stmt in stmts:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    for n in walk(stmt):  # a default or a decorator may name a nested function
                        if isinstance(n, ast.Name) and n.id in nested and stmt is not nested.get(n.id):
                            others.add(n.id)
                    continue
                if isinstance(stmt, ast.If):
                    for n in walk(stmt.test):
                        if isinstance(n, ast.Name) and n.id in nested:
                            others.add(n.id)
                    visit(stmt.body, [*conditions, (stmt.test, True)])
                    visit(stmt.orelse, [*conditions, (stmt.test, False)])
                    continue
                if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name) and stmt.value.id in nested:
                    against = any(_decide_given_version(test, params, release) is (not holds) for test, holds in conditions)
                    returns.setdefault(stmt.value.id, []).append((stmt.lineno, against))
                    continue
                for n in walk(stmt):
                    if isinstance(n, ast.Name) and n.id in nested:
                        others.add(n.id)

        visit(outer.body, [])
        for name, found in returns.items():
            fn = nested[name]
            if name in others or not fn.body or not all(against for _, against in found):
                continue
            start, end = body_span(fn.body)
            out.append(Guard(start, end, "version", frozenset(), found[0][0], via=found[0][0]))
    return out


def _holds_release(ranges: list[str], release: str | None) -> bool:
    """Whether the target's release is certainly in every range (False when it is unknown or a range does not parse)."""
    if not release:
        return False
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion

    try:
        return all(SpecifierSet(r.replace(" ", "")).contains(release, prereleases=True) for r in ranges)
    except (InvalidSpecifier, InvalidVersion, TypeError):
        return False


def _shape_switches(tree: ast.AST) -> list[Guard]:
    """`if kv_cache_config is not None: super().__init__(c, r, kv_cache_config=kv_cache_config) else:
    super().__init__(c, r)`: the same call made with and without what the test checks is the client's switch
    between two vLLM signatures (whichever one its caller's vLLM uses), so both branches are guarded."""
    out: list[Guard] = []
    for node in nodes_of(tree, ast.If):
        if not node.orelse:
            continue
        tested = _presence_tested(node.test)
        if not tested:
            continue
        calls = [{dotted_name(c.func) or _super_callee(c.func): c for c in _calls_in(branch)} for branch in (node.body, node.orelse)]
        for callee in (calls[0].keys() & calls[1].keys()) - {None}:
            passed = [{n.id for a in [*c.args, *(k.value for k in c.keywords)] for n in walk(a) if isinstance(n, ast.Name)}
                      for c in (calls[0][callee], calls[1][callee])]
            if tested & (passed[0] ^ passed[1]):
                for branch in (node.body, node.orelse):
                    start, end = body_span(branch)
                    out.append(Guard(start, end, "version", frozenset(), node.lineno))
                break
    return out


def _coroutine_switches(tree: ast.AST) -> list[Guard]:
    """`tok = await e.get_tokenizer() if asyncio.iscoroutinefunction(e.get_tokenizer) else e.get_tokenizer()`: a test
    of whether a method is a coroutine function picks, of two branches, the one written for how the release at hand
    defines it (vLLM moves methods between `def` and `async def`), as a version check does. Both branches are
    guarded, for calls of the method tested only: an `await` of another method there is not (WA1). The other branch
    may be the rest of the block after an `if` whose body exits (`if not iscoroutinefunction(e.m): return e.m()`),
    and the method may be tested through a local name bound to it (`m = e.m`) (WA2)."""
    out: list[Guard] = []
    bound = {t.id: n.value.attr for n in nodes_of(tree, ast.Assign) if len(n.targets) == 1
             and isinstance(t := n.targets[0], ast.Name) and isinstance(n.value, ast.Attribute)}
    tests: dict[int, tuple[frozenset[str], str]] = {}
    for node in nodes_of(tree, ast.If, ast.IfExp):
        tested = [c for c in walk(node.test) if isinstance(c, ast.Call) and len(c.args) == 1
                  and calls_one_of(c, ("iscoroutinefunction",))]
        names = frozenset(a.attr if isinstance(a, ast.Attribute) else bound.get(a.id, a.id)
                          for a in (c.args[0] for c in tested) if isinstance(a, (ast.Attribute, ast.Name)))
        if not names:
            continue
        where = (f"under `if` (line {node.lineno}) that tests `{source_text(tested[0])}`, which picks the branch for "
                 f"how this vLLM defines `{'`, `'.join(sorted(names))}`")
        tests[id(node)] = names, where
        if isinstance(node, ast.IfExp):
            parts = [node.body, node.orelse]
            spans = [(min(p.lineno for p in parts), max(getattr(p, "end_lineno", p.lineno) or p.lineno for p in parts))]
        else:
            spans = [body_span(b) for b in (node.body, node.orelse) if b]
        out += [Guard(start, end, "hasattr", frozenset(), node.lineno, names, where=where) for start, end in spans]
    if not tests:
        return out
    for block in _statement_blocks(tree):
        for stmt in block[:-1]:
            if id(stmt) in tests and not stmt.orelse and isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue,
                                                                                     ast.Break)):
                names, where = tests[id(stmt)]
                end = max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in block)
                out.append(Guard((stmt.end_lineno or stmt.lineno) + 1, end, "hasattr", frozenset(), stmt.lineno, names,
                                 where=where.replace("under `if`", "after the `if`", 1)))
    return out


def _presence_tested(test: ast.expr) -> set[str]:
    """The name a test only checks for presence: `x`, `not x`, `x is None`, `x is not None`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        test = test.left
    return {test.id} if isinstance(test, ast.Name) else set()


def _super_callee(func: ast.expr) -> str | None:
    """`super().__init__` as "super().__init__" (dotted_name reads only chains on a name)."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) \
            and func.value.func.id == "super":
        return f"super().{func.attr}"
    return None


def _calls_in(body: list[ast.stmt]) -> list[ast.Call]:
    return [n for stmt in body for n in walk(stmt) if isinstance(n, ast.Call)]


def _probe_fallbacks(tree: ast.AST) -> list[Guard]:
    """`getattr(mod, "TransferJob", None) or mod.JobMetadata`: what follows the probe runs only when it found nothing.
    `hasattr(pc, "pcp_size") and pc.pcp_size > 1` (or `not hasattr(...) or ...`) outside an `if` test: what follows
    the probe runs only on the vLLM where it held, guarded as the body of `if hasattr(...)` is (uc-manager's
    assignment, EC)."""
    out: list[Guard] = []
    for node in nodes_of(tree, ast.BoolOp):
        if isinstance(node.op, ast.Or) and len(node.values) > 1 and is_probe(node.values[0]) \
                and node.values[0].func.id == "getattr":
            rest = node.values[1:]
            out.append(Guard(rest[0].lineno, max(v.end_lineno or v.lineno for v in rest), "hasattr", frozenset(),
                             node.lineno))
            continue
        for i, value in enumerate(node.values[:-1]):
            negated = _negated(value)
            probe = value.operand if negated else value
            if is_probe(probe) and negated == isinstance(node.op, ast.Or):  # `and` after a probe, `or` after `not` one
                rest = node.values[i + 1:]
                out.append(Guard(rest[0].lineno, max(v.end_lineno or v.lineno for v in rest), "hasattr", frozenset(),
                                 node.lineno))
    return out


def replaced_methods(tree: ast.AST) -> list[Guard]:
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
                    start, end = body_span(fn.body)
                    out.append(Guard(start, end, "replaced", frozenset(), stmt.lineno, names=frozenset({fn.name})))
    return out


def _caller_guards(tree: ast.AST, guards: list[Guard], reached: frozenset[str] | None = None) -> list[Guard]:
    """A private function of this file that is only ever called under a guard (`if getattr(envs, "X", None): return
    self._legacy()`) runs only where the guard let it: its body is guarded the same way. So does a public module
    function no other client file reaches, used (called or handed out) only under a guard: `return legacy_fn` on
    the old-vLLM branch of a version dispatcher."""
    calls: dict[str, list[int]] = {}
    for node in nodes_of(tree, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
            and f.value.id in ("self", "cls") else None
        if name:
            calls.setdefault(name, []).append(node.lineno)
    called = {id(n.func) for n in nodes_of(tree, ast.Call)}
    kept = _kept_for_later(tree)
    handed: set[tuple[str, int]] = set()
    for node in nodes_of(tree, ast.Name):
        if isinstance(node.ctx, ast.Load) and id(node) not in called:
            calls.setdefault(node.id, []).append(node.lineno)  # handed out as a value
            if id(node) in kept:
                handed.add((node.id, node.lineno))
    module_level = {id(n) for n in getattr(tree, "body", [])}
    out: list[Guard] = []
    for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
        public_here = reached is not None and id(fn) in module_level and fn.name not in reached and \
            all(_only_wraps(d) for d in fn.decorator_list)
        if fn.name.endswith("__") or not (fn.name.startswith("_") or public_here):
            continue  # only these have all their callers here (vLLM and other files call the rest)
        lines = [n for n in calls.get(fn.name, []) if not fn.lineno <= n <= (fn.end_lineno or fn.lineno)]
        # a function handed out inside a try (`try: register_op(op_func=_impl) except Exception: ...`) runs later,
        # where whoever calls it calls it: the try caught only what the hand-out itself raised
        covering = [min((g for g in guards if g.start <= n <= g.end
                         and not ((fn.name, n) in handed and g.kind in ("try", "expected"))),
                        key=lambda g: g.end - g.start, default=None) for n in lines]
        if not lines or any(g is None for g in covering) or not fn.body:
            continue
        first = covering[0]
        start, end = body_span(fn.body)
        out.append(Guard(start, end, first.kind, first.catches, first.line, first.names, via=lines[0],
                         handed_out=all((fn.name, n) in handed for n in lines), where=first.where, body=first.body,
                         holes=later_bodies(fn.body) if first.kind in ("try", "expected") else ()))
    return out


def later_bodies(stmts: list[ast.stmt]) -> tuple[tuple[int, int], ...]:
    """The spans of the bodies of functions defined in `stmts` that `stmts` do not call by name: a nested helper
    handed out (`return MyKernel`, whose methods vLLM calls when it builds a layer), run after these statements
    finished. A method of a class `stmts` build by name (`MyKernel(...)`) may run here: not a hole."""
    called = {n.func.id for s in stmts for n in walk(s) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    out = []
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name not in called and node.body:
                out.append(body_span(node.body))
            continue  # what it defines runs when it does
        if isinstance(node, ast.ClassDef):
            if node.name not in called:
                out += [body_span(f.body) for f in node.body
                        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.body]
            continue
        todo.extend(ast.iter_child_nodes(node))
    return tuple(sorted(set(out)))


def _kept_for_later(tree: ast.AST) -> set[int]:
    """The names handed to something that keeps the function to call it later, never inside the statement that hands
    it over: an argument of a registration (`direct_register_custom_op(op_func=_impl)`, `atexit.register(_f)`: a callee
    whose name says `register`), a thread's or process's `target=`, or a value stored on an object (`self.cb = _f`). A
    function handed to anything else may be called at once (`list(map(_load, paths))` inside a `try` runs `_load`
    inside it), so the try around the hand-out still guards it (KB1)."""
    out: set[int] = set()
    for node in nodes_of(tree, ast.Call):
        callee = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
        if "register" in callee.lower():
            out |= {id(a) for a in [*node.args, *(k.value for k in node.keywords)] if isinstance(a, ast.Name)}
        elif callee in ("Thread", "Process", "Timer"):
            out |= {id(k.value) for k in node.keywords if k.arg == "target" and isinstance(k.value, ast.Name)}
    for node in nodes_of(tree, ast.Assign):
        if isinstance(node.value, ast.Name) and any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets):
            out.add(id(node.value))
    return out


_WRAPPING = frozenset({"contextmanager", "asynccontextmanager", "cache", "lru_cache", "wraps"})


def _only_wraps(decorator: ast.expr) -> bool:
    """A standard-library decorator that wraps the function and registers it nowhere (`@contextmanager`,
    `@functools.lru_cache(...)`): who calls the result is who calls the function (RA)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (dotted_name(target) or "").rsplit(".", 1)[-1] in _WRAPPING


def _after_outside_path_insert(tree: ast.AST) -> list[Guard]:
    """The rest of a file below a module-level `sys.path.insert(0, <a folder outside the client>)` that comes before
    any module-level import of vLLM: its vLLM may be the one in that folder (`path_inserts`, FB1)."""
    inserts = outside_path_inserts(tree)
    if not inserts:
        return []
    line, where = inserts[0]
    end = max((getattr(n, "end_lineno", 0) or 0 for n in getattr(tree, "body", [])), default=line)
    return [Guard(line + 1, end, "elsewhere", frozenset(), line, where=where)] if end > line else []


def reached_names(trees) -> frozenset[str]:
    """Names client files import by name or read as attributes: what code outside a file may call of it. An attribute
    assigned (`engine_utils.launch_core_engines = launch_core_engines`, a patch) is not a read of the client's
    function of that name: where the assigned value is that function, `_caller_guards` sees it handed out (RA)."""
    out: set[str] = set()
    for tree in trees:
        out |= {a.name for n in nodes_of(tree, ast.ImportFrom) for a in n.names}
        out |= {n.attr for n in nodes_of(tree, ast.Attribute) if not isinstance(n.ctx, (ast.Store, ast.Del))}
    return frozenset(out)


def _imported_roots(tree: ast.AST) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for n in nodes_of(tree, ast.Import, ast.ImportFrom) for a in n.names}


def _tests_imported_module(test: ast.expr, imported: set[str]) -> bool:
    """`hasattr(fused_moe, "X")` where `fused_moe` is a name the file imports (a module, not an object)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "hasattr" and n.args
               and isinstance(n.args[0], ast.Name) and n.args[0].id in imported for n in walk(test))


def _early_exit_guards(tree: ast.AST, aliases: set[str] = frozenset(), probes: dict | None = None,
                       decided=None) -> list[Guard]:
    """`if not isinstance(x, C): ...; return` (or `if not hasattr(...)`): the rest of the block runs only
    when the check passed, so it is guarded like the body of `if isinstance(x, C):`. And `if <version or
    probe>: ...; return`: the rest is the other branch (for a probe: of the names and objects it probed). A version
    test the target's release decides against leaving (`decided`) guards nothing: the rest runs there (HI1)."""
    decided = decided or (lambda test: None)
    out: list[Guard] = []
    probes = probes or {}
    other_versions = other_version_names(tree)
    done: frozenset[str] | None = None  # the file's own "already done" markers, read once when a probe is met
    for owner in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.While, ast.With, ast.Try):
        for block in (getattr(owner, "body", None), getattr(owner, "orelse", None)):
            if not block:
                continue
            end = max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in block)
            for stmt in block:
                if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) \
                        and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                    kind = test_kind(stmt.test.operand, aliases, other_versions=other_versions)
                    if kind == "version" and decided(stmt.test.operand) is True:
                        continue  # `if not <a test the target passes>: return`: the rest runs on the target (HI1)
                    if kind in ("isinstance", "hasattr", "version") and (stmt.end_lineno or stmt.lineno) < end:
                        names = _probed_names(stmt.test.operand, tree)
                        out.append(Guard((stmt.end_lineno or stmt.lineno) + 1, end, kind, frozenset(), stmt.lineno,
                                         names, probed=names if kind == "hasattr" else _tested_classes(
                                             stmt.test.operand) if kind == "isinstance" else frozenset()))
                    elif kind is None and (stmt.end_lineno or stmt.lineno) < end and host_checked(stmt.test.operand):
                        # `if not check_for_registration("vllm"): return False` before `from vllm.x import ...`
                        out.append(Guard((stmt.end_lineno or stmt.lineno) + 1, end, "capability", frozenset(), stmt.lineno,
                                         host_checked(stmt.test.operand)))
                elif isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and (stmt.end_lineno or stmt.lineno) < end \
                        and isinstance(stmt.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                    kind = test_kind(stmt.test, aliases, probes, other_versions)
                    if kind == "version" and decided(stmt.test) is False:
                        continue  # `if <a test the target fails>: return`: the rest runs on the target (HI1)
                    if kind == "version":
                        out.append(Guard((stmt.end_lineno or stmt.lineno) + 1, end, kind, frozenset(), stmt.lineno))
                    elif kind == "hasattr" and _truthy_default_probe(stmt.test):
                        # `if getattr(envs, "VLLM_USE_V1", True): return new()`: the rest runs only where it exists
                        out.append(Guard((stmt.end_lineno or stmt.lineno) + 1, end, kind, frozenset(), stmt.lineno))
                    elif kind == "hasattr" and not _negated(stmt.test):
                        names, receivers = probe_of(stmt.test, probes)
                        if names and done is None:
                            done = _own_done_flags(tree)
                        if names and names <= done:
                            continue  # `if getattr(C, "_x_patched", False): return`: the rest is the first run (VB3)
                        if names:
                            out.append(Guard((stmt.end_lineno or stmt.lineno) + 1, end, kind, frozenset(), stmt.lineno,
                                             names, receivers=receivers))
                            out += _fallback_imports(block[block.index(stmt) + 1:], stmt.lineno)
    return out


# calls that never return: they raise (pytest's outcomes, SystemExit) or end the process
NO_RETURN = frozenset({"pytest.skip", "pytest.fail", "pytest.exit", "pytest.xfail", "sys.exit", "os._exit", "exit", "quit"})


def _after_no_return(tree: ast.AST) -> list[Guard]:
    """The rest of a block after an unconditional call that never returns: a test module that skips itself at import
    (`pytest.skip(allow_module_level=True)` as a top-level statement, aibrix_kvcache's tests/test_cache_ops.py) never
    runs its later imports; nor does a function the code after `sys.exit(1)`. Only a call that is a statement of the
    block itself (under no `if`), so the rest never runs whatever catches it."""
    out: list[Guard] = []
    for block in _statement_blocks(tree):
        for i, stmt in enumerate(block[:-1]):
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                    (dotted_name(stmt.value.func) or "") in NO_RETURN:
                rest = block[i + 1:]
                out.append(Guard(rest[0].lineno, max(s.end_lineno or s.lineno for s in rest), "unreachable",
                                 frozenset(), stmt.lineno, where=f"{dotted_name(stmt.value.func)}(...)"))
                break
    return out


def _statement_blocks(tree: ast.AST):
    """Every statement list of two or more statements (a body, an `else`, a `finally`), in the order a walk of the
    whole tree meets them: only statements (and except handlers, match cases) hold such lists, and no statement lies
    under an expression, so the walk goes through statements only (four of the file's questions each walked every
    node of it)."""
    for owner in walk_statements(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(owner, name, None)
            if isinstance(block, list) and len(block) >= 2:
                yield block


def _after_import_probe(tree: ast.AST) -> list[Guard]:
    """The rest of a block after `try: from vllm.distributed import get_dcp_group, get_pcp_group` whose every handler
    exits the block (`except ImportError as e: raise ImportError("this vLLM lacks DCP/PCP") from e`, `return`): the
    precondition check of `preconditions`, written inline (unified-cache-management's UCMCPConnector.__init__, whose
    read of `ParallelConfig.prefill_context_parallel_size` never runs at vLLM 0.11.0, which lacks `get_pcp_group`).
    Where the probe's import certainly fails on the target nothing after it is reached; where it passes, only the
    uses of what it imported are guarded (`guard_at`, kind "precondition"). Only a try whose body is nothing but
    imports from vLLM, with no `else`/`finally`; a handler that falls through runs the rest anyway."""
    out: list[Guard] = []
    for block in _statement_blocks(tree):
        for i, stmt in enumerate(block[:-1]):
            if not isinstance(stmt, ast.Try) or stmt.orelse or stmt.finalbody or \
                    not all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body) or \
                    not all(h.body and isinstance(h.body[-1], (ast.Raise, ast.Return)) for h in stmt.handlers):
                continue
            check = try_check(stmt)
            if check is not None:
                rest = block[i + 1:]
                out.append(Guard(rest[0].lineno, max(s.end_lineno or s.lineno for s in rest), "precondition",
                                 frozenset({"ImportError", "ModuleNotFoundError"}), stmt.lineno, check.names,
                                 body=check.body))
    return out


def _flag_key(node: ast.expr) -> str | None:
    """A flag a statement can set and a test can read: a name or a dotted attribute (`patched`, `self._patched`)."""
    return node.id if isinstance(node, ast.Name) else dotted_name(node) if isinstance(node, ast.Attribute) else None


def _set_true(stmt: ast.stmt) -> str | None:
    """`flag = True` (one target): the flag's key."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Constant) \
            and stmt.value.value is True:
        return _flag_key(stmt.targets[0])
    return None


def _stores_of(node: ast.AST, key: str) -> bool:
    return any(isinstance(n, (ast.Name, ast.Attribute)) and not isinstance(n.ctx, ast.Load) and _flag_key(n) == key
               for n in walk(node))


def _tests_flag(test: ast.expr, key: str) -> bool | None:
    """True for `not flag` / `flag is False` / `flag == False` (the branch runs where the flag was not set), False for
    `flag` / `flag is True` / `flag == True`; None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True if _flag_key(test.operand) == key else None
    if _flag_key(test) == key:
        return False
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _flag_key(test.left) == key and \
            isinstance(test.ops[0], (ast.Is, ast.Eq)) and isinstance(test.comparators[0], ast.Constant) and \
            isinstance(test.comparators[0].value, bool):
        return not test.comparators[0].value
    return None


def _flag_fallbacks(tree: ast.AST) -> list[Guard]:
    """`patched = False; try: <new spelling>; patched = True / except (ImportError, AttributeError): pass` then
    `if not patched: <old spelling>` (MarinFold's only-correct structured-output backend, whose `register()` patches
    `SamplingParams._validate_structured_outputs` on vLLM 0.20+ and `vllm.v1.engine.processor.Processor` only when
    that failed): the `if` branch runs only where the try body failed with what its handlers catch, as an `except`
    fallback does. A "fallback" guard, so where the try body certainly fails on the target the branch runs and guards
    nothing (`guard_at`'s `failing`). Only a flag the try body sets to True at its top level, that no handler stores,
    and that nothing between the try and the test stores again."""
    out: list[Guard] = []
    for block in _statement_blocks(tree):
        for i, stmt in enumerate(block[:-1]):
            if not isinstance(stmt, ast.Try) or not stmt.handlers:
                continue
            keys = {k for k in map(_set_true, stmt.body) if k}
            catches: set[str] = set()
            for h in stmt.handlers:
                if not _reraises(h):
                    catches |= handler_names(h)
            keys = {k for k in keys if not any(_stores_of(h, k) for h in stmt.handlers)
                    and not any(_stores_of(s, k) for s in stmt.orelse + stmt.finalbody)}
            if not keys or not catches:
                continue
            for key in keys:
                for later in block[i + 1:]:
                    if isinstance(later, ast.If):
                        where_unset = _tests_flag(later.test, key)
                        branch = later.body if where_unset else later.orelse if where_unset is False else []
                        if branch:
                            start, end = body_span(branch)
                            out.append(Guard(start, end, "fallback", frozenset(catches), later.lineno,
                                             body=body_span(stmt.body),
                                             where=f"under `if {ast.unparse(later.test)}:` (line {later.lineno}), which "
                                                   f"holds only where the try at line {stmt.lineno} failed before "
                                                   f"setting `{key}`"))
                    if _stores_of(later, key):
                        break
    return out


def _finally_returns(node: ast.Try) -> int:
    """The line of a `return` (or `break` / `continue`) in the try's `finally:`, outside functions defined there: it
    replaces any exception the body or a handler raised (0: none)."""
    for stmt in node.finalbody:
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return stmt.lineno  # (one inside a loop of the `finally:` only leaves that loop)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        found = next((sub.lineno for sub in [stmt, *own_scope(stmt)] if isinstance(sub, ast.Return)), 0)
        if found:
            return found
    return 0


def _tested_classes(test: ast.expr) -> frozenset[str]:
    """The class names (as written, last part) an `isinstance` test of `test` checks against."""
    out = set()
    for call in walk(test):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance" \
                and len(call.args) == 2:
            kinds = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
            out |= {(dotted_name(k) or "").rpartition(".")[2] for k in kinds} - {""}
    return frozenset(out)


def _handler_flags(tree: ast.AST) -> list[Guard]:
    """`try: from vllm.new import X; LEGACY = False / except ImportError: from vllm.old import X; LEGACY = True` at a
    module's top, then `if LEGACY:` anywhere in the file (25c's F1, vLLM-Watermark's `SamplerOutput(outputs=...)` made
    only for the legacy class): the branch runs only where the try body failed, as the handler does, so it is a
    "fallback" guard; where the body certainly fails on the target it runs and guards nothing (`guard_at`). Only a
    name the handler sets to True at its top level, the try body never to True, and nothing else in the file stores
    (no other assignment, no `global` rebinding)."""
    if not isinstance(tree, ast.Module):
        return []
    counts = binding_counts(tree)
    out: list[Guard] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Try) or not stmt.handlers:
            continue
        for h in stmt.handlers:
            catches = handler_names(h) if not _reraises(h) else set()
            keys = {k for k in map(_set_true, h.body) if k and "." not in k}
            keys = {k for k in keys if not any(_set_true(s) == k for s in stmt.body)
                    and sum(counts.get(k, {}).values()) == sum(1 for part in (stmt.body, h.body) for s in part
                                                              if _stores_of(s, k))}
            for key in keys if catches else ():
                for test in nodes_of(tree, ast.If):
                    if test.lineno > stmt.end_lineno and _tests_flag(test.test, key) is False and test.body:
                        start, end = body_span(test.body)
                        out.append(Guard(start, end, "fallback", frozenset(catches), test.lineno, body=body_span(stmt.body),
                                         where=f"under `if {key}:` (line {test.lineno}), which holds only where the try "
                                               f"at line {stmt.lineno} failed and its handler set `{key}`"))
    return out


def _falsy_flags(tree: ast.AST, names: set[str]) -> set[str]:
    """Those of `names` (attributes) every store of which in the file is a false constant (`self.aot_schedule = False`),
    class-level assignments of that name included: a flag the file never sets. Any other store (a non-constant, an
    augmented or unpacked one) keeps the name out, and a file that calls `setattr` or `vars` keeps every name out."""
    if any(isinstance(n.func, ast.Name) and n.func.id in ("setattr", "vars") for n in nodes_of(tree, ast.Call)):
        return set()
    falsy: set[str] = set()
    other: set[str] = set()
    seen: set[int] = set()
    for node in nodes_of(tree, ast.Assign, ast.AnnAssign):
        ok = isinstance(node.value, ast.Constant) and not node.value.value
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
            if isinstance(t, ast.Attribute):
                seen.add(id(t))
                (falsy if ok else other).add(t.attr)
    for cls in nodes_of(tree, ast.ClassDef):
        for stmt in cls.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                ok = isinstance(stmt.value, ast.Constant) and not stmt.value.value
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                    if isinstance(t, ast.Name):
                        (falsy if ok else other).add(t.id)
    for node in nodes_of(tree, ast.Attribute):
        if isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in seen:
            other.add(node.attr)  # augmented, unpacked, `for` or `with` targets, `del`
    return (falsy - other) & names


def _flag_never_set(tree: ast.AST) -> list[Guard]:
    """The body of `if self.flag:` or `if x and self.flag:` where the file only ever sets `flag` to a false constant
    (vllm-plugin-FL's `self.aot_schedule = False  # get_flash_attn_version() == 3`): a branch that never runs unless
    code outside the file sets it. The stores are read only for files with such a test."""
    tests: list[tuple[ast.If, list[str]]] = []
    for node in nodes_of(tree, ast.If):
        conjuncts = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
            else [node.test]
        attrs = [c.attr for c in conjuncts if isinstance(c, ast.Attribute) and isinstance(c.value, ast.Name)
                 and c.value.id == "self"]
        if attrs and node.body:
            tests.append((node, attrs))
    flags = _falsy_flags(tree, {a for _node, attrs in tests for a in attrs}) if tests else set()
    out: list[Guard] = []
    for node, attrs in tests if flags else ():
        attr = next((a for a in attrs if a in flags), None)
        if attr is not None:
            start, end = body_span(node.body)
            out.append(Guard(start, end, "unreachable", frozenset(), node.lineno, frozenset({attr}), where=f"self.{attr}"))
    return out


def _always_falsy(fn: ast.FunctionDef) -> bool:
    """Every way out of `fn` gives a false constant: each `return` has none or a false literal, and it yields nothing
    (falling off the end returns None)."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and not node.value.value):
            return False
        todo.extend(ast.iter_child_nodes(node))
    return True


def _helper_never_true(tree: ast.AST) -> list[Guard]:
    """The body of `if helper():` / `if x and helper():` where `helper` is an undecorated function of this module whose
    every return is a false constant (vllm-plugin-FL's `use_trtllm_ragged_deepseek_prefill()`: `logger.info_once(...);
    return False`) and which the file binds nowhere else: a branch that never runs unless code outside the file rebinds
    the helper. Only for files with such a test."""
    tests: list[tuple[ast.If, list[str]]] = []
    for node in nodes_of(tree, ast.If):
        conjuncts = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
            else [node.test]
        called = [c.func.id for c in conjuncts if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
        if called and node.body:
            tests.append((node, called))
    if not tests or not isinstance(tree, ast.Module):
        return []
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    once = {n.name for n in defs if sum(1 for d in defs if d.name == n.name) == 1}
    bound = {t.id for n in nodes_of(tree, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Global, ast.Nonlocal)
             for t in (n.targets if isinstance(n, ast.Assign) else [getattr(n, "target", None)])
             if isinstance(t, ast.Name)} | {name for n in nodes_of(tree, ast.Global) for name in n.names}
    falsy = {n.name for n in defs if n.name in once and n.name not in bound and not n.decorator_list and _always_falsy(n)}
    out: list[Guard] = []
    for node, called in tests:
        name = next((c for c in called if c in falsy), None)
        if name is not None:
            start, end = body_span(node.body)
            out.append(Guard(start, end, "unreachable", frozenset(), node.lineno, frozenset({name}), where=f"{name}()"))
    return out


def unreachable_branches(tree: ast.AST) -> list[Guard]:
    """The file's branches that never run because of the file itself: under a flag it only sets false, or a helper
    that only returns false (what `dead_methods` starts from)."""
    return _flag_never_set(tree) + _helper_never_true(tree)


def _probed_names(test: ast.expr, tree: ast.AST) -> frozenset[str]:
    """The names a hasattr/getattr test checks, a name argument the module binds to one string included
    (`if not getattr(vllm, ATTR_DATADOG_PATCH, False): return` tests the client's own flag, not every use after it:
    25d's R1). Without them a probe guards everything it covers."""
    names = set(checked_names(test))
    for n in walk(test):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("hasattr", "getattr") \
                and len(n.args) >= 2 and isinstance(n.args[1], ast.Name) and isinstance(tree, ast.Module):
            found = string_constants(n.args[1], tree)
            if len(found) == 1:
                names.add(found[0])
            elif _set_by_the_file(n.args[1].id, tree):
                names.add(n.args[1].id)  # the client's own marker, whatever string the name holds: it guards no other
    return frozenset(names)


def _set_by_the_file(name: str, tree: ast.Module) -> bool:
    """Whether the file itself sets the attribute a name holds (`setattr(vllm, ATTR_DATADOG_PATCH, True)`): a probe of
    it tests the client's own marker, not vLLM's API, whatever module the name's string comes from (27d W1: ddtrace
    imports it from its `_constants`)."""
    return any(isinstance(c.func, ast.Name) and c.func.id == "setattr" and len(c.args) >= 2
               and isinstance(c.args[1], ast.Name) and c.args[1].id == name for c in nodes_of(tree, ast.Call))


def _own_done_flags(tree: ast.AST) -> frozenset[str]:
    """Attribute names this file sets to `True` and to nothing but a bool (`Cls._gguf_mtp_patched = True`,
    `setattr(m, "_done", True)`; an uninstall's `= False`): a client's own "already done" markers.
    `if getattr(Cls, "_gguf_mtp_patched", False): return` tests one of them, not vLLM's API: what follows is the first
    run's path on every release, not the other releases' spelling (a backport stores the value it probed for,
    `Cls.new = helper`, and stays a probe)."""
    out: set[str] = set()
    other: set[str] = set()  # names the file also stores something else under: no marker
    for node in nodes_of(tree, ast.Assign, ast.Call):
        if isinstance(node, ast.Assign):
            value = node.value.value if isinstance(node.value, ast.Constant) else None
            if value is not False:  # `= False`, an uninstall's reset, says nothing either way
                (out if value is True else other).update(t.attr for t in node.targets if isinstance(t, ast.Attribute))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and \
                len(node.args) == 3 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                and isinstance(node.args[2], ast.Constant) and node.args[2].value is True:
            out.add(node.args[1].value)
    return frozenset(out - other)


def _fallback_imports(rest: list[ast.stmt], line: int) -> list[Guard]:
    """The imports after `if probe found it: ...; return`: what the rest of the block imports is the other releases'
    spelling, reached only where the probe found nothing (`kernel = getattr(qm, "kernel", None); if kernel is not
    None: ...; return` then `from vllm...utils import convert_old`), guarded as an `else:` of the probe would be. Only
    the imports: any other use after it is guarded only when it names what the probe checked (`Guard.covers`)."""
    out = []
    for stmt in rest:
        for node in walk(stmt):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.append(Guard(node.lineno, node.end_lineno or node.lineno, "hasattr", frozenset(), line))
    return out


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?::[\w.]+)?")


def host_checked(test: ast.expr) -> frozenset[str]:
    """The packages or modules a test hands to a check by name, when the test is only such a call (or its negation):
    `check_for_registration("vllm")`, `supports("vllm.v1.spec_decode.registry:register")` (a `module:attr` string
    names the module). The check decides whether what follows runs; a use of something under that name after it
    is the client's capability switch (`Guard` kind "capability"), as `find_spec` is."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if not isinstance(test, ast.Call) or any(isinstance(n, ast.Call) for a in [*test.args, *(k.value for k in test.keywords)]
                                             for n in walk(a)):
        return frozenset()
    names = {a.value.split(":")[0] for a in [*test.args, *(k.value for k in test.keywords)]
             if isinstance(a, ast.Constant) and isinstance(a.value, str) and _DOTTED.fullmatch(a.value)}
    return frozenset(names)


def guard_at(guards: list[Guard], line: int, raises: tuple[str, ...], text: str = "", code: str = "",
             failing: list[tuple[int, tuple[str, ...]]] = ()) -> Guard | None:
    """The first guard that covers a use. `failing`: (line, what it raises) of the file's certain errors: an `except`
    fallback whose try body holds one of them (of a kind the handler catches) runs on this vLLM, so it guards
    nothing (`try: from vllm.utils import f / except ImportError: from vllm.utils.import_utils import f` where
    neither module has `f`); a precondition check whose try body holds one raises before anything after its call."""
    after = _after_failing_import(guards, line, failing)
    if after is not None:
        return after
    for g in guards:
        if g.kind == "precondition" and g.start <= line <= g.end and fallback_runs(g, failing):
            return g  # the check itself fails on this vLLM: it raises before this line
        if g.covers(line, raises, text, code) and not (g.kind == "fallback" and fallback_runs(g, failing)):
            return g
    return None


def _after_failing_import(guards: list[Guard], line: int, failing: list[tuple[int, tuple[str, ...]]]) -> Guard | None:
    """A use in a try body below an import of that body's top level that certainly fails on this vLLM, with an
    error the try catches (`try: from vllm.gone import X; class Y(X): ... / except ImportError: ...`): the import
    raises before the use is reached, and the `except` runs instead, so the use never runs here (TF2)."""
    for g in guards:
        if g.kind != "try" or not g.imports or not g.start <= line <= g.end:
            continue
        for start, end in g.imports:
            if end >= line:
                break
            for failed, raises in failing:
                if start <= failed <= end and (ANY in g.catches or g.catches & set(raises)):
                    return Guard(end + 1, g.end, "unreachable", frozenset(), failed, where=str(g.line), test="import")
    return None


def failing_handler(guard: Guard, failing: list[tuple[int, tuple[str, ...]]]) -> int:
    """The line of a certain error inside one of a try guard's handlers (0: none): what the try catches is raised
    again there, so the client does not handle it (batch 20a's W1: `try: DeltaMessage(delta_text) / except Exception:
    DeltaMessage(delta_text)`, where the positional argument fails both times)."""
    for line, _raises in failing:
        if any(start <= line <= end for start, end in guard.handlers):
            return line
    return 0


def running_fallback(guards: list[Guard], line: int, raises: tuple[str, ...],
                     failing: list[tuple[int, tuple[str, ...]]]) -> tuple[Guard, int] | None:
    """The `except` fallback covering a use that `guard_at` set aside because its try body fails here, with the line
    of that failure (for the finding's message)."""
    for g in guards:
        if g.kind == "fallback" and g.covers(line, raises):
            failed = fallback_runs(g, failing)
            if failed:
                return g, failed
    return None


def fallback_runs(guard: Guard, failing: list[tuple[int, tuple[str, ...]]]) -> int:
    """The line of a certain error in the guard's try body that its handler catches (0: none)."""
    for line, raises in failing:
        if guard.body[0] <= line <= guard.body[1] and (ANY in guard.catches or guard.catches & set(raises)):
            return line
    return 0


def runs_where_probed(tree: ast.Module, guard: Guard, expression: str, name: str, line: int, col: int | None) -> bool:
    """Whether the use `expression` (`self.worker.device`) at `line` / `col` runs only where `guard`'s test found the
    name on that object: the test is `hasattr(self.worker, "device")` (or a `getattr` of it) and the use is in the
    branch taken when the name is there (an `if`'s body or a conditional expression's value; the `else` of `if not
    hasattr(...)`, or the lines after it when its body exits). A use the test leaves to the objects that lack the name
    (an `else`, `if not hasattr`: 28d) is not."""
    receiver, dot, read = expression.rpartition(".")
    if not (dot and read == name) or name not in (guard.names or guard.probed or {name}):
        return False
    where = (line, col or 0)

    def probes(test: ast.expr) -> bool:
        return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("hasattr", "getattr") \
            and len(test.args) >= 2 and ast.unparse(test.args[0]) == receiver \
            and isinstance(test.args[1], ast.Constant) and test.args[1].value == name

    for op in nodes_of(tree, ast.BoolOp):  # `hasattr(x, "a") and x.a`: the later terms run where it held
        if isinstance(op.op, ast.And) and op.lineno <= line <= (op.end_lineno or op.lineno):
            first = next((i for i, v in enumerate(op.values) if probes(v)), None)
            if first is not None and any(_span(v)[:2] <= where <= _span(v)[2:] for v in op.values[first + 1:]):
                return True
    for node in nodes_of(tree, ast.If, ast.IfExp):
        if node.lineno != guard.line:
            continue
        negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
        if not probes(node.test.operand if negated else node.test):
            continue
        present = node.orelse if negated else node.body
        if isinstance(present, list):
            if present and _span(present[0])[:2] <= where <= _span(present[-1])[2:]:
                return True
            exits = isinstance(node, ast.If) and not node.orelse and bool(node.body) and \
                isinstance(node.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
            return negated and exits and where > _span(node)[2:]
        return _span(present)[:2] <= where <= _span(present)[2:]
    return False


def _span(node: ast.AST) -> tuple[int, int, int, int]:
    """(first line, first column, last line, end column), columns counted from 1 as client locations are."""
    return (node.lineno, node.col_offset + 1, node.end_lineno or node.lineno, (node.end_col_offset or 0) + 1)
