"""DC123 parsed-option-gone: the client reads an option off the Namespace of a parser vLLM fills, and the target's
parser no longer adds that option.

Servers built on vLLM's engine arguments make a parser, hand it to vLLM (`parser = AsyncEngineArgs.add_cli_args(parser)`,
`make_arg_parser(parser)`), parse, and read options off the Namespace: happy_vllm's `default_args =
parser.parse_args([])`, then `default_args.quantization_param_path`. When a release drops or renames the option
(`--quantization-param-path` is gone from 0.7.0; `--forced-num-gpu-blocks` became `--num-gpu-blocks-override` in
0.4.1), argparse never sets the attribute and the read raises AttributeError: in happy_vllm the first line that fails
at start-up, before any call driftcheck checks otherwise (26f M2: 5 of its 9 upgrade breakages).

What is read, in the client's files that import vLLM:
- a parser: a name its function binds from `ArgumentParser(...)` / `FlexibleArgumentParser(...)` (without
  `parents=`), from a call of vLLM's that is handed a parser (`AsyncEngineArgs.add_cli_args(parser)` returns it) or
  from a function of the same file that returns such a parser, or a parameter whose every caller in the file passes
  one (what the caller does with it after the call does not count);
- vLLM's share: the vLLM functions the parser is handed to, followed as DC111 follows the serve parser
  (`serve_parser.builder_parser`): each option's argparse `dest` (`dest=`, else the first long flag with `-` as
  `_`), the fields of a `get_kwargs(Config)` loop, `set_defaults` keywords;
- the Namespace: a name bound once in the function from `P.parse_args(...)` (or the first of
  `P.parse_known_args(...)`), and its attribute reads there (in a class body the function defines too: happy_vllm's
  pydantic settings class).

An attribute is reported only where the target's builders are read whole, the client's own vLLM (`--client-vllm`, or
its declared requirement) added it through the same builders (the option was vLLM's), and the client adds it nowhere
itself: no `add_argument` in any client file makes that dest, none has a computed flag or dest, the name is in no
string of the client and no client code stores it on an object. A parser handed to anything but vLLM's builders, its
own `add_argument` / `add_argument_group` and the file's own functions, or given subparsers or `set_defaults(**...)`
before the parse, is not read. Without the client's vLLM there is nothing to compare with, and nothing is said.
"""

from __future__ import annotations

import ast
import difflib

from driftcheck.astnodes import nodes_of
from driftcheck.client_model.uses import loc_of
from driftcheck.client_model.vllm_parsers import PARSE, FileParsers, added_by, builder_calls, label
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.resolved import Resolved

RULE = Rule("DC123", "parsed-option-gone", "The client reads an option off the Namespace of vLLM's parser that the "
            "target's parser no longer adds", "error", raises=("AttributeError",), baseline=True)


def check(ctx: ScanContext):
    files = [f for f in ctx.usage.files if any(p in f.text for p in PARSE)]
    if not files:
        return
    builders = builder_calls(ctx)
    baseline = None
    for file in files:
        reader = FileParsers(file, builders.get(file.rel, {}))
        for reads, found in reader.namespaces():
            if not found or not reads:
                continue
            if baseline is None:
                baseline = ctx.baseline() or False
            if not baseline:
                return
            yield from _report(ctx, baseline, file, reads, found)


def _report(ctx: ScanContext, baseline, file, reads: list[ast.Attribute], found: list[Resolved]):
    target_dests, old_dests = {}, {}
    for builder in found:
        now = added_by(ctx, ctx.api, builder)
        old = baseline.resolve(builder.qualname)
        was = added_by(ctx, baseline, old) if isinstance(old, Resolved) and old.kind in ("function", "method") else None
        if now is None or not now.complete or was is None:
            return  # a builder driftcheck cannot read whole, or one the client's vLLM lacks: nothing to compare
        target_dests.update(now.dests)
        for dest, where in was.dests.items():
            old_dests.setdefault(dest, where)
    own = _client_dests(ctx)
    if own is None:
        return  # the client computes a flag or a dest: it may add any name
    labels = ", ".join(f"`{label(b)}`" for b in found)
    reported: set[tuple[str, int]] = set()  # each line that reads it fails
    for node in reads:
        attr = node.attr
        if attr in target_dests or attr not in old_dests or attr in own or (attr, node.lineno) in reported:
            continue
        if _named_by_client(ctx, attr):
            continue
        reported.add((attr, node.lineno))
        path, line = old_dests[attr]
        near = difflib.get_close_matches(attr, list(target_dests), n=1, cutoff=0.8)
        held = ast.unparse(node.value)  # `args`, or `self.args` where a method kept it (27a M5)
        message = (f"`{held}` is the Namespace of a parser {labels} fills: {ctx.version_label()} adds no option "
                   f"that sets '{attr}' (vLLM {baseline.version}, the client's vLLM, added it at {path}:{line}), so "
                   f"`{held}.{attr}` raises AttributeError when this line runs."
                   + (f" Similar: {near[0]}." if near else ""))
        builder = found[0]
        yield ctx.finding(RULE, message, loc_of(file, node), ctx.vllm_location(builder.path, builder.line),
                          f"{builder.qualname}({attr})", when="call", fix=False, option=attr,
                          similar=near or None)


def _client_dests(ctx: ScanContext) -> set[str] | None:
    """Every dest the client's own `add_argument` calls make, in any of its files; None where one is computed."""
    return ctx.once(_read_client_dests)


def _read_client_dests(ctx: ScanContext) -> set[str] | None:
    out: set[str] = set()
    for file in ctx.client.files:
        if "add_argument" not in file.text and "set_defaults" not in file.text:
            continue
        for call in nodes_of(file.tree, ast.Call):
            func = call.func
            if not isinstance(func, ast.Attribute):
                continue
            if func.attr == "set_defaults":
                # (a `**` spread adds what it holds: read where it touches the parser before the parse)
                out |= {k.arg for k in call.keywords if k.arg is not None}
                continue
            if func.attr != "add_argument":
                continue
            dest = next((k.value for k in call.keywords if k.arg == "dest"), None)
            if dest is not None:
                if not (isinstance(dest, ast.Constant) and isinstance(dest.value, str)):
                    return None
                out.add(dest.value)
                continue
            flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if len(flags) != len(call.args) or any(k.arg is None for k in call.keywords):
                return None  # a computed flag, or keywords that may hold a dest
            out |= {f.lstrip("-").replace("-", "_") for f in flags}
    return out


def _named_by_client(ctx: ScanContext, attr: str) -> bool:
    """Whether a client file names the attribute in a string or stores it on an object (`setattr(args, "x", v)`,
    `args.x = v`): the Namespace may get it from the client."""
    for file in (f for f in ctx.client.files if attr in f.text):
        # (the name a `getattr` / `hasattr` looks up is a read, not something that sets it)
        looked_up = {id(c.args[1]) for c in nodes_of(file.tree, ast.Call) if isinstance(c.func, ast.Name)
                     and c.func.id in ("getattr", "hasattr") and len(c.args) >= 2}
        for node in nodes_of(file.tree, ast.Constant, ast.Attribute):
            if isinstance(node, ast.Constant) and node.value == attr and id(node) not in looked_up:
                return True
            if isinstance(node, ast.Attribute) and node.attr == attr and not isinstance(node.ctx, ast.Load):
                return True
    return False


SIGNATURES = (
    Signature("The client reads `{0}` off the Namespace of vLLM's argument parser, and this vLLM's parser no longer "
              "adds that option.",
              "vLLM removed or renamed an engine argument (0.7.0 drops `--quantization-param-path`; 0.4.1 renamed "
              "`--forced-num-gpu-blocks` to `--num-gpu-blocks-override`): read the option under its new name, or with "
              "`getattr(args, name, default)`.",
              message=r"'Namespace' object has no attribute '(\w+)'", exc_types=("AttributeError",), priority=40),
)
