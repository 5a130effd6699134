"""One syntax tree per source text in a process.

A client that holds vLLM's own files (a self-scan, verl's vendored copies) has them parsed once as client files and
again when a rule reads the same file of the target, and a release's file that its baseline ships unchanged is parsed
once for each. A tree is a few hundred bytes a node (vLLM 0.32.0's own tree as a client: the rules re-parsed 805 of
its files, 2.4 M nodes, beside the client's 4.4 M), so a text parsed while an identical text's tree is alive gets that
tree. Nothing here or in its callers writes to a tree (the one attribute set on a module, `computed_names`' identifier
strings, is derived from the text), so sharing one is safe. The text is the key itself: an equal text, never a hash.
"""

from __future__ import annotations

import ast
import weakref

_LIVE: "weakref.WeakValueDictionary[str, ast.Module]" = weakref.WeakValueDictionary()


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(text, filename)`, or the live tree of an identical text (the filename only names syntax errors)."""
    tree = _LIVE.get(text)
    if tree is None:
        tree = ast.parse(text, filename=filename)
        _LIVE[text] = tree
    return tree
