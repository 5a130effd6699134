"""What a client's vLLM plugin replaces on vLLM's classes, for the rules that read vLLM's own answer about a flag,
a config key or a constructor's parameters: a plugin (a `vllm.general_plugins` / `vllm.platform_plugins` entry point)
that rebinds `EngineArgs.add_cli_args` or a config class's `__init__` may add what the release lacks. When the
replacement is a parser builder whose every flag is a literal `add_argument`, its flags are read, so a flag it does
not add stays certain (batches 24a LA5 and 24c LC1).
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import walk
from driftcheck.client_model.console_scripts import plugin_groups
from driftcheck.client_model.patch_classes import replacement_function


def plugin_replaces(client, usage, keys, flag: str | None = None) -> str | None:
    """"the client's vLLM plugin (...) replaces `EngineArgs.add_cli_args` (file:line)" when the client registers a vLLM
    plugin and its code rebinds one of `keys` ((owner, name)); None otherwise. With `flag`, a replacement whose every
    flag driftcheck reads (`replacement_flags`) and which lacks `flag` does not count: it cannot add it."""
    groups = plugin_groups(client)
    if not groups:
        return None
    for owner, name in keys:
        for r in usage.rebound.get((owner, name), ()):
            if flag is not None:
                added = replacement_flags(usage, r.replacement, name)
                if added is not None and flag not in added:
                    continue
            group, where = next(iter(groups.items()))
            return (f"the client registers a vLLM plugin (`{group}`, {where}) and replaces "
                    f"`{owner.rsplit('.', 1)[-1]}.{name}` ({r.where})")
    return None


_GROUPING = ("add_argument_group", "add_mutually_exclusive_group")


def replacement_flags(usage, dotted: str | None, name: str) -> set[str] | None:
    """The flags a client function replacing a parser builder adds, when all are read: each `add_argument` spells its
    flags as literals, and the parser (its first parameter, and what is bound from calls handed it) goes only to
    `add_argument`, an argument group, or the original it saved in its class (`_orig = EngineArgs.<name>`, called
    as `Cls._orig(parser)`). None when the function is not found or does anything else with the parser."""
    found = replacement_function(usage, dotted)
    if found is None:
        return None
    cls, fn = found
    if not fn.args.args:
        return None
    originals = {t.id for s in (cls.body if cls is not None else ()) if isinstance(s, ast.Assign)
                 and isinstance(s.value, ast.Attribute) and s.value.attr == name for t in s.targets if isinstance(t, ast.Name)}
    parsers = _parser_names(fn)
    flags: set[str] = set()
    for node in walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        handed = any(isinstance(a, ast.Name) and a.id in parsers for a in [*node.args, *(k.value for k in node.keywords)])
        on_parser = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in parsers
        if on_parser and func.attr == "add_argument":
            words = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if len(words) != len(node.args):
                return None
            flags |= {w for w in words if w.startswith("--")}
        elif (on_parser and func.attr in _GROUPING) or (handed and isinstance(func, ast.Attribute) and func.attr in originals):
            continue
        elif on_parser or handed:
            return None
    return flags


def _parser_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The function's first parameter and the names bound from calls on it or handed it (`group =
    parser.add_argument_group(...)`, `parser = Cls._orig(parser)`), to a fixed point."""
    names = {fn.args.args[0].arg}
    binds = [n for n in walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)]
    while True:
        more = {t.id for n in binds for t in n.targets if isinstance(t, ast.Name) and t.id not in names
                and any(isinstance(x, ast.Name) and x.id in names
                        for x in [getattr(n.value.func, "value", None), *n.value.args, *(k.value for k in n.value.keywords)])}
        if not more:
            return names
        names |= more
