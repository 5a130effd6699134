"""astnodes.walk / children: ast.walk's and ast.iter_child_nodes' nodes in their order, less the ctx singletons.

Every whole-tree question walks with these, so they are checked node for node against the standard library on
every file of a real release (and on hand-made nodes that leave optional fields unset).
"""

from __future__ import annotations

import ast
import zipfile

from conftest import vllm_sources
from hypothesis import given, settings
from hypothesis import strategies as st

from driftcheck.astnodes import children, first_line, nodes_of, walk, within


def _expected_walk(tree: ast.AST) -> list[int]:
    return [id(n) for n in ast.walk(tree) if not isinstance(n, ast.expr_context)]


def test_walk_and_children_match_the_standard_library_on_a_whole_release():
    with zipfile.ZipFile(vllm_sources("0.32.0")) as z:
        names = [n for n in z.namelist() if n.endswith(".py")]
        assert len(names) > 2000
        for k, name in enumerate(names):
            try:
                tree = ast.parse(z.read(name))
            except (SyntaxError, ValueError):
                continue
            assert [id(n) for n in walk(tree)] == _expected_walk(tree), name
            for node in ast.walk(tree) if k % 4 == 0 else ():  # every node's children in a quarter of the files
                assert [id(c) for c in children(node)] == \
                    [id(c) for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)], name
            calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
            assert nodes_of(tree, ast.Call) == calls, name


def test_walk_never_yields_ctx_but_keeps_it_readable():
    tree = ast.parse("x.y = z[0]\ndel a\n")
    kinds = {type(n) for n in walk(tree)}
    assert not kinds & {ast.Load, ast.Store, ast.Del}
    stores = [n for n in walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)]
    assert [n.attr for n in stores] == ["y"]


def test_hand_made_nodes_with_unset_fields():
    node = ast.Call(func=ast.Name(id="f"))  # args and keywords never set
    assert [type(n) for n in walk(node)] == [ast.Call, ast.Name]
    sub = ast.Subscript(value=ast.Name(id="a"), slice=ast.Constant(1))  # no ctx set
    assert [type(c) for c in children(sub)] == [ast.Name, ast.Constant] == [type(c) for c in ast.iter_child_nodes(sub)]


_EXPR = st.recursive(
    st.sampled_from(["a", "b.c", "1", "'s'", "f()"]),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: f"({t[0]} + {t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}({t[1]}, k={t[0]})"),
        st.tuples(inner, inner).map(lambda t: f"[{t[0]} for x in {t[1]} if x]"),
        st.tuples(inner, inner).map(lambda t: f"{{{t[0]}: {t[1]}}}"),
        inner.map(lambda e: f"(lambda y: {e})"),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_EXPR, _EXPR)
def test_walk_order_on_generated_code(left, right):
    tree = ast.parse(f"def g(p, *a, q=1, **kw):\n    x = {left}\n    if {right}:\n        return x\n")
    assert [id(n) for n in walk(tree)] == _expected_walk(tree)


def test_source_text_is_what_unparse_writes():
    """Every annotation, default and base of a real release, and the constants unparse writes its own way."""
    from driftcheck.astnodes import source_text

    seen = 0
    with zipfile.ZipFile(vllm_sources("0.16.0")) as z:
        for name in [n for n in z.namelist() if n.endswith(".py")][::3]:
            try:
                tree = ast.parse(z.read(name))
            except (SyntaxError, ValueError):
                continue
            for node in walk(tree):
                exprs = []
                if isinstance(node, ast.arg) and node.annotation is not None:
                    exprs.append(node.annotation)
                elif isinstance(node, ast.arguments):
                    exprs += [d for d in node.defaults + node.kw_defaults if d is not None]
                elif isinstance(node, ast.ClassDef):
                    exprs += node.bases
                for expr in exprs:
                    assert source_text(expr) == ast.unparse(expr)
                    seen += 1
    assert seen > 10_000
    for text in ("None", "True", "-1", "10**9", "1_000", "0x10", "1.5", "'s'", "u's'", "b'x'", "...", "a.b.c", "a[0].b"):
        expr = ast.parse(text, mode="eval").body
        assert source_text(expr) == ast.unparse(expr), text


def test_within_and_first_line_count_decorators_as_ast_walk_does():
    tree = ast.parse("@register(\n    name=helper())\ndef f():\n    g()\n\nh()\n")
    fn = tree.body[0]
    assert first_line(fn) == 1 and first_line(tree.body[1].value) == 6
    calls = nodes_of(tree, ast.Call)
    walked = {id(n) for n in ast.walk(fn)}
    assert [id(c) for c in within(calls, fn)] == [id(c) for c in calls if id(c) in walked]
    assert len(within(calls, fn)) == 3


def test_functions_at_are_the_functions_a_walk_finds_holding_the_line():
    # astnodes.functions_at (a descent through the statement bodies) against a walk of the whole tree, on every line of
    # a real model runner
    import ast
    import zipfile

    from driftcheck.astnodes import functions_at

    from conftest import vllm_sources

    with zipfile.ZipFile(vllm_sources("0.16.0")) as zf:
        text = zf.read("vllm/v1/worker/gpu_model_runner.py").decode()
    tree = ast.parse(text)
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for line in range(1, text.count("\n") + 2, 7):
        walked = sorted((n for n in defs if n.lineno <= line <= (n.end_lineno or n.lineno)), key=lambda n: n.lineno)
        assert functions_at(tree, line) == walked
