"""The digest of driftcheck's own sources: every stored answer is kept under the code that computed it.

A module summary, a whole-tree text answer or a unit's findings stored by one version of driftcheck must not be read
back by another: a summariser that now records more, or a rule whose per-tree index changed, would otherwise answer
from the older code's facts until the cache is cleared by hand. So each store's name carries this digest; an upgrade
(or any edit of the sources) starts from empty stores, and the older ones are simply not read.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from driftcheck import __version__


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """sha1 of driftcheck's version and of every .py file of the package (the rules included)."""
    h = hashlib.sha1(f"{__version__}\0".encode())
    root = Path(__file__).resolve().parents[1]  # the driftcheck package (this module is driftcheck/storage/code_digest.py)
    # a source checkout keeps the rules in probes/ and fixes/ beside the package; an installed wheel has them inside
    # it (driftcheck/probes), and what lies beside it in site-packages is other distributions' and not read
    beside = [] if (root / "probes").is_dir() else [root.parent / "probes", root.parent / "fixes"]
    # a worktree may link them into the package instead (driftcheck/probes -> ../probes): `rglob` does not follow a
    # link below where it starts, so a linked folder is walked from the link itself
    beside += [link for link in (root / "probes", root / "fixes") if link.is_symlink()]
    for folder in (root, *beside):
        for path in sorted(folder.rglob("*.py")) if folder.is_dir() else []:
            try:
                h.update(str(path.relative_to(root.parent)).encode() + b"\0" + path.read_bytes())
            except OSError:
                continue
    return h.hexdigest()
