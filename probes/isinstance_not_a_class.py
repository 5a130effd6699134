"""DC119 isinstance-not-a-class: `isinstance(x, Name)` / `issubclass(x, Name)` where the target makes the vLLM name
the client imports a plain function.

A vLLM class that becomes a factory function keeps its name and its import: vLLM 0.24.0 turned `FusedMoE` into
`def FusedMoE(...)`, which builds a `MoERunner`. A client that finds the MoE layers of a model with
`isinstance(module, FusedMoE)` (prime-rl's weight transfer before its fix for 0.24) then raises `TypeError:
isinstance() arg 2 must be a type, a tuple of types, or a union` the first time the line runs, whatever `module` is.

The rule reads `from vllm.x import Name` imports whose name the target resolves to a function defined with `def`
(no decorator: a decorator may hand back a class) and, in the importing file, every `isinstance` / `issubclass`
call whose second argument is that name, alone or in a tuple. The file must bind the name only through that import
(no `def`, assignment, parameter or other import of it), so the call certainly reaches vLLM's function. No fix: what
to test instead (the class the factory builds) is the client's choice.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import binding_counts, is_type_checking, nodes_of
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.resolved import Resolved

RULE = Rule("DC119", "isinstance-not-a-class", "isinstance/issubclass against a vLLM name the target makes a function",
            "error", kind="behaviour", raises=("TypeError",))

_TESTS = ("isinstance", "issubclass")


class _Bindings:
    """How a file binds names, read once from its buckets (for files that test a bare name with isinstance)."""

    def __init__(self, tree: ast.Module):
        self.from_imports = nodes_of(tree, ast.ImportFrom)
        counts = binding_counts(tree)
        # an import under `if TYPE_CHECKING:` never runs: the name is still the one runtime import's (26d R3, a
        # re-import of `FusedMoE` for the type checker beside the one that runs)
        unrun: dict[str, int] = {}
        for block in nodes_of(tree, ast.If):
            if is_type_checking(block.test):
                for node in block.body:
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        for alias in node.names:
                            name = alias.asname or alias.name.split(".")[0]
                            unrun[name] = unrun.get(name, 0) + 1
        self.imported = {name: kinds["import"] - unrun.get(name, 0) for name, kinds in counts.items() if "import" in kinds}
        self.other = {name for name, kinds in counts.items() if kinds.keys() - {"import"}}


def _local_name(bindings: _Bindings, imp) -> str | None:
    """The name the import binds in its file, when nothing else in the file binds it."""
    local = next((alias.asname or alias.name for node in bindings.from_imports
                  if node.lineno <= imp.loc.line <= (node.end_lineno or node.lineno)
                  for alias in node.names if alias.name == imp.name), None)
    if local is None or local in bindings.other or bindings.imported.get(local, 0) != 1:
        return None
    return local


def _type_tests(tree: ast.Module) -> dict[str, list[ast.Call]]:
    """Name -> `isinstance(x, name)`, `issubclass(c, (A, name))` calls of the file (the builtin called by its name with
    two arguments), read once per file from its call bucket: most files test no imported name at all."""
    out: dict[str, list[ast.Call]] = {}
    for node in nodes_of(tree, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id in _TESTS and len(node.args) == 2 and not node.keywords):
            continue
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        for name in {k.id for k in kinds if isinstance(k, ast.Name)}:
            out.setdefault(name, []).append(node)
    return {name: sorted(calls, key=lambda c: (c.lineno, c.col_offset)) for name, calls in out.items()}


def _shadowed_builtins(tree: ast.Module) -> set[str]:
    """`isinstance` / `issubclass` the file rebinds itself (a `def`, an assignment, an import)."""
    out = set()
    for node in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.Name, ast.Import, ast.ImportFrom):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _TESTS:
            out.add(node.name)
        elif isinstance(node, ast.Name) and node.id in _TESTS and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {a.asname or a.name for a in node.names if (a.asname or a.name) in _TESTS}
    return out


def check(ctx: ScanContext):
    tests_by_file: dict[str, dict[str, list[ast.Call]]] = {}
    bindings_by_file: dict[str, _Bindings] = {}
    for imp in ctx.usage.imports:
        if not imp.name or imp.type_only or imp.unreached:
            continue
        file = ctx.usage.file_at(imp.loc.path)
        if file is None or file.tree is None:
            continue
        if file.rel not in tests_by_file:
            tests_by_file[file.rel] = _type_tests(file.tree)
        tests = tests_by_file[file.rel]
        if not tests:
            continue  # the common case: no isinstance/issubclass against a bare name in the file
        mod = ctx.api.module(imp.module)
        found = ctx.api.module_member(mod, imp.name) if mod is not None else None
        if not isinstance(found, Resolved) or found.kind != "function" or found.func is None or found.func.decorators:
            continue
        if file.rel not in bindings_by_file:
            bindings_by_file[file.rel] = _Bindings(file.tree)
        local = _local_name(bindings_by_file[file.rel], imp)
        if local is None or local not in tests:
            continue
        shadowed = _shadowed_builtins(file.tree)
        for call in tests[local]:
            if call.func.id in shadowed:
                continue
            yield ctx.finding(
                RULE, f"`{imp.module}.{imp.name}` is a function in {ctx.version_label()}, not a class: "
                      f"`{ast.unparse(call)}` raises TypeError: {call.func.id}() arg 2 must be a type, a tuple of "
                      "types, or a union, when this line runs.",
                loc_of(file, call), ctx.location_of(found), f"{imp.module}.{imp.name}", when="call", fix=False,
                type_test=True)


SIGNATURES = (
    Signature("the client tests isinstance/issubclass against a vLLM name that this vLLM makes a function.",
              "A vLLM class became a factory function of the same name; test against the class it builds instead.",
              message=r"(?:isinstance|issubclass)\(\) arg 2 must be a type", exc_types=("TypeError",),
              code=r"\b(?:isinstance|issubclass)\(", priority=5),
)
