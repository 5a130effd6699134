"""Which tests in a client file ask which vLLM it runs on: version comparisons and the names bound to a
version, `find_spec` / `inspect.signature` introspection, `hasattr`/`getattr` probes and their aliases, and
what kind of guard each test makes.
"""

from __future__ import annotations

import ast
import bisect
import re
import weakref

from driftcheck.astnodes import dotted_name, first_line, nodes_of, walk


VERSION_WORD = re.compile(r"version", re.I)


def checked_names(test: ast.expr) -> frozenset[str]:
    """The attribute names a test checks with hasattr(x, "n") / getattr(x, "n", ...)."""
    return frozenset(n.args[1].value for n in walk(test) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id in ("hasattr", "getattr") and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant)
                     and isinstance(n.args[1].value, str))


_INTROSPECTION = {"find_spec", "signature", "getfullargspec", "getargspec"}  # asking which vLLM this is


def calls_one_of(call: ast.Call, names) -> bool:
    """Whether `call` calls, by a (dotted) name, a function whose last name is one of `names` (`inspect.signature`
    for "signature"). The last name is checked first: a whole-platform client has hundreds of thousands of calls."""
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return last in names and dotted_name(func) is not None


def introspects(call: ast.Call) -> bool:
    """`find_spec(...)`, `inspect.signature(...)`: a test asking which vLLM this is. Not `find_spec("auto_gptq")`:
    whether another package is installed says nothing of what vLLM has (batch 20c's R2: euroeval's `if quantization ==
    "gptq" and find_spec("auto_gptq") is None: raise` was taken for a version check, and a certain AttributeError
    after it for a guarded one)."""
    return calls_one_of(call, _INTROSPECTION) and not _finds_another_package(call)


def _finds_another_package(call: ast.Call) -> bool:
    """`find_spec("name")` of a module outside vLLM's package, spelled out; or of `vllm` itself, which asks only
    whether vLLM is installed: true wherever a release is scanned (unsloth_zoo's `if find_spec("vllm") is not None:`
    around an import 0.8.5 lacks was read as a version check, 23b's R4)."""
    return _names_another_package(call, ("find_spec",), lambda module: module.split(".")[0] == "vllm" and module != "vllm")


def _names_another_package(call: ast.Call, functions, is_vllms) -> bool:
    """A call of one of `functions` whose first argument is a string that `is_vllms` says names no vLLM package."""
    first = call.args[0] if call.args else None
    return isinstance(first, ast.Constant) and isinstance(first.value, str) and calls_one_of(call, functions) \
        and not is_vllms(first.value)


VERSION_TEXT = re.compile(r"^\d+\.\d+(\.\d+)?")  # "0.28.0", "0.5"


_OWN_ALIASES: "weakref.WeakKeyDictionary[ast.AST, frozenset[str]]" = weakref.WeakKeyDictionary()


def version_aliases(tree: ast.AST, imported: frozenset[str] = frozenset()) -> set[str]:
    """`_version_aliases`, kept per tree when nothing is imported: the release-branch search, the imports from other
    client files and each file's guards all ask it (a pool's workers inherit what was found before they forked)."""
    if imported:
        return _version_aliases(tree, imported)
    found = _OWN_ALIASES.get(tree)
    if found is None:
        found = _OWN_ALIASES[tree] = frozenset(_version_aliases(tree, frozenset()))
    return set(found)


def _version_aliases(tree: ast.AST, imported: frozenset[str]) -> set[str]:
    """Names bound to a version (`release = vllm.__version_tuple__[:3]`) or to a check of one
    (`HAS_X = is_vllm_available(min_version="0.28.0")`), and the file's functions that read a signature
    (`_has_argument(fn, "inputs")`), return a version or compare one (`return parse(v) >= parse("0.12.0")`): a test on
    them is a version check. `imported`: names the file imports that another client file binds so
    (`cross_file_guards.imported_version_aliases`)."""
    # from the file's buckets (`nodes_of`), not a walk per function and per assignment: a function reads a signature
    # or returns a version when such a call or return lies within its lines (what walking it would reach)
    marks = [c.lineno for c in nodes_of(tree, ast.Call) if introspects(c)]
    marks += [r.lineno for r in nodes_of(tree, ast.Return) if r.value is not None
              and (_gives_a_version(r.value) or _compares_a_version(r.value))]
    out: set[str] = set(imported)
    if marks:
        for fn in nodes_of(tree, ast.FunctionDef, ast.AsyncFunctionDef):
            start = first_line(fn)
            if any(start <= line <= fn.end_lineno for line in marks):
                out.add(fn.name)
    # an assignment binds a version when its value holds a name read like one, a call asking one, or a name already
    # bound to one: found by where those nodes start (inside the value's span), not by a walk of every value
    names = {n.id for n in nodes_of(tree, ast.Name)}  # each distinct name searched once, not each read of it
    names = {name for name in names if VERSION_WORD.search(name)}
    attrs = {n.attr for n in nodes_of(tree, ast.Attribute)}
    attrs = {attr for attr in attrs if VERSION_WORD.search(attr)}
    hits = sorted(([_start(n) for n in nodes_of(tree, ast.Name) if n.id in names] if names else [])
                  + ([_start(n) for n in nodes_of(tree, ast.Attribute) if n.attr in attrs] if attrs else [])
                  + [_start(c) for c in nodes_of(tree, ast.Call) if _call_asks_a_version(c)])
    if not out and not hits:
        return out  # no name reads like a version and no call asks one: no assignment can bind one
    names_at: dict[str, list[tuple[int, int]]] | None = None  # name -> where it is read, made once a name is bound
    for node in nodes_of(tree, ast.Assign):
        value = node.value
        lo, hi = _start(value), (value.end_lineno, value.end_col_offset)
        found = _any_within(hits, lo, hi)
        if not found and out:
            if names_at is None:
                names_at = {}
                for n in nodes_of(tree, ast.Name):
                    names_at.setdefault(n.id, []).append(_start(n))
                for starts in names_at.values():
                    starts.sort()  # the buckets are in walk order (breadth first), not in the text's
            found = any(_any_within(names_at.get(name, ()), lo, hi) for name in out)
        if found:
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _any_within(starts, lo: tuple[int, int], hi: tuple[int, int]) -> bool:
    """Whether a node starting at one of `starts` (sorted) lies in [lo, hi): inside the expression spanning them."""
    i = bisect.bisect_left(starts, lo)
    return i < len(starts) and starts[i] < hi


def _gives_a_version(value: ast.expr) -> bool:
    """What a helper returns is an installed package's version: `importlib.metadata.version(pkg)` (or `version(pkg)`
    imported from there), `vllm.__version__`."""
    for n in walk(value):
        if isinstance(n, ast.Call) and calls_one_of(n, ("version",)):
            return True
        if isinstance(n, ast.Attribute) and n.attr in ("__version__", "__version_tuple__"):
            return True
    return False


def _compares_a_version(value: ast.expr) -> bool:
    """A comparison with a release (`parse(v) >= parse("0.12.0")`, `v < "0.9"`), or a prefix test with a release
    (`v.startswith("0.26")`) or between two names read like versions (`version_text.startswith(TARGET_VLLM_VERSION)`):
    what a helper answering "is this vLLM new enough" (or "the one I was written for") returns (RA)."""
    for n in walk(value):
        if isinstance(n, ast.Compare):
            for side in (n.left, *n.comparators):
                if _version_text(side) or (isinstance(side, ast.Call) and _call_asks_a_version(side)):
                    return True
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("startswith", "endswith") \
                and n.args and (any(_version_text(side) for side in (n.func.value, *n.args))
                                or all(_reads_as_a_version(side) for side in (n.func.value, *n.args))):
            return True
    return False


def _reads_as_a_version(node: ast.expr) -> bool:
    """A name or attribute named like a version (`version_text`, `vllm.__version__`, `TARGET_VLLM_VERSION`)."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return bool(name and VERSION_WORD.search(name))


def module_version_aliases(tree: ast.Module, imported: frozenset[str] = frozenset()) -> frozenset[str]:
    """Those of `version_aliases` a module defines at its top level: what another file can import from it."""
    top = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    top |= {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    return frozenset(version_aliases(tree, imported) & top)


def _call_asks_a_version(call: ast.Call) -> bool:
    """A call given a version (a keyword named like one, or a string that reads as one: "0.28.0"), or one that
    reads a signature."""
    if introspects(call):
        return True  # `ACCEPTS = "timeout" in inspect.signature(Base.__init__).parameters`
    for k in call.keywords:
        if k.arg and VERSION_WORD.search(k.arg) or _version_text(k.value):
            return True
    return any(_version_text(a) for a in call.args) if call.args else False


def _version_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and VERSION_TEXT.match(node.value) is not None


def probe_aliases(tree: ast.AST) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """`v = getattr(spec, "blocks_per_chunk", None)` (or hasattr): v -> (names probed, objects probed)."""
    out: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    for node in nodes_of(tree, ast.Assign):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and is_probe(node.value):
            out[node.targets[0].id] = (checked_names(node.value), _probed(node.value))
    return out


def is_probe(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr") \
        and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)


def _probed(test: ast.expr) -> frozenset[str]:
    """The objects a test probes with hasattr/getattr, as source text (`spec`, `self.runner`)."""
    return frozenset(d for d in (dotted_name(n.args[0]) for n in walk(test) if is_probe(n)) if d)


_VERSION_OF = {"version", "get_distribution", "distribution"}  # `importlib.metadata.version("ray")`, pkg_resources
_FOREIGN: "weakref.WeakKeyDictionary[ast.AST, frozenset[str]]" = weakref.WeakKeyDictionary()


def _another_package_version(node: ast.AST) -> bool:
    """`version("ray")`, `get_distribution("ray")`: a call naming an installed distribution that is not vLLM's."""
    return isinstance(node, ast.Call) and _names_another_package(
        node, _VERSION_OF, lambda distribution: distribution.replace("_", "-").lower().startswith("vllm"))


def other_version_names(tree: ast.AST) -> frozenset[str]:
    """Names the file binds to another package's version (`current_version = version.parse(
    importlib.metadata.version("ray"))`): a test on them asks nothing about vLLM (batch 20g's VR1: the check of Ray's
    version that vLLM's old `ray_utils` makes, copied into forks, was "a vLLM version check")."""
    found = _FOREIGN.get(tree)
    if found is None:
        marks = [c for c in nodes_of(tree, ast.Call) if _another_package_version(c)]
        names: set[str] = set()
        if marks:
            for node in nodes_of(tree, ast.Assign):
                lo, hi = _start(node.value), (node.value.end_lineno, node.value.end_col_offset)
                if any(lo <= _start(c) < hi for c in marks):
                    names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        found = _FOREIGN[tree] = frozenset(names)
    return found


def test_kind(test: ast.expr, aliases: frozenset[str] | set[str] = frozenset(), probes: dict | None = None,
              other_versions: frozenset[str] = frozenset()) -> str | None:
    """`other_versions`: the file's names bound to another package's version (`other_version_names`): a test that
    reads one, or asks another package's version itself, is no vLLM version check, whatever its names are called."""
    other = any(_another_package_version(n) or (isinstance(n, ast.Name) and n.id in other_versions) for n in walk(test))
    kinds = set()
    for node in walk(test):
        if probes and isinstance(node, ast.Name) and node.id in probes:
            kinds.add("hasattr")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("hasattr", "getattr"):
                kinds.add("hasattr")
            elif node.func.id == "isinstance" and not _builtin_types_only(node):
                kinds.add("isinstance")
        if _class_name_of(node):
            kinds.add("isinstance")  # `'LoRA' in layer.__class__.__name__`: a test of the object's class (XB)
        if isinstance(node, ast.Call) and introspects(node):
            # `importlib.util.find_spec("vllm.profiler.wrapper") is None`, `"x" in inspect.signature(f).parameters`:
            # which vLLM this is
            kinds.add("version")
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) \
            and ("vllm" in node.attr.lower() or not _field_of_an_object(node)) else None
        if name and (VERSION_WORD.search(name) and not other
                     or (isinstance(node, ast.Name) and name in aliases and name not in other_versions)):
            kinds.add("version")
    for kind in ("version", "hasattr", "isinstance"):
        if kind in kinds:
            return kind
    return None


def _builtin_types_only(call: ast.Call) -> bool:
    """`isinstance(attn_metadata, dict)`: a test against Python's own types, which every vLLM release has alike; it picks
    data, not the release or its classes, so it guards no vLLM use (29d M1: vLLM 0.30.0's kpool indexer, whose
    `xpu_ops.top_k_per_row_prefill` after `if not isinstance(attn_metadata, dict): return` was only a warning)."""
    if len(call.args) != 2:
        return False
    kinds = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
    return bool(kinds) and all(isinstance(k, ast.Name) and k.id in _BUILTIN_TYPES for k in kinds)


_BUILTIN_TYPES = frozenset({"dict", "list", "tuple", "set", "frozenset", "str", "bytes", "bytearray", "int", "float",
                            "bool", "complex"})


def _field_of_an_object(node: ast.Attribute) -> bool:
    """A member read off an object's member (`self.kv_cache_spec.model_version`, `cfg.hf_config.version`): data that
    object holds, not the installed vLLM's version, which code reads off a module or a name (`vllm.__version__`,
    `envs.VLLM_VERSION`, `self.vllm_version`; 28c FW2's "vLLM version check" was vLLM's MLA indexer testing a spec's
    `model_version`)."""
    return isinstance(node.value, (ast.Attribute, ast.Subscript, ast.Call)) and not VERSION_WORD.search(
        ast.unparse(node.value))


def _class_name_of(node: ast.AST) -> bool:
    """`x.__class__.__name__` or `type(x).__qualname__`: the name of an object's class, which a test reads to tell
    the classes the object may be apart, as `isinstance` does."""
    if not (isinstance(node, ast.Attribute) and node.attr in ("__name__", "__qualname__")):
        return False
    owner = node.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "__class__") or (
        isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "type" and len(owner.args) == 1)


def probe_of(test: ast.expr, probes: dict) -> tuple[frozenset[str], frozenset[str]]:
    """(attribute names, objects) a test probes, directly or through a name bound to a getattr/hasattr."""
    names, receivers = set(checked_names(test)), set(_probed(test))
    for node in walk(test):
        if isinstance(node, ast.Name) and node.id in probes:
            names |= probes[node.id][0]
            receivers |= probes[node.id][1]
    return frozenset(names), frozenset(receivers)
