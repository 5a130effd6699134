"""move-import (DC001, DC002, DC009): import a name from the module that defines it in the target.

`from vllm.old import X` becomes `from vllm.new import X` when the target defines `X` in
`vllm.new` (found by driftcheck, not from a table). When only some names of the statement moved,
the statement is split so the others keep their module. A missing module's names (DC001) move only where the
module found for them has them (from the module that defines them, when that module only imports them); a name
it lacks goes to the module that defines it (as DC002 finds it), and one no module defines stays, and is said so (`from vllm.model_executor.layers.sampler import SamplerOutput,
get_sampler` on vLLM 0.12: `vllm.v1.sample.sampler` has `SamplerOutput`; no module has `get_sampler`). The
split keeps the statement's layout: a parenthesised import with a trailing comma keeps it and its own `)` line.
A module's own object (`logger = init_logger(__name__)`) moves only along with a name that proves its new module:
another module's logger is another logger (NA1).
"""

from __future__ import annotations

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, code_of, run_transformer
from driftcheck.rules.findings import Finding
from driftcheck.vllm_model.resolved import Resolved, Unknown

FIX = Fix("move-import", ("DC001", "DC002", "DC009"), "Import from the module that defines the name in the target")


def _dotted(module: str) -> cst.BaseExpression:
    parts = module.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def _start(finding) -> str | None:
    """Where a finding's names went (`moved_to`), or, for DC001 without one, the closest module of the gone module's
    name, from which each name is looked for in turn (`search_from`)."""
    return finding.details.get("moved_to") or finding.details.get("search_from")


class _MoveImport(Targeted):
    def leave_SimpleStatementLine(self, original, updated):
        pos = self.position(original)
        mine = [f for f in self.findings if f.client and f.client.line == pos.start.line and _start(f)]
        if mine and any(isinstance(small, cst.Import) for small in updated.body):
            # `import vllm.a.b` binds `vllm`: the code reaches the module as `vllm.a.b.X`, which a new import line
            # would not change
            self.skipped += [(f, f"`import {f.symbol}` is used through its dotted name (`{f.symbol}.…`), which a new "
                                 f"import line would not change: rewrite those uses by hand (a module of that name is at "
                                 f"`{_start(f)}`; check it has what they use)") for f in mine]
            return updated
        if not mine or len(updated.body) != 1 or not isinstance(updated.body[0], cst.ImportFrom):
            return updated
        stmt: cst.ImportFrom = updated.body[0]
        if isinstance(stmt.names, cst.ImportStar) or stmt.module is None:
            return updated
        module = code_of(stmt.module)
        moving: dict[str, str] = {}
        done = []
        for f in mine:
            name = (f.symbol or "").rsplit(".", 1)[-1]
            if f.rule == "DC001":
                absent = []
                replaced, kept = set(f.details.get("client_replaces") or ()), []
                for alias in stmt.names:
                    alias_name = code_of(alias.name)
                    if alias_name in replaced:
                        kept.append(alias_name)
                        self.skipped.append((f, f"the client sets `{alias_name}` on `{module}` itself (its own "
                                                "replacement): this import takes that, and one from vLLM's new home "
                                                "would take vLLM's; left for a person"))
                        continue
                    home = self._home(_start(f), alias_name) or self._defined_in(alias_name, module)
                    if home:
                        moving[alias_name] = home
                    else:
                        absent.append(alias_name)
                own = self._own_left_alone(moving, module)
                if own:
                    self.skipped.append((f, f"{', '.join(f'`{a}`' for a in own)} is each module's own object "
                                            f"(`{own[next(iter(own))]}`): another module's is not the one the old "
                                            "import took; replace by hand"))
                if absent:
                    self.skipped.append((f, f"no module of the target defines {', '.join(f'`{a}`' for a in absent)} "
                                            f"(not even `{_start(f)}`, the module of that name): "
                                            f"{'it stays' if len(absent) == 1 else 'they stay'} on the old import; "
                                            "replace by hand"))
                if len(absent) + len(own) + len(kept) < len(stmt.names):
                    done.append(f)
            else:
                moving[name] = f.details["moved_to"]
                done.append(f)
        keep = [a for a in stmt.names if code_of(a.name) not in moving]
        moved = [a for a in stmt.names if code_of(a.name) in moving]
        if not moved:
            return updated
        self.applied.extend(done)
        targets = sorted({moving[code_of(a.name)] for a in moved})
        last_comma = stmt.names[-1].comma  # a trailing comma (and the newline before `)`) or none
        lines = []
        if keep:
            lines.append(updated.with_changes(body=[stmt.with_changes(names=_fix_commas(keep, last_comma))]))
        for target in targets:
            names = [a for a in moved if moving[code_of(a.name)] == target]
            new_stmt = stmt.with_changes(module=_dotted(target), names=_fix_commas(names, last_comma), relative=[])
            lines.append(updated.with_changes(body=[new_stmt], leading_lines=[] if lines else updated.leading_lines))
        _ = module
        return cst.FlattenSentinel(lines) if len(lines) > 1 else lines[0]

    def _own_left_alone(self, moving: dict[str, str], gone: str) -> dict[str, str]:
        """The names of `moving` that their new module binds for itself (`logger = init_logger(__name__)`), with that
        statement, unless a name that is no such object moves to the same module (then the old module's code moved
        there, its logger with it): taken out of `moving`, as another module's logger is another logger (NA1)."""
        from driftcheck.vllm_model.same_named import own_objects

        api = self.ctx.api
        if api is None:
            return {}
        own = {}
        for name, home in list(moving.items()):
            mine = own_objects(api, home, [name], gone)
            if mine and not any(h == home and n != name and not own_objects(api, home, [n], gone)
                                for n, h in moving.items()):
                own[name] = mine[name]
                del moving[name]
        return own

    def _defined_in(self, name: str, near: str) -> str | None:
        """The module of the target that defines `name` at top level as DC002 names it (the nearest to `near`, the
        module it was imported from: TextIndex.defining_modules), or None."""
        from driftcheck.vllm_model.bodies import text_index_for

        api = self.ctx.api
        if api is None:
            return None
        homes = text_index_for(api).defining_modules(name, near=near, leader=True)
        return homes[0] if homes else None

    def _home(self, module: str, name: str) -> str | None:
        """Where to import `name` from, given the target's `module` of the missing module's name: the module that
        defines it when `module` only imports it (vllm-ascend's `OffloadingSpec`: `vllm.v1.kv_offload.cpu.spec`
        imports it from `vllm.v1.kv_offload.base`, which defines it), else `module` if it has it; None if not."""
        api = self.ctx.api
        mod = api.module(module) if api is not None else None
        if mod is None:
            return module if api is None else None
        result = api.module_member(mod, name)
        if isinstance(result, Unknown):
            return module  # the finding said the module is where the name went
        if not isinstance(result, Resolved) or result.type_only:
            return None
        defining = result.path.removesuffix("/__init__.py").removesuffix(".py").replace("/", ".")
        if result.qualname == f"{defining}.{name}" and defining.split(".")[0] == api.package and api.module(defining):
            return defining
        return module


def _fix_commas(aliases: list[cst.ImportAlias], last_comma) -> list[cst.ImportAlias]:
    """The names of one statement: the last one ends as the statement's last name ended (its trailing comma, or none)."""
    out = list(aliases)
    if out:
        out[-1] = out[-1].with_changes(comma=last_comma)
    return out


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _MoveImport([f for f in findings if _start(f)], ctx))
