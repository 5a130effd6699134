"""DC124 parser-option-clash: the client adds an option to a parser it hands to vLLM, and the target's builder adds
the same option string: argparse raises `ArgumentError: argument --x: conflicting option string: --x`.

A server that extends vLLM's engine arguments adds options of its own to the parser it then hands to vLLM
(`parser.add_argument("--enable-reasoning", ...)`, then `AsyncEngineArgs.add_cli_args(parser)`). When a release adds
an option of the same name (vLLM 0.8.1's `EngineArgs.add_cli_args` adds `--enable-reasoning`, which 0.7.3 had only in
the OpenAI server's own parser), the second `add_argument` of the name raises while the parser is being built, before
any argument is read: happy_vllm's 0.8.1 upgrade (26f M3). vLLM's `FlexibleArgumentParser` keeps argparse's
`conflict_handler="error"`.

What is read: in a function (or a module's top level) of a client file that imports vLLM, a parser made there
(`ArgumentParser(...)` / `FlexibleArgumentParser(...)`, without `conflict_handler=` or `parents=`) and handed there to a
vLLM builder (a vLLM function with a parameter named like a parser, `client_model/vllm_parsers.py`) with the parser
alone (its other parameters at their defaults decide an `if` on them), and the literal
option strings the function adds to it, directly or through an argument group it takes from it. The builder's options
are followed as the serve parser's are (`serve_parser.builder_parser`; `if not async_args_only:` at the parameter's
default `False` is taken), and one the builder adds only under another `if` is left alone. An option string both add
is an error at the
client's `add_argument`, before or after the builder's call; the message says which `add_argument` raises and whether
the client's own vLLM (`--client-vllm`, or its declared requirement) added it too.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name, nodes_of, own_scope
from driftcheck.client_model.imported_functions import imported_function, vllm_callee
from driftcheck.client_model.uses import loc_of
from driftcheck.client_model.vllm_parsers import PARSERS, added_by, builder_calls, label
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.resolved import Resolved

RULE = Rule("DC124", "parser-option-clash", "The client adds an option to a parser it hands to vLLM that the target's "
            "builder adds too", "error", raises=("ArgumentError",), baseline=True)

_GROUPS = ("add_argument_group", "add_mutually_exclusive_group")


def check(ctx: ScanContext):
    builders = builder_calls(ctx)
    for file in ctx.usage.files:
        calls = builders.get(file.rel, {})
        if "add_argument" not in file.text:
            continue
        functions = {n.name: n for n in file.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        told: set[tuple[int, str]] = set()
        for fn in [file.tree, *nodes_of(file.tree, ast.FunctionDef, ast.AsyncFunctionDef)]:
            scope = own_scope(fn)
            for call in (n for n in scope if isinstance(n, ast.Call)):
                if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Name):
                    continue  # more than the parser: a branch on another parameter may add other options
                builder = calls.get(id(call)) or _wrapped_builder(ctx, file, functions, calls, call)
                name = call.args[0].id
                if builder is None or not _fresh_parser(file.tree, functions, fn, scope, name):
                    continue
                added = added_by(ctx, ctx.api, builder)
                if added is None:
                    continue
                for own, flag in _client_flags(scope, name):
                    if flag in added.flags and flag not in added.conditional and (own.lineno, flag) not in told:
                        told.add((own.lineno, flag))
                        yield _finding(ctx, file, own, flag, call, builder, added.flags[flag])


def _wrapped_builder(ctx: ScanContext, file, functions: dict, calls: dict, call: ast.Call) -> Resolved | None:
    """The vLLM builder a client function hands its one parameter to, alone (kserve's `maybe_add_vllm_cli_parser(parser)`:
    `return AsyncEngineArgs.add_cli_args(parser)`), in this file or imported from another client module."""
    if not isinstance(call.func, ast.Name):
        return None
    own = functions.get(call.func.id)
    home = file
    if own is None:
        found = imported_function(ctx.client, file, call.func.id)
        if found is None:
            return None
        home, own = found
    params = [a.arg for a in own.args.posonlyargs + own.args.args]
    if len(params) < 1:
        return None
    found: Resolved | None = None
    for inner in (n for n in own_scope(own) if isinstance(n, ast.Call)):
        if len(inner.args) == 1 and not inner.keywords and isinstance(inner.args[0], ast.Name) and inner.args[0].id == params[0]:
            target = calls.get(id(inner)) if home is file else None
            if target is None:
                qual = vllm_callee(home.tree, inner, ctx.api.package)
                resolved = ctx.api.resolve(qual) if qual else None
                target = resolved if isinstance(resolved, Resolved) and resolved.kind in ("function", "method") else None
            if target is not None:
                if found is not None:
                    return None  # two builders: which options the parser gets is not one answer
                found = target
    return found


def _fresh_parser(tree: ast.Module, functions: dict, fn, scope: list[ast.AST], name: str) -> bool:
    """The parser the name holds keeps argparse's conflict handling and nothing else added options before: made in this
    scope (`ArgumentParser(...)` without `conflict_handler=`; `parents=` only adds options), rebound only from calls
    handed it; or a parameter of a function of the file that every call there hands such a new parser (scale's
    `parse_args(FlexibleArgumentParser())`)."""
    if _made_here(scope, name):
        return True
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or functions.get(fn.name) is not fn:
        return False
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if name not in params or any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                                  for t in n.targets) and not _handed_back(n.value, name)
                                 for n in scope):
        return False  # bound to something else than what a call handed the parameter gives back
    index, callers = params.index(name), 0
    for caller in [tree, *nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef)]:
        caller_scope = own_scope(caller)
        for call in (n for n in caller_scope if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id == fn.name):
            arg = call.args[index] if index < len(call.args) else None
            if not (_new_parser(arg) or isinstance(arg, ast.Name) and _made_here(caller_scope, arg.id)):
                return False
            callers += 1
    return callers > 0


def _handed_back(value, name: str) -> bool:
    """`parser = make_arg_parser(parser)`: a call given the parser, which hands it back."""
    return isinstance(value, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in value.args)


def _new_parser(value) -> bool:
    return isinstance(value, ast.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] in PARSERS and \
        not any(k.arg == "conflict_handler" or k.arg is None for k in value.keywords)


def _made_here(scope: list[ast.AST], name: str) -> bool:
    """The name is bound in this scope from one new parser that keeps argparse's conflict handling, and otherwise
    only from vLLM builders' calls (`parser = AsyncEngineArgs.add_cli_args(parser)`)."""
    made = 0
    for node in scope:
        if not isinstance(node, ast.Assign) or not any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            continue
        value = node.value
        if not isinstance(value, ast.Call):
            return False
        if (dotted_name(value.func) or "").rsplit(".", 1)[-1] in PARSERS:
            if not _new_parser(value):
                return False
            made += 1
        elif not _handed_back(value, name):
            return False  # bound to something else: which parser a call gets is not followed
    return made == 1


def _client_flags(scope: list[ast.AST], name: str) -> list[tuple[ast.Call, str]]:
    """The literal option strings the scope adds to the parser, directly or through a group taken from it."""
    holders = {name}
    for node in scope:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _GROUPS and \
                isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == name:
            holders |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    out = []
    for node in sorted((n for n in scope if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "add_argument" and isinstance(func.value, ast.Name) \
                and func.value.id in holders:
            out += [(node, a.value) for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")]
    return out


def _finding(ctx: ScanContext, file, own: ast.Call, flag: str, call: ast.Call, builder: Resolved, where: tuple[str, int]):
    raises = ("the client's `add_argument` on this line raises" if own.lineno > call.lineno else
              f"vLLM's `add_argument` raises inside `{label(builder)}(...)` on line {call.lineno}")
    baseline = ctx.baseline()
    was = ""
    if baseline is not None:
        old = baseline.resolve(builder.qualname)
        old_added = added_by(ctx, baseline, old) if isinstance(old, Resolved) and old.kind in ("function", "method") else None
        if old_added is not None and old_added.complete:
            was = (f" (new since vLLM {baseline.version}, the client's vLLM)" if flag not in old_added.flags else
                   f" (vLLM {baseline.version}, the client's vLLM, added it too)")
    message = (f"`{flag}` is also an option {ctx.version_label()}'s `{label(builder)}` adds ({where[0]}:{where[1]})"
               f"{was}: the parser gets it twice and argparse raises ArgumentError (conflicting option string); "
               f"{raises}. Drop the client's own `{flag}` and read vLLM's.")
    return ctx.finding(RULE, message, loc_of(file, own), ctx.vllm_location(where[0], where[1]),
                       f"{builder.qualname}({flag})", when="call", fix=False, option=flag)


SIGNATURES = (
    Signature("The client adds `{0}` to a parser it hands to vLLM, and this vLLM's argument builder adds it too.",
              "vLLM added an engine argument of the same name (0.8.1's `EngineArgs.add_cli_args` adds "
              "`--enable-reasoning`): drop the client's own option and read vLLM's.",
              message=r"argument (--[\w-]+)(?:/[-\w]+)*: conflicting option strings?: ", exc_types=("ArgumentError",),
              priority=40),
)
