"""What a vLLM release's `vllm serve` accepts, read from its sources: the flags of its argument parser, the
fields of the JSON configs those flags take, the speculative methods and the KV connectors it registers.

Nothing here is a list of flags or versions. The parser is followed from the code that builds it: the
`serve` subcommand's `subparser_init` (and the `__main__` block of `vllm.entrypoints.openai.api_server`),
through every function and `X.add_cli_args(parser)` it hands the parser to, collecting `add_argument`
calls. A flag spelled as a literal is taken as is; `f"--{key.replace('_', '-')}"` in a loop over
`get_kwargs(cls)` stands for every dataclass field of that class; a flag taken from a `for` loop over
literal tuples is read from the tuples. Any other computed flag makes the set incomplete, and then an
unknown flag is not an error. A flag is negatable (`--no-x`) where its `add_argument` says
`BooleanOptionalAction`, or where its kwargs come from `get_kwargs(Cls)["field"]`, the field is a `bool`
and the release's `get_kwargs` helpers use `BooleanOptionalAction` for bools.

The answer for an immutable tree is kept with its text index (computed once per release).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.storage.datacodec import Codec, CodecError
from driftcheck.vllm_model.pysummary import resolve_relative
from driftcheck.vllm_model.signatures import VARARG, VARKW

INDEX_KEY = "serve_config_drift:v2"
MAX_FOLLOW = 8  # call depth from the entry point: make_arg_parser -> add_cli_args -> super() ...

ENGINE_ARGS = ("vllm.engine.arg_utils.EngineArgs", "vllm.engine.arg_utils.AsyncEngineArgs")
SPECULATIVE = ("vllm.config.speculative.SpeculativeConfig", "vllm.config.SpeculativeConfig")
KV_TRANSFER = ("vllm.config.kv_transfer.KVTransferConfig", "vllm.config.KVTransferConfig")


@dataclass
class Parser:
    entry: str  # "serve" | "api_server"
    path: str  # where the parser is built (the function or block followed first)
    line: int
    flags: dict[str, tuple[str, int]] = field(default_factory=dict)  # "--flag" -> (path, line)
    negatable: list[str] = field(default_factory=list)  # flags argparse also accepts as --no-<flag>
    incomplete: list[str] = field(default_factory=list)  # why the flag set may miss some ("path:line: ...")
    underscores: bool = False  # the parser reads --a_b as --a-b (FlexibleArgumentParser)

    @property
    def complete(self) -> bool:
        return not self.incomplete


@dataclass
class ConfigClass:
    qualname: str
    path: str
    line: int
    fields: dict[str, int] = field(default_factory=dict)  # field -> line
    extra: str = "unknown"  # "forbid" (pydantic raises), "ignore" (pydantic drops it), "typeerror" (plain dataclass)
    literals: dict[str, list[str]] = field(default_factory=dict)  # field -> allowed values, when a Literal names them all


@dataclass
class ServeModel:
    parsers: dict[str, Parser] = field(default_factory=dict)
    engine_fields: dict[str, tuple[str, int]] = field(default_factory=dict)  # EngineArgs field -> (path, line)
    engine_bools: list[str] = field(default_factory=list)
    configs: dict[str, ConfigClass] = field(default_factory=dict)  # "speculative" | "kv_transfer"
    connectors: dict[str, tuple[str, int]] = field(default_factory=dict)  # registered name -> (path, line)
    connectors_complete: bool = False
    factory: tuple[str, int] | None = None  # (path, line) of the registry's lookup
    llm_kwargs: dict[str, int] = field(default_factory=dict)  # LLM.__init__ parameters -> line
    llm_forwards: tuple[str, int] | None = None  # (path, line): LLM.__init__ hands **kwargs to EngineArgs
    notes: list[str] = field(default_factory=list)


def serve_model(api: ApiIndex) -> ServeModel:
    """The release's serve model, computed once per immutable tree."""
    index = text_index_for(api)
    data = index.remember(INDEX_KEY, lambda: _codec().encode(_build(api)))
    try:
        return _codec().decode(data)
    except CodecError:  # an entry written by another layout: build it again
        return _build(api)


@functools.lru_cache(maxsize=1)
def _codec() -> Codec:
    return Codec(ServeModel)


# ------------------------------------------------------------------------------------------------ build
def _build(api: ApiIndex) -> ServeModel:
    model = ServeModel()
    bool_action = _bools_negatable(api)
    for entry, (mod, node) in _entry_points(api).items():
        parser = Parser(entry, mod.path, node.lineno)
        _Collector(api, parser, bool_action).follow_body(mod, node, None, 0)
        if not parser.flags:
            parser.incomplete.append(f"{mod.path}:{node.lineno}: no add_argument call reached from here")
        parser.underscores = _reads_underscores(api)
        model.parsers[entry] = parser
    engine = _class(api, ENGINE_ARGS[0])
    if engine is not None:
        for c in [engine] + ([_class(api, ENGINE_ARGS[1])] if _class(api, ENGINE_ARGS[1]) else []):
            for f in _fields(api, c):
                model.engine_fields.setdefault(f.name, (c.path, f.line))
                if _is_bool(f.annotation):
                    model.engine_bools.append(f.name)
    for key, names in (("speculative", SPECULATIVE), ("kv_transfer", KV_TRANSFER)):
        for name in names:
            cls = _class(api, name)
            if cls is not None:
                model.configs[key] = _config_class(api, cls)
                break
    _connectors(api, model)
    _llm(api, model)
    return model


def _class(api: ApiIndex, dotted: str) -> Resolved | None:
    r = api.resolve(dotted)
    return r if isinstance(r, Resolved) and r.kind == "class" else None


def _fields(api: ApiIndex, cls: Resolved):
    """Dataclass fields along the MRO (init fields only), most derived last wins."""
    order, _open, _ext = api.mro(cls)
    out: dict[str, object] = {}
    for c in reversed(order):
        for f in c.cls.fields:
            if f.is_classvar or not f.init or f.name.startswith("_"):
                continue
            out[f.name] = f
    return list(out.values())


def _is_bool(annotation: str | None) -> bool:
    text = (annotation or "").replace(" ", "")
    return bool(re.search(r"(^|[\[|,(])bool($|[\]|,)])", text)) and not re.search(r"(^|[\[|,])str($|[\]|,])", text)


def _entry_points(api: ApiIndex) -> dict:
    """entry -> (module info, node whose body builds the parser)."""
    out = {}
    index = text_index_for(api)
    for rel in index.files_mentioning("subparser_init"):
        if not rel.startswith("vllm/entrypoints/cli/"):
            continue
        tree = api.parse(rel)
        mod = api.module(rel[:-3].replace("/", ".").removesuffix(".__init__"))
        if tree is None or mod is None:
            continue
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            names = [s for s in cls.body if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "name" for t in s.targets)]
            if not any(isinstance(s.value, ast.Constant) and s.value.value == "serve" for s in names):
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


def _reads_underscores(api: ApiIndex) -> bool:
    """FlexibleArgumentParser turns `--a_b` into `--a-b` before argparse sees it."""
    r = api.resolve("vllm.utils.argparse_utils.FlexibleArgumentParser")
    if not isinstance(r, Resolved):
        r = api.resolve("vllm.utils.FlexibleArgumentParser")
    if not isinstance(r, Resolved) or r.kind != "class":
        return False
    node = api.class_node(r)
    return node is not None and bool(re.search(r"""replace\(\s*["']_["']\s*,\s*["']-["']\s*\)""", ast.unparse(node)))


def _bools_negatable(api: ApiIndex) -> bool:
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


class _Collector:
    def __init__(self, api: ApiIndex, parser: Parser, bool_action: bool):
        self.api = api
        self.parser = parser
        self.bool_action = bool_action
        self.seen: set[tuple[str, int, str]] = set()

    def note(self, path: str, node: ast.AST, why: str) -> None:
        self.parser.incomplete.append(f"{path}:{getattr(node, 'lineno', 0)}: {why}")

    def follow_body(self, mod, node: ast.AST, cls: Resolved | None, depth: int) -> None:
        key = (mod.path, node.lineno, cls.qualname if cls else "")
        if key in self.seen or depth > MAX_FOLLOW:
            return
        self.seen.add(key)
        kwargs_of = self._kwargs_classes(mod, node)
        loops = self._loop_values(node)
        local = _local_imports(mod, node)
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "add_argument":
                self._add_argument(mod, call, cls, kwargs_of, loops)
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
                for f in _fields(self.api, owner):
                    flag = "--" + f.name.replace("_", "-")
                    self.parser.flags.setdefault(flag, (owner.path, f.line))
                    if self.bool_action and _is_bool(f.annotation):
                        self.parser.negatable.append(flag)
            elif isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name) and arg.value.id in ("extra_flags", "args"):
                continue  # short aliases popped from the kwargs ("flags"), or a wrapper's own *args
            elif isinstance(arg, ast.Name) and arg.id in loops:
                flags.extend(loops[arg.id])
            else:
                self.note(mod.path, call, f"a computed flag {ast.unparse(arg)}")
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
                    f = next((f for f in _fields(self.api, owner) if f.name == name), None)
                    negatable = negatable or (f is not None and _is_bool(f.annotation))
        for flag in dashed:
            self.parser.flags.setdefault(flag, (mod.path, call.lineno))
            if negatable and flag.startswith("--"):
                self.parser.negatable.append(flag)

    def _kwargs_classes(self, mod, node) -> dict:
        """`model_kwargs = get_kwargs(ModelConfig)` -> {"model_kwargs": ModelConfig}."""
        out = {}
        for sub in ast.walk(node):
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
        for sub in ast.walk(node):
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
            self.follow_body(target.module, node, owner if target.kind == "method" else None, depth + 1)


def _local_imports(mod, node: ast.AST) -> dict[str, str]:
    """`from vllm.x import main` (or `from ..x import main`) inside a function or block: name -> dotted."""
    out = {}
    for sub in ast.walk(node):
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


def _config_class(api: ApiIndex, cls: Resolved) -> ConfigClass:
    out = ConfigClass(cls.qualname, cls.path, cls.line)
    fields = _fields(api, cls)
    out.fields = {f.name: f.line for f in fields}
    kind = api.is_dataclass_like(cls)
    if kind == "pydantic":
        out.extra = "forbid" if _forbids_extra(api, cls) else "ignore"
    elif kind == "dataclass":
        out.extra = "typeerror"
    for f in fields:
        values = _literal_values(api, cls, f.annotation)
        if values:
            out.literals[f.name] = values
    return out


def _forbids_extra(api: ApiIndex, cls: Resolved) -> bool:
    """`@config` whose body builds `ConfigDict(extra="forbid")`, or the class's own decorator saying so."""
    pattern = re.compile(r"""extra\s*=\s*["']forbid["']""")
    node = api.class_node(cls)
    if node is not None and any(pattern.search(ast.unparse(d)) for d in node.decorator_list):
        return True
    for deco in cls.cls.decorators:
        r = api.resolve_in_scope(cls.module, deco.split("(")[0]) if cls.module is not None else None
        if isinstance(r, Resolved) and r.kind == "function":
            fn = api.function_node(r)
            if fn is not None and pattern.search(ast.unparse(fn)):
                return True
    return False


def _literal_values(api: ApiIndex, cls: Resolved, annotation: str | None) -> list | None:
    """Every value a `Literal[...]` annotation (through module-level aliases) allows; None if any part is not one."""
    if not annotation or "Literal" not in annotation and not re.search(r"[A-Z]\w*(Method|Types?)\b", annotation):
        return None
    tree = api.parse(cls.path)
    if tree is None:
        return None
    aliases = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            aliases[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            aliases[node.target.id] = node.value
    try:
        expr = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return None
    values: list = []

    def walk(e: ast.expr, depth: int) -> bool:
        if depth > 12:
            return False
        if isinstance(e, ast.Constant) and e.value is None:
            return True
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitOr):
            return walk(e.left, depth + 1) and walk(e.right, depth + 1)
        if isinstance(e, ast.Subscript):
            head = ast.unparse(e.value).split(".")[-1]
            items = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            if head == "Literal":
                for item in items:
                    if isinstance(item, ast.Constant):
                        values.append(item.value)
                    elif not walk(item, depth + 1):
                        return False
                return True
            if head in ("Optional", "Union"):
                return all(walk(i, depth + 1) for i in items)
            return False
        if isinstance(e, ast.Name) and e.id in aliases:
            return walk(aliases[e.id], depth + 1)
        return False

    return values if walk(expr, 0) and values else None


def _connectors(api: ApiIndex, model: ServeModel) -> None:
    """Names registered on the factory whose `get_connector_class` takes the KV transfer config."""
    index = text_index_for(api)
    complete = True
    found_factory = False
    files = index.files_mentioning("register_connector(")
    registry = None
    for rel in files:
        tree = api.parse(rel)
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.ClassDef):
                continue
            # the lookup: a method given the KV transfer config that reads the registry
            lookups = [fn for fn in node.body if isinstance(fn, ast.FunctionDef) and
                       any("kv_transfer_config" in a.arg for a in fn.args.args) and "_registry" in ast.unparse(fn)]
            if lookups:
                registry, model.factory = node.name, (rel, lookups[0].lineno)
                if "raise" not in ast.unparse(lookups[0]):
                    complete = False  # a name it does not know may go elsewhere
    if registry is None:
        return
    for rel in files:
        tree = api.parse(rel)
        if tree is None:
            complete = False
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register_connector"):
                continue
            receiver = ast.unparse(node.func.value).split(".")[-1]
            if receiver not in (registry, "cls"):
                continue
            if receiver == "cls":
                continue  # the registry's own method body
            found_factory = True
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                model.connectors.setdefault(node.args[0].value, (rel, node.lineno))
            else:
                complete = False  # a name computed at run time: the registry is not known in full
    model.connectors_complete = complete and found_factory and bool(model.connectors)


def _llm(api: ApiIndex, model: ServeModel) -> None:
    cls = _class(api, "vllm.entrypoints.llm.LLM")
    if cls is None or "__init__" not in cls.cls.methods:
        return
    init = cls.cls.methods["__init__"]
    model.llm_kwargs = {p.name: init.line for p in init.signature.without_first().params if p.kind not in (VARARG, VARKW)}
    node = api.function_node(api.class_member(cls, "__init__"))
    if node is None:
        return
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and ast.unparse(call.func).split(".")[-1] == "EngineArgs" and \
                any(k.arg is None for k in call.keywords):
            model.llm_forwards = (cls.path, call.lineno)
            return
