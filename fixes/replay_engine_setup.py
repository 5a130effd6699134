"""replay-engine-setup (DC108): do the setup step vLLM's engine core does, right before the call that needs it.

The statements are copied from the target's own engine (the call site DC108 names, e.g.
`layout = resolve_kv_cache_layout(vllm_config, self.model_executor.get_supported_kv_cache_layouts(),
[s for specs in kv_cache_specs for s in specs.values()])` and the `set_kv_cache_layout(layout.name)`
that follows it in vllm/v1/engine/core.py) and rewritten in the client's terms: `vllm_config` becomes
what the client passes as `vllm_config=`, the engine's executor becomes the client's (the receiver of
its `collective_rpc`), engine locals are inlined, and the imports they need are added. When a name
cannot be translated, or the engine uses the step's result again after other statements (0.33.0's
`set_kv_cache_layout(layout.name, ...)` two steps after the layout is resolved), the finding is left for a person, and
said so.
"""

from __future__ import annotations

import ast

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, ensure_import
from driftcheck.probes.engine_setup_precondition import EngineSetup
from driftcheck.rules.findings import Finding
from driftcheck.astnodes import walk

FIX = Fix("replay-engine-setup", ("DC108",), "Run the engine-core setup step the call needs, as vLLM's engine does")

MAX_FOLLOWERS = 3


def _engine_statements(api, path: str, line: int):
    """(statements at the engine's call site and the ones right after it using its result, their function, its module,
    a later statement of the same block that still uses the result or None)."""
    tree = api.parse(path)
    if tree is None:
        return None
    for fn in walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for block in [n for n in walk(fn) if hasattr(n, "body") and isinstance(getattr(n, "body"), list)]:
            for i, stmt in enumerate(block.body):
                if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) and not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                        continue  # the call is deeper; the inner block will match
                    picked = [stmt]
                    names = {t.id for t in walk(stmt) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
                    for follow in block.body[i + 1: i + 1 + MAX_FOLLOWERS]:
                        used = {n.id for n in walk(follow) if isinstance(n, ast.Name)}
                        if not names & used:
                            break
                        picked.append(follow)
                    later = next((s for s in block.body[i + len(picked):]
                                  if names & {n.id for n in walk(s) if isinstance(n, ast.Name)}), None)
                    return picked, fn, path.removesuffix(".py").replace("/", "."), later
    return None


class _Translate(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str], locals_: dict[str, ast.expr], bound: set[str]):
        self.mapping, self.locals, self.bound = mapping, locals_, bound
        self.free: set[str] = set()

    def visit_Attribute(self, node):
        text = ast.unparse(node)
        if text in self.mapping:
            return ast.parse(self.mapping[text], mode="eval").body
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.mapping:
            return ast.parse(self.mapping[node.id], mode="eval").body
        if isinstance(node.ctx, ast.Load) and node.id in self.locals and node.id not in self.bound:
            return self.visit(ast.parse(ast.unparse(self.locals[node.id]), mode="eval").body)
        if isinstance(node.ctx, ast.Load) and node.id not in self.bound:
            self.free.add(node.id)
        return node


def _client_exprs(source: str) -> dict[str, str]:
    tree = ast.parse(source)
    out: dict[str, str] = {}
    for node in walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "vllm_config" and "vllm_config" not in out:
            out["vllm_config"] = ast.unparse(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("collective_rpc", "execute_model") \
                and "executor" not in out:
            out["executor"] = ast.unparse(node.func.value)
    return out


def translate(api, finding: Finding, source: str) -> tuple[list[str], list[tuple[str, str]]] | str:
    """(statement lines, imports) in the client's terms, or why not."""
    setup: EngineSetup | None = finding.payload
    if setup is None:
        return "the finding carries no engine call site (a scan from before payloads)"
    path, line = setup.engine_path, setup.engine_line
    found = _engine_statements(api, path, line)
    if found is None:
        return f"cannot read the engine's call site {path}:{line}"
    statements, fn, module_name, later = found
    if later is not None:
        # vLLM 0.33.0 resolves the KV-cache layout, does two other steps, then sends it to the workers
        # (`set_kv_cache_layout(layout.name, ...)`): replaying the first step alone tells the workers nothing (batch 21a)
        return (f"the engine uses what this step makes again further on ({path}:{later.lineno}: "
                f"`{ast.unparse(later).splitlines()[0][:80]}`), with other steps between: replaying only this step "
                "would leave that undone; do it by hand")
    client = _client_exprs(source)
    if "vllm_config" not in client or "executor" not in client:
        return "no `vllm_config=` or executor (collective_rpc receiver) in this file to translate the engine's code"
    locals_ = {a.targets[0].id: a.value for a in walk(fn) if isinstance(a, ast.Assign) and len(a.targets) == 1
               and isinstance(a.targets[0], ast.Name)}
    executors = {ast.unparse(v) for v in walk(fn) if isinstance(v, ast.Attribute) and v.attr.endswith("executor")
                 and isinstance(v.value, ast.Name) and v.value.id == "self"}
    mapping = {"vllm_config": client["vllm_config"], "self.vllm_config": client["vllm_config"]}
    mapping.update({e: client["executor"] for e in executors})
    bound = {t.id for s in statements for t in walk(s) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    bound |= {n.id for s in statements for c in walk(s) if isinstance(c, ast.comprehension)
              for n in walk(c.target) if isinstance(n, ast.Name)}
    tr = _Translate(mapping, locals_, bound)
    out = [ast.unparse(tr.visit(ast.parse(ast.unparse(s)).body[0])) for s in statements]
    module = api.module(module_name)
    imports = []
    for name in sorted(tr.free):
        binding = module.bindings.get(name) if module else None
        if binding is not None and binding.kind == "import":
            mod, _, attr = binding.target.rpartition(".")
            if attr == name:
                imports.append((mod, name))
                continue
        if name in dir(__builtins__) if not isinstance(__builtins__, dict) else name in __builtins__:
            continue
        return f"cannot translate '{name}' from {path}:{line} into the client's terms"
    return out, imports


class _Insert(cst.CSTTransformer):
    """Insert statements before the simple statement that holds the finding's line."""

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, line: int, code: list[str]):
        super().__init__()
        self.line, self.code, self.done = line, code, False

    def leave_IndentedBlock(self, original, updated):
        if self.done:
            return updated
        body = list(updated.body)
        for i, stmt in enumerate(original.body):
            pos = self.get_metadata(cst.metadata.PositionProvider, stmt)
            if isinstance(stmt, cst.SimpleStatementLine) and pos.start.line <= self.line <= pos.end.line:
                new = [cst.parse_statement(c + "\n") for c in self.code]
                new[0] = new[0].with_changes(leading_lines=[
                    cst.EmptyLine(comment=cst.Comment("# driftcheck fix (replay-engine-setup): as vLLM's engine core does"))])
                body[i:i] = new
                self.done = True
                return updated.with_changes(body=body)
        return updated


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    outcome = FixOutcome(source)
    for f in sorted(findings, key=lambda f: -f.client.line):
        result = translate(ctx.api, f, outcome.source)
        if isinstance(result, str):
            outcome.skipped.append((f, result))
            continue
        code, imports = result
        wrapper = cst.metadata.MetadataWrapper(cst.parse_module(outcome.source))
        inserter = _Insert(f.client.line, code)
        module = wrapper.visit(inserter)
        if not inserter.done:
            outcome.skipped.append((f, "the call is not a statement inside a function body"))
            continue
        for from_module, name in imports:
            module = ensure_import(module, from_module, name)
        outcome.source = module.code
        outcome.applied.append(f)
    return outcome
