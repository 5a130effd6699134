"""`driftcheck explain`: turn a pasted traceback into the vLLM drift behind it.

A traceback is parsed into frames and the final exception (vLLM's `Worker failed with error
'...'` wrappers are unwrapped). Each known drift is a `Pattern`: a rule id, a matcher over the
exception and frames, the vLLM change behind it, the fix id, and an optional confirmation that
reads a target vLLM's sources (`--vllm`). Patterns are tried in order; the specific ones (a frame
in `cache_full_blocks`, a replayed decoder layer) come before the generic ones (any unexpected
keyword argument).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
EXC_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration)\w*)(?::\s?(?P<msg>.*))?$")
# Terminal escape sequences (colours from rich/IPython/pytest tracebacks, cursor moves, OSC hyperlinks):
# CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ESC \`, and two-character `ESC x` escapes.
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
WORKER_WRAP = re.compile(r"Worker failed with error '(?P<inner>.*?)'(?:, please check|$)", re.S)


@dataclass
class Frame:
    file: str
    line: int
    func: str
    code: str = ""


@dataclass
class ParsedTraceback:
    frames: list[Frame]
    exc_type: str
    message: str
    all_text: str
    inner: str | None = None  # message wrapped by "Worker failed with error '...'"

    @property
    def messages(self) -> str:
        return "\n".join(m for m in (self.message, self.inner) if m)


@dataclass
class Diagnosis:
    rule: str
    name: str
    message: str
    vllm_change: str
    fix: str | None
    frame: Frame | None = None
    confirmed: bool | None = None  # None: not checked (no --vllm)
    evidence: str | None = None

    def to_json(self) -> dict:
        out = {"rule": self.rule, "name": self.name, "message": self.message, "vllm_change": self.vllm_change,
               "fix": self.fix, "confirmed": self.confirmed}
        if self.frame:
            out["frame"] = {"file": self.frame.file, "line": self.frame.line, "func": self.frame.func, "code": self.frame.code}
        if self.evidence:
            out["evidence"] = self.evidence
        return out


class NotATraceback(ValueError):
    pass


def parse_traceback(text: str) -> ParsedTraceback:
    text = ANSI_RE.sub("", text)  # a coloured traceback reads like a plain one
    lines = text.replace("\r\n", "\n").splitlines()
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines:
        if line.lstrip().startswith("Traceback (most recent call last)"):
            current = []
            blocks.append(current)
            continue
        if current is not None:
            current.append(line)
    if not blocks:
        # A bare exception line (e.g. pasted from a log) still counts, if it looks like one.
        for line in reversed(lines):
            m = EXC_RE.match(_strip_log_prefix(line).strip())
            if m:
                return _with_inner(ParsedTraceback([], m.group("type"), (m.group("msg") or "").strip(), text))
        raise NotATraceback("no Python traceback or exception line found in the input")
    frames: list[Frame] = []
    exc_type, message = "", ""
    for block in blocks:
        block_frames: list[Frame] = []
        tail: list[str] = []
        i = 0
        while i < len(block):
            raw = _strip_log_prefix(block[i])
            m = FRAME_RE.match(raw)
            if m:
                code = ""
                if i + 1 < len(block) and not FRAME_RE.match(_strip_log_prefix(block[i + 1])):
                    nxt = _strip_log_prefix(block[i + 1])
                    if nxt.startswith((" ", "\t")) and not re.match(r"^\s*\^+\s*$", nxt):
                        code = nxt.strip()
                        i += 1
                block_frames.append(Frame(m.group("file"), int(m.group("line")), m.group("func"), code))
                tail = []
            elif raw.strip() and not re.match(r"^\s*[\^~]+\s*$", raw):
                tail.append(raw)
            i += 1
        frames.extend(block_frames)
        if exc_type and block_frames and block_frames[-1].func in ("__del__", "__exit__"):
            continue  # an error raised while tearing down after the real one ("Exception ignored in ... __del__")
        for j, line in enumerate(tail):
            m = EXC_RE.match(line.strip())
            if m:
                exc_type = m.group("type")
                message = "\n".join([(m.group("msg") or "").strip()] + [t.strip() for t in tail[j + 1:]]).strip()
                break
    if not exc_type:
        raise NotATraceback("a traceback header was found but no exception line follows it")
    return _with_inner(ParsedTraceback(frames, exc_type, message, text))


def _strip_log_prefix(line: str) -> str:
    """Drop vLLM's `(EngineCore_DP0 pid=123) ERROR 01-01 12:00:00 [core.py:1] ` style prefixes."""
    return re.sub(r"^\((?:[\w.]+ )?pid=\d+\)\s*(?:[A-Z]+\s+\d\d-\d\d [\d:]+\s+\[[^\]]*\]\s?)?", "", line)


def _with_inner(tb: ParsedTraceback) -> ParsedTraceback:
    m = WORKER_WRAP.search(tb.all_text)
    if m:
        tb.inner = m.group("inner")
    return tb


# ----------------------------------------------------------------------------------- patterns
@dataclass
class Pattern:
    rule: str
    name: str
    match: Callable[[ParsedTraceback], "tuple[str, Frame | None] | None"]  # -> (message, frame)
    vllm_change: str
    fix: str | None
    confirm: Callable[[object, ParsedTraceback], "tuple[bool, str]"] | None = None


def _frame(tb: ParsedTraceback, func: str | None = None, file_suffix: str | None = None) -> Frame | None:
    for f in reversed(tb.frames):
        if (func is None or f.func == func) and (file_suffix is None or f.file.replace("\\", "/").endswith(file_suffix)):
            return f
    return None


LIBRARY_PARTS = ("/vllm/", "/torch/", "/pydantic/", "/pydantic_core/", "/transformers/", "/driftcheck/runner/",
                 "/multiprocessing/", "/concurrent/")


def _client_frame(tb: ParsedTraceback) -> Frame | None:
    """The innermost frame outside vLLM, its libraries, the runner and the standard library: the user's line."""
    for f in reversed(tb.frames):
        path = f.file.replace("\\", "/")
        if any(part in path for part in LIBRARY_PARTS) or ("/lib/python3" in path and "site-packages" not in path):
            continue
        return f
    return tb.frames[-1] if tb.frames else None


def _search(tb: ParsedTraceback, pattern: str) -> re.Match | None:
    return re.search(pattern, tb.messages, re.S) or re.search(pattern, tb.all_text, re.S)


def _m_block_assert(tb):
    f = _frame(tb, "cache_full_blocks")
    if tb.exc_type.endswith("AssertionError") and f is not None:
        return ("BlockPool.cache_full_blocks asserted that the request has block hashes; a Request built by hand without "
                "block_hasher has none while prefix caching is on.", f)
    return None


def _m_block_index(tb):
    f = _frame(tb, "cache_full_blocks")
    if tb.exc_type.endswith("IndexError") and f is not None:
        return ("cache_full_blocks indexed the request's block hashes, which are empty because the Request was built "
                "without block_hasher while prefix caching is on.", f)
    return None


def _confirm_block(api, tb):
    from driftcheck.probes.request_block_hasher import block_hash_requirement

    req = block_hash_requirement(api)
    if req is None:
        return False, "BlockPool.cache_full_blocks not found in this vLLM"
    path, line, how = req
    if how == "none":
        return False, "this vLLM's cache_full_blocks does not need request.block_hashes"
    wanted = "index" if tb.exc_type.endswith("IndexError") else "assert"
    return how.startswith(wanted), f"{path}:{line} ({how})"


def _m_state_error(tb):
    if "sample_tokens() must be called" in tb.messages or "sample_tokens() must be called" in tb.all_text:
        return ("execute_model() returned None and kept its state; the client called execute_model() again without "
                "sample_tokens() in between.", _frame(tb, "execute_model") or _client_frame(tb))
    return None


def _confirm_state(api, tb):
    from driftcheck.bodies import find_text

    where = find_text(api, "sample_tokens() must be called", prefer="worker/gpu_model_runner")
    return (where is not None, f"{where[0]}:{where[1]}" if where else "no state error in this vLLM")


def _m_tensor_bool(tb):
    if _search(tb, r"Boolean value of Tensor with more than one value is ambiguous"):
        f = _client_frame(tb)
        root = ""
        if f and re.search(r"if not \w*hidden_states|if not \w+:", f.code or ""):
            root = (" When the value came from collective_rpc(..., unique_reply_rank=r) and was indexed with [0], the root "
                    "cause is DC104: that call returns the reply itself from vLLM 0.12, so [0] took the first tensor.")
        return ("a truthiness test (`if not x:`) was applied to a tensor." + root, f)
    return None


def _confirm_reply(api, tb):
    from driftcheck.probes.unique_reply_rank import single_reply

    where = single_reply(api)
    return (where is not None, f"{where[0]}:{where[1]} returns one reply for unique_reply_rank" if where else
            "collective_rpc returns a list in this vLLM")


def _m_layer_replay(tb):
    m = _search(tb, r"forward\(\) (?:missing \d+ required positional argument: '(\w+)'|got an unexpected keyword argument '(\w+)')")
    f = _client_frame(tb)
    if m and f is not None and re.search(r"\blayer\(", f.code or ""):
        name = m.group(1) or m.group(2)
        return (f"a replaced model forward calls decoder layers differently from this vLLM's own forward ('{name}').", f)
    return None


def _m_missing_attr(tb):
    m = _search(tb, r"'(\w+)' object has no attribute '(\w+)'")
    if m and tb.exc_type.endswith("AttributeError") or (m and "has no attribute" in (tb.inner or "")):
        cls, attr = m.group(1), m.group(2)
        return (f"{cls} has no attribute '{attr}' in this vLLM: renamed or removed (e.g. get_input_embeddings became "
                "embed_input_ids in 0.11.1).", _client_frame(tb))
    return None


def _confirm_missing_attr(api, tb):
    from driftcheck.bodies import text_index_for

    m = _search(tb, r"'(\w+)' object has no attribute '(\w+)'")
    cls, attr = m.group(1), m.group(2)
    index = text_index_for(api)
    classes = [c for rel in index.files_mentioning(f"class {cls}") for c in index.classes_in(rel) if c.name == cls]
    if not classes:
        return False, f"no class {cls} in this vLLM"
    has = [c for c in classes if attr in c.members]
    if has:
        return False, f"{cls} defines '{attr}' at {has[0].path}:{has[0].members[attr]}"
    import difflib

    near = difflib.get_close_matches(attr, list(classes[0].members), n=2, cutoff=0.4)
    return True, f"{cls} ({classes[0].path}:{classes[0].line}) has no '{attr}'" + (f"; it has {', '.join(near)}" if near else "")


def _m_field_required(tb):
    m = _search(tb, r"validation errors? for (\w+)\s*\n(?:.*\n)*?\s*(\w+)\s*\n\s*Field required")
    if m:
        return (f"{m.group(1)} requires '{m.group(2)}' in this vLLM (a required field or InitVar the client does not pass).",
                _client_frame(tb))
    return None


def _confirm_field_required(api, tb):
    m = _search(tb, r"validation errors? for (\w+)\s*\n(?:.*\n)*?\s*(\w+)\s*\n\s*Field required")
    return _confirm_param(api, m.group(1), m.group(2), required=True)


def _confirm_param(api, name: str, param: str, required: bool | None = None, absent: bool = False):
    from driftcheck.api_index import Resolved
    from driftcheck.bodies import text_index_for

    index = text_index_for(api)
    for rel, _line, _kind in index.top_level_definitions(name):
        module = rel.removesuffix("/__init__.py").removesuffix(".py").replace("/", ".")
        r = api.resolve(f"{module}.{name}")
        if not isinstance(r, Resolved):
            continue
        sig = api.constructor(r) if r.kind == "class" else (r.func.signature if r.func else None)
        if sig is None:
            continue
        p = sig.get(param)
        if absent:
            return (p is None and not sig.accepts_any_keyword), f"{rel}:{sig.line} {name}{sig.render()}"
        if p is not None and (required is None or (not p.has_default) == required):
            return True, f"{rel}:{p.line or sig.line} {param}" + (" (required)" if not p.has_default else "")
        return False, f"{rel}:{sig.line} {name}{sig.render()}"
    return False, f"{name} not found in this vLLM"


NOT_YET_SETUP = r"(?:not|never)\b[^.\n]{0,60}?\b(?:yet|initiali[sz]ed|resolved|set up|been called)\b[^\n]*?[(`']([a-z_][a-z0-9_]{3,})(?:\(\))?[)`']"


def _m_engine_setup(tb):
    m = _search(tb, NOT_YET_SETUP)
    if m:
        return (f"a vLLM function needs state that vLLM's engine core sets up with {m.group(1)}(...), which this client "
                "(building the engine by hand) never calls.", _client_frame(tb))
    return None


def _confirm_engine_setup(api, tb):
    from driftcheck.probes.engine_setup_precondition import _engine_call_site, precondition_index

    setup = _search(tb, NOT_YET_SETUP).group(1)
    raises = [(rel, line) for entries in precondition_index(api).values() for rel, line, _m, s in entries if s == setup]
    where = _engine_call_site(api, setup)
    if not raises:
        return False, f"no raise naming {setup} in this vLLM"
    return True, f"{raises[0][0]}:{raises[0][1]} raises; the engine calls {setup} at " + (f"{where[0]}:{where[1]}" if where else "?")


def _m_unexpected_kw(tb):
    m = _search(tb, r"(\w+)(?:\.__init__)?\(\) got an unexpected keyword argument '(\w+)'")
    if m:
        return f"{m.group(1)}() no longer accepts '{m.group(2)}' in this vLLM (parameter removed or renamed).", _client_frame(tb)
    return None


def _confirm_unexpected_kw(api, tb):
    m = _search(tb, r"(\w+)(?:\.__init__)?\(\) got an unexpected keyword argument '(\w+)'")
    name = m.group(1)
    if name == "__init__":
        f = _client_frame(tb)
        c = re.search(r"(\w+)\(", f.code if f else "")
        name = c.group(1) if c else name
    return _confirm_param(api, name, m.group(2), absent=True)


def _m_missing_arg(tb):
    m = _search(tb, r"(\w+)(?:\.__init__)?\(\) missing \d+ required (?:positional |keyword-only )?arguments?: '(\w+)'")
    if m:
        return f"{m.group(1)}() requires '{m.group(2)}' in this vLLM (a parameter added without a default).", _client_frame(tb)
    return None


def _confirm_missing_arg(api, tb):
    m = _search(tb, r"(\w+)(?:\.__init__)?\(\) missing \d+ required (?:positional |keyword-only )?arguments?: '(\w+)'")
    name = m.group(1)
    if name == "__init__":
        f = _client_frame(tb)
        c = re.search(r"(\w+)\(", f.code if f else "")
        name = c.group(1) if c else name
    return _confirm_param(api, name, m.group(2), required=True)


def _m_too_many(tb):
    m = _search(tb, r"(\w+)\(\) takes (?:from \d+ to )?\d+ positional arguments? but \d+ (?:were|was) given")
    if m:
        return f"{m.group(1)}() takes fewer positional arguments in this vLLM.", _client_frame(tb)
    return None


def _m_no_module(tb):
    m = _search(tb, r"No module named '(vllm[\w.]*)'")
    if m:
        return f"module {m.group(1)} does not exist in this vLLM (moved or removed).", _client_frame(tb)
    return None


def _confirm_no_module(api, tb):
    m = _search(tb, r"No module named '(vllm[\w.]*)'")
    return api.module(m.group(1)) is None, m.group(1)


def _m_cannot_import(tb):
    m = _search(tb, r"cannot import name '(\w+)' from '(vllm[\w.]*)'")
    if m:
        return f"{m.group(2)} no longer defines {m.group(1)} (renamed, moved or removed).", _client_frame(tb)
    return None


def _confirm_cannot_import(api, tb):
    from driftcheck.api_index import Missing

    m = _search(tb, r"cannot import name '(\w+)' from '(vllm[\w.]*)'")
    r = api.resolve(f"{m.group(2)}.{m.group(1)}")
    return isinstance(r, Missing), f"{m.group(2)}.{m.group(1)}: {type(r).__name__}"


PATTERNS: list[Pattern] = [
    Pattern("DC101", "request-block-hasher", _m_block_assert,
            "vLLM 0.10.1+ asserts len(request.block_hashes) >= num_full_blocks in BlockPool.cache_full_blocks when prefix "
            "caching is on, and CacheConfig.enable_prefix_caching defaults to True from 0.12.", "disable-prefix-caching", _confirm_block),
    Pattern("DC101", "request-block-hasher", _m_block_index,
            "vLLM 0.26+ resolves request.block_hashes in BlockPool.cache_full_blocks without an assert; an empty list "
            "ends in IndexError.", "disable-prefix-caching", _confirm_block),
    Pattern("DC103", "two-phase-execution", _m_state_error,
            "From vLLM 0.11.1 execute_model() returns None and sample_tokens() must follow; async_scheduling=False does "
            "not change this.", "call-sample-tokens", _confirm_state),
    Pattern("DC108", "engine-setup-precondition", _m_engine_setup,
            "vLLM added a step that its engine core performs before this call (resolve_kv_cache_layout from 0.29).",
            "replay-engine-setup", _confirm_engine_setup),
    Pattern("DC106", "forward-replay-drift", _m_layer_replay,
            "vLLM's own model forward passes its decoder layers arguments the replaced forward does not (e.g. "
            "llama_4_scaling for DeepseekV2 from 0.12).", None),
    Pattern("DC105", "tensor-truthiness", _m_tensor_bool,
            "collective_rpc(..., unique_reply_rank=r) returns the rank's reply itself from vLLM 0.12, so indexing it "
            "yields a tensor where a list was expected.", "tensor-truthiness", _confirm_reply),
    Pattern("DC005", "missing-argument", _m_field_required,
            "A vLLM @config class gained a required field or InitVar (SchedulerConfig.is_encoder_decoder from 0.12).",
            "add-argument", _confirm_field_required),
    Pattern("DC003", "unknown-keyword", _m_unexpected_kw,
            "A vLLM function dropped or renamed a parameter (get_kv_cache_config_from_groups(kv_cache_specs=) in 0.12, "
            "Request(eos_token_id=) later).", "drop-keyword", _confirm_unexpected_kw),
    Pattern("DC005", "missing-argument", _m_missing_arg,
            "A vLLM function gained a required parameter (Scheduler(block_size=) in 0.11.1).", "add-argument", _confirm_missing_arg),
    Pattern("DC004", "too-many-positional", _m_too_many, "A vLLM function takes fewer positional arguments.", None),
    Pattern("DC008", "removed-name", _m_missing_attr,
            "A vLLM class lost an attribute or method (renamed: get_input_embeddings -> embed_input_ids in 0.11.1).",
            "rename-method", _confirm_missing_attr),
    Pattern("DC001", "missing-module", _m_no_module, "A vLLM module moved or was removed.", "move-import", _confirm_no_module),
    Pattern("DC002", "missing-name", _m_cannot_import, "A vLLM name moved or was removed.", "move-import", _confirm_cannot_import),
]


def explain_parsed(tb: ParsedTraceback, api=None) -> list[Diagnosis]:
    out: list[Diagnosis] = []
    for pattern in PATTERNS:
        hit = pattern.match(tb)
        if hit is None:
            continue
        message, frame = hit
        diag = Diagnosis(pattern.rule, pattern.name, message, pattern.vllm_change, pattern.fix, frame)
        if api is not None and pattern.confirm is not None:
            try:
                diag.confirmed, diag.evidence = pattern.confirm(api, tb)
            except Exception as exc:  # a confirmation that cannot run is "not confirmed", not a crash
                diag.confirmed, diag.evidence = None, f"could not check: {type(exc).__name__}: {exc}"
        out.append(diag)
        break  # patterns are ordered from specific to generic: the first match is the diagnosis
    return out


def explain_text(text: str, api=None) -> list[dict]:
    """Diagnoses for a traceback text (empty list: no known drift). Raises NotATraceback."""
    return [d.to_json() for d in explain_parsed(parse_traceback(text), api)]
