"""`driftcheck explain`: turn a pasted traceback into the vLLM drift behind it.

A traceback is parsed into frames and the final exception (vLLM's `Worker failed with error
'...'` wrappers are unwrapped). What each drift looks like is not kept here: every rule declares
its own traceback signatures (`SIGNATURES` in probes/<name>.py, see driftcheck.rules.tbsigs): exception
type, message regex, the facts to print, the fix, and an optional confirmation that reads a target
vLLM's sources (`--vllm`). They are read from the rule registry (driftcheck.rules.registry) and tried from
the most specific (a frame in `cache_full_blocks`) to the most generic (any unexpected keyword).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from driftcheck.rules.tbsigs import RULE_FIX

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


# ------------------------------------------------------------------------------------------ diagnosis
def explain_parsed(tb: ParsedTraceback, api=None) -> list[Diagnosis]:
    """The first rule signature (highest priority first, see driftcheck.rules.registry) that matches, as a diagnosis."""
    from driftcheck.rules.registry import traceback_signatures

    out: list[Diagnosis] = []
    for entry, sig in traceback_signatures():
        hit = sig.match(tb)
        if hit is None:
            continue
        m, frame = hit
        message = " ".join([sig.text(m, tb)] + sig.facts_for(tb, frame, "message"))
        change = " ".join([sig.vllm_change] + sig.facts_for(tb, frame, "change"))
        fix = entry.rule.fix if sig.fix is RULE_FIX else sig.fix
        diag = Diagnosis(entry.id, entry.name, message, change, fix, frame)
        if api is not None and sig.confirm is not None:
            try:
                diag.confirmed, diag.evidence = sig.confirm(api, tb, m)
            except Exception as exc:  # a confirmation that cannot run is "not confirmed", not a crash
                diag.confirmed, diag.evidence = None, f"could not check: {type(exc).__name__}: {exc}"
        out.append(diag)
        break  # signatures are ordered from specific to generic: the first match is the diagnosis
    return out


def explain_text(text: str, api=None) -> list[dict]:
    """Diagnoses for a traceback text (empty list: no known drift). Raises NotATraceback."""
    return [d.to_json() for d in explain_parsed(parse_traceback(text), api)]
