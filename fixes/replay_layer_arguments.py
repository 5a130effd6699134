"""replay-layer-arguments (DC106): pass each decoder layer what the target's own model `forward` passes it.

A client that replaces a model's `forward` and calls the decoder layers itself (speculators' worker
extension: `layer(hidden_states=..., positions=..., residual=...)`) misses what vLLM's own `forward`
later started to pass, e.g. `llama_4_scaling`, which `DeepseekV2Model.forward` computes from its
config and `positions` (vLLM 0.12+). The fix reads that `forward` in the target (the layer call DC106
names, and the statements before its loop that compute what it passes), rewrites it in the client's
terms (the target forward's parameters become the client forward's, `self` the client's receiver,
names the client already passes its layers are used as they are; module-level helpers are imported
inside the branch, so no other architecture imports them) and passes it through a dict:

    layer_kwargs = {}
    if (type(self).forward.__module__, type(self).forward.__qualname__) == (
            "vllm.model_executor.models.deepseek_v2", "DeepseekV2Model.forward"):
        from vllm.model_executor.models.deepseek_v2 import _get_llama_4_scaling
        llama_4_scaling_config = getattr(self.config, "llama_4_scaling", None)
        ...
        layer_kwargs["llama_4_scaling"] = llama_4_scaling
    for ...:
        hidden_states, residual = layer(..., **layer_kwargs)

The branch is keyed on the forward the replay stands in for (the instance's `forward` is replaced, its
class's is vLLM's), so the other architectures the replay handles (Llama, Qwen, Mixtral...) are
called exactly as before. `--guard` also requires the layers to take the argument
(`inspect.signature`), so one client runs on vLLMs from before and after the change. What cannot be
translated (a value computed per layer, a name that collides with the client's own) is left for a
person, and said so.
"""

from __future__ import annotations

import ast
import builtins
import json
import textwrap

import libcst as cst

from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, expr, insert_after_imports
from driftcheck.rules.findings import Finding
from driftcheck.astnodes import walk

FIX = Fix("replay-layer-arguments", ("DC106",), "Pass the decoder layers what the target's own model forward passes them")

MARK = "# driftcheck fix (replay-layer-arguments)"


class Untranslatable(Exception):
    """Why the target's code cannot be rewritten in the client's terms."""


# ------------------------------------------------------------------ small ast helpers
def _stores(node: ast.AST) -> set[str]:
    out = {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    out |= {a.arg for a in walk(node) if isinstance(a, ast.arg)}
    for n in walk(node):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return out


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]


def _contains(outer: ast.AST, inner: ast.AST) -> bool:
    return any(n is inner for n in walk(outer))


def _layer_loop(fn: ast.AST, call: ast.Call) -> ast.For | ast.AsyncFor | None:
    """The innermost `for ... in ...layers...` loop of `fn` that holds `call`."""
    loops = [n for n in walk(fn) if isinstance(n, (ast.For, ast.AsyncFor)) and ".layers" in ast.unparse(n.iter)
             and _contains(n, call)]
    return min(loops, key=lambda n: sum(1 for _ in walk(n)), default=None)


def _first_layer(loop_iter: ast.expr) -> str | None:
    """An expression for the first layer the loop visits: `islice(X, a, b)` / `X[a:b]` -> `X[a]`."""
    for node in walk(loop_iter):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) \
                and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "islice" and node.args:
            start = ast.unparse(node.args[1]) if len(node.args) >= 3 else "0"
            return f"{ast.unparse(node.args[0])}[{start}]"
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            return f"{ast.unparse(node.value)}[{ast.unparse(node.slice.lower) if node.slice.lower else '0'}]"
    for node in walk(loop_iter):
        if isinstance(node, ast.Attribute) and node.attr == "layers":
            return f"next(iter({ast.unparse(node)}))"
    return None


# ------------------------------------------------------------------ the target's side
class _TargetForward:
    """One architecture's `forward` in the target: the layer call, and how what it passes is computed."""

    def __init__(self, api, model: str, path: str, line: int):
        tree = api.parse(path)
        if tree is None:
            raise Untranslatable(f"cannot read {path}")
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == model), None)
        fn = next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "forward"),
                  None) if cls else None
        if fn is None:
            raise Untranslatable(f"no {model}.forward in {path}")
        call = next((n for n in walk(fn) if isinstance(n, ast.Call) and n.lineno == line and isinstance(n.func, ast.Name)),
                    None)
        loop = _layer_loop(fn, call) if call else None
        if loop is None:
            raise Untranslatable(f"no layer loop at {path}:{line}")
        self.api, self.model, self.path, self.line, self.fn, self.loop = api, model, path, line, fn, loop
        self.module_name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        self.text = api.tree.read_bytes(path).decode("utf-8", errors="replace")
        top = next(i for i, s in enumerate(fn.body) if _contains(s, loop))
        self.before = fn.body[:top]  # what runs before the loop: where the layer arguments are computed
        self.loop_names = _stores(loop.target)

    def forward_id(self) -> tuple[str, str]:
        return self.module_name, f"{self.model}.forward"

    def slice_for(self, values: list[ast.expr], keep: set[str]) -> list[ast.stmt]:
        """The statements before the loop that compute `values` (names in `keep` are taken as given)."""
        needed = set().union(*(_loads(v) for v in values)) - keep
        if needed & self.loop_names:
            raise Untranslatable(f"{self.model}.forward computes {sorted(needed & self.loop_names)} per layer")
        chosen: list[ast.stmt] = []
        for stmt in reversed(self.before):
            if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                continue  # a bare annotation binds nothing
            if _stores(stmt) & needed:
                chosen.insert(0, stmt)
                needed |= _loads(stmt) - keep
        return chosen

    def source_of(self, stmt: ast.stmt) -> str:
        lines = self.text.splitlines()[stmt.lineno - 1: stmt.end_lineno]
        return textwrap.dedent("\n".join(lines)) + "\n"

    def imports_for(self, names: set[str]) -> list[str]:
        """Import statements that bind `names` as the target module does."""
        module = self.api.module(self.module_name)
        out = []
        for name in sorted(names):
            b = module.bindings.get(name) if module else None
            if b is None:
                raise Untranslatable(f"'{name}' in {self.model}.forward is neither the forward's, the client's nor {self.path}'s")
            if b.kind in ("class", "function", "assign", "alias"):
                out.append(f"from {self.module_name} import {name}")
            elif b.kind == "import":
                mod, _, attr = b.target.rpartition(".")
                out.append(f"from {mod} import {attr}" + (f" as {name}" if attr != name else ""))
            elif b.kind == "module-import":
                out.append(f"import {b.target}" + (f" as {name}" if b.target != name else ""))
            else:
                raise Untranslatable(f"cannot import '{name}' from {self.path}")
        return out


# ------------------------------------------------------------------ the client's side
class _Rename(cst.CSTTransformer):
    """Rename free names (not attribute names or keywords) in copied target code."""

    def __init__(self, mapping: dict[str, str]):
        super().__init__()
        self.mapping = mapping

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.mapping[updated.value]) if updated.value in self.mapping else updated

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def _rename(code: str, mapping: dict[str, str]) -> str:
    mapping = {k: v for k, v in mapping.items() if k != v}
    return cst.parse_module(code).visit(_Rename(mapping)).code if mapping else code


def _top_level_imports(tree: ast.Module) -> set[str]:
    """Import statements at the client's top level, normalised as `_TargetForward.imports_for` writes them."""
    out = set()
    for s in tree.body:
        if isinstance(s, ast.Import):
            out |= {f"import {a.name}" + (f" as {a.asname}" if a.asname else "") for a in s.names}
        elif isinstance(s, ast.ImportFrom) and s.module and not s.level:
            out |= {f"from {s.module} import {a.name}" + (f" as {a.asname}" if a.asname else "") for a in s.names}
    return out


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _branch(api, fn: ast.FunctionDef, loop: ast.For, tree: ast.Module, model: str, path: str, line: int,
            args: dict[str, str], dict_name: str, forward_name: str, guard: bool,
            taken: set[str], passed: set[str]) -> tuple[str, list[str], list[str]]:
    """(condition, body lines, names it binds) for one architecture, in the client's terms."""
    target = _TargetForward(api, model, path, line)
    client_params, target_params = _params(fn), _params(target.fn)
    mapping: dict[str, str] = {}
    for i, p in enumerate(target_params):
        if p in client_params:
            mapping[p] = p
        elif i < len(client_params):
            mapping[p] = client_params[i]
    if target_params and client_params:
        mapping[target_params[0]] = client_params[0]  # the receiver
    # the client's own values: its parameters and the names it already passes its layers (hidden_states,
    # residual); any other name vLLM computes is computed again, never assumed to be the client's same-named local
    keep = set(mapping) | (passed & set().union(*(_stores(s) for s in target.before)))
    values = {a: ast.parse(v, mode="eval").body for a, v in args.items()}
    stmts = target.slice_for(list(values.values()), keep)
    bound = set().union(*(_stores(s) for s in stmts)) if stmts else set()
    free = set().union(*(_loads(n) for n in [*stmts, *values.values()])) - bound - keep - set(dir(builtins))
    imports = [i for i in target.imports_for(free) if i not in _top_level_imports(tree)]
    imported = {i.split()[-1] for i in imports}
    clash = (bound | imported) & taken
    if clash:
        raise Untranslatable(f"{model}.forward's {sorted(clash)} would rebind the client's own names")
    mod, qual = target.forward_id()
    cond = f"({forward_name}.__module__, {forward_name}.__qualname__) == (\n    {json.dumps(mod)}, {json.dumps(qual)}\n)"
    if guard:
        first = _first_layer(loop.iter)
        if first is None:
            raise Untranslatable("cannot tell which layer the client's loop visits first (for the signature guard)")
        names = sorted(args)
        params = f"inspect.signature({first}.forward).parameters"
        cond += f" and {json.dumps(names[0])} in {params}" if len(names) == 1 else \
            f" and {{{', '.join(map(json.dumps, names))}}} <= {params}.keys()"
    body = list(imports)
    body += [_rename(target.source_of(s), mapping).rstrip("\n") for s in stmts]
    body += [f"{dict_name}[{json.dumps(a)}] = {_rename(ast.unparse(v), mapping)}" for a, v in values.items()]
    return cond, body, sorted(bound | imported)


def _plan(api, source: str, findings: list[Finding], guard: bool) -> tuple[str, list[str]]:
    """(new source, notes): the client's loop gets the branches, its layer call the dict."""
    tree = ast.parse(source)
    f0 = findings[0]
    call = next((n for n in walk(tree) if isinstance(n, ast.Call) and n.lineno == f0.client.line
                 and n.col_offset + 1 == (f0.client.col or n.col_offset + 1)), None)
    if call is None:
        raise Untranslatable("no layer call at the reported location")
    fns = [n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _contains(n, call)]
    fn = min(fns, key=lambda n: sum(1 for _ in walk(n)), default=None)
    loop = _layer_loop(fn, call) if fn else None
    if loop is None:
        raise Untranslatable("the layer call is not inside a loop over the layers")
    taken = {n.id for n in walk(fn) if isinstance(n, ast.Name)} | set(_params(fn))
    passed = {v.id for v in [*call.args, *(k.value for k in call.keywords)] if isinstance(v, ast.Name)}
    dict_name = _fresh("layer_kwargs", taken)
    forward_name = _fresh("vllm_forward", taken | {dict_name})
    taken |= {dict_name, forward_name}
    per_model: dict[tuple[str, str, int], dict[str, str]] = {}
    for f in findings:
        for c in f.details.get("calls") or []:
            per_model.setdefault((c["model"], c["path"], c["line"]), {})[f.details["argument"]] = c["value"]
    lines, notes, where = [], [], []
    for k, ((model, path, line), args) in enumerate(sorted(per_model.items())):
        cond, body, bound = _branch(api, fn, loop, tree, model, path, line, args, dict_name, forward_name, guard, taken,
                                    passed)
        taken |= set(bound)
        lines.append(f"{'if' if k == 0 else 'elif'} {cond}:")
        lines += [textwrap.indent(b, "    ") for b in body]
        where.append(f"{model}.forward, {path}:{line}")
        notes.append(f"{', '.join(sorted(args))} for {model} as {path}:{line} passes {'them' if len(args) > 1 else 'it'}")
    indent = source.splitlines()[loop.lineno - 1][:loop.col_offset]
    block = [f"{MARK}: pass the decoder layers what vLLM's own model forward",
             f"# passes them ({'; '.join(where)})",
             f"{dict_name} = {{}}",
             f"{forward_name} = type({_params(fn)[0]}).forward  # vLLM's: this replay replaces the instance's",
             *lines]
    text = "".join(textwrap.indent(b, indent) + "\n" for b in block)
    # the layer call gets the dict (after any keyword, before any **)
    new = _add_star_arg(source, call, dict_name)
    out = new.splitlines(keepends=True)
    out[loop.lineno - 1:loop.lineno - 1] = [text]
    module = cst.parse_module("".join(out))
    if guard and "import inspect" not in _top_level_imports(tree):
        module = insert_after_imports(module, cst.parse_statement("import inspect\n"))
    return module.code, notes


def _with_star_arg(args: list[cst.Arg], name: str) -> list[cst.Arg]:
    """Append `**name`, taking over the last argument's trailing comma and the whitespace before `)`."""
    new = cst.Arg(value=expr(name), star="**")
    if not args:
        return [new]
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # `a=1,` then a newline: the new argument gets the same comma
        new = new.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(whitespace_after_arg=cst.SimpleWhitespace(""))
    else:
        new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                                 whitespace_after_arg=cst.SimpleWhitespace(""))
    return [*args[:-1], last, new]


class _StarArg(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, line: int, col: int, name: str):
        super().__init__()
        self.line, self.col, self.name, self.done = line, col, name, False

    def leave_Call(self, original, updated):
        pos = self.get_metadata(cst.metadata.PositionProvider, original)
        if self.done or (pos.start.line, pos.start.column) != (self.line, self.col):
            return updated
        self.done = True
        return updated.with_changes(args=_with_star_arg(list(updated.args), self.name))


def _add_star_arg(source: str, call: ast.Call, name: str) -> str:
    tr = _StarArg(call.lineno, call.col_offset, name)
    module = cst.metadata.MetadataWrapper(cst.parse_module(source)).visit(tr)
    if not tr.done:
        raise Untranslatable("cannot find the layer call in the client's source")
    return module.code


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    outcome = FixOutcome(source)
    groups: dict[tuple[int, int | None], list[Finding]] = {}
    for f in findings:
        if not f.details.get("calls") or f.client is None:
            outcome.skipped.append((f, "vLLM's forward passes nothing new here (a parameter the layers dropped): "
                                       "remove the argument by hand"))
            continue
        groups.setdefault((f.client.line, f.client.col), []).append(f)
    # bottom-up, so that the lines of the calls still to do do not move
    for _key, group in sorted(groups.items(), key=lambda kv: -kv[0][0]):
        try:
            outcome.source, notes = _plan(ctx.api, outcome.source, group, ctx.guard)
        except Untranslatable as exc:
            outcome.skipped += [(f, str(exc)) for f in group]
            continue
        outcome.applied += group
        outcome.notes.extend(notes)
    return outcome
