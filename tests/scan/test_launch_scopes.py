"""Launch files' Python scopes (driftcheck/client_model/launches.py): only the functions whose lines hold a launch
word are walked, and the launches, configs and kv_connector dicts read are those of walking every function."""

from __future__ import annotations

import ast
import re

from driftcheck.client_model import launches
from driftcheck.client_model.client import load_client
from driftcheck.sources.sources import FolderTree

from scan.helpers import write_tree

LAUNCHER = '''
import json
import subprocess
import sys

SPEC = {"method": "eagle3", "num_speculative_tokens": 3}


def helper(x):
    return x + 1


class Runner:
    def config(self):
        return {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}

    @staticmethod
    def start(model, extra):
        def inner():
            cmd = [sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", model, "--port", "8000"]
            cmd.append("--enforce-eager")
            cmd += ["--speculative-config", json.dumps(SPEC), *extra]
            return subprocess.Popen(cmd)
        return inner


def shell(model):
    subprocess.run(f"vllm serve {model} --max-model-len 4096 --bogus-flag", shell=True)


def offline(LLM):
    spec = {"method": "ngram", "prompt_lookup_max": 4}
    return LLM(model="m", speculative_config=spec)


async def run_async(model):
    args = ["vllm", "serve", model, "--tensor-parallel-size", "2"]
    return args


@decorate(["vllm", "serve"])
def decorated():
    return None


def unrelated(a, b):
    total = [a, b, (a, b)]
    return {k: v for k, v in zip(total, total)}
'''


def _collect(root):
    source = load_client(FolderTree(root), str(root))
    ast_repr = ast.AST.__repr__
    ast.AST.__repr__ = lambda self: f"<{type(self).__name__}@{getattr(self, 'lineno', '?')}:{getattr(self, 'col_offset', '?')}>"
    try:
        out = launches.collect(source)
        return repr(out.launches), repr(out.configs), [(f.rel, repr(node)) for f, node, _ in out.kv_dicts]
    finally:
        ast.AST.__repr__ = ast_repr


def test_only_scopes_with_launch_words_are_walked_and_the_answer_is_the_same(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "client", {"pkg/launch.py": LAUNCHER})
    walked = []
    original = launches._walk_scope
    monkeypatch.setattr(launches, "_walk_scope", lambda node: walked.append(getattr(node, "name", "<module>")) or original(node))
    pruned = _collect(root)
    assert "helper" not in walked and "unrelated" not in walked and "config" in walked and "inner" in walked
    assert "decorated" in walked  # its word is on the decorator's line, above the `def`

    walked.clear()
    monkeypatch.setattr(launches, "_LAUNCH_WORDS", re.compile(r"^", re.M))  # every line holds a word: all walked
    every = _collect(root)
    assert "helper" in walked and "unrelated" in walked
    assert pruned == every
    found_launches, configs, kv = pruned
    assert found_launches.count("Launch(") == 4 and "--enforce-eager" in found_launches and "--bogus-flag" in found_launches
    assert "ngram" in configs or "prompt_lookup_max" in configs
    assert len(kv) == 1


def test_a_file_with_carriage_returns_walks_every_function(tmp_path, monkeypatch):
    """Lines counted by "\\n" would not be ast's lines there: no function is skipped."""
    root = tmp_path / "client"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "launch.py").write_bytes(LAUNCHER.replace("\n", "\r").encode())
    walked = []
    original = launches._walk_scope
    monkeypatch.setattr(launches, "_walk_scope", lambda node: walked.append(getattr(node, "name", "<module>")) or original(node))
    found_launches, _, _ = _collect(root)
    assert "helper" in walked and found_launches.count("Launch(") == 4
