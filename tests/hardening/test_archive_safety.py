"""Archive safety: hostile wheel members are never extracted or followed; bombs are refused."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from conftest import run_cli
from driftcheck.errors import SourceError
from driftcheck.sources.fetch import strip_wheel
from driftcheck.sources.sources import ZipTree

OK_VLLM = {"vllm/__init__.py": "", "vllm/_version.py": '__version__ = "9.9.9"\n',
           "vllm/config/__init__.py": "def f(a):\n    return a\n"}


def make_wheel(path: Path, members: dict[str, bytes | str], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return path


def test_traversal_absolute_and_link_members_are_invisible(tmp_path):
    wheel = make_wheel(tmp_path / "evil.whl", {**OK_VLLM, "../escape.py": "x = 1", "/abs/evil.py": "x = 1",
                                                "vllm/../../up.py": "x = 1"},
                       links={"vllm/linked.py": "/etc/passwd"})
    tree = ZipTree(wheel)
    names = tree.names()
    assert "vllm/config/__init__.py" in names
    assert not any(".." in n or n.startswith("/") for n in names)
    assert "vllm/linked.py" not in names
    # stripping a fetched wheel writes only safe members, into the cache file itself
    out = tmp_path / "cache" / "stripped.zip"
    strip_wheel(wheel, out)
    with zipfile.ZipFile(out) as z:
        assert sorted(z.namelist()) == sorted(OK_VLLM)
        # stored, so a first scan reads the release's text without inflating it (docs/performance.md)
        assert {i.compress_type for i in z.infolist()} == {zipfile.ZIP_STORED}
    assert ZipTree(out).read_many(sorted(OK_VLLM)) == {k: v.encode() for k, v in sorted(OK_VLLM.items())}
    assert not (tmp_path / "escape.py").exists() and not Path("/abs/evil.py").exists()


def test_zip_bomb_member_is_refused(tmp_path):
    bomb = b"\0" * (20 * 1024 * 1024)  # 20 MB of zeros compress to ~20 KB
    wheel = make_wheel(tmp_path / "bomb.whl", {**OK_VLLM, "vllm/big.py": bomb})
    tree = ZipTree(wheel)
    with pytest.raises(SourceError, match="too large|zip bomb"):
        tree.read_bytes("vllm/big.py")


def test_scan_of_a_wheel_with_a_bomb_module_still_answers(tmp_path):
    wheel = make_wheel(tmp_path / "vllm-9.9.9-py3-none-any.whl",
                       {**OK_VLLM, "vllm/config/__init__.py": "from vllm.config.big import f\n",
                        "vllm/config/big.py": b"#" * (12 * 1024 * 1024)})
    client = tmp_path / "c"
    client.mkdir()
    (client / "use.py").write_text("from vllm.config import f\nf(1)\n")
    proc = run_cli("scan", "--vllm", str(wheel), "--client", str(client), "-f", "json")
    # the oversize module cannot be read: the name it should provide is unknown, not "ok"
    assert proc.returncode == 1, proc.stderr
    assert '"unknown": [' in proc.stdout and "too large" in proc.stdout


NAMES = ["vllm/__init__.py", "a//b", "./a", "a/./b", "a/", ".", "..", "a/../b", "../a", "a/..", "c:/x", "a/c:", "x/.../y",
         "a/.", "./", "a\\b", "/x", "//a", "", "a/..b", "..a", "a//", "a\x00b", "vllm/./../x.py", "C:x", "dir/:x"]


@pytest.mark.parametrize("name", NAMES)
def test_member_names_normalise_as_posix_paths_do(name):
    """`_safe_rel` reads names by string operations (it sees every member of every archive); it must keep what
    `PurePosixPath(name).parts` keeps and refuse every name that could leave the root."""
    from pathlib import PurePosixPath

    from driftcheck.sources.sources import _safe_rel

    refused = not name or "\\" in name or name.startswith("/") or "\x00" in name
    parts = () if refused else PurePosixPath(name).parts
    refused = refused or ".." in parts or bool(parts and ":" in parts[0])
    assert _safe_rel(name) == (None if refused else "/".join(parts))
    if _safe_rel(name) is not None:
        assert ".." not in _safe_rel(name).split("/") and not _safe_rel(name).startswith("/")


def _damage(path: Path, member: str) -> None:
    """Flip one byte of `member`'s compressed data in place (its CRC no longer matches)."""
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    raw = bytearray(path.read_bytes())
    at = info.header_offset + 30 + int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little") \
        + int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    raw[at + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_reading_many_members_at_once_answers_as_reading_each(tmp_path, compression):
    """`ZipTree.read_many` (a whole release's text in a few reads) keeps every check `read_bytes` makes: a damaged
    member, a bomb and a missing name are left out, as the one-by-one read leaves them; the rest come back
    byte for byte, in the order asked."""
    members = {**OK_VLLM, "vllm/a.py": "x = 1\n" * 5000, "vllm/b.py": "y = 2\n" * 3000, "vllm/big.py": b"\0" * (9 * 1024 * 1024)}
    path = tmp_path / "w.whl"
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    _damage(path, "vllm/b.py")
    tree = ZipTree(path)
    asked = ["vllm/b.py", "vllm/missing.py", "vllm/big.py", *reversed(OK_VLLM), "vllm/a.py"]
    one_by_one = {}
    for rel in asked:
        try:
            one_by_one[rel] = tree.read_bytes(rel)
        except SourceError:
            pass
    many = tree.read_many(asked)
    assert many == one_by_one and list(many) == list(one_by_one)
    assert "vllm/b.py" not in many and "vllm/big.py" not in many and many["vllm/a.py"] == b"x = 1\n" * 5000


@pytest.mark.parametrize("version", ["0.11.0", "0.32.0"])
def test_reading_a_release_at_once_gives_its_files_byte_for_byte(version):
    from conftest import CACHE_DIR
    from driftcheck.sources.sources import SourceTree
    from driftcheck.sources.targets import resolve_vllm

    tree = resolve_vllm(version, CACHE_DIR).tree
    rels = list(tree.iter_files("vllm"))
    assert len(rels) > 900 and tree.read_many(rels) == SourceTree.read_many(tree, rels)
