"""disable-prefix-caching (DC101, DC102): build the engine config with `enable_prefix_caching=False`.

For prefill-only hidden-state capture, prefix caching buys nothing and breaks two things: requests
built by hand without `block_hasher` crash in `cache_full_blocks` (DC101), and repeated prompts
come back with truncated hidden states (DC102). The fix sets the keyword on the client's
`CacheConfig(...)` (or on the call that configures `extract_hidden_states`, e.g. `LLM(...)`), or
appends `--no-enable-prefix-caching` to a command-line list.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.codemod import Fix, FixContext, FixOutcome, Targeted, run_transformer
from driftcheck.findings import Finding, Location

from .add_argument import append_arg

FIX = Fix("disable-prefix-caching", ("DC101", "DC102"), "Turn prefix caching off in the config the client builds")

FALSE_KW = cst.Arg(keyword=cst.Name("enable_prefix_caching"), value=cst.Name("False"),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))


def _where(f: Finding) -> Location | None:
    """DC101 points at Request(...); the config to change is the CacheConfig(...) it names."""
    cache = f.details.get("cache_config")
    if cache:
        return Location(cache["path"], cache["line"], cache.get("code", ""), cache.get("col"))
    if f.rule == "DC101":
        return None
    return f.client


class _Disable(Targeted):
    def __init__(self, findings, ctx):
        super().__init__(findings, ctx)
        self.targets = {id(f): _where(f) for f in findings}

    def _mine(self, node) -> list[Finding]:
        pos = self.position(node)
        out = []
        for f in self.findings:
            loc = self.targets.get(id(f))
            if loc is not None and loc.line == pos.start.line and (loc.col is None or loc.col == pos.start.column + 1):
                out.append(f)
        return out

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        mine = self._mine(original)
        if not mine:
            return updated
        args = list(updated.args)
        existing = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "enable_prefix_caching"), None)
        if existing is not None:
            args[existing] = args[existing].with_changes(value=cst.Name("False"))
        else:
            args = append_arg(args, FALSE_KW)
        self.applied.extend(mine)
        return updated.with_changes(args=args)


def _enclosing_calls(source: str, findings: list[Finding]) -> list[Finding]:
    """DC102 may point at the "extract_hidden_states" string: retarget it to its enclosing call."""
    import ast

    tree = ast.parse(source)
    out = []
    for f in findings:
        if f.rule != "DC102" or f.details.get("cache_config") or f.client is None:
            out.append(f)
            continue
        target = None
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.lineno <= f.client.line <= (node.end_lineno or node.lineno):
                if any(getattr(n, "lineno", None) == f.client.line and getattr(n, "col_offset", -1) + 1 == f.client.col
                       for n in ast.walk(node)):
                    if target is None or node.lineno >= target.lineno:
                        target = node
        is_dict_call = target is not None and isinstance(target.func, ast.Name) and target.func.id == "dict"
        if target is not None and not is_dict_call:
            f.details["cache_config"] = {"path": f.client.path, "line": target.lineno, "col": target.col_offset + 1}
        out.append(f)
    return out


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    findings = _enclosing_calls(source, findings)
    return run_transformer(source, _Disable(findings, ctx))
