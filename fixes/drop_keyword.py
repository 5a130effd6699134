"""drop-keyword (DC003): remove, or rename, a keyword argument the target no longer accepts.

`get_kv_cache_config_from_groups(..., kv_cache_specs=spec, ...)` loses the keyword (vLLM 0.12
dropped the parameter); when the target has a parameter with a close name that the call does not
pass, the keyword is renamed instead, unless the types say otherwise (the client's own vLLM annotated the keyword
with a type the close name's annotation shares nothing with, or the value is a literal it does not take: left for a
person). With `--guard`, the keyword is passed only where the callee's signature still accepts it, so one client
runs on both vLLMs.

A keyword is dropped only where nothing says its value is still wanted. The whole call is left for a person when
the target's callee computes a value of the keyword's name from a parameter the call does not pass (vLLM's
`get_rope` reads `base = rope_parameters.get("rope_theta", 10000)`: dropping `base=rope_theta` would run with
10000), or when the call also lacks a parameter the target requires (`LLM.generate(prompt_token_ids=...)` misses
`prompts`: the dropped value is the call's input). A literal that asks for something (`use_beam_search=True`,
`n=3`, a string) is left too: the call would run and silently do something else. A dropped expression (a variable,
a call) is listed in the summary with the value that no longer reaches vLLM.
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, code_of, expr, run_transformer
from driftcheck.rules.findings import Finding

FIX = Fix("drop-keyword", ("DC003",), "Drop or rename a keyword the target no longer accepts; a call whose value the "
          "target wants elsewhere (another parameter, a required one the call lacks, the client's own copy of the "
          "callee) or that asks for something (`use_beam_search=True`) is left, and said why")


def remove_arg(args: list[cst.Arg], index: int) -> list[cst.Arg]:
    """Remove args[index], keeping the call's comma style (a trailing comma stays trailing) and the comment at the end
    of the line before it (`max_position_embeddings=None,  # no need in diffusion` lost it: batch 21a)."""
    out = list(args)
    removed = out.pop(index)
    if index == len(out) and out:  # removed the last one: its comma (or absence) moves to the new last
        out[-1] = out[-1].with_changes(comma=_closing_comma(out[-1].comma, removed))
    return out


def _closing_comma(before, removed: cst.Arg):
    """The comma the new last argument ends with: the removed one's layout up to the `)`, after the rest of its own
    line (spaces, a comment) where the call spans lines."""
    ends = removed.comma.whitespace_after if isinstance(removed.comma, cst.Comma) else removed.whitespace_after_arg
    if isinstance(before, cst.Comma) and isinstance(before.whitespace_after, cst.ParenthesizedWhitespace) \
            and isinstance(ends, cst.ParenthesizedWhitespace):
        return before.with_changes(whitespace_after=before.whitespace_after.with_changes(
            indent=ends.indent, last_line=ends.last_line))
    return removed.comma


def _reshaped(f: Finding, findings: list[Finding]) -> str | None:
    """Why no keyword of this call may be dropped: the target moved a value into a parameter the call does not pass,
    or the call also lacks a parameter the target requires (the rejected keyword may be what became it)."""
    kw = f.details.get("keyword")
    for g in sorted(findings, key=lambda g: g is not f):  # this finding's own reason first
        moved = g.details.get("moved_into")
        if moved:
            where = f"`{moved['code']}`, {g.vllm.path if g.vllm else '?'}:{moved['line']}"
            head = (f"the target reads '{kw}' from '{moved['parameter']}' now ({where})" if g is f else
                    f"the target reads this call's '{g.details.get('keyword')}' from '{moved['parameter']}' now ({where}), so "
                    f"'{kw}' may have moved there too")
            return (f"{head}, and this call does not pass '{moved['parameter']}': dropping '{kw}' would run it with the "
                    "target's defaults; pass the values in the new form by hand")
    misses = next((g.details["call_misses"] for g in findings if g.details.get("call_misses")), None)
    if misses:
        return (f"the call also lacks {', '.join(repr(m) for m in misses)}, which the target requires: '{kw}' may be "
                "what became it, so dropping it could throw the call's input away; rewrite the call by hand")
    return None


class _DropKeyword(Targeted):
    def __init__(self, findings, ctx):
        super().__init__(findings, ctx)
        self.notes: list[str] = []

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        mine = self.findings_at(original)
        for f in mine:
            kw = f.details.get("keyword")
            reshaped = _reshaped(f, mine)  # under --guard too: the new vLLM would run without the value all the same
            if reshaped:
                self.skipped.append((f, reshaped))
                continue
            if f.details.get("rebound"):  # the call may reach the client's own replacement, which may need it
                self.skipped.append((f, f"the client rebinds this callee ({f.details['rebound']}): its keywords are the "
                                        "client's to decide"))
                continue
            if f.details.get("client_defines"):  # a copy of vLLM's module the client mounts or patches in may be the callee
                self.skipped.append((f, f"the client defines its own {(f.symbol or '').rsplit('(', 1)[0].rsplit('.', 1)[-1]} "
                                        f"taking '{kw}' ({f.details['client_defines']}): the call may reach that copy "
                                        "(mounted over vLLM's file, or patched in), which needs it; left as it is"))
                continue
            if f.details.get("pydantic_extra") in ("ignore", "allow", "unknown"):
                self.skipped.append((f, "pydantic does not reject this keyword here (it drops or keeps it): nothing fails"))
                continue
            index = next((i for i, a in enumerate(updated.args) if a.keyword is not None and a.keyword.value == kw), None)
            if index is None:
                self.skipped.append((f, f"no keyword '{kw}' in this call"))
                continue
            renamed = f.details.get("renamed_to")
            if renamed and f.details.get("rename_conflict") and not self.ctx.guard:
                self.skipped.append((f, f"the target has '{renamed}', close to '{kw}' in name but not in type "
                                        f"({f.details['rename_conflict']}): neither a rename nor a drop is certain; "
                                        "rewrite it by hand"))
                continue
            if not renamed and f.details.get("near") and not self.ctx.guard:
                near = ", ".join(repr(n) for n in f.details["near"])
                self.skipped.append((f, f"the target has {near}, which may be what '{kw}' became: dropping it could "
                                        "throw away a value the target still takes under another name; rename or drop "
                                        "it by hand"))
                continue
            args = list(updated.args)
            value_code = " ".join(code_of(args[index].value).split())  # one line, for the summary
            value_code = value_code if len(value_code) <= 80 else value_code[:77] + "..."
            if not renamed and f.details.get("value_asks"):  # read by the rule: the literal, or where a name gets one
                value = args[index].value  # a variable (not the constants libcst also reads as names) holds it
                held = f"holds what {f.details['value_asks']} puts there, which asks" if isinstance(value, cst.Name) \
                    and value.value not in ("True", "False", "None") else "asks"
                self.skipped.append((f, f"`{kw}={value_code}` {held} for something the target's signature no longer "
                                        "offers: dropping it would make the call run and silently do something else; "
                                        "find how the target does it now"))
                continue
            if not self.ctx.guard and not renamed and not f.details.get("value_literal"):
                callee = (f.symbol or "").rsplit("(", 1)[0].rsplit(".", 1)[-1] or "the callee"
                self.notes.append(f"dropped `{kw}={value_code}` ({f.client.path}:{f.client.line}): {callee} has no such "
                                  "parameter in the target, so that value no longer reaches vLLM")
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
    transformer = _DropKeyword(findings, ctx)
    outcome = run_transformer(source, transformer)
    outcome.notes += transformer.notes
    return outcome
