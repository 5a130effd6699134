"""DC009 deprecated-name: the client imports a name that the target only serves as a deprecated alias.

vLLM keeps moved names importable for a release or two through a module `__getattr__` that warns
(`vllm.utils.get_open_port` -> `vllm.utils.network_utils.get_open_port`). It works today and
breaks in a later release; the finding shows where the name really lives now.
"""

from __future__ import annotations

from driftcheck.vllm_model.resolved import Resolved
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule

RULE = Rule("DC009", "deprecated-name", "Imported vLLM name is a deprecated alias in the target", "warning", fix="move-import", raises=("ImportError", "AttributeError"))


def check(ctx: ScanContext):
    for imp in ctx.usage.imports:
        if imp.unreached:
            continue  # a fallback that runs only when the try body's import fails, which it does not here
        if imp.name is None or imp.name == "*" or imp.type_only:
            continue
        result = ctx.api.resolve(f"{imp.module}.{imp.name}")
        if isinstance(result, Resolved) and result.deprecated:
            real_module = result.qualname.rsplit(".", 1)[0] if result.kind != "module" else result.qualname
            real_name = result.qualname.rsplit(".", 1)[-1]
            if result.kind != "module" and real_name != imp.name:
                # the alias serves another name (`AnyTokenizer` -> `TokenizerLike`): importing the old name from the
                # new module would fail, so this says the new name and offers no move (SA1)
                yield ctx.finding(
                    RULE,
                    f"`{imp.module}.{imp.name}` is a deprecated alias in {ctx.version_label()} for "
                    f"`{result.qualname}` (another name); import that instead: the alias may be removed in a later release.",
                    imp.loc, ctx.location_of(result), f"{imp.module}.{imp.name}", when="import", fix=False,
                    renamed_to=result.qualname,
                )
                continue
            yield ctx.finding(
                RULE,
                f"`{imp.module}.{imp.name}` is a deprecated alias in {ctx.version_label()}; it lives in `{real_module}`"
                " and the alias may be removed in a later release.",
                imp.loc, ctx.location_of(result), f"{imp.module}.{imp.name}", when="import", moved_to=real_module,
            )
