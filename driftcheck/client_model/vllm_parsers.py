"""The parsers a client file makes and hands to vLLM's argument builders, and the Namespaces it parses from them.

A server built on vLLM's engine arguments makes a parser (`FlexibleArgumentParser(...)`), adds options of its own,
hands it to vLLM (`parser = AsyncEngineArgs.add_cli_args(parser)`, `make_arg_parser(parser)`), parses it and reads
options off the Namespace, often across the file's functions: happy_vllm's `get_parser()` returns it and
`get_model_settings(parser)` parses it. What is followed, within one file: where a parser is made, the vLLM builders
(a vLLM function with a parameter named like a parser) it is handed to, the file's function that returns it, every
caller that passes it in as a parameter, and the Namespace's reads where it is parsed (the class bodies that run there
too) and one call deep in the file's functions it is handed to. A parser handed to code driftcheck does not read, or
given subparsers or spread defaults (`set_defaults(**d)`) on the way, is not followed. DC123 and DC124 read it.
"""

from __future__ import annotations

import ast

from driftcheck.astnodes import dotted_name, nodes_of, own_scope, walk
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.serve_parser import Parser, builder_parser

PARSERS = ("ArgumentParser", "FlexibleArgumentParser")
PARSE = ("parse_args", "parse_known_args")
_OWN_USES = ("add_argument", "add_argument_group", "add_mutually_exclusive_group", "parse_args", "parse_known_args",
             "print_help", "print_usage", "format_help", "error", "exit")
_DEPTH = 3  # callers followed up from the function that parses


def builder_calls(ctx) -> dict[str, dict[int, Resolved]]:
    """The client's calls of vLLM functions that take a parser (a parameter named like one), by file and call node;
    once per scan."""
    return ctx.once(_read_builder_calls)


def _read_builder_calls(ctx) -> dict[str, dict[int, Resolved]]:
    out: dict[str, dict[int, Resolved]] = {}
    for use in ctx.usage.calls:
        target = use.target
        if target.kind not in ("function", "method") or target.func is None:
            continue
        params = [p.name for p in target.func.signature.params]
        if any("parser" in p for p in params):
            out.setdefault(use.file.rel, {})[id(use.node)] = target
    return out


def added_by(ctx, api, builder: Resolved) -> Parser | None:
    """What a vLLM builder adds to the parser it is handed (`serve_parser.builder_parser`), once per release and
    builder."""
    memo = ctx.once(_added_memo)
    key = (id(api), builder.qualname)
    if key not in memo:
        memo[key] = builder_parser(api, builder)
    return memo[key]


def _added_memo(ctx) -> dict:
    return {}


def label(builder: Resolved) -> str:
    """`AsyncEngineArgs.add_cli_args` for a method, `make_arg_parser` for a function."""
    parts = builder.qualname.split(".")
    return ".".join(parts[-2:]) if builder.kind == "method" else parts[-1]


class FileParsers:
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
                kept = self._kept_on_self(fn, node)
                if kept is not None:
                    yield kept
                    continue
                parsed = parse_binding(node)
                if parsed is not None:
                    name, receiver = parsed
                    found = self._builders_of(fn, receiver, node.lineno, 0) if stores.get(name) == 1 else None
                else:
                    name, found = self._parsed_by_helper(node)
                if not found or stores.get(name) != 1:
                    continue  # no parser of vLLM's, or bound again: which Namespace a read sees is not followed
                reads = [a for a in _reads_in(fn, name) if a.lineno > node.lineno]
                yield reads + self._handed_on(fn, name, node.lineno), found

    def _kept_on_self(self, fn, node: ast.AST):
        """`self.args = parser.parse_args()` in a method: (the reads of `self.args.x` in the class's methods, the
        parser's vLLM builders), where the class stores `self.args` nowhere else (27a M5: a server class parses in
        `__init__` and reads the options in `start`); None otherwise."""
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
                and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self"
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr in PARSE and node.value.func.attr != "parse_known_args"):
            return None
        cls = next((c for c in nodes_of(self.file.tree, ast.ClassDef) if fn in c.body), None)
        attr = node.targets[0].attr
        if cls is None:
            return None
        stored = [n for n in walk(cls) if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)
                  and isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr == attr]
        found = self._builders_of(fn, node.value.func.value, node.lineno, 0) if len(stored) == 1 else None
        if not found:
            return None
        reads = [n for n in walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
                 and isinstance(n.value, ast.Attribute) and n.value.attr == attr
                 and isinstance(n.value.value, ast.Name) and n.value.value.id == "self"]
        return sorted(reads, key=lambda a: (a.lineno, a.col_offset)), found

    def _parsed_by_helper(self, node: ast.AST) -> tuple[str | None, list[Resolved] | None]:
        """`args = parse_args()` where the file's function makes the parser and returns `parser.parse_args()` (vLLM
        0.8.5's own run_batch.py, 27a M1): the Namespace and the builders of that function's parser."""
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and not node.value.args and not node.value.keywords):
            return None, None
        helper = self.functions.get(node.value.func.id)
        returns = [n for n in own_scope(helper) if isinstance(n, ast.Return)] if helper is not None else []
        if not returns or helper.args.args or helper.args.posonlyargs:
            return None, None
        found: list[Resolved] = []
        for ret in returns:
            call = ret.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "parse_args"):
                return None, None
            part = self._builders_of(helper, call.func.value, ret.lineno, 0)
            if not part:
                return None, None
            found += [b for b in part if b not in found]
        return node.targets[0].id, found

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
                    out += _reads_in(callee, param)
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
        if callee.rsplit(".", 1)[-1] in PARSERS:
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


def runs_with(fn) -> list[ast.AST]:
    """The nodes that run when `fn` (or the module) does: its own statements and the bodies of the classes it defines
    (happy_vllm's settings class reads the Namespace in its body), not those of the functions it defines."""
    out, todo = [], list(fn.body) if isinstance(fn.body, list) else [fn.body]  # (a lambda's body is one expression)
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _reads_in(fn, name: str) -> list[ast.Attribute]:
    """The reads of the Namespace `name` that run when `fn` does (class bodies it defines too), and those of the
    functions it defines that do not bind the name themselves (a closure's `args.x` fails when it is called);
    `getattr(name, "x")` without a default is the read `name.x`."""
    out: list[ast.Attribute] = []
    todo = [fn]
    while todo:
        scope = todo.pop()
        for node in runs_with(scope):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not scope and \
                    not _binds(node, name):
                todo.append(node)
            elif reads_of(node, name):
                out.append(node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
                    len(node.args) == 2 and not node.keywords and isinstance(node.args[0], ast.Name) and \
                    node.args[0].id == name and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                made = ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr=node.args[1].value, ctx=ast.Load())
                out.append(ast.copy_location(made, node))
    return sorted(out, key=lambda a: (a.lineno, a.col_offset))


def _binds(fn, name: str) -> bool:
    """Whether a function binds `name` itself (a parameter, an assignment, a `for`), so its reads are not the outer's."""
    args = fn.args
    if any(a.arg == name for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a):
        return True
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
               for n in (own_scope(fn) if not isinstance(fn, ast.Lambda) else walk(fn.body)))


def reads_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
        and node.value.id == name


def parse_binding(node: ast.AST) -> tuple[str, ast.expr] | None:
    """`ns = P.parse_args(...)` / `ns, rest = P.parse_known_args(...)`: (the Namespace's name, P)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if not (isinstance(func, ast.Attribute) and func.attr in PARSE):
        return None
    target = node.targets[0]
    if func.attr == "parse_known_args":
        target = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else None
    return (target.id, func.value) if isinstance(target, ast.Name) else None
