"""One syntax tree per source text in a process.

A client that holds vLLM's own files (a self-scan, verl's vendored copies) has them parsed once as client files and
again when a rule reads the same file of the target, and a release's file that its baseline ships unchanged is parsed
once for each. A tree is a few hundred bytes a node (vLLM 0.32.0's own tree as a client: the rules re-parsed 805 of
its files, 2.4 M nodes, beside the client's 4.4 M), so a text parsed while an identical text's tree is alive gets that
tree. Nothing here or in its callers writes to a tree (the one attribute set on a module, `computed_names`' identifier
strings, is derived from the text), so sharing one is safe. The text is the key itself: an equal text, never a hash.

A process that scans release after release (`file_memo.on()`: `matrix` workers, `bisect`) keeps every tree it parsed,
not only the live ones: the next release ships most of the same files, and their trees and the node buckets
`astnodes` made of them are reused instead of parsed and walked again.
"""

from __future__ import annotations

import ast
import weakref

from driftcheck.vllm_model import file_memo

_LIVE: "weakref.WeakValueDictionary[str, ast.Module]" = weakref.WeakValueDictionary()
_KEPT: dict[str, ast.Module] = {}  # only where file_memo is on


def live(text: str) -> ast.Module | None:
    """The tree of an identical text that is alive now, without parsing: for a reader that keeps no tree (a module
    summary) and so gains nothing from registering one."""
    return _LIVE.get(text)


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(text, filename)`, or the live tree of an identical text (the filename only names syntax errors)."""
    tree = _LIVE.get(text)
    if tree is None:
        tree = ast.parse(text, filename=filename)
        _LIVE[text] = tree
    if file_memo.on():
        _KEPT[text] = tree
    return tree
