"""`version_aliases` answers from the file's node buckets, not a walk per function and assignment: held to the walking
version it replaced, on every file of two real releases and on shapes that decide the line-span shortcut."""

from __future__ import annotations

import ast
import zipfile

import pytest

from driftcheck.astnodes import dotted_name, walk
from driftcheck.client_model import cross_file_guards
from driftcheck.client_model.version_checks import (
    VERSION_TEXT, VERSION_WORD, _call_asks_a_version, introspects, version_aliases)
from driftcheck.client_model.version_checks import test_kind as kind_of_test
from tests.conftest import client_sources, vllm_sources


def _asks_a_version(value: ast.expr) -> bool:
    return any(_call_asks_a_version(n) for n in walk(value) if isinstance(n, ast.Call))


def _walking_aliases(tree: ast.AST) -> set[str]:
    """The implementation before the buckets (one walk per function and per assignment; `walk` is `ast.walk` without
    the ctx singletons)."""
    def returns_a_version(fn) -> bool:
        for ret in walk(fn):
            if isinstance(ret, ast.Return) and ret.value is not None:
                for n in walk(ret.value):
                    if isinstance(n, ast.Call) and (dotted_name(n.func) or "").rsplit(".", 1)[-1] == "version":
                        return True
                    if isinstance(n, ast.Attribute) and n.attr in ("__version__", "__version_tuple__"):
                        return True
                    if isinstance(n, ast.Compare) and any(  # `return parse(v) >= parse("0.12.0")`
                            (isinstance(side, ast.Constant) and isinstance(side.value, str) and VERSION_TEXT.match(side.value))
                            or (isinstance(side, ast.Call) and _call_asks_a_version(side)) for side in (n.left, *n.comparators)):
                        return True
        return False

    out = {fn.name for fn in walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
           and (any(introspects(c) for c in walk(fn) if isinstance(c, ast.Call))  # not another package's find_spec (20c)
                or returns_a_version(fn))}
    for node in (n for n in walk(tree) if isinstance(n, ast.Assign)):
        if any(VERSION_WORD.search(n.id if isinstance(n, ast.Name) else n.attr) or (isinstance(n, ast.Name) and n.id in out)
               for n in walk(node.value) if isinstance(n, (ast.Name, ast.Attribute))) or _asks_a_version(node.value):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _walking_release_branches(tree: ast.AST, aliases: set[str]) -> list[tuple[int, int]]:
    """The `if` branches as they were found before the aliases were made lazily (`match` cases come after them)."""
    constants = cross_file_guards._release_constants(tree)
    return [cross_file_guards.body_span(n.body) for n in walk(tree) if isinstance(n, ast.If)
            and kind_of_test(n.test, aliases) == "version" and cross_file_guards._names_releases(n.test, constants)]


def _trees(zip_path):
    with zipfile.ZipFile(zip_path) as z:
        for name in z.namelist():
            if name.endswith(".py"):
                try:
                    yield name, ast.parse(z.read(name))
                except (SyntaxError, ValueError):
                    continue


@pytest.mark.parametrize("source", [lambda: vllm_sources("0.16.0"), lambda: vllm_sources("0.32.0"),
                                    lambda: client_sources("speculators", "0.3.0")],
                         ids=["vllm-0.16.0", "vllm-0.32.0", "speculators-0.3.0"])
def test_same_answers_as_walking_on_a_release(source):
    checked = with_aliases = 0
    for name, tree in _trees(source()):
        expected = _walking_aliases(tree)
        assert version_aliases(tree) == expected, name
        ifs = _walking_release_branches(tree, expected)
        assert cross_file_guards._release_branches(tree)[:len(ifs)] == ifs, name
        checked += 1
        with_aliases += bool(expected)
    assert checked > 30 and with_aliases > 0  # the comparison saw files that bind version names


SHAPES = '''
import inspect, importlib.metadata as md

@decorate(inspect.signature(f))
def decorated():
    return 1

def outer():
    def inner():
        return md.version("vllm")
    return inner

def multi(
    a=inspect.signature(g)
        .parameters,
):
    pass

def plain():
    return 2

RELEASE = outer()
HAS = is_available(min_version="0.28.0")
FLAG = "x" in inspect.signature(plain).parameters
other = plain()
if RELEASE == "0.5.4":
    from .v054 import llm
CHAINED = RELEASE[:2]
LATER = (
    other,
    f"{CHAINED}",
)
self.version = plain()
NOT_BOUND = self.version_like if False else other
'''


def test_shapes_of_the_line_span_shortcut():
    tree = ast.parse(SHAPES)
    assert version_aliases(tree) == _walking_aliases(tree) == {"decorated", "outer", "inner", "multi", "RELEASE",
                                                                 "HAS", "FLAG", "CHAINED", "LATER",
                                                                 "NOT_BOUND"}
    assert cross_file_guards._release_branches(tree) == [(27, 27)]


def test_a_file_without_version_words_binds_nothing():
    tree = ast.parse("import os\nx = os.getenv('A')\ndef f():\n    return x\n")
    assert version_aliases(tree) == set() and cross_file_guards._release_branches(tree) == []
