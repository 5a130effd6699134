"""astnodes.binding_counts: one table of how a file binds each name, which the visitor (names bound twice) and DC119
(names only an import binds) read; each reading is held to the count it made itself before the table."""

from __future__ import annotations

import ast
import textwrap

from conftest import vllm_sources

from driftcheck.astnodes import binding_counts, nodes_of
from driftcheck.sources.sources import ZipTree


def _bound_twice_by_hand(tree):
    seen = {}
    for n in ast.walk(tree):
        names = []
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            names = [(a.asname or a.name).split(".")[0] for a in n.names]
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [n.name]
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names = [n.id]
        for name in names:
            seen[name] = seen.get(name, 0) + 1
    return {name for name, count in seen.items() if count > 1}


def _import_only_by_hand(tree):
    imported = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                name = a.asname or a.name.split(".")[0]
                imported[name] = imported.get(name, 0) + 1
    other = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    other |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
    other |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    return imported, other


def _twice(tree):
    return {name for name, k in binding_counts(tree).items() if k.get("import", 0) + k.get("def", 0) + k.get("store", 0) > 1}


def test_the_readings_agree_with_counting_by_hand_on_a_release():
    tree = ZipTree(vllm_sources("0.16.0"))
    rels = [r for r in tree.iter_files("") if r.endswith(".py")][::2]
    assert len(rels) > 500
    for rel in rels:
        module = ast.parse(tree.read_bytes(rel))
        counts = binding_counts(module)
        assert _twice(module) == _bound_twice_by_hand(module), rel
        imported, other = _import_only_by_hand(module)
        assert {n: k["import"] for n, k in counts.items() if "import" in k} == imported, rel
        assert {n for n, k in counts.items() if k.keys() - {"import"}} == other, rel


def test_kinds_of_a_built_file():
    module = ast.parse(textwrap.dedent("""\
        import os.path
        from vllm import _custom_ops as ops
        if xpu:
            from vllm._xpu_ops import xpu_ops as ops
        def f(a, *args, b=1, **kw):
            for i in range(3):
                del a
        class C: pass
        x = y = 1
        with open(p) as fh: pass
    """))
    counts = binding_counts(module)
    assert counts["os"] == {"import": 1} and counts["ops"] == {"import": 2}
    assert counts["f"] == {"def": 1} and counts["C"] == {"def": 1}
    assert counts["a"] == {"arg": 1, "del": 1} and counts["args"] == counts["kw"] == counts["b"] == {"arg": 1}
    assert counts["i"] == counts["x"] == counts["y"] == counts["fh"] == {"store": 1}
    assert "range" not in counts and "p" not in counts
    assert binding_counts(module) is counts  # one table per tree
    assert _twice(module) == {"ops"}
    assert nodes_of(module, ast.Import)  # the buckets the table was read from are the tree's own
