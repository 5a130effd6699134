"""Traceback signatures: what `driftcheck explain` matches, declared by the rule whose drift raises it.

A rule module (probes/<name>.py) lists its signatures in `SIGNATURES`. A signature says which crash is this
rule's (exception type, a message regex, a frame on the stack, the shape of the client's line), what to say
about it, what changed in vLLM, the seed facts that apply only when the traceback shows them (`Fact.when`), and
how to confirm it against a target's sources (`--vllm`). Facts are specific to the rule and to the traceback: an
AttributeError about `foo` is not told about `get_input_embeddings`, and an `if not x:` on a tensor is not told
about `collective_rpc` unless the line reads like the hidden-states reply.

`explain` tries every signature of every rule in the registry, highest `priority` first (the specific ones,
such as a frame in `cache_full_blocks`, before the generic ones, such as any unexpected keyword argument).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable
from driftcheck.sources.sources import module_name_for

RULE_FIX = object()  # a signature's fix defaults to its rule's fix

LIBRARY_PARTS = ("/vllm/", "/torch/", "/pydantic/", "/pydantic_core/", "/transformers/", "/driftcheck/runner/",
                 "/multiprocessing/", "/concurrent/")


@dataclass(frozen=True)
class Fact:
    """A vLLM fact printed only when the traceback shows it: `when` is a regex over the exception message(s)
    and the client's line (None: whenever the signature matches). `where`: "change" (appended to the vLLM
    change) or "message" (appended to the diagnosis)."""

    text: str
    when: str | None = None
    where: str = "change"


@dataclass(frozen=True)
class Signature:
    describe: str | Callable[[Any, Any], str]  # the diagnosis: a format string over the match's groups, or f(match, tb)
    vllm_change: str  # what changed in vLLM, for every traceback this signature matches
    message: str | None = None  # regex searched in the exception message(s), then in the whole text; None: any
    exc_types: tuple[str, ...] = ()  # the exception's class name ends with one of these; (): any
    wrapped: bool = False  # also match when the message regex matches the error a vLLM worker wrapped
    needs_frame: str | None = None  # a function that must be on the stack; that frame is the one shown
    prefer_frame: str | None = None  # the frame shown when on the stack (else the client's line)
    code: str | None = None  # regex the client's line must match
    facts: tuple[Fact, ...] = ()
    fix: Any = RULE_FIX  # a fix id, None for no codemod, or RULE_FIX
    confirm: Callable[[Any, Any, Any], "tuple[bool, str]"] | None = None  # (api, tb, match) -> (confirmed, evidence)
    priority: int = 0  # tried from the highest down

    def match(self, tb) -> "tuple[Any, Any] | None":
        """(match or None, the frame to show) when this traceback is this signature's, else None."""
        m = None
        if self.message is not None:
            m = search(tb, self.message)
            if m is None:
                return None
        if self.exc_types and not tb.exc_type.endswith(self.exc_types):
            if not (self.wrapped and tb.inner and self.message and re.search(self.message, tb.inner, re.S)):
                return None
        if self.needs_frame is not None:
            frame = frame_named(tb, self.needs_frame)
            if frame is None:
                return None
        else:
            frame = (frame_named(tb, self.prefer_frame) if self.prefer_frame else None) or client_frame(tb)
        if self.code is not None and (frame is None or not re.search(self.code, frame.code or "")):
            return None
        return m, frame

    def text(self, m, tb) -> str:
        if callable(self.describe):
            return self.describe(m, tb)
        return self.describe.format(*(m.groups() if m is not None else ()))

    def facts_for(self, tb, frame, where: str) -> list[str]:
        seen = tb.messages + "\n" + (frame.code if frame is not None and frame.code else "")
        return [f.text for f in self.facts if f.where == where and (f.when is None or re.search(f.when, seen, re.S))]


def frame_named(tb, func: str | None = None, file_suffix: str | None = None):
    """The innermost frame in function `func` (and a file ending in `file_suffix`), or None."""
    for f in reversed(tb.frames):
        if (func is None or f.func == func) and (file_suffix is None or f.file.replace("\\", "/").endswith(file_suffix)):
            return f
    return None


def client_frame(tb):
    """The innermost frame outside vLLM, its libraries, the runner and the standard library: the user's line."""
    for f in reversed(tb.frames):
        path = f.file.replace("\\", "/")
        if any(part in path for part in LIBRARY_PARTS) or ("/lib/python3" in path and "site-packages" not in path):
            continue
        return f
    return tb.frames[-1] if tb.frames else None


def search(tb, pattern: str) -> "re.Match | None":
    return re.search(pattern, tb.messages, re.S) or re.search(pattern, tb.all_text, re.S)


def called_name(tb, name: str) -> str:
    """`__init__` in a message means "the class called on the client's line": read its name from that line."""
    if name != "__init__":
        return name
    f = client_frame(tb)
    c = re.search(r"(\w+)\(", f.code if f else "")
    return c.group(1) if c else name


def confirm_param(api, name: str, param: str, required: bool | None = None, absent: bool = False) -> tuple[bool, str]:
    """Does `name` (a top-level class or function of the target, or `Class.method` as a method's message names it)
    have parameter `param` (required / absent)?"""
    from driftcheck.vllm_model.resolved import Resolved
    from driftcheck.vllm_model.bodies import text_index_for

    index = text_index_for(api)
    top, _, method = name.partition(".")
    for rel, _line, _kind in index.top_level_definitions(top):
        module = module_name_for(rel)
        r = api.resolve(f"{module}.{top}")
        if not isinstance(r, Resolved):
            continue
        if method:  # a method: the class's own member (through its MRO), as a bound call sees it
            if r.kind != "class" or "." in method:
                continue
            r = api.class_member(r, method)
            if not isinstance(r, Resolved) or r.func is None:
                continue
            sig = r.func.signature if r.func.is_static else r.func.signature.without_first()
        else:
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
