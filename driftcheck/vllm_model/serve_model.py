"""What a vLLM release's `vllm serve` accepts, read from its sources: the flags of its argument parser
(followed from the code that builds it, serve_parser.py), the fields of the JSON configs those flags take
(`SpeculativeConfig`, `KVTransferConfig`: which forbid extra keys, which `Literal`s dispatch), the KV
connectors it registers and what `LLM(...)` hands on to `EngineArgs`.

Nothing here is a list of flags or versions. A flag is negatable (`--no-x`) where its `add_argument` says
`BooleanOptionalAction`, or where its kwargs come from `get_kwargs(Cls)["field"]`, the field is a `bool`
and the release's `get_kwargs` helpers use `BooleanOptionalAction` for bools.

The answer for an immutable tree is kept with its text index (computed once per release).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

from driftcheck.storage.datacodec import Codec, CodecError
from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.serve_parser import (
    FlagCollector, Parser, bools_negatable, config_fields, entry_points, help_flags, is_bool, reads_underscores,
)
from driftcheck.vllm_model.signatures import VARARG, VARKW
from driftcheck.astnodes import walk
from driftcheck.sources.sources import module_name_for


INDEX_KEY = "serve_config_drift:v4"  # v3: argparse's own -h / --help; v4: the factory's lookup path (VA1)


ENGINE_ARGS = ("vllm.engine.arg_utils.EngineArgs", "vllm.engine.arg_utils.AsyncEngineArgs")
SPECULATIVE = ("vllm.config.speculative.SpeculativeConfig", "vllm.config.SpeculativeConfig")
KV_TRANSFER = ("vllm.config.kv_transfer.KVTransferConfig", "vllm.config.KVTransferConfig")


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
    engine_classes: list[str] = field(default_factory=list)  # the qualnames of the EngineArgs classes read
    configs: dict[str, ConfigClass] = field(default_factory=dict)  # "speculative" | "kv_transfer"
    connectors: dict[str, tuple[str, int]] = field(default_factory=dict)  # registered name -> (path, line)
    connectors_complete: bool = False
    factory: tuple[str, int] | None = None  # (path, line) of the registry's lookup
    unsupported: bool = True  # every lookup raises `ValueError: Unsupported connector type` (0.8.5's V1 one: KeyError)
    factory_class: str | None = None  # the registry class's qualname
    factory_path: list[str] = field(default_factory=list)  # its methods a name passes through on the way to the lookup
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
    bool_action = bools_negatable(api)
    for entry, (mod, node) in entry_points(api).items():
        parser = Parser(entry, mod.path, node.lineno)
        FlagCollector(api, parser, bool_action).follow_body(mod, node, None, 0)
        if not parser.flags:
            parser.incomplete.append(f"{mod.path}:{node.lineno}: no add_argument call reached from here")
        help_flags(parser, mod, node)
        parser.underscores = reads_underscores(api)
        model.parsers[entry] = parser
    engine = _class(api, ENGINE_ARGS[0])
    if engine is not None:
        for c in [engine] + ([_class(api, ENGINE_ARGS[1])] if _class(api, ENGINE_ARGS[1]) else []):
            model.engine_classes.append(c.qualname)
            for f in config_fields(api, c):
                model.engine_fields.setdefault(f.name, (c.path, f.line))
                if is_bool(f.annotation):
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


def _config_class(api: ApiIndex, cls: Resolved) -> ConfigClass:
    out = ConfigClass(cls.qualname, cls.path, cls.line)
    fields = config_fields(api, cls)
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
        for node in walk(tree) if tree is not None else ():
            if not isinstance(node, ast.ClassDef):
                continue
            # the lookup: a method given the KV transfer config, or the config it reads it from (0.9.2's
            # `create_connector_v0(cls, rank, local_rank, config)`: `config.kv_transfer_config.kv_connector`), that
            # reads the registry
            lookups = [fn for fn in node.body if isinstance(fn, ast.FunctionDef) and "_registry" in (body := ast.unparse(fn))
                       and (any("kv_transfer_config" in a.arg for a in fn.args.args) or ".kv_transfer_config" in body)]
            if lookups:
                registry, model.factory = node.name, (rel, lookups[0].lineno)
                model.unsupported = all("Unsupported connector type" in ast.unparse(fn) for fn in lookups)
                module = module_name_for(rel)
                model.factory_class, model.factory_path = f"{module}.{node.name}", _lookup_path(node, lookups)
                if "raise" not in ast.unparse(lookups[0]):
                    complete = False  # a name it does not know may go elsewhere
    if registry is None:
        return
    for rel in files:
        tree = api.parse(rel)
        if tree is None:
            complete = False
            continue
        for node in walk(tree):
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


def _lookup_path(cls: ast.ClassDef, lookups: list[ast.FunctionDef]) -> list[str]:
    """The registry's methods a connector name passes through: the lookups and every method of the class that calls one
    of those through `cls.` / `self.` / the class's own name (`create_connector` -> `_get_connector_class_with_compat`,
    0.16.0). A client that rebinds one of them may answer for a name the registry lacks (VA1)."""
    methods = [fn for fn in cls.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    path = {fn.name for fn in lookups}
    grown = True
    while grown:
        grown = False
        for fn in methods:
            if fn.name in path:
                continue
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in path
                   and isinstance(n.func.value, ast.Name) and n.func.value.id in ("cls", "self", cls.name) for n in walk(fn)):
                path.add(fn.name)
                grown = True
    return sorted(path)


def _llm(api: ApiIndex, model: ServeModel) -> None:
    cls = _class(api, "vllm.entrypoints.llm.LLM")
    if cls is None or "__init__" not in cls.cls.methods:
        return
    init = cls.cls.methods["__init__"]
    model.llm_kwargs = {p.name: init.line for p in init.signature.without_first().params if p.kind not in (VARARG, VARKW)}
    node = api.function_node(api.class_member(cls, "__init__"))
    if node is None:
        return
    for call in walk(node):
        if isinstance(call, ast.Call) and ast.unparse(call.func).split(".")[-1] == "EngineArgs" and \
                any(k.arg is None for k in call.keywords):
            model.llm_forwards = (cls.path, call.lineno)
            varkw = next((p.name for p in init.signature.params if p.kind == VARKW), None)
            for key, line in _taken_from(node, varkw, call.lineno).items():
                model.llm_kwargs.setdefault(key, line)
            return


def _taken_from(fn: ast.AST, varkw: str | None, before: int) -> dict[str, int]:
    """The keys `fn` takes out of its `**varkw` before line `before` (where it hands the rest on): `varkw.pop("k")`,
    `varkw.pop("k", default)`, `del varkw["k"]`. Such a keyword is accepted, not handed on: 0.24.0's `LLM.__init__`
    drops a deprecated `swap_space` (`if "swap_space" in kwargs: kwargs.pop("swap_space")`, llm.py:224) before
    `EngineArgs(**kwargs)`, which no longer takes it (NA5)."""
    out: dict[str, int] = {}
    if varkw is None:
        return out
    for node in walk(fn):
        if getattr(node, "lineno", before) >= before:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == varkw and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.setdefault(node.args[0].value, node.lineno)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == varkw \
                        and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
                    out.setdefault(target.slice.value, node.lineno)
    return out
