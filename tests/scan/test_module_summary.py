"""The module summary (vllm_model/pysummary.py, class_summary.py) on real release files."""

from __future__ import annotations

import ast

from conftest import CACHE_DIR
from driftcheck.sources.targets import resolve_vllm
from driftcheck.vllm_model import pysummary
from driftcheck.vllm_model.api_index import _decode
from driftcheck.vllm_model.class_summary import _may_set_by_name
from driftcheck.vllm_model.module_summary import ModuleInfo


def _classes(rel: str, source: str, setattr_at):
    info = ModuleInfo(name=rel[:-3].replace("/", "."), path=rel, is_package=False)
    pysummary._Summariser(info, scan_calls=pysummary._DATACLASS_CALL.search(source) is not None,
                          setattr_at=setattr_at).run(ast.parse(source))
    return info.classes


def test_methods_walked_whole_only_where_their_lines_name_setattr_give_the_same_classes():
    """A method's attributes are read from its statements alone unless its own lines hold `setattr`, `register_*` or
    `add_module`; on real files that must summarise every class as walking every method whole does."""
    tree = resolve_vllm("0.32.0", CACHE_DIR).tree
    checked = skipped_walks = 0
    for rel in sorted(tree.iter_files("vllm/model_executor")):
        source = _decode(tree.read_bytes(rel))
        if not ("setattr" in source or "register_" in source or "add_module" in source):
            continue
        lines = pysummary.setattr_lines(source)
        assert _classes(rel, source, lines) == _classes(rel, source, None), rel
        checked += 1
        skipped_walks += sum(not _may_set_by_name(n, lines) for n in ast.walk(ast.parse(source))
                             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    # real files, and many methods in them that are no longer walked whole
    assert checked > 100 and skipped_walks > 1000


def test_setattr_lines():
    assert pysummary.setattr_lines("a = 1\nsetattr(x, 'y', 2)\nz.register_buffer('b', t); setattr(q, 'r', 1)\n") == [2, 3]
    assert pysummary.setattr_lines("nothing here\n") == []
