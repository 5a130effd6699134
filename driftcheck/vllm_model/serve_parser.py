"""The flags of a release's `vllm serve` parser, followed from the code that builds it: the `serve`
subcommand's `subparser_init` (and the `__main__` block of `vllm.entrypoints.openai.api_server`), through
every function and `X.add_cli_args(parser)` it hands the parser to, collecting `add_argument` calls. A flag
spelled as a literal is taken as is; `f"--{key.replace('_', '-')}"` in a loop over `get_kwargs(cls)` stands
for every dataclass field of that class; a flag taken from a `for` loop over literal tuples is read from
the tuples. Any other computed flag makes the set incomplete (`Parser.complete`). argparse itself gives
every parser `-h` / `--help` unless the call that builds it says `add_help=False` (`help_flags`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.astnodes import walk
from driftcheck.sources.sources import module_name_for


MAX_FOLLOW = 8  # call depth from the entry point: make_arg_parser -> add_cli_args -> super() ...


@dataclass
class Parser:
    entry: str  # "serve" | "api_server"
    path: str  # where the parser is built (the function or block followed first)
    line: int
    flags: dict[str, tuple[str, int]] = field(default_factory=dict)  # "--flag" -> (path, line)
    negatable: list[str] = field(default_factory=list)  # flags argparse also accepts as --no-<flag>
    incomplete: list[str] = field(default_factory=list)  # why the flag set may miss some ("path:line: ...")
    underscores: bool = False  # the parser reads --a_b as --a-b (FlexibleArgumentParser)
    # the vLLM functions and methods followed that add flags, as (owner, name): (class qualname, method) or (module,
    # function); a client plugin that rebinds one of them changes the parser (LC1)
    builders: list[tuple[str, str]] = field(default_factory=list)
    # the Namespace attributes `parse_args` gives back (argparse's `dest`: `dest=`, else the first long flag with
    # `-` as `_`, a positional's name, a `set_defaults` keyword) -> where added
    dests: dict[str, tuple[str, int]] = field(default_factory=dict)
    # flags added only under an `if` of the bodies followed (`if not async_args_only: EngineArgs.add_cli_args(parser)`)
    conditional: set[str] = field(default_factory=set)
    _sure: set[str] = field(default_factory=set)

    def added(self, flag: str, where: tuple[str, int], under_if: bool) -> None:
        self.flags.setdefault(flag, where)
        if under_if:
            if flag not in self._sure:
                self.conditional.add(flag)
        else:
            self._sure.add(flag)
            self.conditional.discard(flag)

    @property
    def complete(self) -> bool:
        return not self.incomplete


def config_fields(api: ApiIndex, cls: Resolved):
    """Dataclass fields along the MRO (init fields only), most derived last wins."""
    order, _open, _ext = api.mro(cls)
    out: dict[str, object] = {}
    for c in reversed(order):
        for f in c.cls.fields:
            if f.is_classvar or not f.init or f.name.startswith("_"):
                continue
            out[f.name] = f
    return list(out.values())


def is_bool(annotation: str | None) -> bool:
    text = (annotation or "").replace(" ", "")
    return bool(re.search(r"(^|[\[|,(])bool($|[\]|,)])", text)) and not re.search(r"(^|[\[|,])str($|[\]|,])", text)


def entry_points(api: ApiIndex) -> dict:
    """entry -> (module info, node whose body builds the parser)."""
    out = {}
    index = text_index_for(api)
    for rel in index.files_mentioning("subparser_init"):
        if not rel.startswith("vllm/entrypoints/cli/"):
            continue
        tree = api.parse(rel)
        mod = api.module(module_name_for(rel))
        if tree is None or mod is None:
            continue
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            if _subcommand_name(cls) != "serve":
                continue
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "subparser_init":
                    out["serve"] = (mod, fn)
    api_server = api.module("vllm.entrypoints.openai.api_server")
    tree = api.parse(api_server.path) if api_server is not None and not api_server.path.endswith("/") else None
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            out["api_server"] = (api_server, node)
    return out


def _subcommand_name(cls: ast.ClassDef) -> object:
    """The literal name a CLI subcommand class gives itself: `name = "serve"` in its body (vLLM 0.9.2 on), or
    `self.name = "serve"` in its `__init__` (0.8.5-0.9.1, whose serve parser was otherwise never found)."""
    stores = [s for s in cls.body if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "name" for t in s.targets)]
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
            stores += [s for s in fn.body if isinstance(s, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == "name" and isinstance(t.value, ast.Name) and t.value.id == "self"
                for t in s.targets)]
    return next((s.value.value for s in stores if isinstance(s.value, ast.Constant)), None)


def reads_underscores(api: ApiIndex) -> bool:
    """FlexibleArgumentParser turns `--a_b` into `--a-b` before argparse sees it."""
    r = api.resolve("vllm.utils.argparse_utils.FlexibleArgumentParser")
    if not isinstance(r, Resolved):
        r = api.resolve("vllm.utils.FlexibleArgumentParser")
    if not isinstance(r, Resolved) or r.kind != "class":
        return False
    node = api.class_node(r)
    return node is not None and bool(re.search(r"""replace\(\s*["']_["']\s*,\s*["']-["']\s*\)""", ast.unparse(node)))


def bools_negatable(api: ApiIndex) -> bool:
    """The release's get_kwargs helper gives bool fields BooleanOptionalAction (--x and --no-x)."""
    mod = api.module("vllm.engine.arg_utils")
    if mod is None or mod.path.endswith("/"):
        return False
    tree = api.parse(mod.path)
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name in ("get_kwargs", "_compute_kwargs") and \
                "BooleanOptionalAction" in ast.unparse(node):
            return True
    return False


class FlagCollector:
    def __init__(self, api: ApiIndex, parser: Parser, bool_action: bool):
        self.api = api
        self.parser = parser
        self.bool_action = bool_action
        self.seen: set[tuple[str, int, str, bool]] = set()
        self.under_if = False  # the call being read sits in an `if` branch of a body followed
        # the first body's parameters with a literal default, at that default: the branch an `if` on one takes
        self.decided: dict[str, object] = {}

    def note(self, path: str, node: ast.AST, why: str) -> None:
        self.parser.incomplete.append(f"{path}:{getattr(node, 'lineno', 0)}: {why}")

    def follow_body(self, mod, node: ast.AST, cls: Resolved | None, depth: int, under_if: bool = False,
                    decided: dict | None = None) -> None:
        key = (mod.path, node.lineno, cls.qualname if cls else "", under_if)
        if key in self.seen or depth > MAX_FOLLOW:
            return
        self.seen.add(key)
        kwargs_of = self._kwargs_classes(mod, node)
        loops = self._loop_values(node)
        local = _local_imports(mod, node)
        branches = _in_branches(node, (self.decided if depth == 0 else decided) or {}) if not under_if else set()
        for call in walk(node):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            self.under_if = under_if or id(call) in branches
            if isinstance(func, ast.Attribute) and func.attr == "add_argument":
                self._add_argument(mod, call, cls, kwargs_of, loops)
            elif isinstance(func, ast.Attribute) and func.attr == "set_defaults":
                for k in call.keywords:
                    if k.arg is None:
                        self.note(mod.path, call, f"defaults set from {ast.unparse(k.value)}")
                    else:
                        self.parser.dests.setdefault(k.arg, (mod.path, call.lineno))
            elif _hands_parser(call) or (depth == 0 and isinstance(node, ast.If)):
                # a `__main__` block: every call may build the parser (`from ...entry import main; main()`)
                self._follow_call(mod, call, cls, depth, local)

    def _add_argument(self, mod, call: ast.Call, cls, kwargs_of: dict, loops: dict) -> None:
        flags: list[str] = []
        for arg in call.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                flags.append(arg.value)
            elif isinstance(arg, ast.JoinedStr) and ast.unparse(arg).startswith(("f'--{", 'f"--{')):
                # `f"--{key.replace('_', '-')}"` over get_kwargs(cls): every field of the class
                owner = self._loop_class(mod, call, cls, kwargs_of)
                if owner is None:
                    self.note(mod.path, call, f"a computed flag {ast.unparse(arg)} over a class driftcheck cannot name")
                    continue
                for f in config_fields(self.api, owner):
                    flag = "--" + f.name.replace("_", "-")
                    self.parser.added(flag, (owner.path, f.line), self.under_if)
                    self.parser.dests.setdefault(f.name, (owner.path, f.line))
                    if self.bool_action and is_bool(f.annotation):
                        self.parser.negatable.append(flag)
            elif isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name) and arg.value.id in ("extra_flags", "args"):
                continue  # short aliases popped from the kwargs ("flags"), or a wrapper's own *args
            elif isinstance(arg, ast.Name) and arg.id in loops:
                flags.extend(loops[arg.id])
            else:
                self.note(mod.path, call, f"a computed flag {ast.unparse(arg)}")
        self._dest(mod, call, flags)
        dashed = [f for f in flags if f.startswith("-")]
        if not dashed:
            return
        negatable = any(k.arg == "action" and "BooleanOptionalAction" in ast.unparse(k.value) for k in call.keywords)
        spread = [k.value for k in call.keywords if k.arg is None]
        spread += [v for d in spread if isinstance(d, ast.Dict) for key, v in zip(d.keys, d.values) if key is None]
        for value in spread:  # **model_kwargs["x"], or **{**model_kwargs["x"], "default": None}
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
                owner = kwargs_of.get(value.value.id)
                name = value.slice.value if isinstance(value.slice, ast.Constant) else None
                if owner is not None and isinstance(name, str) and self.bool_action:
                    f = next((f for f in config_fields(self.api, owner) if f.name == name), None)
                    negatable = negatable or (f is not None and is_bool(f.annotation))
        for flag in dashed:
            self.parser.added(flag, (mod.path, call.lineno), self.under_if)
            if negatable and flag.startswith("--"):
                self.parser.negatable.append(flag)

    def _dest(self, mod, call: ast.Call, flags: list[str]) -> None:
        """The Namespace attribute an `add_argument` call makes, as argparse names it."""
        dest = next((k.value for k in call.keywords if k.arg == "dest"), None)
        if dest is not None:
            if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
                self.parser.dests.setdefault(dest.value, (mod.path, call.lineno))
            else:
                self.note(mod.path, call, f"a computed dest {ast.unparse(dest)}")
            return
        # (a `**kwargs` spread is read as holding no `dest`: vLLM's get_kwargs gives type, default, help, choices)
        long = [f for f in flags if f.startswith("--")]
        name = long[0][2:] if long else flags[0].lstrip("-") if flags else None
        if name:
            self.parser.dests.setdefault(name.replace("-", "_"), (mod.path, call.lineno))

    def _kwargs_classes(self, mod, node) -> dict:
        """`model_kwargs = get_kwargs(ModelConfig)` -> {"model_kwargs": ModelConfig}."""
        out = {}
        for sub in walk(node):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) and \
                    isinstance(sub.value, ast.Call) and isinstance(sub.value.func, ast.Name) and \
                    sub.value.func.id in ("get_kwargs", "_compute_kwargs") and sub.value.args:
                target = self._class_expr(mod, sub.value.args[0], None)
                if target is not None:
                    out[sub.targets[0].id] = target
        return out

    def _loop_values(self, node) -> dict:
        """`for arg, type in [("--a", str), ...]:` -> {"arg": ["--a", ...]}."""
        out: dict[str, list[str]] = {}
        for sub in walk(node):
            if isinstance(sub, ast.For) and isinstance(sub.iter, (ast.List, ast.Tuple)):
                names = [sub.target] if isinstance(sub.target, ast.Name) else \
                    list(sub.target.elts) if isinstance(sub.target, ast.Tuple) else []
                for i, name in enumerate(names):
                    if not isinstance(name, ast.Name):
                        continue
                    values = []
                    for item in sub.iter.elts:
                        value = item.elts[i] if isinstance(item, ast.Tuple) and len(item.elts) > i and \
                            isinstance(sub.target, ast.Tuple) else item
                        if isinstance(value, ast.Constant) and isinstance(value.value, str):
                            values.append(value.value)
                    if values and len(values) == len(sub.iter.elts):
                        out[name.id] = values
        return out

    def _loop_class(self, mod, call, cls, kwargs_of: dict):
        """The class whose get_kwargs the loop around `call` iterates."""
        for owner in kwargs_of.values():
            return owner
        return cls

    def _class_expr(self, mod, expr: ast.expr, cls) -> Resolved | None:
        if isinstance(expr, ast.Name) and expr.id == "cls":
            return cls
        try:
            dotted = ast.unparse(expr)
        except Exception:
            return None
        r = self.api.resolve_in_scope(mod, dotted)
        return r if isinstance(r, Resolved) and r.kind == "class" else None

    def _follow_call(self, mod, call: ast.Call, cls, depth: int, local: dict) -> None:
        func = call.func
        target: Resolved | None = None
        owner = cls
        if isinstance(func, ast.Attribute):
            base = func.value
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super" and cls is not None:
                order, _o, _e = self.api.mro(cls)
                for c in order[1:]:
                    if func.attr in c.cls.methods:
                        target = self.api.class_member(c, func.attr)
                        break
            else:
                klass = self._class_expr(mod, base, cls)
                if klass is not None:
                    owner = klass
                    r = self.api.class_member(klass, func.attr)
                    target = r if isinstance(r, Resolved) else None
        elif isinstance(func, ast.Name):
            r = self.api.resolve(local[func.id]) if func.id in local else self.api.resolve_in_scope(mod, func.id)
            target = r if isinstance(r, Resolved) else None
        if target is None or target.kind not in ("function", "method") or target.module is None:
            return
        if not target.qualname.startswith("vllm."):
            return
        node = self.api.function_node(target)
        if node is not None:
            owner_name, _, name = target.qualname.rpartition(".")
            names = {(owner_name, name)}
            if target.kind == "method" and owner is not None and isinstance(func, ast.Attribute):
                names.add((owner.qualname, func.attr))  # `AsyncEngineArgs.add_cli_args`: looked up on the class named
            self.parser.builders += sorted(names - set(self.parser.builders))
            # a call handing over the parser alone leaves the other parameters at their defaults (`if not
            # async_args_only:` in AsyncEngineArgs.add_cli_args, which make_arg_parser calls so)
            decided = _literal_defaults(node) if len(call.args) <= 1 and not call.keywords else {}
            self.follow_body(target.module, node, owner if target.kind == "method" else None, depth + 1, self.under_if,
                             decided)


def _in_branches(node: ast.AST, decided: dict[str, object]) -> set[int]:
    """The nodes inside an `if` / `match` branch of a body, by id; of an `if` on a parameter `decided` gives the value
    of (`if not async_args_only:` with `async_args_only=False`), only those of the branch not taken."""
    out: set[int] = set()
    for sub in walk(node):
        if isinstance(sub, ast.If) and sub is not node:
            taken = _decide(sub.test, decided)
            if taken is not None:
                for stmt in (sub.orelse if taken else sub.body):
                    out |= {id(inner) for inner in walk(stmt)}
                continue
        if isinstance(sub, (ast.If, ast.IfExp, ast.Match)) and sub is not node:
            for inner in walk(sub):
                out.add(id(inner))
    return out


def _decide(test: ast.expr, decided: dict[str, object]) -> bool | None:
    """The truth of `p` / `not p` for a parameter at its default; None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decide(test.operand, decided)
        return None if inner is None else not inner
    if isinstance(test, ast.Name) and test.id in decided:
        return bool(decided[test.id])
    return None


def _literal_defaults(fn: ast.AST) -> dict[str, object]:
    args = fn.args
    positional = args.posonlyargs + args.args
    out = {a.arg: d.value for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults)
           if isinstance(d, ast.Constant)}
    out |= {a.arg: d.value for a, d in zip(args.kwonlyargs, args.kw_defaults) if isinstance(d, ast.Constant)}
    return out


def builder_parser(api: ApiIndex, builder: Resolved) -> Parser | None:
    """What a vLLM function handed a parser adds to it (`EngineArgs.add_cli_args(parser)`, `make_arg_parser(parser)`),
    followed as the serve parser is, its other parameters at their defaults; None where its body cannot be read."""
    node = api.function_node(builder) if builder.module is not None else None
    if node is None:
        return None
    parser = Parser("builder", builder.path, builder.line)
    owner = builder.owner if builder.kind == "method" else None
    collector = FlagCollector(api, parser, bools_negatable(api))
    collector.decided = _literal_defaults(node)  # the call passes the parser alone (DC124 reads only such calls)
    collector.follow_body(builder.module, node, owner, 0)
    return parser


PARSER_BUILDERS = ("add_parser", "ArgumentParser", "FlexibleArgumentParser")


def help_flags(parser: Parser, mod, node: ast.AST) -> None:
    """`-h` / `--help`, which argparse adds to a parser built without `add_help=False`: the subcommand's
    `subparsers.add_parser("serve", ...)` or the `__main__` block's `FlexibleArgumentParser(...)`. A builder that
    turns help off, or says so through a computed value, gives none."""
    builders = [c for c in walk(node) if isinstance(c, ast.Call) and (
        c.func.attr if isinstance(c.func, ast.Attribute) else c.func.id if isinstance(c.func, ast.Name) else "")
        in PARSER_BUILDERS]
    if any(k.arg == "add_help" and not (isinstance(k.value, ast.Constant) and k.value.value is True)
           for c in builders for k in c.keywords):
        return
    line = builders[0].lineno if builders else node.lineno
    for flag in ("-h", "--help"):
        parser.flags.setdefault(flag, (mod.path, line))


def _local_imports(mod, node: ast.AST) -> dict[str, str]:
    """`from vllm.x import main` (or `from ..x import main`) inside a function or block: name -> dotted."""
    out = {}
    for sub in walk(node):
        if not isinstance(sub, ast.ImportFrom):
            continue
        if sub.level and sub.level > len(mod.name.split(".")) - (0 if mod.is_package else 1):
            continue  # above the top package
        base = resolve_relative(mod.name, mod.is_package, sub.level, sub.module)
        for alias in sub.names:
            out[alias.asname or alias.name] = f"{base}.{alias.name}"
    return out


def _hands_parser(call: ast.Call) -> bool:
    """A call that is given the parser (or a subparser): `make_arg_parser(parser)`, `X.add_cli_args(parser)`."""
    for arg in list(call.args) + [k.value for k in call.keywords]:
        if isinstance(arg, ast.Name) and "parser" in arg.id:
            return True
    return False
