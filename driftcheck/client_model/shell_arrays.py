"""Bash arrays a shell script fills with literal words and expands into a command (`ARGS=( --model m ... )` then
`vllm serve "${ARGS[@]}"`), so that the words reach the command that runs them.

Serving scripts keep their flags in an array, one flag a line with comments between; read word by word, the command
only shows `"${ARGS[@]}"` and its flags went unchecked (DC111), and a `--no-enable-prefix-caching` in the array was not
seen by the command that configures hidden-state extraction beside it (DC102).

An array is read only where the script writes it in ways that are all seen: one `NAME=( ... )` (also under `local`,
`declare -a`, `readonly`, `export`) and `NAME+=( ... )` appends after it, nothing else (an element store `NAME[i]=`,
`read -a`, `mapfile`, a second assignment): anything else leaves the expansion computed, as before. A word holding `$`
or a backquote is computed where it is used (`computed`); the words around it are still read.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_WRITE = re.compile(r"(?:^|[\s;&|(])(?:(?:local|declare|typeset|readonly|export)(?:\s+-\w+)*\s+)?"
                    r"([A-Za-z_]\w*)(\[[^\]]*\])?(\+?)=(\(?)")
_READS_INTO = re.compile(r"\b(?:read|readarray|mapfile)\b[^;\n]*?(?:-a\s+)?\b([A-Za-z_]\w*)\s*(?:$|[;&|<])")
EXPANSION = re.compile(r"\$\{([A-Za-z_]\w*)\[[@*]\]\}")


@dataclass
class ShellArray:
    name: str
    first_line: int  # 1-based line of the assignment
    words: list[tuple[str, int]] = field(default_factory=list)  # (word with its quotes read off, 1-based line)
    text: str = ""  # the assignment's and appends' source, for rules that search it
    appends: list[int] = field(default_factory=list)  # the 1-based lines of its `+=( ... )` appends
    scope: tuple[int, int] | None = None  # the function's 1-based lines, for an array it declares `local`
    last_line: int = 0  # 1-based line of the `)` that ends the assignment (not its appends)


def shell_parens(line: str, start: int = 0, quote: str | None = None, marks_of: str = "()") -> tuple[list[int], str | None, bool]:
    """The columns of the `(` and `)` (or the characters `marks_of`) of `line` from `start` that are outside quotes and
    comments (a `#` starting a word), the quote still open at its end (one an earlier line left open comes in as
    `quote`), and whether a backslash ends it (the command goes on)."""
    marks: list[int] = []
    j, continued = start, False
    while j < len(line):
        c = line[j]
        if quote is not None:
            if c == "\\" and quote == '"':
                j += 1
            elif c == quote:
                quote = None
        elif c == "\\":
            continued = j == len(line) - 1
            j += 1
        elif c in "\"'":
            quote = c
        elif c == "#" and (j == 0 or line[j - 1] in " \t;|&("):
            break
        elif c in marks_of:
            marks.append(j)
        j += 1
    return marks, quote, continued


def _body_end(lines: list[str], row: int, col: int) -> tuple[int, int] | None:
    """(row, col) of the `)` that closes the array opened just before (row, col); None when it never closes."""
    depth, quote = 1, None
    while row < len(lines):
        marks, quote, _ = shell_parens(lines[row], col, quote)
        for j in marks:
            depth += 1 if lines[row][j] == "(" else -1
            if depth == 0:
                return row, j
        row, col = row + 1, 0
    return None


def _words(body: str, first_line: int, lines: list[str]) -> list[tuple[str, int]] | None:
    lexer = shlex.shlex(body, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    out: list[tuple[str, int]] = []
    row = first_line
    for tok in tokens:
        row = word_line(lines, tok, row)
        out.append((tok, row))
    return out


def word_line(lines: list[str], token: str, after: int, reach: int | None = None) -> int:
    """The 1-based line, from `after` on (at most `reach` lines further), that spells a command word: a flag by its
    name, another word by its first 40 characters; `after` when none does."""
    probe = token.split("=", 1)[0][:40] if token.startswith("--") else token[:40]
    last = len(lines) if reach is None else min(after + reach, len(lines))
    for n in range(after, last + 1):
        if probe and probe in lines[n - 1]:
            return n
    return after


_FUNCTION = re.compile(r"^\s*(?:function\s+[\w.:-]+\s*(?:\(\s*\))?|[\w.:-]+\s*\(\s*\))\s*\{?\s*(?:#.*)?$")
_LOCAL = re.compile(r"\b(?:local|declare|typeset)(?:\s+-\w+)*\s+$")


def _function_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) row of each shell function (`name() {` or `function name {` to its closing brace)."""
    spans: list[tuple[int, int]] = []
    row = 0
    while row < len(lines):
        if not _FUNCTION.match(lines[row]):
            row += 1
            continue
        depth, quote, opened, end = 0, None, False, None
        for r in range(row, len(lines)):
            marks, quote, _ = shell_parens(lines[r], 0, quote, marks_of="{}")
            for j in marks:
                if lines[r][j] == "{" and (j + 1 == len(lines[r]) or lines[r][j + 1] in " \t") and \
                        (j == 0 or lines[r][j - 1] in " \t)"):
                    depth, opened = depth + 1, True
                elif lines[r][j] == "}" and opened and (j == 0 or lines[r][j - 1] in " \t;"):
                    depth -= 1
            if opened and depth == 0:
                end = r
                break
        if end is None:
            return spans
        spans.append((row, end))
        row = end + 1
    return spans


def read_arrays(lines: list[str]) -> dict[str, ShellArray]:
    """The arrays of a script whose every write is seen (see the module's docstring), by name; an array each of
    several functions declares for itself (`local args=( ... )`) is read once per function, keyed `name@line` of its
    assignment, with `scope` the function's lines (batch 15b's R2)."""
    writes: dict[str, list[tuple[int, int, str]]] = {}  # name -> (row, column after "(" or -1, "=" / "+=" / other)
    for row, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue
        for m in _WRITE.finditer(line):
            name, index, plus, paren = m.groups()
            kind = "other" if index or not paren else ("+=" if plus else "=")
            if kind == "=" and _LOCAL.search(line[:m.start(1)]):
                kind = "local"
            writes.setdefault(name, []).append((row, m.end() if paren else -1, kind))
        for m in _READS_INTO.finditer(line):
            writes.setdefault(m.group(1), []).append((row, -1, "other"))
    out: dict[str, ShellArray] = {}
    spans: list[tuple[int, int]] | None = None
    for name, found in writes.items():
        kinds = ["=" if k == "local" else k for _, _, k in found]
        if kinds.count("=") == 1 and "other" not in kinds and kinds[0] == "=":
            array = _read_array(lines, name, found)
            if array is not None:
                out[name] = array
            continue
        if "other" in kinds or any(k == "=" for _, _, k in found):
            continue  # a global array written twice: which value a command sees is not read
        spans = _function_spans(lines) if spans is None else spans
        groups: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
        for write in found:
            span = next((sp for sp in spans if sp[0] <= write[0] <= sp[1]), None)
            if span is None:
                groups = {}
                break
            groups.setdefault(span, []).append(write)
        for span, group in groups.items():
            if [k for _, _, k in group].count("local") == 1 and group[0][2] == "local":
                array = _read_array(lines, name, group)
                if array is not None:
                    array.scope = (span[0] + 1, span[1] + 1)
                    out[f"{name}@{array.first_line}"] = array
    return out


def _read_array(lines: list[str], name: str, found: list[tuple[int, int, str]]) -> ShellArray | None:
    """The array one assignment and its appends spell, or None where a body never closes or cannot be split."""
    array = None
    for row, col, _kind in found:
        end = _body_end(lines, row, col)
        if end is None:
            return None
        end_row, end_col = end
        if end_row == row:
            body = lines[row][col:end_col]
        else:
            body = "\n".join([lines[row][col:], *lines[row + 1:end_row], lines[end_row][:end_col]])
        words = _words(body, row + 1, lines)
        if words is None:
            return None
        if array is None:
            array = ShellArray(name, row + 1, last_line=end_row + 1)
        else:
            array.appends.append(row + 1)
        array.words.extend(words)
        array.text += ("\n" if array.text else "") + "\n".join(lines[row:end_row + 1])
    return array


def computed(word: str) -> bool:
    """Whether this word is computed before the command runs: by the shell (a variable, a command substitution) or by
    a template the file is rendered through first (Helm's `--{{ $key }}`, Jinja's `{% ... %}`; batch 15b)."""
    return "$" in word or "`" in word or "{{" in word or "{%" in word


def expanded_array(token: str, arrays: dict[str, ShellArray], line: int) -> ShellArray | None:
    """The array a command word expands whole (`"${ARGS[@]}"`, after the quotes are read off), when it was read and
    every write of it is above the command's line (an append below it does not reach this command)."""
    m = EXPANSION.fullmatch(token)
    array = arrays.get(m.group(1)) if m else None
    if m and array is None:  # a `local` array of the function the command is in
        array = next((a for key, a in arrays.items() if key.startswith(m.group(1) + "@") and a.scope
                      and a.scope[0] <= line <= a.scope[1]), None)
    if array is None or array.first_line > line or any(a > line for a in array.appends):
        return None
    return array


def array_at(arrays: dict[str, ShellArray], line: int) -> ShellArray | None:
    """The array whose assignment spans `line` (a command held whole in it: `cmd=( vllm serve "$m" ... )`)."""
    return next((a for a in arrays.values() if a.first_line <= line <= a.last_line), None)
