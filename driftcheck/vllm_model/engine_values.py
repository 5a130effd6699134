"""Find the value the target's own code passes for a parameter, expressed in the client's terms.

Used by the `add-argument` fix: `SchedulerConfig(is_encoder_decoder=...)` gets the literal the
class's own factory fills in (`kwargs["is_encoder_decoder"] = False`); `Scheduler(block_size=...)`
gets the expression vLLM's engine core computes (`vllm_config.cache_config.block_size * ...`),
with `vllm_config` replaced by what the client passes as `vllm_config=`. Nothing here is a table
of known answers: it reads the target's code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.vllm_model.signatures import Signature
from driftcheck.astnodes import walk
from driftcheck.sources.sources import module_name_for

MAX_FILES = 40


@dataclass
class EngineValue:
    code: str  # Python source to pass, valid in the client's scope
    how: str  # where it came from, for the diff summary
    path: str
    line: int
    imports: list[tuple[str, str]] = field(default_factory=list)  # (module, name) the code needs


def _factory_literal(api: ApiIndex, cls: Resolved, param: str) -> EngineValue | None:
    """The literal a class fills in for `param` itself (`kwargs.setdefault("p", 1)`, `kw["p"] = 1`): read from its
    file alone, so answered once per file content (`file_memo`)."""
    if cls.cls is None:
        return None
    return text_index_for(api).per_content("engine_values:factory_literal", cls.path,
                                           lambda: _literal_in_class(api, cls, param), cls.cls.line, cls.qualname, param)


def _literal_in_class(api: ApiIndex, cls: Resolved, param: str) -> EngineValue | None:
    node = api.class_node(cls)
    if node is None:
        return None
    for sub in walk(node):
        value = None
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Subscript):
            key = sub.targets[0].slice
            if isinstance(key, ast.Constant) and key.value == param:
                value = sub.value
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "setdefault":
            if len(sub.args) == 2 and isinstance(sub.args[0], ast.Constant) and sub.args[0].value == param:
                value = sub.args[1]
        if value is not None:
            try:
                ast.literal_eval(value)
            except (ValueError, SyntaxError):
                continue
            return EngineValue(ast.unparse(value), f"the value {cls.qualname.rsplit('.', 1)[-1]} fills in itself", cls.path, sub.lineno)
    return None


def _client_args(call: ast.Call, sig: Signature) -> dict[str, str]:
    """Parameter name -> the client's argument source, for what the client call passes."""
    out: dict[str, str] = {}
    positional = [p.name for p in sig.params if p.kind in ("posonly", "pos")]
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred) or i >= len(positional):
            break
        out[positional[i]] = ast.unparse(arg)
    for kw in call.keywords:
        if kw.arg:
            out[kw.arg] = ast.unparse(kw.value)
    return out


def _inline_local(fn: ast.AST, name: str) -> ast.expr | None:
    """The one expression a local is assigned (`x = e`, or `x, y = e` -> `e[0]`), if unique."""
    found: list[ast.expr] = []
    for a in walk(fn):
        if not isinstance(a, ast.Assign) or len(a.targets) != 1:
            continue
        target = a.targets[0]
        if isinstance(target, ast.Name) and target.id == name:
            found.append(a.value)
        elif isinstance(target, ast.Tuple):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name) and elt.id == name:
                    found.append(ast.Subscript(value=a.value, slice=ast.Constant(i), ctx=ast.Load()))
    return found[0] if len(found) == 1 else None


def _importable(api: ApiIndex, rel: str, names: set[str]) -> list[tuple[str, str]] | None:
    """How the client can import the free names of a value copied from `rel`, or None."""
    module = api.module(module_name_for(rel))
    if module is None:
        return None
    out = []
    for name in sorted(names):
        binding = module.bindings.get(name)
        if binding is None:
            return None
        if binding.kind == "import" and binding.target.split(".")[0] == api.package:
            mod, _, attr = binding.target.rpartition(".")
            if attr != name:
                return None
            out.append((mod, name))
        elif binding.kind in ("function", "class"):
            out.append((module.name, name))
        else:
            return None
    return out


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping
        self.unmapped: set[str] = set()

    def _swap(self, node: ast.expr) -> ast.expr | None:
        text = ast.unparse(node)
        if text in self.mapping:
            return ast.parse(f"({self.mapping[text]})", mode="eval").body
        return None

    def visit_Attribute(self, node: ast.Attribute):
        swapped = self._swap(node)
        if swapped is not None:
            return swapped
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name):
        swapped = self._swap(node)
        if swapped is not None:
            return swapped
        if node.id not in ("None", "True", "False") and not hasattr(__builtins__, node.id) and not (
            isinstance(__builtins__, dict) and node.id in __builtins__
        ):
            self.unmapped.add(node.id)
        return node


def _call_sites(api: ApiIndex, short: str, param: str):
    index = text_index_for(api)
    needle = f"{param}="
    files = [rel for rel in index.files_mentioning(f"{short}(") if needle.encode() in index.blob(rel)]
    files.sort(key=lambda rel: ("/engine/" not in rel, "/tests/" in rel, rel))
    for rel in files[:MAX_FILES]:
        tree = api.parse(rel)
        if tree is None:
            continue
        for fn in walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for call in walk(fn):
                if not isinstance(call, ast.Call):
                    continue
                fname = call.func.id if isinstance(call.func, ast.Name) else call.func.attr if isinstance(call.func, ast.Attribute) else None
                if fname != short:
                    continue
                for kw in call.keywords:
                    if kw.arg == param:
                        yield rel, fn, call, kw.value


def _a_test(rel: str) -> bool:
    return rel.startswith("tests/") or "/tests/" in rel


def engine_value(api: ApiIndex, target: Resolved, sig: Signature, param: str, client_call: ast.Call) -> EngineValue | None:
    """The value the target's own code passes for `param`, in the client call's terms, or None."""
    if target.kind == "class":
        literal = _factory_literal(api, target, param)
        if literal is not None:
            return literal
    short = target.qualname.rsplit(".", 1)[-1]
    if short == "__init__":
        short = target.qualname.rsplit(".", 2)[-2]
    client = _client_args(client_call, sig)
    fallback: EngineValue | None = None
    sites = []
    for rel, fn, call, value in _call_sites(api, short, param):
        if isinstance(value, ast.Name):
            value = _inline_local(fn, value.id) or value
        sites.append((rel, fn, call, value))
    # vLLM's own code passing different values at different sites (`InputBatch(max_num_blocks_per_req=[])` where it
    # starts, the filled list where it builds the real one; `max_query_len=num_tokens // num_reqs` in a dummy run and
    # the batch's maximum elsewhere: batch 21a) says the value depends on the situation: none is the engine's
    if len({ast.unparse(value) for rel, _fn, _call, value in sites if not _a_test(rel)}) > 1:
        return None
    for rel, fn, call, value in sites:
        mapping = {}
        for kw in call.keywords:
            if kw.arg and kw.arg in client and kw.arg != param:
                mapping[ast.unparse(kw.value)] = client[kw.arg]
        sub = _Substitute(mapping)
        translated = sub.visit(ast.parse(ast.unparse(value), mode="eval").body)
        imports = _importable(api, rel, sub.unmapped) if sub.unmapped else []
        if imports is not None:
            code = ast.unparse(translated)
            return EngineValue(re.sub(r"\s+", " ", code), f"what {rel} passes", rel, call.lineno, imports)
        if fallback is None:
            try:
                ast.literal_eval(value)
                fallback = EngineValue(ast.unparse(value), f"the literal {rel} passes", rel, call.lineno)
            except (ValueError, SyntaxError):
                pass
    return fallback
