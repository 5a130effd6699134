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

from driftcheck.astnodes import dotted_name, nodes_of, own_scope, walk
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import Signature
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.serve_parser import builder_parser

RULE = Rule("DC123", "parsed-option-gone", "The client reads an option off the Namespace of vLLM's parser that the "
            "target's parser no longer adds", "error", raises=("AttributeError",))

_PARSERS = ("ArgumentParser", "FlexibleArgumentParser")
_PARSE = ("parse_args", "parse_known_args")
_OWN_USES = ("add_argument", "add_argument_group", "add_mutually_exclusive_group", "parse_args", "parse_known_args",
             "print_help", "print_usage", "format_help", "error", "exit")
_DEPTH = 3  # callers followed up from the function that parses


def check(ctx: ScanContext):
    files = [f for f in ctx.usage.files if any(p in f.text for p in _PARSE)]
    if not files:
        return
    builders = _builder_calls(ctx)
    baseline = None
    for file in files:
        reader = _FileParsers(file, builders.get(file.rel, {}))
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
        now = _parser(ctx, ctx.api, builder)
        old = baseline.resolve(builder.qualname)
        was = _parser(ctx, baseline, old) if isinstance(old, Resolved) and old.kind in ("function", "method") else None
        if now is None or not now.complete or was is None:
            return  # a builder driftcheck cannot read whole, or one the client's vLLM lacks: nothing to compare
        target_dests.update(now.dests)
        for dest, where in was.dests.items():
            old_dests.setdefault(dest, where)
    own = _client_dests(ctx)
    if own is None:
        return  # the client computes a flag or a dest: it may add any name
    labels = ", ".join(f"`{_label(b)}`" for b in found)
    reported: set[str] = set()
    for node in reads:
        attr = node.attr
        if attr in target_dests or attr not in old_dests or attr in own or attr in reported:
            continue
        if _named_by_client(ctx, attr):
            continue
        reported.add(attr)
        path, line = old_dests[attr]
        near = difflib.get_close_matches(attr, list(target_dests), n=1, cutoff=0.8)
        message = (f"`{node.value.id}` is the Namespace of a parser {labels} fills: {ctx.version_label()} adds no option "
                   f"that sets '{attr}' (vLLM {baseline.version}, the client's vLLM, added it at {path}:{line}), so "
                   f"`{node.value.id}.{attr}` raises AttributeError when this line runs."
                   + (f" Similar: {near[0]}." if near else ""))
        builder = found[0]
        yield ctx.finding(RULE, message, loc_of(file, node), ctx.vllm_location(builder.path, builder.line),
                          f"{builder.qualname}({attr})", when="call", fix=False, option=attr,
                          similar=near or None)


def _label(builder: Resolved) -> str:
    parts = builder.qualname.split(".")
    return ".".join(parts[-2:]) if builder.kind == "method" else parts[-1]


def _parser(ctx: ScanContext, api, builder: Resolved):
    """What a vLLM builder adds, read once per release and builder."""
    memo = ctx.once(_parser_memo)
    key = (id(api), builder.qualname)
    if key not in memo:
        memo[key] = builder_parser(api, builder)
    return memo[key]


def _parser_memo(ctx: ScanContext) -> dict:
    return {}


def _builder_calls(ctx: ScanContext) -> dict[str, dict[int, Resolved]]:
    """The client's calls of vLLM functions that take a parser (a parameter named like one), by file and call node."""
    out: dict[str, dict[int, Resolved]] = {}
    for use in ctx.usage.calls:
        target = use.target
        if target.kind not in ("function", "method") or target.func is None:
            continue
        params = [p.name for p in target.func.signature.params]
        if any("parser" in p for p in params):
            out.setdefault(use.file.rel, {})[id(use.node)] = target
    return out


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
        for node in nodes_of(file.tree, ast.Constant, ast.Attribute):
            if isinstance(node, ast.Constant) and node.value == attr:
                return True
            if isinstance(node, ast.Attribute) and node.attr == attr and not isinstance(node.ctx, ast.Load):
                return True
    return False


class _FileParsers:
    """The Namespaces of one file's parsers and the vLLM builders each parser was handed to."""

    def __init__(self, file, builders: dict[int, Resolved]):
        self.file = file
        self.builders = builders
        self.functions: dict[str, ast.AST] = {}
        names = [n.name for n in file.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for n in file.tree.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and names.count(n.name) == 1:
                self.functions[n.name] = n

    def namespaces(self):
        """(the Namespace's attribute reads, the vLLM builders of its parser) for each parse in a function
        or at the module's top level (a script's `if __name__ == "__main__":` block)."""
        for fn in [self.file.tree, *nodes_of(self.file.tree, ast.FunctionDef, ast.AsyncFunctionDef)]:
            scope = own_scope(fn)
            stores: dict[str, int] = {}
            for node in scope:
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    stores[node.id] = stores.get(node.id, 0) + 1
            for node in scope:
                parsed = _parse_binding(node)
                if parsed is None:
                    continue
                name, receiver = parsed
                if stores.get(name) != 1:
                    continue  # bound again: which Namespace a read sees is not followed
                found = self._builders_of(fn, receiver, node.lineno, 0)
                if not found:
                    continue
                reads = [a for a in _runs_with(fn) if _reads_of(a, name) and a.lineno > node.lineno]
                yield reads + self._handed_on(fn, name, node.lineno), found

    def _handed_on(self, fn, name: str, after: int) -> list[ast.Attribute]:
        """Reads in the file's functions the Namespace is handed to by position (`main(args)`), one call deep."""
        out: list[ast.Attribute] = []
        for call in (n for n in own_scope(fn) if isinstance(n, ast.Call) and n.lineno > after):
            callee = self.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
            if callee is None or callee is fn:
                continue
            params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
            for i, arg in enumerate(call.args[:len(params)]):
                if isinstance(arg, ast.Starred):
                    break
                param = params[i]
                if isinstance(arg, ast.Name) and arg.id == name and not any(
                        isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load)
                        for n in walk(callee)):
                    out += [a for a in _runs_with(callee) if _reads_of(a, param)]
        return out

    def _builders_of(self, fn, expr: ast.expr, before: int, depth: int) -> list[Resolved] | None:
        """The vLLM builders a parser expression has been handed to by line `before` of `fn`; None when what else
        may have added options to it is not known (or it is no parser this file makes)."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Call):
            return self._built_by_call(fn, expr, depth)
        if not isinstance(expr, ast.Name):
            return None
        name = expr.id
        found: list[Resolved] = []
        bound = False
        for node in sorted((n for n in own_scope(fn) if hasattr(n, "lineno")), key=lambda n: (n.lineno, n.col_offset)):
            if node.lineno >= before:
                break
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                made = self._built_by_call(fn, node.value, depth) if isinstance(node.value, ast.Call) else None
                if made is None:
                    return None
                bound = True
                found += [b for b in made if b not in found]
            elif isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == name
                                                    for a in [*node.args, *(k.value for k in node.keywords)]):
                handed = self._handed(node)
                if handed is None:
                    return None
                found += [b for b in handed if b not in found]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.func.attr not in _OWN_USES:
                return None  # subparsers, set_defaults, a parent's options: not followed
        if not bound:
            return self._from_callers(fn, name, depth)
        return found

    def _built_by_call(self, fn, call: ast.Call, depth: int) -> list[Resolved] | None:
        """A parser a call gives back: a new one, one a vLLM builder hands back, one a function of the file returns."""
        callee = dotted_name(call.func) or ""
        if callee.rsplit(".", 1)[-1] in _PARSERS:
            return None if any(k.arg == "parents" for k in call.keywords) else []
        target = self.builders.get(id(call))
        if target is not None:
            inner = [a for a in call.args if isinstance(a, (ast.Name, ast.Call))]
            # the parser as it was before this line (`parser = AsyncEngineArgs.add_cli_args(parser)`)
            handed = self._builders_of(fn, inner[0], call.lineno, depth + 1) if inner else []
            return None if handed is None else [*handed, *([target] if target not in handed else [])]
        own = self.functions.get(callee)
        if own is None:
            return None
        found: list[Resolved] = []
        for ret in (n for n in own_scope(own) if isinstance(n, ast.Return) and n.value is not None):
            part = self._builders_of(own, ret.value, ret.lineno + 1, depth + 1)
            if part is None:
                return None
            found += [b for b in part if b not in found]
        return found

    def _handed(self, call: ast.Call) -> list[Resolved] | None:
        """A call the parser is an argument of: a vLLM builder adds its options; a function of this file may add
        options of its own, which every client `add_argument` covers; anything else is not followed."""
        target = self.builders.get(id(call))
        if target is not None:
            return [target]
        own = self.functions.get(dotted_name(call.func) or "")
        if own is None or any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                n.func.attr == "add_subparsers" or n.func.attr == "set_defaults"
                and any(k.arg is None for k in n.keywords)) for n in walk(own)):
            return None  # a function that adds subparsers or spread defaults
        return []

    def _from_callers(self, fn, name: str, depth: int) -> list[Resolved] | None:
        """A parameter: what every call of the function in this file passes there, read in its caller."""
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None  # a module's name nothing here binds
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        if name not in params or self.functions.get(fn.name) is not fn:
            return None
        index = params.index(name)
        found: list[Resolved] = []
        calls = 0
        for caller in nodes_of(self.file.tree, ast.FunctionDef, ast.AsyncFunctionDef):
            for call in (n for n in own_scope(caller) if isinstance(n, ast.Call)):
                if not (isinstance(call.func, ast.Name) and call.func.id == fn.name):
                    continue
                arg = call.args[index] if index < len(call.args) else \
                    next((k.value for k in call.keywords if k.arg == name), None)
                part = self._builders_of(caller, arg, call.lineno, depth + 1) if arg is not None else None
                if part is None:
                    return None
                calls += 1
                found += [b for b in part if b not in found]
        return found if calls else None


def _runs_with(fn) -> list[ast.AST]:
    """The nodes that run when `fn` (or the module) does: its own statements and the bodies of the classes it defines
    (happy_vllm's settings class reads the Namespace in its body), not those of the functions it defines."""
    out, todo = [], list(fn.body)
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _reads_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
        and node.value.id == name


def _parse_binding(node: ast.AST) -> tuple[str, ast.expr] | None:
    """`ns = P.parse_args(...)` / `ns, rest = P.parse_known_args(...)`: (the Namespace's name, P)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if not (isinstance(func, ast.Attribute) and func.attr in _PARSE):
        return None
    target = node.targets[0]
    if func.attr == "parse_known_args":
        target = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else None
    return (target.id, func.value) if isinstance(target, ast.Name) else None


SIGNATURES = (
    Signature("The client reads `{0}` off the Namespace of vLLM's argument parser, and this vLLM's parser no longer "
              "adds that option.",
              "vLLM removed or renamed an engine argument (0.7.0 drops `--quantization-param-path`; 0.4.1 renamed "
              "`--forced-num-gpu-blocks` to `--num-gpu-blocks-override`): read the option under its new name, or with "
              "`getattr(args, name, default)`.",
              message=r"'Namespace' object has no attribute '(\w+)'", exc_types=("AttributeError",), priority=40),
)
