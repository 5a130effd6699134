"""DC106 forward-replay-drift: a replaced `forward` calls decoder layers differently from vLLM's own.

speculators replaces the base model's `forward` (bound with `types.MethodType`) and calls each
decoder layer itself: `layer(hidden_states=..., positions=..., residual=...)`. When vLLM's own
`forward` for an architecture passes more to its layers, the replay drops it: from 0.12,
`DeepseekV2Model.forward` computes `llama_4_scaling` and passes it to every
`DeepseekV2DecoderLayer` (DeepSeek V2/V3, Kimi K2...). With a default of None the replay runs but
computes something else (the seed's Kimi-K2.5 run); without a default it raises `TypeError`.

The probe finds the target's model classes that match the replaced function's receiver (they
define the `self.*` names it uses), reads the layer call in their `forward`, and reports the
arguments the replay does not pass, naming the architectures affected. Each finding carries, per
architecture, where vLLM's layer call is and the expression it passes (`details["calls"]`), which the
`replay-layer-arguments` codemod translates into the client's terms. A replay that passes a locally
built dict (`layer(..., **layer_kwargs)` with `layer_kwargs["name"] = ...`) passes those names.
"""

from __future__ import annotations

import ast
import re

from driftcheck.vllm_model import bodies
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.client_model.uses import loc_of
from driftcheck.rules.tbsigs import Fact, Signature
from driftcheck.astnodes import walk

FIX_ID = "replay-layer-arguments"
RULE = Rule("DC106", "forward-replay-drift", "Replaced forward passes decoder layers fewer arguments than vLLM's", "warning",
            fix=FIX_ID, kind="behaviour", baseline=True, reads_release=True)

# vLLM's forward loops over its decoder layers (`for layer in islice(self.layers, ...)`, `for i, decoder_layer in
# enumerate(self.layers)`) and calls the loop variable; the variable's name is read from the loop, not assumed.
LAYER_LOOP = re.compile(r"^\s*for\s+([\w\s,()]+?)\s+in\s+[^\n]*\blayers\b", re.M)


def _layer_call_re(body: str) -> re.Pattern:
    names = []
    for m in LAYER_LOOP.finditer(body):
        names += [n for n in re.findall(r"\w+", m.group(1)) if not n.isdigit()][-1:]
    names = list(dict.fromkeys(names + ["layer"]))
    return re.compile(r"=\s*(" + "|".join(re.escape(n) for n in names) + r")\s*\(")


def dict_keys(fn: ast.AST, name: str) -> set[str] | None:
    """The keys a local dict gets in `fn` (`name = {...}` / `dict(...)` with constant keys, then `name["k"] = ...`),
    or None when it gets a key that is not a string constant or is rebound from something else."""
    keys: set[str] = set()
    for node in walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    v = node.value
                    if isinstance(v, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in v.keys):
                        keys |= {k.value for k in v.keys}
                    elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "dict" and not v.args \
                            and all(k.arg for k in v.keywords):
                        keys |= {k.arg for k in v.keywords}
                    else:
                        return None
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name:
                    if not (isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)):
                        return None
                    keys.add(t.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == name and node.func.attr in ("update", "setdefault", "__setitem__"):
            return None
    return keys


def client_layer_calls(bound) -> list[tuple[ast.Call, set[str], bool]]:
    """Calls of the loop variable in `for ... in ...self.layers...` loops: (call, names passed, uses ** we cannot read)."""
    out = []
    for node in walk(bound.node):
        if not isinstance(node, (ast.For, ast.AsyncFor)) or ".layers" not in ast.unparse(node.iter):
            continue
        loop_names = {n.id for n in walk(node.target) if isinstance(n, ast.Name)}
        for call in walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in loop_names:
                names = {k.arg for k in call.keywords if k.arg}
                names |= {a.id for a in call.args if isinstance(a, ast.Name)}
                opaque = False
                for k in call.keywords:
                    if k.arg is None:
                        keys = dict_keys(bound.node, k.value.id) if isinstance(k.value, ast.Name) else None
                        if keys is None:
                            opaque = True
                        else:
                            names |= keys
                out.append((call, names, opaque))
    return out


def _balanced(text: str, start: int) -> str | None:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def target_layer_call(text: str, start_line: int, end_line: int) -> tuple[list[str], dict[str, str], int] | None:
    """(positional arg sources, {keyword: value source}, line) of `... = layer(...)` in a forward body."""
    lines = text.splitlines()
    body = "\n".join(lines[start_line - 1:end_line])
    m = _layer_call_re(body).search(body)
    if not m:
        return None
    args = _balanced(body, m.end() - 1)
    if args is None:
        return None
    try:
        call = ast.parse("f" + args, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call):
        return None
    positional = [ast.unparse(a) for a in call.args if not isinstance(a, ast.Starred)]
    keywords = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg}
    return positional, keywords, start_line + body.count("\n", 0, m.start())


def _signature_at(text: str, line: int):
    """The Signature of the `def` starting at `line`, parsed from its header text alone (fast: no module parse)."""
    import textwrap

    from driftcheck.vllm_model.signatures import signature_from_args

    lines = text.splitlines()
    header: list[str] = []
    depth = 0
    for raw in lines[line - 1: line + 60]:
        header.append(raw)
        depth += raw.count("(") - raw.count(")")
        if depth <= 0 and raw.rstrip().endswith(":"):
            break
    try:
        fn = ast.parse(textwrap.dedent("\n".join(header)) + "\n    pass\n").body[0]
    except (SyntaxError, IndexError):
        return None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return signature_from_args(fn.args, "", line)


class _Forward:
    """Just what this probe needs of a layer's forward: its signature."""

    def __init__(self, signature):
        self.signature = signature


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # what `\\w` matches in a str pattern


def _names_word(text: str, word: str) -> bool:
    """`re.search(rf"\\b{re.escape(word)}\\b", text)` for an identifier `word`, by `str.find`: a model file's every
    class name asked of every model class compiled a regex each (a fifth of DC106 on a first scan)."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or not _word_char(text[at - 1])) and (end == len(text) or not _word_char(text[end])):
            return True
        at = text.find(word, at + 1)
    return False


def _decoder_forward(index, path: str, model_name: str, model_text: str):
    """The forward of the decoder-layer class this model uses (named in its text), read from the text index."""
    classes = index.classes_in(path)
    used = [c for c in classes if c.name != model_name and "forward" in c.members and _names_word(model_text, c.name)]
    for suffix in ("DecoderLayer", "Layer", "Block"):
        layers = [c for c in used if c.name.endswith(suffix)]
        if len(layers) == 1:
            text = index.blob(path).decode("utf-8", errors="replace")
            sig = _signature_at(text, layers[0].members["forward"])
            return _Forward(sig) if sig is not None else None
    return None


def layer_arguments(api, index, path: str, cls, wanted: list[str]):
    """({argument: required?}, line of the layer call, the layer's forward or None, {argument: the expression
    passed}) for `cls.forward`. Read from the file's text alone, so answered once per file content (a release's
    unchanged model files, and the baseline's, are not read again for the next release)."""
    return index.per_content("forward_replay:layer_arguments", path, lambda: _layer_arguments(index, path, cls, wanted),
                             cls.name, cls.line, tuple(wanted))


def _layer_arguments(index, path: str, cls, wanted: list[str]):
    if not all(n in cls.members for n in wanted) or "forward" not in cls.members:
        return None
    starts = sorted(line for line in cls.members.values() if line > cls.members["forward"])
    class_end = min([c.line - 1 for c in index.classes_in(path) if c.line > cls.line] or [10**9])
    end = min(starts[0] - 1 if starts else cls.members["forward"] + 200, class_end)
    text = index.blob(path).decode("utf-8", errors="replace")
    found = target_layer_call(text, cls.members["forward"], end)
    if found is None:
        return None
    positional, keywords, line = found
    model_text = "\n".join(text.splitlines()[cls.line - 1:class_end])
    forward = _decoder_forward(index, path, cls.name, model_text)
    names = list(positional)
    if forward is not None:
        params = [p for p in forward.signature.params if p.name != "self"]
        names = [params[i].name if i < len(params) else a for i, a in enumerate(positional)]
    values = {**dict(zip(names, positional)), **keywords}
    out: dict[str, bool] = {}
    for name in values:
        p = forward.signature.get(name) if forward is not None else None
        out[name] = p is not None and not p.has_default  # unknown layer signature: not provably required
    return out, line, forward, values


def check(ctx: ScanContext):
    # a forward stored only on a class of a package vLLM requires (`transformers.PreTrainedModel.forward = fn`) replays
    # that package's model, not vLLM's (TJ1)
    bound = [b for b in ctx.usage.bound if b.how != "worker-extension" and b.onto_foreign is None]
    calls = [(b, c) for b in bound for c in client_layer_calls(b)]
    if not calls:
        return
    baseline = ctx.baseline()
    if baseline is None:
        yield ctx.unknown(RULE, "a replaced forward calls decoder layers, but there is no baseline vLLM to tell which layer "
                          f"arguments are new ({ctx.baseline_note or 'unavailable'})", calls[0][0].loc, calls[0][0].name)
        return
    if baseline.version and baseline.version == ctx.api.version:
        return
    index, base_index = bodies.text_index_for(ctx.api), bodies.text_index_for(baseline)
    for b, (call, passed, star) in calls:
        if star:
            continue
        wanted = [n for n in ("layers", "start_layer", "end_layer") if n in b.self_names] or ["layers"]
        rarest = min(wanted, key=lambda n: len(index.files_mentioning(n)))
        missing: dict[str, list[tuple]] = {}
        rejected: dict[str, list[tuple]] = {}
        candidates = read = 0
        for cls in index.classes_defining(rarest):
            if all(n in cls.members for n in wanted) and "forward" in cls.members:
                candidates += 1
            now = layer_arguments(ctx.api, index, cls.path, cls, wanted)
            if now is None:
                continue
            read += 1
            args, line, forward, values = now
            old_cls = base_index.class_by_name(cls.path, cls.name)
            before = layer_arguments(baseline, base_index, cls.path, old_cls, wanted) if old_cls else None
            if before is None:
                continue  # the architecture is new: not a drift of the client's code
            for name in args:
                if name not in passed and name not in before[0]:
                    missing.setdefault(name, []).append((cls, line, args[name], values[name]))
            old_forward = before[2]
            if forward is not None and old_forward is not None and not forward.signature.accepts_any_keyword:
                for kw in passed:
                    if forward.signature.get(kw) is None and old_forward.signature.get(kw) is not None:
                        rejected.setdefault(kw, []).append((cls, line, True, None))
        if candidates and not read:
            # Model classes with these members and a forward exist, but no layer call could be read in any of
            # them: vLLM's forward changed shape (the anchor moved), so "nothing missing" would be a guess.
            yield ctx.unknown(RULE, f"{candidates} model class(es) of {ctx.version_label()} define {', '.join(wanted)} and "
                              "forward, but no decoder-layer call could be read in their forward: cannot tell which "
                              "layer arguments the replay misses", b.loc, b.name)
            continue
        for name, where in missing.items():
            archs = sorted({cls.name for cls, *_ in where})
            cls, line, required, _value = where[0]
            yield ctx.finding(
                RULE,
                f"the replaced forward `{b.name}` calls each decoder layer without '{name}', which {ctx.version_label()}'s own "
                f"forward passes for {', '.join(archs[:6])}{' and more' if len(archs) > 6 else ''} (it did not in vLLM "
                f"{baseline.version}): "
                + ("TypeError (it is required)." if required else "the layers then run with its default, so these "
                   "architectures compute different hidden states than vLLM does."),
                loc_of(b.file, call), ctx.vllm_location(cls.path, line), f"{cls.name}.forward(layer(... {name}))",
                when="call", severity="error" if required else None, argument=name, architectures=archs,
                calls=[{"model": c.name, "path": c.path, "line": ln, "value": v} for c, ln, _req, v in where],
            )
        for name, where in rejected.items():
            archs = sorted({cls.name for cls, *_ in where})
            cls, line, _required, _value = where[0]
            yield ctx.finding(
                RULE,
                f"the replaced forward `{b.name}` passes '{name}=' to each decoder layer, a parameter the layers of "
                f"{', '.join(archs[:6])}{' and more' if len(archs) > 6 else ''} no longer have in {ctx.version_label()} "
                f"(they did in vLLM {baseline.version}): TypeError.",
                loc_of(b.file, call), ctx.vllm_location(cls.path, line), f"{cls.name}.forward(layer({name}=))",
                when="call", severity="error", argument=name, architectures=archs, fix=None,
            )


# ------------------------------------------------------------------------------------- traceback signatures
SIGNATURES = (
    Signature(lambda m, _tb: "a replaced model forward calls decoder layers differently from this vLLM's own forward "
              f"('{m.group(1) or m.group(2)}').",
              "vLLM's own model forward passes its decoder layers arguments the replaced forward does not.",
              message=r"forward\(\) (?:missing \d+ required positional argument: '(\w+)'|got an unexpected keyword argument '(\w+)')",
              code=r"\b(?:\w+_)?layer\(", fix=None, priority=90,
              facts=(Fact("DeepseekV2Model.forward passes llama_4_scaling to every DeepseekV2DecoderLayer from vLLM 0.12.",
                          when=r"\bllama_4_scaling\b"),)),
)
