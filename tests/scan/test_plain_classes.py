"""`builds_as_written`: the one test of "`Name(...)` builds this client class" that the inference's objects of a
client class, the cross-file stand-in and the inherited vLLM construction share."""

import ast

import pytest

from driftcheck.client_model.plain_classes import builds_as_written


def _cls(src: str, name: str = "Runner"):
    tree = ast.parse(src)
    return tree, next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)


def test_a_top_level_class_bound_once_is_built_as_written():
    tree, cls = _cls("from vllm.x import Base\nclass Runner(Base):\n    def go(self): pass\n")
    assert builds_as_written(tree, cls, {"go"})


@pytest.mark.parametrize("src, members, why", [
    ("class Runner(Base):\n    pass\nRunner = wrap(Runner)\n", set(), "rebound after: the call reaches wrap's value"),
    ("if X:\n    class Runner(Base): pass\n", set(), "not a top-level statement"),
    ("class Runner(Base): pass\ntry:\n    from other import Runner\nexcept ImportError:\n    pass\n", set(),
     "an import in a try block binds the name too"),
    ("class Runner(Base, metaclass=Meta): pass\n", set(), "a metaclass may hand back anything"),
    ("class Runner(Base):\n    def __new__(cls): return object()\n", {"__new__"}, "its own __new__"),
    ("class Runner(Base): pass\n", {"__new__"}, "a client base's __new__"),
])
def test_what_may_build_something_else_is_not(src, members, why):
    tree, cls = _cls(src)
    assert not builds_as_written(tree, cls, members), why
