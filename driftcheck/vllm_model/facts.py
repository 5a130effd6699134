"""Facts: named questions about a vLLM tree that several rules (and their fixes and traceback signatures) share.

A rule never imports another rule and a fix never imports another fix: what both need to know about vLLM lives
here, under a name that says what it asks. Every answer is read from the target's code (bodies, defaults,
docstrings, raise messages), never from its version number. Each docstring says what None means; where an
answer depends on an anchor (a class path, an error text) the rule that asks checks the anchor is still there
and reports `unknown` with the reason when it moved, instead of passing.

Questions:
  - block_hash_requirement(api): does `BlockPool.cache_full_blocks` need `request.block_hashes`, and how does it fail?
  - prefix_caching_default(api) / prefix_caching_state(ctx): is prefix caching on by default / for this client?
  - single_reply(api, executor): does `collective_rpc(..., unique_reply_rank=)` return one reply instead of a list?
  - indexed_replies(file, call) / executor_of(ctx, call): where the client indexes such a reply, on which executor
  - two_phase_state_error(api): where the model runner raises "sample_tokens() must be called", if it does
  - has_sample_tokens(api): does any executor/worker/runner define `sample_tokens` (the two-phase protocol)?
  - empty_output_returns_early(api): does the runner's execute_model return before keeping state when handed
    `SchedulerOutput.make_empty()`?
  - precondition_index(api) / engine_call_site(api, name): which "not ... yet" raises name an engine-core setup
    step, and where vLLM's engine calls that step
"""

from __future__ import annotations

import ast
import re

from driftcheck.vllm_model import bodies
from driftcheck.vllm_model.class_summary import split_union
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.astnodes import functions_at, nodes_of, walk

# ------------------------------------------------------------------------------------------------ anchors
BLOCK_POOL = "vllm.v1.core.block_pool.BlockPool"
REQUEST = "vllm.v1.request.Request"
CACHE_CONFIG = "vllm.config.CacheConfig"
DEFAULT_EXECUTOR = "vllm.v1.executor.multiproc_executor.MultiprocExecutor"
STATE_ERROR = "sample_tokens() must be called"


# ------------------------------------------------------------------------------------ prefix caching, block hashes
def block_hash_requirement(api) -> tuple[str, int, str] | None:
    """(path, line, how) where BlockPool.cache_full_blocks needs request.block_hashes; how is "assert",
    "assert-with-message", "index" or "none" (it does not need them). None: cache_full_blocks is not found."""
    resolved, fn = bodies.method(api, BLOCK_POOL, "cache_full_blocks")
    if fn is None:
        return None
    asserts = bodies.find_asserts(fn, "request.block_hashes", "len(")
    if asserts:
        a = asserts[0]
        how = "assert" if a.msg is None else "assert-with-message"
        return resolved.path, a.lineno, how
    for node in walk(fn):
        if isinstance(node, ast.Attribute) and node.attr == "block_hashes" and isinstance(node.value, ast.Name) and node.value.id == "request":
            # The hashes are indexed per new full block: an empty list ends in IndexError.
            subscripts = [s for s in walk(fn) if isinstance(s, ast.Subscript) and "block_hash" in ast.unparse(s.value)]
            line = subscripts[-1].lineno if subscripts else node.lineno
            return resolved.path, line, "index"
    return "", 0, "none"


def is_request_class(qualname: str) -> bool:
    """A vLLM v1 `Request` class, wherever the target defines it (the anchor path, or a module it moved to)."""
    return qualname == REQUEST or (qualname.startswith("vllm.v1.") and qualname.rsplit(".", 1)[-1] == "Request")


def prefix_caching_default(api) -> "bodies.FieldDefault | None":
    """CacheConfig.enable_prefix_caching's default in the target (None: no CacheConfig)."""
    return bodies.constructor_default(api, CACHE_CONFIG, "enable_prefix_caching")


def prefix_caching_state(ctx, any_call: bool = False) -> tuple[str, object, str]:
    """('on'|'off'|'maybe', the client's CacheConfig call or None, explanation): is prefix caching on for this client?
    `any_call`: with no CacheConfig of the client's, a call anywhere that passes `enable_prefix_caching=False` turns it
    off (for DC102's in-process capture, which runs in the engine those calls build; DC104 asks about the client's own
    block pools, which such a call does not reach)."""
    default = prefix_caching_default(ctx.api)
    default_value = bodies.literal_src(default.value) if default and default.param else bodies.NOT_LITERAL
    calls = [c for c in ctx.usage.calls if c.kind == "construct" and c.target.qualname.endswith(".CacheConfig")]
    for call in calls:
        kw = bodies.keyword(call.node, "enable_prefix_caching")
        if kw is not None:
            value = bodies.literal(kw.value)
            if value is False:
                return "off", call, "the client passes enable_prefix_caching=False"
            if value is True:
                return "on", call, "the client passes enable_prefix_caching=True"
            return "maybe", call, f"the client passes enable_prefix_caching={ast.unparse(kw.value)}"
        if call.shape.star_kwargs:
            return "maybe", call, "the client passes **kwargs to CacheConfig"
    if not calls and any_call:
        # no CacheConfig of its own: the engine is built from `LLM(..., enable_prefix_caching=False)`, EngineArgs, or
        # a test helper that forwards its keywords (vLLM's own test hands it to its `vllm_runner` fixture)
        for file in ctx.usage.files:
            if "enable_prefix_caching" not in file.text:
                continue
            for node in nodes_of(file.tree, ast.keyword):
                if node.arg == "enable_prefix_caching" and bodies.literal(node.value) is False:
                    return "off", None, "the client passes enable_prefix_caching=False"
    where = "the client's CacheConfig(...) leaves" if calls else "the client builds no CacheConfig; the target's"
    if default_value is True:
        return "on", calls[0] if calls else None, f"{where} enable_prefix_caching at its default, True"
    if default_value in (False, None):
        return "off", calls[0] if calls else None, f"{where} enable_prefix_caching at its default, {default_value}"
    return "maybe", calls[0] if calls else None, "the default of CacheConfig.enable_prefix_caching is not a literal"


# ------------------------------------------------------------------------------------------ collective_rpc replies
def single_reply(api, executor: str = DEFAULT_EXECUTOR) -> tuple[str, int] | None:
    """Where the executor returns one reply for unique_reply_rank, or None if it returns a list."""
    resolved, fn = bodies.method(api, executor, "collective_rpc")
    if fn is None:
        return None
    for node in walk(fn):
        if isinstance(node, ast.IfExp) and isinstance(node.body, ast.Subscript):
            index = bodies.literal(node.body.slice)
            if index == 0 and ("rank" in ast.unparse(node.test)):
                return resolved.path, node.lineno
    doc = ast.get_docstring(fn) or ""
    if "single result" in doc and "unique_reply_rank" in doc:
        return resolved.path, fn.body[0].lineno
    return None


def indexed_replies(file, call: ast.Call) -> list[ast.Subscript]:
    """`collective_rpc(...)[i]`, or `r = collective_rpc(...); ... r[i]` in the same function."""
    tree = file.tree
    out: list[ast.Subscript] = []
    fn = bodies.enclosing_function(tree, call) or tree
    names: set[str] = set()
    for node in walk(fn):
        if isinstance(node, ast.Subscript) and node.value is call:
            out.append(node)
        if isinstance(node, ast.Assign) and node.value is call:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for node in walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names:
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                out.append(node)
    return out


def executor_of(ctx, call: ast.Call) -> str:
    """The executor class a client's collective_rpc call resolves to (the default executor when untyped)."""
    for use in ctx.usage.calls:
        if use.node is call and use.target.owner is not None:
            return use.target.owner.qualname
    return DEFAULT_EXECUTOR


def executor_found(api, executor: str) -> bool:
    return isinstance(api.resolve(executor), Resolved)


# ----------------------------------------------------------------------------------------- two-phase execution
def two_phase_state_error(api) -> tuple[str, int] | None:
    """Where the model runner raises "sample_tokens() must be called ...", or None when no such text exists."""
    return bodies.find_text(api, STATE_ERROR, prefer="worker/gpu_model_runner")


SCHEDULER_OUTPUT = "vllm.v1.core.sched.output.SchedulerOutput"


def empty_output_returns_early(api) -> tuple[str, int] | None:
    """(path, line) of the `return` the model runner's `execute_model` (the function raising the state error) takes
    before it keeps any state when its scheduler output schedules no tokens (`num = scheduler_output.
    total_num_scheduled_tokens` ... `if not num: ... return self.kv_connector_no_forward(...)`, 0.16.0
    gpu_model_runner.py:3351-3367), where `SchedulerOutput.make_empty()` builds one with `total_num_scheduled_tokens=0`.
    None when either is not read so: a client's `execute_model(SchedulerOutput.make_empty())` then owes no
    `sample_tokens()` (VA2)."""
    where = two_phase_state_error(api)
    if where is None or not _make_empty_schedules_nothing(api):
        return None
    rel, line = where
    tree = api.parse(rel)
    fns = functions_at(tree, line) if tree is not None else []
    if not fns:
        return None
    fn = max(fns, key=lambda n: n.lineno)  # the innermost
    if len(fn.args.args) < 2:
        return None
    param = fn.args.args[1].arg
    counts = {t.id for n in walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute)
              and n.value.attr == "total_num_scheduled_tokens" and isinstance(n.value.value, ast.Name)
              and n.value.value.id == param for t in n.targets if isinstance(t, ast.Name)}
    stores = [n.lineno for n in walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign))
              and any(isinstance(t, ast.Attribute) and t.attr == "execute_model_state"
                      for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
              and not (isinstance(n.value, ast.Constant) and n.value.value is None)]
    first_store = min(stores) if stores else None
    for node in walk(fn):
        if isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) \
                and isinstance(node.test.operand, ast.Name) and node.test.operand.id in counts and node.body \
                and isinstance(node.body[-1], ast.Return) and (first_store is None or node.lineno < first_store):
            return rel, node.body[-1].lineno
    return None


def _make_empty_schedules_nothing(api) -> bool:
    """`SchedulerOutput.make_empty()` returns `cls(..., total_num_scheduled_tokens=0, ...)`."""
    cls = api.resolve(SCHEDULER_OUTPUT)
    if not isinstance(cls, Resolved) or not cls.path:
        return False
    tree = api.parse(cls.path)
    for node in walk(tree) if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == SCHEDULER_OUTPUT.rsplit(".", 1)[-1]:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "make_empty":
                    return any(isinstance(c, ast.Call) and any(
                        k.arg == "total_num_scheduled_tokens" and isinstance(k.value, ast.Constant) and k.value.value == 0
                        for k in c.keywords) for c in walk(fn))
    return False


def has_sample_tokens(api) -> tuple[str, int] | None:
    """Where the target defines a `sample_tokens` method (executor, worker or runner), or None."""
    index = bodies.text_index_for(api)
    for rel in sorted(index.files_mentioning("def sample_tokens")):
        data = index.blob(rel)
        pos = data.find(b"def sample_tokens")
        return rel, data.count(b"\n", 0, pos) + 1
    return None


# ------------------------------------------------------------------------------------------ engine-core setup
NOT_YET = re.compile(r"\b(?:not|never)\b[^.]{0,60}?\b(?:yet|initiali[sz]ed|resolved|set up|been called)\b", re.I)
NAMED = re.compile(r"[(`']([a-z_][a-z0-9_]{3,})(?:\(\))?[)`']")


NOT_YET_BYTES = re.compile(rb"\b(?:not|never)\b[^\n]{0,60}?\b(?:yet|initiali[sz]ed|resolved|set up|been called)\b", re.I)


def precondition_index(api) -> dict[str, list[tuple[str, int, str, str]]]:
    """function name -> [(path, raise line, message, setup name)] for every "not ... yet" raise in the target.

    Text only (one byte-regex pass over the tree, no parsing), computed once per tree and kept with its text index."""
    index = bodies.text_index_for(api)
    return index.remember("engine_setup_precondition:v2", lambda: _scan_preconditions(index))


_NOT_YET_TAILS = (b"yet", b"initialized", b"initialised", b"resolved", b"set up", b"been called")
_NOT_YET_TAILS_STR = tuple(t.decode() for t in _NOT_YET_TAILS)
# A NOT_YET match starts 3-65 characters before its tail ("not" + a boundary ... "never" + 60 + a boundary), and is at
# most 5 + 60 + 11 characters long; the slack covers both.
_HEAD_BEFORE_TAIL = 70
_MATCH_LONGEST = 80
# The only characters Python's re.I folds onto a letter NOT_YET spells without lower() giving that letter (checked
# over every code point): a text holding one is searched in full.
_FOLDS_UNLIKE_LOWER = ("\u0130", "\u0131", "\u017f")


def _tail_starts(low) -> list[int]:
    """Where a NOT_YET tail starts in `low`, a lower-cased text (bytes or str), in order."""
    tails = _NOT_YET_TAILS if isinstance(low, bytes) else _NOT_YET_TAILS_STR
    out = []
    for tail in tails:
        at = low.find(tail)
        while at >= 0:
            out.append(at)
            at = low.find(tail, at + 1)
    return sorted(out)


def _near_tails(pattern: re.Pattern, text, tails: list[int]):
    """`pattern.finditer(text)` (a NOT_YET), searched only where a match can start: within _HEAD_BEFORE_TAIL before
    a tail. The regex cannot skip ahead (`\\b(?:not|never)` under re.I), so a whole-file finditer tried every position
    of every file; jumping over positions where no match can start gives the same matches (tests/probes/
    test_engine_setup_precondition.py holds it to finditer on three releases and on texts built to break it)."""
    pos = 0  # no match starts before this: the last one's end, or where the last region's search ended empty
    for tail in tails:
        lo, hi = max(pos, tail - _HEAD_BEFORE_TAIL), tail
        while lo <= hi:
            # the end lies past any match that starts by `hi`, so a `\b` after a tail sees the next character
            m = pattern.search(text, lo, hi + _MATCH_LONGEST)
            if m is None or m.start() > hi:
                pos = max(pos, hi + 1)
                break
            yield m
            pos = lo = m.end()


def _scan_preconditions(index) -> dict[str, list[tuple[str, int, str, str]]]:
    out: dict[str, list] = {}
    for rel, data in index.blobs().items():
        if b"raise" not in data:
            continue
        for function, entry in index.per_content("preconditions", rel, lambda: _file_preconditions(rel, data)):
            if entry not in out.setdefault(function, []):
                out[function].append(entry)
    return out


# Line breaks `str.splitlines` honours besides "\n" (and "\r\n"), UTF-8 encoded: where one is, a line counted by
# "\n" is not the line `_raise_around` reads, so no window is drawn (`_near_raise`),
_NOT_A_BREAK = bytes(b for b in range(256) if b not in b"\r\x0b\x0c\x1c\x1d\x1e")  # deleted: what is left is a break
# and, for the search of lower-cased bytes, the letters NOT_YET's re.I folds onto ASCII that bytes.lower() does not
_WIDE_ODDITIES = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", *(c.encode() for c in _FOLDS_UNLIKE_LOWER))


_NOT_A_LEAD = bytes(b for b in range(256) if b not in {w[0] for w in _WIDE_ODDITIES})


def _unwindowed(data: bytes) -> bool:
    """Whether `_near_raise` cannot decide from lower-cased bytes and "\n" lines (one pass for the one-byte breaks and
    one for the lead bytes of the others: a substring search each cost as much as the rest of it)."""
    if data.translate(None, _NOT_A_BREAK):
        return True
    if data.isascii():
        return False
    leads = set(data.translate(None, _NOT_A_LEAD))
    return any(w[0] in leads and w in data for w in _WIDE_ODDITIES)
_RAISE_REACH = 8  # `_raise_around` looks at the match's line and the 7 above it


def _near_raise(data: bytes) -> bool:
    """Whether a NOT_YET tail lies where a match that `_raise_around` keeps can end: from the start of a line holding
    "raise " to _MATCH_LONGEST past the 7 lines below it. False is exact (no entry can come from the file); it lets
    a file skip lowering and searching its whole text, which every release's first scan did for each file holding
    the word `raise` (a tenth of a 0.32.0 scan's CPU)."""
    if _unwindowed(data):
        return True
    at = data.find(b"raise ")
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = _LINES_BELOW.match(data, at).end()  # to the end of the 7th line below (or the file's end)
        window = data[start:end + _MATCH_LONGEST].lower()
        for tail in _NOT_YET_TAILS:
            if tail in window:
                return True
        at = data.find(b"raise ", end)
    return False


_LINES_BELOW = re.compile(rb"[^\n]*(?:\n[^\n]*){0,%d}" % (_RAISE_REACH - 1))


def _file_preconditions(rel: str, data: bytes) -> list[tuple[str, tuple[str, int, str, str]]]:
    """(function, (path, raise line, message, setup name)) for each "not ... yet" raise of one file, in order."""
    if not _near_raise(data):
        return []
    low = data.lower()  # ASCII folding, as NOT_YET_BYTES's re.I on bytes
    if not (b"not" in low or b"never" in low):
        return []
    tails = _tail_starts(low)
    if not tails or next(_near_tails(NOT_YET_BYTES, data, tails), None) is None:
        return []
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    folded = None if any(c in text for c in _FOLDS_UNLIKE_LOWER) else text.lower()
    if folded is None or len(folded) != len(text):
        matches = NOT_YET.finditer(text)
    else:
        matches = _near_tails(NOT_YET, text, _tail_starts(folded))
    out = []
    for m in matches:
        hit = _raise_around(lines, text.count("\n", 0, m.start()))
        if hit is None:
            continue
        raise_line, message = hit
        function = _enclosing_def(lines, raise_line)
        if function is None:
            continue
        # names in the message's own words, not inside an f-string's `{...}` (`{', '.join(unsupported)}`)
        for setup in NAMED.findall(re.sub(r"\{[^{}]*\}", "", message)):
            out.append((function, (rel, raise_line + 1, message, setup)))
    return out


_STRING = re.compile(r"""[rbuf]*(["'])(.*?)(?<!\\)\1""")


def _raise_around(lines: list[str], index: int) -> tuple[int, str] | None:
    """(0-based line of the `raise`, its message's string pieces) when line `index` is inside a raise's message."""
    for back in range(index, max(index - 8, -1), -1):
        stripped = lines[back].lstrip()
        if stripped.startswith("raise "):
            indent = len(lines[back]) - len(stripped)
            pieces = []
            for i in range(back, min(back + 12, len(lines))):
                line = lines[i]
                if i > back and (not line.strip() or len(line) - len(line.lstrip()) <= indent):
                    break
                pieces += [m.group(2) for m in _STRING.finditer(line)]
            message = "".join(pieces)
            return (back, message) if NOT_YET.search(message) else None
        if back < index and (not stripped or stripped.startswith(("def ", "class ", "if ", "return "))):
            return None
    return None


def _enclosing_def(lines: list[str], index: int) -> str | None:
    indent = len(lines[index]) - len(lines[index].lstrip())
    for back in range(index - 1, -1, -1):
        line = lines[back]
        m = re.match(r"(\s*)(?:async\s+)?def\s+(\w+)", line)
        if m and len(m.group(1)) < indent:
            return m.group(2)
    return None


def engine_call_site(api, name: str) -> tuple[str, int] | None:
    """Where vLLM's own code (its engine first) calls `name(...)`: the recipe a hand-built engine must copy."""
    index = bodies.text_index_for(api)
    needle = f"{name}(".encode()
    for rel in sorted(index.files_mentioning(name), key=lambda r: ("/engine/" not in r, r)):
        data = index.blob(rel)
        for m in re.finditer(re.escape(needle), data):
            line_start = data.rfind(b"\n", 0, m.start()) + 1
            if data[line_start:m.start()].lstrip().startswith((b"def ", b"async def ")):
                continue  # `    def eos_token_id(`: its definition (strip() took the space `def ` ends with: QE2)
            if m.start() and (data[m.start() - 1:m.start()].isalnum() or data[m.start() - 1:m.start()] == b"_"):
                continue  # the tail of a longer name: `get_packed_modules_mapping(` is no call of `packed_modules_mapping` (XC)
            return rel, data.count(b"\n", 0, m.start()) + 1
    return None


def setup_assigns(api, name: str) -> set[str]:
    """The attributes vLLM's setup function `name` assigns (`resolve_kv_cache_layout` sets
    `cache_config.kv_cache_layout`): a client that assigns one of them itself may have done the setup."""
    index = bodies.text_index_for(api)

    def compute():
        out: set[str] = set()
        for rel in index.files_mentioning(name):
            data = index.blob(rel)
            if f"def {name}(".encode() not in data:
                continue
            try:
                tree = ast.parse(data)
            except (SyntaxError, ValueError):
                continue
            for fn in walk(tree):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == name:
                    out |= {t.attr for n in walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Attribute)}
        return sorted(out)

    return set(index.remember(f"setup-assigns:v1:{name}", compute))


# bases outside vLLM that add no instance methods: the ABC machinery and typing's generics
PLAIN_EXTERNAL_BASES = frozenset({"builtins.object", "abc.ABC", "typing.Generic"})


def mro_defines_any(api, cls: Resolved, names: tuple[str, ...],
                    plain: frozenset[str] = PLAIN_EXTERNAL_BASES) -> bool | None:
    """Whether a class of `cls`'s MRO defines one of `names` (as a method or a class attribute); None when that cannot
    be known: a base driftcheck does not read (outside vLLM and not in `plain`), a dynamic `__getattr__`, a class it
    could not summarise. What DC113 (containers' protocol methods) and DC116 (`__call__`) ask of the target."""
    order, is_open, externals = api.mro(cls)
    if is_open or not set(externals) <= plain:
        return None
    for c in order:
        ci = c.cls
        if ci is None or ci.dynamic_attrs:
            return None
        if any(n in ci.methods or n in ci.class_attrs for n in names):
            return True
    return False


VALUE_TYPES = {"int": "int", "float": "float", "bool": "bool", "str": "str", "bytes": "bytes", "None": "NoneType",
               "list": "list", "dict": "dict", "set": "set", "frozenset": "frozenset", "tuple": "tuple",
               "List": "list", "Dict": "dict", "Set": "set", "Tuple": "tuple", "FrozenSet": "frozenset"}


STRUCTURAL_BASES = PLAIN_EXTERNAL_BASES | {"typing.Protocol", "typing_extensions.Protocol"}


def value_type_without(api, resolved: Resolved, expr: str, dunder: str,
                       plain: frozenset[str] = PLAIN_EXTERNAL_BASES) -> str | None:
    """The type name Python's TypeError would say when a value annotated `expr` (in `resolved`'s module) is used in a
    way that needs `dunder`: called (`__call__`, DC116) or awaited (`__await__`, DC118). None when it may have it or
    is not known: a generic, `Any`, a type variable, a class from outside vLLM, one with a base driftcheck does not read
    (a `torch.nn.Module` is callable). With `plain=STRUCTURAL_BASES` a vLLM Protocol counts by what it declares, though
    an object that conforms to it may have more."""
    names: list[str] = []
    for part in split_union(expr):
        part = part.strip().strip("'\"")
        head = part.split("[", 1)[0].strip()
        if head.startswith("typing."):
            head = head[len("typing."):]
        if head in VALUE_TYPES:
            names.append(VALUE_TYPES[head])
            continue
        if "[" in part or resolved.module is None:
            return None
        cls = api.class_from_annotation(resolved.module, part)
        if not isinstance(cls, Resolved) or cls.kind != "class" or cls.cls is None:
            return None
        if mro_defines_any(api, cls, (dunder,), plain) is not False:
            return None  # it has it, or that is not known
        names.append(cls.qualname.rsplit(".", 1)[-1])
    real = [n for n in names if n != "NoneType"] or names
    return real[0] if real else None
