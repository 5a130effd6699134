"""disable-prefix-caching (DC101, DC102): build the engine config with `enable_prefix_caching=False`.

For prefill-only hidden-state capture, prefix caching buys nothing and breaks two things: requests
built by hand without `block_hasher` crash in `cache_full_blocks` (DC101), and repeated prompts
come back with truncated hidden states (DC102). The fix sets the keyword on the client's
`CacheConfig(...)` (or on the call that configures `extract_hidden_states`, e.g. `LLM(...)`), or
appends `--no-enable-prefix-caching` to a command line: a Python list of arguments
(`["vllm", "serve", model, ...]`) or a `vllm serve` line in a shell script. Where none of these is
there (a call that does not take engine arguments, a YAML file, a command that is not `vllm serve`),
it says so and leaves the file alone.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst

from driftcheck.client_model.client import SHELL_SUFFIXES
from driftcheck.vllm_model import bodies
from driftcheck.fix.codemod import Fix, FixContext, FixOutcome, Targeted, append_arg, run_transformer
from driftcheck.probes.request_block_hasher import ConfigCall
from driftcheck.rules.findings import Finding, Location
from driftcheck.astnodes import walk

FIX = Fix("disable-prefix-caching", ("DC101", "DC102"), "Turn prefix caching off in the config the client builds")

FLAG = "--no-enable-prefix-caching"
FALSE_KW = cst.Arg(keyword=cst.Name("enable_prefix_caching"), value=cst.Name("False"),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
NO_TARGET = "no call here takes engine arguments and no command line to extend"


@dataclass(frozen=True)
class _Target:
    """What to edit for one finding: a call that takes engine arguments, or a command-line list."""

    location: Location
    cli_list: bool = False


class _Disable(Targeted):
    def __init__(self, findings, ctx, targets: dict[int, _Target]):
        super().__init__(findings, ctx)
        self.targets = targets
        for f in findings:
            if id(f) not in targets:
                self.skipped.append((f, NO_TARGET))

    def _mine(self, node, cli_list: bool) -> list[Finding]:
        pos = self.position(node)
        out = []
        for f in self.findings:
            target = self.targets.get(id(f))
            loc = target.location if target is not None and target.cli_list == cli_list else None
            if loc is not None and loc.line == pos.start.line and (loc.col is None or loc.col == pos.start.column + 1):
                out.append(f)
        return out

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        mine = self._mine(original, cli_list=False)
        if not mine:
            return updated
        args = list(updated.args)
        existing = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "enable_prefix_caching"), None)
        if existing is not None:
            args[existing] = args[existing].with_changes(value=cst.Name("False"))
        else:
            args = append_arg(args, FALSE_KW)
        self.applied.extend(mine)
        return updated.with_changes(args=args)

    def _extend(self, original, updated):
        mine = self._mine(original, cli_list=True)
        if not mine:
            return updated
        self.applied.extend(mine)
        elements = list(updated.elements)
        for i, el in enumerate(elements):
            if isinstance(el.value, cst.SimpleString) and el.value.evaluated_value == "--enable-prefix-caching":
                quote = el.value.value[0]
                elements[i] = el.with_changes(value=cst.SimpleString(f"{quote}{FLAG}{quote}"))
                return updated.with_changes(elements=elements)
        return updated.with_changes(elements=_append_element(elements, cst.Element(cst.SimpleString(f'"{FLAG}"'))))

    def leave_List(self, original: cst.List, updated: cst.List) -> cst.List:
        return self._extend(original, updated)

    def leave_Tuple(self, original: cst.Tuple, updated: cst.Tuple) -> cst.Tuple:
        return self._extend(original, updated)


def _append_element(elements: list, new: cst.Element) -> list:
    """Append to a list display, keeping its separator and trailing-comma style."""
    if not elements:
        return [new]
    last = elements[-1]
    between = elements[-2].comma if len(elements) >= 2 and isinstance(elements[-2].comma, cst.Comma) else None
    trailing = last.comma if isinstance(last.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT
    return elements[:-1] + [last.with_changes(comma=between or cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                            new.with_changes(comma=trailing)]


def _is_cli_list(node: ast.AST) -> bool:
    """A list/tuple of command-line words: it holds `--option` strings (or is `vllm serve ...`)."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return False
    words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return any(w.startswith("--") for w in words) or words[:2] == ["vllm", "serve"]


def _engine_words(api) -> tuple[set[str], set[str]]:
    """(classes that take enable_prefix_caching, the argument names they take), read from the target."""
    classes = bodies.text_index_for(api).classes_defining("enable_prefix_caching")
    return {c.name for c in classes}, {m for c in classes for m in c.members}


def _takes_engine_args(call: ast.Call, engine: tuple[set[str], set[str]]) -> bool:
    names, words = engine
    func = call.func
    callee = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if callee == "dict":
        return False  # a dict of options: the call that receives it is the one to change
    return callee in names or any(k.arg in words for k in call.keywords if k.arg)


def _targets(source: str, findings: list[Finding], api) -> dict[int, _Target]:
    """What each finding's fix edits. DC101 carries the `CacheConfig(...)` its Request's engine uses (`ConfigCall`);
    DC102 may point at the "extract_hidden_states" string: its target is the command line it is part of, or the
    nearest enclosing call that takes engine arguments (never json.dumps(...), a KVTransferConfig(...), ...).
    A finding with no target is missing from the result."""
    tree = ast.parse(source)
    engine = None
    out: dict[int, _Target] = {}
    for f in findings:
        if isinstance(f.payload, ConfigCall):
            out[id(f)] = _Target(f.payload.location)
            continue
        if f.rule != "DC102" or f.client is None:
            continue
        chain = []  # enclosing lists and calls of the finding's node, innermost first
        for node in walk(tree):
            if isinstance(node, (ast.Call, ast.List, ast.Tuple)) and node.lineno <= f.client.line <= (node.end_lineno or node.lineno):
                if any(getattr(n, "lineno", None) == f.client.line and getattr(n, "col_offset", -1) + 1 == f.client.col
                       for n in walk(node)):
                    chain.append(node)
        chain.sort(key=lambda n: (n.lineno, n.col_offset), reverse=True)
        for node in chain:
            spot = Location(f.client.path, node.lineno, col=node.col_offset + 1)
            if _is_cli_list(node):
                out[id(f)] = _Target(spot, cli_list=True)
                break
            if isinstance(node, ast.Call):
                engine = engine or _engine_words(api)
                if _takes_engine_args(node, engine):
                    out[id(f)] = _Target(spot)
                    break
    return out


def transform(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    return run_transformer(source, _Disable(findings, ctx, _targets(source, findings, ctx.api)))


# ------------------------------------------------------------------------------- shell scripts
VLLM_SERVE = re.compile(r"(?:^|[\s;&|(])(?:vllm\s+serve|python3?\s+-m\s+vllm\.entrypoints\.openai\.api_server)\b")
# where a simple command's words end: a control or redirection operator outside quotes (or a comment)
_ENDS = set("|&;<>)")


def transform_text(source: str, findings: list[Finding], ctx: FixContext) -> FixOutcome:
    """A `vllm serve` command in a shell script gets `--no-enable-prefix-caching` (an `--enable-prefix-caching`
    there is turned into it); any other file or command is left alone, with the reason."""
    outcome = FixOutcome(source)
    if not ctx.client_file.endswith(SHELL_SUFFIXES):
        outcome.skipped = [(f, "no codemod for this file: only `vllm serve` lines in shell scripts are edited") for f in findings]
        return outcome
    lines = source.splitlines(keepends=True)
    done: set[int] = set()  # commands (by first line) already extended
    for f in findings:
        if f.client is None or not 0 < f.client.line <= len(lines):
            outcome.skipped.append((f, "no matching code at the reported location"))
            continue
        first, last = _command_span(lines, f.client.line - 1)
        command = "".join(lines[first:last + 1])
        if not VLLM_SERVE.search(command):
            outcome.skipped.append((f, "no codemod for this command: it is not `vllm serve`"))
            continue
        if first not in done:
            lines[first:last + 1] = _with_flag(lines[first:last + 1])
            done.add(first)
        outcome.applied.append(f)
    outcome.source = "".join(lines)
    return outcome


def _command_span(lines: list[str], index: int) -> tuple[int, int]:
    """First and last line of the backslash-continued command holding line `index`."""
    start = index
    while start > 0 and lines[start - 1].rstrip("\r\n").endswith("\\"):
        start -= 1
    end = index
    while end < len(lines) - 1 and lines[end].rstrip("\r\n").endswith("\\"):
        end += 1
    return start, end


def _with_flag(lines: list[str]) -> list[str]:
    text = "".join(lines)
    serve = VLLM_SERVE.search(text)
    head, tail = text[:serve.end()], text[serve.end():]  # only the `vllm serve` command's own words change
    if re.search(r"(?<![\w-])--enable-prefix-caching(?![\w=-])", tail):
        return (head + re.sub(r"(?<![\w-])--enable-prefix-caching(?![\w=-])", FLAG, tail, count=1)).splitlines(keepends=True)
    cut = _words_end(tail)
    if cut is None:  # the words run to the end: append on the last line, before its line break
        body = text.rstrip("\r\n")
        stripped = body.rstrip()
        return (stripped + " " + FLAG + body[len(stripped):] + text[len(body):]).splitlines(keepends=True)
    return (head + tail[:cut] + FLAG + " " + tail[cut:]).splitlines(keepends=True)


def _words_end(text: str) -> int | None:
    """Offset of the word holding the first unquoted operator (`> log`, `2>&1`, `&`, `| tee`, `# note`), if any;
    quotes, backslashes and `$(...)` are skipped over."""
    quote = None
    depth = 0  # inside $( ... )
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote != "'":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"`":
            quote = c
        elif c == "$" and text[i + 1:i + 2] == "(":
            depth += 1
            i += 1
        elif c == ")" and depth:
            depth -= 1
        elif not depth and (c in _ENDS or (c == "#" and (i == 0 or text[i - 1].isspace()))):
            start = i
            while start > 0 and not text[start - 1].isspace():
                start -= 1
            return start
        i += 1
    return None
