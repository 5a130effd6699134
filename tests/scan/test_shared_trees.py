"""One syntax tree per source text (`driftcheck/shared_trees.py`): a client holding vLLM's own files and the rules
reading the same files of the target share their trees instead of holding two."""

from __future__ import annotations

import ast
import gc

import pytest

from driftcheck import shared_trees
from driftcheck.astnodes import nodes_of
from driftcheck.client_model.client import parse_client_file
from driftcheck.sources.sources import FolderTree
from driftcheck.vllm_model import file_memo
from driftcheck.vllm_model.api_index import ApiIndex

from scan.helpers import vllm_tree

SOURCE = "class Worker:\n    def execute_model(self, batch):\n        return batch\n"


@pytest.fixture(autouse=True)
def _one_release_process(monkeypatch):
    """A process that scans one release (an in-process `matrix` or `bisect` earlier in the session turns on keeping
    every tree for the rest of the process)."""
    monkeypatch.setattr(file_memo, "_ON", False)
    monkeypatch.setattr(shared_trees, "_KEPT", {})


def test_the_target_reads_the_tree_the_client_parsed_for_the_same_text(tmp_path):
    tree = FolderTree(vllm_tree(tmp_path, {"vllm/worker.py": SOURCE, "vllm/other.py": SOURCE + "\nX = 1\n"}))
    client = parse_client_file(tree, "vllm/worker.py", tree.read_bytes("vllm/worker.py"))
    api = ApiIndex(tree)
    assert api.parse("vllm/worker.py") is client.tree
    other = api.parse("vllm/other.py")
    assert other is not client.tree and ast.dump(other) != ast.dump(client.tree)


def test_a_tree_nobody_holds_is_not_kept():
    text = SOURCE + "\n# only here\n"
    first = shared_trees.parse(text)
    assert shared_trees.parse(text) is first
    del first
    gc.collect()
    assert text not in shared_trees._LIVE
    again = shared_trees.parse(text)
    assert isinstance(again, ast.Module) and ast.dump(again) == ast.dump(ast.parse(text))


def test_a_syntax_error_names_the_file_and_is_not_kept():
    with pytest.raises(SyntaxError) as err:
        shared_trees.parse("def broken(:\n", filename="vllm/broken.py")
    assert err.value.filename == "vllm/broken.py"
    assert "def broken(:\n" not in shared_trees._LIVE


def test_a_tree_whose_nodes_were_bucketed_is_still_freed():
    # nodes_of's index is keyed weakly by the tree; an index that held its own root made every indexed tree immortal
    text = SOURCE + "\n# bucketed\n"
    tree = shared_trees.parse(text)
    assert [n.name for n in nodes_of(tree, ast.FunctionDef)] == ["execute_model"]
    assert nodes_of(tree, ast.Module) == [tree]  # the root is still answered, first, as ast.walk yields it
    assert nodes_of(tree, ast.Module, ast.ClassDef) == [tree, tree.body[0]]
    del tree
    gc.collect()
    assert text not in shared_trees._LIVE


def test_a_process_scanning_many_releases_keeps_every_tree(monkeypatch):
    # matrix workers and bisect: the next release ships most of the same files, parsed and bucketed once
    monkeypatch.setattr(file_memo, "_ON", True)
    monkeypatch.setattr(shared_trees, "_KEPT", {})
    text = SOURCE + "\n# kept\n"
    first = shared_trees.parse(text)
    first_id = id(first)
    del first
    gc.collect()
    assert id(shared_trees.parse(text)) == first_id


def test_a_module_summary_reads_the_live_tree_of_its_text_and_keeps_none(monkeypatch):
    # a self-scan's client files and the callers DC109 parses are summarised too: one parse per text, not two
    from driftcheck.vllm_model import pysummary

    text = SOURCE + "\n# summarised\n"
    held = shared_trees.parse(text)
    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda *a, **k: parsed.append(a) or real_parse(*a, **k))
    info = pysummary.summarise_source("vllm.worker", "vllm/worker.py", False, text)
    assert parsed == [] and "Worker" in info.classes
    alone = SOURCE + "\n# summarised alone\n"
    info = pysummary.summarise_source("vllm.worker", "vllm/worker.py", False, alone)
    assert len(parsed) == 1 and "Worker" in info.classes
    assert alone not in shared_trees._LIVE  # a summary keeps no tree: nothing to share later
    del held
