"""drop-keyword (DC003): remove, or rename, a keyword argument the target no longer accepts.

`get_kv_cache_config_from_groups(..., kv_cache_specs=spec, ...)` loses the keyword (vLLM 0.12
dropped the parameter); when the target has a parameter with a close name that the call does not
pass, the keyword is renamed instead. With `--guard`, the keyword is passed only where the
callee's signature still accepts it, so one client runs on both vLLMs.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, code_of, expr, run_transformer
from driftcheck.rules.findings import Finding

FIX = Fix("drop-keyword", ("DC003",), "Drop or rename a keyword the target no longer accepts")


def remove_arg(args: list[cst.Arg], index: int) -> list[cst.Arg]:
    """Remove args[index], keeping the call's comma style (a trailing comma stays trailing)."""
    out = list(args)
    removed = out.pop(index)
    if index == len(out) and out:  # removed the last one: its comma (or absence) moves to the new last
        out[-1] = out[-1].with_changes(comma=removed.comma)
    return out


class _DropKeyword(Targeted):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        mine = self.findings_at(original)
        for f in mine:
            kw = f.details.get("keyword")
            if f.details.get("rebound"):  # the call may reach the client's own replacement, which may need it
                self.skipped.append((f, f"the client rebinds this callee ({f.details['rebound']}): its keywords are the "
                                        "client's to decide"))
                continue
            if f.details.get("pydantic_extra") in ("ignore", "allow", "unknown"):
                self.skipped.append((f, "pydantic does not reject this keyword here (it drops or keeps it): nothing fails"))
                continue
            index = next((i for i, a in enumerate(updated.args) if a.keyword is not None and a.keyword.value == kw), None)
            if index is None:
                self.skipped.append((f, f"no keyword '{kw}' in this call"))
                continue
            renamed = f.details.get("renamed_to")
            args = list(updated.args)
            if self.ctx.guard:
                callee = code_of(updated.func)
                value = code_of(args[index].value)
                guarded = expr(f'({{"{kw}": {value}}} if "{kw}" in __import__("inspect").signature({callee}).parameters else {{}})')
                args[index] = cst.Arg(value=guarded, star="**", comma=args[index].comma)
            elif renamed:
                args[index] = args[index].with_changes(keyword=cst.Name(renamed))
            else:
                args = remove_arg(args, index)
            updated = updated.with_changes(args=args)
            self.applied.append(f)
        return updated


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _DropKeyword(findings, ctx))
