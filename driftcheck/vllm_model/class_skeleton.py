"""Whether a class has a member through its MRO, read without parsing its module's bodies.

DC008 asks this of dozens of model classes whose modules nothing else reads (a cold seed scan parsed and summarised
46 of them, 5-7 ms each, most of the rule's time). The module's top level is kept verbatim except the bodies of its
top-level functions and classes, which become `pass`: that *skeleton* is summarised as usual, so the class's bases
resolve through the module's own imports, `if`s and `try`s. The answer is given only where it cannot differ from
reading the whole module, and is None otherwise (the caller reads the whole module):

* the member's name is nowhere in the module's text: the class itself defines no such method, field or attribute,
  sets it by no literal name, and no decorator of its module spells it;
* no method of the class has a decorator other than the plain ones (one that sets names on the object,
  `classes._decorator_creating`, would be lost with the body);
* the module does not write its names through `globals()`;
* each of the class's bases resolves to a class of another module or to an external class: a base defined in the same
  module would be a skeleton too, with no members.
"""

from __future__ import annotations

import ast
import re

from driftcheck.vllm_model.class_scanner import _string_ranges
from driftcheck.vllm_model.classes import _PLAIN_DECORATORS, EXTERNAL_ALIASES, base_name_of
from driftcheck.vllm_model.pysummary import summarise_source
from driftcheck.vllm_model.resolved import External, Resolved

_DEFINITION = re.compile(r"(?:async[ \t]+def|def|class)\b")
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")  # col-0 lines that go on the compound statement above
_METHOD_DECORATOR = re.compile(r"\n[ \t]+@[ \t]*([\w.]+)")
_HEADER_LINES = 60  # a def or class header longer than this is not cut: the skeleton is not made


def skeleton(text: str) -> str | None:
    """The module's text with the bodies of its top-level functions and classes replaced by `pass` (line numbers
    kept: each cut line is left empty), or None where a header cannot be found."""
    lines = text.split("\n")
    ranges = _string_ranges(text)
    in_string = set()
    for first, last in ranges:
        if last - first > len(lines):
            last = len(lines)
        in_string.update(range(first, last + 1))
    starts = [i for i, line in enumerate(lines)
              if line[:1] and not line[0].isspace() and line[0] not in "#)]}" and (i + 1) not in in_string
              and not _CONTINUES.match(line)]
    out = list(lines)
    for k, start in enumerate(starts):
        if not _DEFINITION.match(lines[start]):
            continue  # an import, an assignment, an `if` or `try` block, a decorator: kept as it is
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        header_end = _header_end(lines, start, end)
        if header_end is None:
            return None
        if header_end + 1 >= end:
            continue  # nothing after the header in this segment (a one-line body)
        out[header_end + 1] = "    pass"
        for i in range(header_end + 2, end):
            out[i] = ""
    return "\n".join(out)


def _header_end(lines: list[str], start: int, end: int) -> int | None:
    """The last line of the header that starts at `start`: the first line after which the text parses with a body of
    `pass` (or, for a one-line body, as it is)."""
    line = lines[start].rstrip()
    if line.endswith(":") and sum(map(line.count, "([{")) == sum(map(line.count, ")]}")):
        return start  # a one-line header (a cut that is not one leaves brackets open: the skeleton then does not parse)
    for i in range(start, min(end, start + _HEADER_LINES)):
        head = "\n".join(lines[start:i + 1])
        for candidate in (head + "\n    pass", head):
            try:
                ast.parse(candidate)
            except (SyntaxError, ValueError):
                continue
            return i
    return None


def has_member(api, text: str, path: str, class_name: str, class_line: int, name: str) -> bool | None:
    """Whether the class `class_name` (top level of `path`, at `class_line`) has `name` through its MRO as
    `api.member` reads it (a Resolved or External member), or None where only the whole module can tell."""
    if name in text or "globals()" in text or name.startswith("__"):
        return None
    module = path[:-3].replace("/", ".").removesuffix(".__init__")
    info = api.skeletons.get(path, False)
    if info is False:
        shape = skeleton(text)
        info = api.skeletons[path] = None if shape is None else \
            summarise_source(module, path, path.endswith("/__init__.py"), shape)
    if info is None:
        return None
    ci = info.classes.get(class_name)
    binding = info.bindings.get(class_name)
    if info.syntax_error or ci is None or ci.line != class_line or binding is None or binding.kind != "class" \
            or binding.line != class_line or binding.otherwise is not None:
        return None
    if any(d not in _PLAIN_DECORATORS for d in _method_decorators(text, class_line)):
        return None
    for base_expr in ci.bases:
        base_name = base_name_of(base_expr)
        base = api.resolve_in_scope(info, base_name)
        if isinstance(base, External) or base_name in EXTERNAL_ALIASES:
            continue
        if not (isinstance(base, Resolved) and base.kind == "class" and base.cls is not None) or base.path == path:
            return None
    cls = Resolved("class", f"{module}.{class_name} (skeleton)", path, ci.line, module=info, cls=ci)
    if any(c.path == path for c in api.mro(cls)[0][1:]):
        return None
    return isinstance(api.class_member(cls, name), (Resolved, External))


def _method_decorators(text: str, class_line: int) -> list[str]:
    """The names of the indented decorators between the class line and the next top-level definition or decorator
    (decorators of the class's own methods, and of functions nested in them). A line of the class's docstring at
    column 0 that starts with `def`, `class` or `@` ends the region early; a decorator below it would then be missed,
    and so would the member it makes only where the decorator's own module spells a name this module never does."""
    lines = text.split("\n")
    end = class_line
    while end < len(lines) and (not lines[end][:1] or lines[end][0].isspace() or lines[end][0] in "#)]}"):
        end += 1
    # a top-level-looking line inside a docstring ends the region early: then the rest of the body is not read,
    # and a decorator there would be missed, so the region runs on to the next definition or the end
    while end < len(lines) and not _DEFINITION.match(lines[end]) and not lines[end].startswith("@"):
        end += 1
    region = "\n" + "\n".join(lines[class_line:end])
    return [m.group(1) for m in _METHOD_DECORATOR.finditer(region)]
