"""add-block-hasher (DC101, unsafe): give hand-built Requests the block hasher vLLM's engine builds.

For a client that needs prefix caching on. The fix copies how the target's own `EngineCore`
builds `request_block_hasher` (read from vllm/v1/engine/core.py: `get_hash_fn_by_name`,
`init_none_hash`, `get_request_block_hasher`, with the engine's local values inlined) into a
helper `_driftcheck_block_hasher(vllm_config)` and passes `block_hasher=` to each `Request(...)`.
Unsafe: with caching on, repeated prompts still return truncated hidden states (DC102); prefer
`disable-prefix-caching` for hidden-state extraction. Select it with `--only add-block-hasher`.
"""

from __future__ import annotations

import ast

import libcst as cst

from driftcheck.fix.codemod import (
    UNSAFE, Fix, FixContext, FixOutcome, Targeted, append_arg, expr, insert_after_imports, run_transformer,
)
from driftcheck.rules.findings import Finding
from driftcheck.astnodes import walk

FIX = Fix("add-block-hasher", ("DC101",), "Pass block_hasher built the way vLLM's engine core builds it", UNSAFE)

ENGINE_CORE = "vllm/v1/engine/core.py"
HELPER = "_driftcheck_block_hasher"


def engine_recipe(api) -> tuple[list[str], list[str], int] | None:
    """(imports, body lines using `vllm_config`, line) copied from the target's EngineCore."""
    tree = api.parse(ENGINE_CORE)
    module = api.module("vllm.v1.engine.core")
    if tree is None or module is None:
        return None
    for fn in walk(tree):
        if not isinstance(fn, ast.FunctionDef) or fn.name != "__init__":
            continue
        for node in walk(fn):
            if not isinstance(node, ast.If):
                continue
            assigns = [s for s in node.body if isinstance(s, ast.Assign) and "request_block_hasher" in ast.unparse(s.targets[0])]
            if not assigns:
                continue
            locals_ = {a.targets[0].id: a.value for a in walk(fn) if isinstance(a, ast.Assign)
                       and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)}
            body: list[str] = []
            for stmt in node.body:
                if stmt is assigns[0]:
                    value = _inline(stmt.value, locals_, {n.targets[0].id for n in node.body if isinstance(n, ast.Assign)
                                                          and isinstance(n.targets[0], ast.Name)})
                    body.append(f"return {ast.unparse(value)}")
                    break
                body.append(ast.unparse(stmt))
            used = {n.id for s in body for n in walk(ast.parse(s)) if isinstance(n, ast.Name)}
            imports = []
            for name in sorted(used):
                binding = module.bindings.get(name)
                if binding is not None and binding.kind == "import":
                    mod, _, attr = binding.target.rpartition(".")
                    imports.append(f"from {mod} import {attr}" + (f" as {name}" if attr != name else ""))
            free = used - {"vllm_config", "caching_hash_fn"} - {i.split()[-1] for i in imports} - set(dir(__builtins__) if not isinstance(__builtins__, dict) else __builtins__)
            bound_here = {n.targets[0].id for s in body for n in walk(ast.parse(s)) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)}
            if free - bound_here:
                return None
            return imports, body, node.lineno
    return None


def _inline(value: ast.expr, locals_: dict[str, ast.expr], skip: set[str], depth: int = 0) -> ast.expr:
    if depth > 3:
        return value

    class _Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in locals_ and node.id not in skip and node.id != "vllm_config":
                return _inline(locals_[node.id], locals_, skip, depth + 1)
            return node

    return _Sub().visit(ast.parse(ast.unparse(value), mode="eval").body)


def helper_source(api) -> str | None:
    recipe = engine_recipe(api)
    if recipe is None:
        return None
    imports, body, line = recipe
    lines = [f"def {HELPER}(vllm_config):",
             f'    """Added by `driftcheck fix` (add-block-hasher): what vLLM {api.version or ""} EngineCore builds ({ENGINE_CORE}:{line})."""',
             f"    cached = {HELPER}.__dict__.setdefault(\"cache\", {{}})",
             "    if id(vllm_config) in cached:",
             "        return cached[id(vllm_config)]"]
    lines += [f"    {imp}" for imp in imports]
    for stmt in body:
        for text in stmt.splitlines():
            lines.append("    " + text.replace("return ", "hasher = ", 1) if text.startswith("return ") else "    " + text)
    lines += ["    cached[id(vllm_config)] = hasher", "    return hasher"]
    return "\n".join(lines) + "\n"


class _AddHasher(Targeted):
    def __init__(self, findings, ctx, config_expr: str):
        super().__init__(findings, ctx)
        self.config_expr = config_expr

    def leave_Call(self, original, updated):
        f = self.finding_at(original)
        if f is None:
            return updated
        if any(a.keyword is not None and a.keyword.value == "block_hasher" for a in updated.args):
            self.applied.append(f)
            return updated
        arg = cst.Arg(keyword=cst.Name("block_hasher"), value=expr(f"{HELPER}({self.config_expr})"),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
        self.applied.append(f)
        return updated.with_changes(args=append_arg(list(updated.args), arg))


def _vllm_config_expr(source: str) -> str | None:
    for node in walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg == "vllm_config":
            return ast.unparse(node.value)
    return None


def _insert_helper(module: cst.Module, helper: str) -> cst.Module:
    if f"def {HELPER}(" in module.code:
        return module
    func = cst.parse_statement(helper).with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return insert_after_imports(module, func)


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    helper = helper_source(ctx.api)
    config = _vllm_config_expr(source)
    if helper is None or config is None:
        why = "cannot read how the target's EngineCore builds its block hasher" if helper is None else \
            "no `vllm_config=` expression in this file to build the hasher from"
        return FixOutcome(source, [], [(f, why) for f in findings])
    outcome = run_transformer(source, _AddHasher(findings, ctx, config))
    if outcome.applied:
        outcome.source = _insert_helper(cst.parse_module(outcome.source), helper).code
    return outcome
