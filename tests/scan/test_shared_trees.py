"""One syntax tree per source text (`driftcheck/shared_trees.py`): a client holding vLLM's own files and the rules
reading the same files of the target share their trees instead of holding two."""

from __future__ import annotations

import ast
import gc

import pytest

from driftcheck import shared_trees
from driftcheck.client_model.client import parse_client_file
from driftcheck.sources.sources import FolderTree
from driftcheck.vllm_model.api_index import ApiIndex

from scan.helpers import vllm_tree

SOURCE = "class Worker:\n    def execute_model(self, batch):\n        return batch\n"


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
