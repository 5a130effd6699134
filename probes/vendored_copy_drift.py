"""DC110 vendored-copy-drift: the client holds a copy of a vLLM function that vLLM has since changed.

Clients copy vLLM helpers instead of importing them (a private helper, an API that moved between
releases). The copy keeps the old behaviour when vLLM changes its own: hs-connectors 0.7.0's
`extract_from_kv_cache` in `mooncake_hidden_states_connector.py` is vLLM's
`extract_from_kv_cache` (`example_hidden_states_connector.py`) with `block_size = kv_cache.shape[1]`;
vLLM 0.29 changed its helper to `shape[2]` with the KV-cache layout change, and the copy silently
reads the wrong slots. Nothing fails: a warning, `when: silent`.

The probe indexes every function and method of the vLLM the client was written for (its declared
requirement, or `--client-vllm`) by a structural hash: the function's AST with docstrings and
annotations dropped and every name, constant and attribute ignored, so a copy whose variables
were renamed hashes the same. The hashes of a file are computed once per release and kept with the
release's text index; only the functions whose text holds every attribute and keyword name the client's
function uses (a copy keeps those whatever it renames), and at least as many of the keywords, brackets and
operators as the client function's shape spells (`if`, `(`, `.`, `return`, `+`...), are parsed: each alone, cut from its file's text at
the next `def`, `class` or decorator line indented no deeper, with its whole file parsed only when the
cut does not parse. A client function of at least a few statements whose structure matches is a copy when
its normalised tokens (names numbered by first use, attributes and constants kept) are at least
85% alike. When the same function (same file and qualified name) in the target differs from the
original in its normalised form, and the client's copy is not already the target's version, the
finding shows the original's diff between the two releases (`details["original_diff"]`). Copies
whose original did not change, or that vLLM removed, stay quiet.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import re
import weakref

from driftcheck import shared_trees
from driftcheck.vllm_model.bodies import text_index_for
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule
from driftcheck.client_model.uses import loc_of
from driftcheck.astnodes import first_line, walk

RULE = Rule("DC110", "vendored-copy-drift", "Client copy of a vLLM function whose original changed since the client's vLLM",
            "warning", kind="behaviour", baseline=True, reads_release=True)

MIN_NODES = 24  # smaller functions (a getter, `return None`) are alike by accident, not by copying
SIMILAR = 0.85
INDEX_KEY = "vendored_copy_drift:v3"  # v3: one entry a function, [shape hash or None, qualname, line]; v2 was one a file
_SKIP_FIELDS = {"annotation", "returns", "type_comment", "ctx", "kind", "type_params"}


def _functions(tree: ast.Module):
    """(qualname, node) of module-level functions and methods of top-level classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{sub.name}", sub


def _body(fn) -> list[ast.stmt]:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def tokens(fn) -> tuple[list[str], list[str]]:
    """(shape tokens: node types only; full tokens: names numbered by first use, attributes and constants kept)."""
    shape: list[str] = []
    full: list[str] = []
    names: dict[str, str] = {}

    def name(n: str) -> str:
        return names.setdefault(n, f"n{len(names)}")

    def visit(node: ast.AST) -> None:
        kind = type(node).__name__
        shape.append(kind)
        if isinstance(node, ast.Name):
            full.append(name(node.id))
        elif isinstance(node, ast.arg):
            full.append(name(node.arg))
        elif isinstance(node, ast.Attribute):
            full.append(f".{node.attr}")
        elif isinstance(node, ast.Constant):
            full.append(repr(node.value)[:40])
        elif isinstance(node, ast.keyword):
            full.append(f"{node.arg}=")
        elif isinstance(node, (ast.operator, ast.cmpop, ast.unaryop, ast.boolop)):
            full.append(kind)
        else:
            full.append(kind)
        for field_name, value in ast.iter_fields(node):
            if field_name in _SKIP_FIELDS:
                continue
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item)
            elif isinstance(value, ast.AST):
                visit(value)

    try:
        visit(fn.args)
        for stmt in _body(fn):
            visit(stmt)
    except RecursionError:  # a 2,500-long attribute chain: no copy of vLLM code looks like that
        return [], []
    return shape, full


def shape(fn) -> list[str]:
    """`tokens(fn)[0]` without the full tokens: the node types in the same pre-order, by an explicit stack (what the
    release index computes for every function of a file, so it is the hot path of a first scan of a release)."""
    out: list[str] = []
    stack: list[ast.AST] = [*reversed(_body(fn)), fn.args]
    skip = _SKIP_FIELDS
    while stack:
        node = stack.pop()
        out.append(type(node).__name__)
        children: list[ast.AST] = []
        for name in node._fields:
            if name in skip:
                continue
            value = getattr(node, name, None)
            if isinstance(value, list):
                children += [item for item in value if isinstance(item, ast.AST)]
            elif isinstance(value, ast.AST):
                children.append(value)
        stack += reversed(children)
    return out


# What each node type spells in the text, once per node (its keyword, bracket or operator): a function whose shape has
# n nodes of these types holds at least n of these spellings in its text. Counted in a release function's region (a
# superset of its text) this rejects most of the functions whose text holds the anchors without parsing them.
_SPELLED = {"If": b"if", "IfExp": b"if", "For": b"for", "AsyncFor": b"for", "comprehension": b"for", "While": b"while",
            "Return": b"return", "Call": b"(", "Attribute": b".", "Subscript": b"[", "Lambda": b"lambda", "Raise": b"raise",
            "Try": b"try", "With": b"with", "AsyncWith": b"with", "Assert": b"assert", "Yield": b"yield",
            "YieldFrom": b"yield", "Await": b"await", "Assign": b"=", "AugAssign": b"=", "NamedExpr": b":=",
            "FunctionDef": b"def", "AsyncFunctionDef": b"def", "Add": b"+", "UAdd": b"+", "Sub": b"-", "USub": b"-",
            "Mult": b"*", "Pow": b"**", "Div": b"/", "FloorDiv": b"//", "Mod": b"%", "Not": b"not", "IsNot": b"is not",
            "Is": b"is", "In": b"in", "NotIn": b"not in", "And": b"and", "Or": b"or", "Eq": b"==", "NotEq": b"!=",
            "Lt": b"<", "Gt": b">", "LtE": b"<=", "GtE": b">=", "Pass": b"pass", "Break": b"break",
            "Continue": b"continue"}


def spelled(kinds: list[str]) -> tuple[tuple[bytes, int], ...]:
    """(text, least count) that a function of this shape spells: `Pow` needs two `*`, `IsNot` an `is` and a `not`."""
    need: dict[bytes, int] = {}
    for kind in kinds:
        for piece in _pieces(_SPELLED.get(kind, b"")):
            need[piece] = need.get(piece, 0) + 1
    return tuple(sorted(need.items(), key=lambda item: -item[1]))


def _pieces(spelling: bytes) -> list[bytes]:
    """The substrings one node's spelling adds to the counts: `**` is two `*`, `not in` a `not` and an `in`."""
    if spelling in (b"**", b"//"):
        return [spelling[:1]] * 2
    return spelling.split(b" ") if spelling else []


def _may_spell(data: bytes, start: int, end: int, need) -> bool:
    """Whether a region can hold a function of a shape that spells `need`. A region is cut at the next header line; one
    inside a multi-line string (an odd count of a triple quote, or a backslash-continued line) may cut the function
    short, so it is kept for the parse to decide."""
    for quote in (b'"""', b"'''"):
        if data.count(quote, start, end) % 2:
            return True
    if data.find(b"\\\n", start, end) >= 0 or data.find(b"\\\r\n", start, end) >= 0:
        return True
    return all(data.count(piece, start, end) >= n for piece, n in need)


def _hash(items: list[str]) -> str:
    return hashlib.sha1("\0".join(items).encode()).hexdigest()[:16]


_TREES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # text index -> {file: its functions}
_REGIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # text index -> {file: function_regions}
_ORIGINALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # baseline's text index -> {client fn: _original}

# A `def`, `class` or decorator line: where the text of a function can end, and where one begins (header_lines).
_NAME_AFTER = re.compile(rb"[ \t]+(\w+)")
_BLANK = b" \t"


def header_lines(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """(line start, indent, b"def" / b"class" / None for a decorator, name) of each line that is blanks, then `def` or
    `class` (after `async` too), blanks and a name, or `@`: what `re.finditer(rb"\\n([ \\t]*)(?:(?:async[ \\t]+)?
    (def|class)[ \\t]+(\\w+)|@)", b"\\n" + data)` matches (the test holds it to that), found from the occurrences of
    the three words, where that regex was tried at every line of the file (DC110's release scan was that regex: a
    fifth of a seed scan's first run)."""
    out: list[tuple[int, int, bytes | None, bytes | None]] = []
    for word in (b"def", b"class", b"@"):
        at = data.find(word)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            lead = data[start:at]
            blank = lead.strip(_BLANK)
            if word == b"@":
                if not blank:
                    out.append((start, len(lead), None, None))
            elif not blank or (blank == b"async" and lead.rstrip(_BLANK) != lead
                               and lead.lstrip(_BLANK).startswith(b"async")):
                name = _NAME_AFTER.match(data, at + len(word))
                if name is not None:
                    indent = len(lead) - len(lead.lstrip(_BLANK))
                    out.append((start, indent, word, name.group(1)))
            at = data.find(word, at + 1)
    out.sort()
    return out


def function_regions(data: bytes) -> list[tuple[str, int, int, int]]:
    """(qualname, line, start, end) of what `_functions` would yield, read from the text: a function runs from its
    `def` to the next `def`, `class` or decorator line indented no deeper (a superset of its body: what follows it
    at a shallower indent). A method is a `def` directly under a top-level `class`. A string holding such a line
    can cut a function short; its cut then does not parse, and the caller parses the whole file instead."""
    out: list[tuple[str, int, int, int]] = []
    open_: list[tuple[int, bytes, str | None, int]] = []  # enclosing headers: indent, kind, name, index in out or -1
    line, pos = 1, 0
    for at_line, indent, kind, name in header_lines(data):
        while open_ and open_[-1][0] >= indent:
            _i, _k, _name, at = open_.pop()
            if at >= 0:
                q, ln, start, _end = out[at]
                out[at] = (q, ln, start, at_line)
        if kind is None:
            continue  # a decorator only ends what it follows
        line += data.count(b"\n", pos, at_line)
        pos = at_line
        qual = None
        if kind == b"def" and indent == 0:
            qual = name.decode()
        elif kind == b"def" and len(open_) == 1 and open_[0][1] == b"class" and open_[0][0] == 0:
            qual = f"{open_[0][2]}.{name.decode()}"
        open_.append((indent, kind, name.decode() if kind == b"class" else qual, len(out) if qual else -1))
        if qual is not None:
            out.append((qual, line, at_line, len(data)))
    # headers still open run to the end of the file (their entries already say so)
    return out


def function_index(api, rel: str, region: tuple[str, int, int, int]) -> list:
    """[shape hash or None when too small to copy, qualname, line] of one function of a release, computed once per
    function and kept with the release's text index."""
    index = text_index_for(api)
    return index.remember(f"{INDEX_KEY}:{rel}:{region[1]}", lambda: _index_function(index, rel, region))


def _index_function(index, rel: str, region: tuple[str, int, int, int]) -> list:
    qual, line, start, end = region
    text = index.blob(rel)[start:end].decode("utf-8", errors="replace")
    indented = text[:1] in (" ", "\t")
    try:
        tree = ast.parse("if 1:\n" + text if indented else text)
        fn = tree.body[0].body[0] if indented else tree.body[0]
    except (SyntaxError, ValueError, RecursionError, IndexError, AttributeError):
        fn = None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        # the cut did not parse: the whole file's functions, found by their `def` line (by name where a line break
        # Python counts and this scan does not, a lone "\r", moved the lines)
        whole = _whole_file_functions(index, rel)
        fn = next((f for _q, f in whole if f.lineno == line), None) or next((f for q, f in whole if q == qual), None)
        if fn is None:
            return [None, qual, line]
    kinds = shape(fn)
    return [_hash(kinds) if len(kinds) >= MIN_NODES else None, qual, line]


def _whole_file_functions(index, rel: str) -> list:
    cache = _TREES.setdefault(index, {})  # this process only: a parsed tree is not plain data
    if rel not in cache:
        try:
            cache[rel] = list(_functions(shared_trees.parse(index.blob(rel).decode("utf-8", errors="replace"))))
        except (SyntaxError, ValueError, RecursionError):
            cache[rel] = []
    return cache[rel]


def _regions(index, rel: str) -> list[tuple[str, int, int, int]]:
    cache = _REGIONS.setdefault(index, {})  # this process only: offsets are cheap to find again
    if rel not in cache:
        cache[rel] = function_regions(index.blob(rel))
    return cache[rel]


def matching_functions(api, rel: str, words: set[str], need=()) -> list:
    """Index entries of the functions of one release file whose text holds every word, and enough of the spellings in
    `need` (`spelled`) to have the shape asked for."""
    index = text_index_for(api)
    data = index.blob(rel)
    needles = [w.encode() for w in words]
    return [function_index(api, rel, region) for region in _regions(index, rel)
            if all(data.find(n, region[2], region[3]) >= 0 for n in needles)
            and _may_spell(data, region[2], region[3], need)]


def anchors(fn) -> set[str]:
    """The attribute and keyword names a function uses: a copy keeps them, whatever it renames."""
    out = set()
    for node in walk(fn):
        if isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            out.add(node.arg)
    return out


def candidate_files(api, words: set[str]) -> list[str]:
    """Files of the release that mention every anchor. The first word is searched in the whole tree (an answer the
    release's text index keeps), the others only in the files still left: on a release's first scan that is one
    pass over its files, not one a word."""
    index = text_index_for(api)
    # words the index already answered first, rarest first; then the longest (likely the rarest) unanswered ones
    order = sorted(words, key=lambda w: (0, len(index.files_mentioning(w)), w) if index.knows(w) else (1, -len(w), w))
    files: set[str] | None = None
    for word in order:
        if files is None:
            files = set(index.files_mentioning(word))
        else:
            needle = word.encode()
            files = {rel for rel in files if needle in index.blob(rel)}
        if not files:
            break
    return sorted(files or ())


def _find(api, rel: str, qual: str):
    tree = api.parse(rel)
    if tree is None:
        return None
    return next((fn for q, fn in _functions(tree) if q == qual), None)


def _source(api, rel: str, fn) -> list[str]:
    lines = api.tree.read_text(rel).splitlines()
    return lines[first_line(fn) - 1:fn.end_lineno]


def _original(baseline, client_rel: str, shape_hash: str, full: list[str], words: set[str], need=(), qual: str = ""):
    """(similarity, file, qualname, node, full-token hash) of the baseline function the client's function copies
    most closely, or None: what the client copied, whichever release it is then compared with. Of bodies alike, the one
    whose qualname and then file name are the client's (30d MSG-1: VITA's `MixtralAttention.forward` in `mixtral.py` is
    Mixtral's, not Arctic's, whose body 0.5.5 had word for word)."""
    best, rank = None, None
    stem = client_rel.rsplit("/", 1)[-1]
    hits = [(rel, entry) for rel in candidate_files(baseline, words) if rel.endswith(".py")
            for entry in matching_functions(baseline, rel, words, need) if entry[0] == shape_hash]
    for rel, (_shape, vqual, _line) in hits:
        if rel == client_rel:
            continue  # the client is a vLLM tree itself: a function is not a copy of itself
        original = _find(baseline, rel, vqual)
        if original is None:
            continue
        otoks = tokens(original)[1]
        vfull = _hash(otoks)
        ratio = difflib.SequenceMatcher(None, full, otoks, autojunk=False).ratio()
        mine = (ratio, vqual == qual, rel.rsplit("/", 1)[-1] == stem)
        if ratio >= SIMILAR and (rank is None or mine > rank):
            best, rank = (ratio, rel, vqual, original, vfull), mine
    return best


def check(ctx: ScanContext):
    functions = [(file, qual, fn) for file in ctx.usage.files for qual, fn in _functions(file.tree)]
    if not functions:
        return
    baseline = ctx.baseline()
    if baseline is None or (baseline.version and baseline.version == ctx.api.version):
        return  # no vLLM of the client's own to find the originals in, or nothing changed
    candidates = []
    for file, qual, fn in functions:
        kinds = shape(fn)  # hashed as the release index hashes its functions
        if len(kinds) >= MIN_NODES:
            candidates.append((file, qual, fn, _hash(kinds), tokens(fn)[1], spelled(kinds)))
    for file, qual, fn, shape_hash, full, need in candidates:
        words = anchors(fn)
        if not words:
            continue  # nothing but local names and operators: too generic to tell a copy from a coincidence
        originals = _ORIGINALS.setdefault(text_index_for(baseline), {})  # a matrix asks again for each release
        key = (file.rel, qual, shape_hash, _hash(full), frozenset(words))
        if key not in originals:
            originals[key] = _original(baseline, file.rel, shape_hash, full, words, need, qual)
        best = originals[key]
        if best is None:
            continue
        ratio, rel, vqual, original, vfull = best
        now = _find(ctx.api, rel, vqual)
        if now is None:
            continue  # vLLM removed its original: nothing to compare the copy with
        now_full = _hash(tokens(now)[1])
        if now_full == vfull or now_full == _hash(full):
            continue  # the original did not change, or the client already follows the target's version
        diff = list(difflib.unified_diff(_source(baseline, rel, original), _source(ctx.api, rel, now),
                                         f"vLLM {baseline.version} {rel}", f"vLLM {ctx.api.version} {rel}", lineterm="", n=1))
        removed = [d for d in diff[2:] if d[:1] == "-" and d[1:].strip()]
        added = [d for d in diff[2:] if d[:1] == "+" and d[1:].strip()]
        changed = removed[:2] + added[:2]
        message = (f"`{qual}` is a copy of vLLM's `{vqual}` ({rel}, {ratio:.0%} alike in vLLM {baseline.version}, the client's "
                   f"vLLM), which {ctx.version_label()} has changed: the copy keeps the old behaviour. Changed lines: "
                   + "; ".join(c.strip()[:100] for c in changed) + (" ..." if len(removed) + len(added) > 4 else "") + ".")
        yield ctx.finding(RULE, message, loc_of(file, fn), ctx.vllm_location(rel, now.lineno),
                          f"{rel}:{vqual}", when="silent", fix=False, original=f"{rel}:{vqual}",
                          original_line=original.lineno, similarity=round(ratio, 3), original_diff="\n".join(diff))
