"""Call signatures and the check of one call site against one signature.

A `Signature` is what Python would bind a call against: positional-only, positional-or-keyword,
`*args`, keyword-only, `**kwargs`. It is built from a `def` or synthesised from dataclass fields,
and carries the file and line of each parameter so a finding can point at the exact definition.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from driftcheck.astnodes import source_text

POSONLY, POS, VARARG, KWONLY, VARKW = "posonly", "pos", "vararg", "kwonly", "varkw"


@dataclass
class Param:
    name: str
    kind: str
    has_default: bool = False
    default: str | None = None
    annotation: str | None = None
    line: int = 0


@dataclass
class Signature:
    params: list[Param]
    path: str = ""
    line: int = 0
    origin: str = "def"  # def | dataclass | pydantic-model | implicit

    def without_first(self) -> "Signature":
        """Drop the bound `self`/`cls` when the function is reached through an instance or class."""
        params = list(self.params)
        if params and params[0].kind in (POSONLY, POS):
            params = params[1:]
        return Signature(params, self.path, self.line, self.origin)

    def with_defaults(self, names) -> "Signature":
        """The signature with the parameters named in `names` optional (a wrapper supplies them when left out)."""
        params = [replace(p, has_default=True) if p.name in names and p.kind not in (VARARG, VARKW) else p
                  for p in self.params]
        return Signature(params, self.path, self.line, self.origin)

    def with_keywords(self, names) -> "Signature":
        """The signature with optional keyword-only parameters added for `names` it does not have (keywords a
        decorator's wrapper takes for itself before handing the call on)."""
        have = {p.name for p in self.params if p.kind not in (VARARG, VARKW)}
        added = [Param(n, KWONLY, has_default=True, line=self.line) for n in sorted(names) if n not in have]
        if not added:
            return self
        params = [p for p in self.params if p.kind != VARKW] + added + [p for p in self.params if p.kind == VARKW]
        return Signature(params, self.path, self.line, self.origin)

    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def get(self, name: str) -> Param | None:
        for p in self.params:
            if p.name == name and p.kind not in (VARARG, VARKW):
                return p
        return None

    @property
    def accepts_any_keyword(self) -> bool:
        return any(p.kind == VARKW for p in self.params)

    @property
    def accepts_any_positional(self) -> bool:
        return any(p.kind == VARARG for p in self.params)

    def render(self) -> str:
        out: list[str] = []
        star_done = False
        for p in self.params:
            if p.kind == KWONLY and not star_done:
                out.append("*")
                star_done = True
            prefix = "*" if p.kind == VARARG else "**" if p.kind == VARKW else ""
            if p.kind == VARARG:
                star_done = True
            text = prefix + p.name
            if p.has_default:
                text += "=" + (p.default if p.default and len(p.default) <= 20 else "…")
            out.append(text)
        return "(" + ", ".join(out) + ")"


def signature_from_args(args: ast.arguments, path: str, line: int) -> Signature:
    params: list[Param] = []
    positional = list(args.posonlyargs) + list(args.args)
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = POSONLY if i < len(args.posonlyargs) else POS
        params.append(_param(arg, kind, default))
    if args.vararg:
        params.append(_param(args.vararg, VARARG, None))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(_param(arg, KWONLY, default))
    if args.kwarg:
        params.append(_param(args.kwarg, VARKW, None))
    return Signature(params, path, line)


def _param(arg: ast.arg, kind: str, default: ast.expr | None) -> Param:
    return Param(
        name=arg.arg,
        kind=kind,
        has_default=default is not None,
        default=source_text(default) if default is not None else None,
        annotation=source_text(arg.annotation) if arg.annotation is not None else None,
        line=arg.lineno,
    )


@dataclass
class CallShape:
    """What a call site passes: counts and keyword names, and whether it unpacks."""

    n_positional: int
    keywords: list[str] = field(default_factory=list)
    star_args: bool = False
    star_kwargs: bool = False
    # keywords (in `keywords` too) that are keys of a dict the call unpacks with `**`, and the line spelling each
    splatted: dict[str, int] = field(default_factory=dict)


@dataclass
class CallProblem:
    kind: str  # unknown-keyword | too-many-positional | missing-argument | duplicate-argument
    name: str  # the keyword or parameter concerned ("" for positional overflow)
    param: Param | None = None
    detail: str = ""


def check_call(sig: Signature, call: CallShape) -> list[CallProblem]:
    problems: list[CallProblem] = []
    positional = [p for p in sig.params if p.kind in (POSONLY, POS)]
    by_keyword = {p.name: p for p in sig.params if p.kind in (POS, KWONLY)}
    posonly_names = {p.name for p in sig.params if p.kind == POSONLY}

    if call.n_positional > len(positional) and not sig.accepts_any_positional:
        problems.append(
            CallProblem(
                "too-many-positional",
                "",
                detail=f"takes {len(positional)} positional argument(s) but {call.n_positional} were given",
            )
        )
    filled = {p.name for p in positional[: call.n_positional]}
    for kw in call.keywords:
        if kw in by_keyword:
            if kw in filled:
                problems.append(CallProblem("duplicate-argument", kw, by_keyword[kw], "given by position and by keyword"))
            filled.add(kw)
        elif not sig.accepts_any_keyword:
            detail = "positional-only parameter passed by keyword" if kw in posonly_names else "unexpected keyword argument"
            problems.append(CallProblem("unknown-keyword", kw, None, detail))
    if not (call.star_args or call.star_kwargs):
        for p in sig.params:
            if p.kind in (VARARG, VARKW) or p.has_default or p.name in filled:
                continue
            problems.append(CallProblem("missing-argument", p.name, p, "required argument not passed"))
    return problems
