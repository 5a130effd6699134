"""The digest of driftcheck's own sources: every stored answer is kept under the code that computed it.

A module summary, a whole-tree text answer or a unit's findings stored by one version of driftcheck must not be read
back by another: a summariser that now records more, or a rule whose per-tree index changed, would otherwise answer
from the older code's facts until the cache is cleared by hand. So each store's name carries this digest; an upgrade
(or any edit of the sources) starts from empty stores, and the older ones are simply not read.

An installed wheel lists the sha256 of every file it installed in its RECORD: when every .py file of the package is
listed there with the size it has on disk, the digest is taken from those hashes (one small read, not 2 MB of
sources at every start: 0.03 s of a 0.2 s warm scan). Anything else (a source checkout, an editable install, a file
edited or added after the install) is digested from the files' bytes.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from driftcheck import __version__


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """sha1 of driftcheck's version and of every .py file of the package (the rules included)."""
    root = Path(__file__).resolve().parents[1]  # the driftcheck package (this module is driftcheck/storage/code_digest.py)
    files = _source_files(root)
    h = hashlib.sha1(f"{__version__}\0".encode())
    recorded = _recorded_hashes(root, files)
    for path in files:
        rel = path.relative_to(root.parent).as_posix()
        if recorded is not None:
            h.update(f"{rel}\0{recorded[rel]}".encode())
            continue
        try:
            h.update(rel.encode() + b"\0" + path.read_bytes())
        except OSError:
            continue
    return h.hexdigest()


def _source_files(root: Path) -> list[Path]:
    # a source checkout keeps the rules in probes/ and fixes/ beside the package; an installed wheel has them inside
    # it (driftcheck/probes), and what lies beside it in site-packages is other distributions' and not read
    beside = [] if (root / "probes").is_dir() else [root.parent / "probes", root.parent / "fixes"]
    # a worktree may link them into the package instead (driftcheck/probes -> ../probes): `rglob` does not follow a
    # link below where it starts, so a linked folder is walked from the link itself
    beside += [link for link in (root / "probes", root / "fixes") if link.is_symlink()]
    return [path for folder in (root, *beside) for path in (sorted(folder.rglob("*.py")) if folder.is_dir() else [])]


def _recorded_hashes(root: Path, files: list[Path]) -> dict[str, str] | None:
    """{file: its RECORD hash} when the wheel's RECORD beside the package lists every one of `files` at the size it
    has now; None otherwise (no RECORD, a file it does not list, a size that moved: read the bytes)."""
    records = list(root.parent.glob(f"{root.name}-*.dist-info/RECORD"))
    if len(records) != 1:
        return None
    listed: dict[str, tuple[str, str]] = {}
    try:
        for line in records[0].read_text(encoding="utf-8").splitlines():
            name, _, rest = line.partition(",")
            digest, _, size = rest.partition(",")
            if name.endswith(".py") and digest:
                listed[name] = (digest, size)
        out = {}
        for path in files:
            rel = path.relative_to(root.parent).as_posix()
            if rel not in listed or listed[rel][1] != str(path.stat().st_size):
                return None
            out[rel] = listed[rel][0]
    except (OSError, ValueError):
        return None
    return out
