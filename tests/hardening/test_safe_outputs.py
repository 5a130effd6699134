"""Issue 13 item 1: writing a report or a fix never destroys what the path names.

A symlink is written through (it stays a link, its target gets the text); a FIFO or a device is written as a
stream (never renamed over); a folder or a socket is refused; `fix --apply` keeps a symlinked source a link and
keeps a BOM, CRLF line endings and every other byte of the file."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import threading
import zipfile
from pathlib import Path

import pytest

from conftest import client_sources, run_cli
from driftcheck.storage.safe_write import write_bytes

SCAN = ("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0")
GEN = "speculators/data_generation/vllm_hidden_states_generator.py"


def _read_fifo(path: Path, out: list) -> threading.Thread:
    def reader():
        with open(path, "rb") as fh:
            out.append(fh.read())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    return t


def test_output_through_a_symlink_keeps_the_link_and_fills_its_target(tmp_path):
    target = tmp_path / "real" / "report.json"
    target.parent.mkdir()
    target.write_text("old")
    os.chmod(target, 0o640)
    link = tmp_path / "report.json"
    link.symlink_to(target)
    proc = run_cli(*SCAN, "-f", "json", "-o", str(link))
    assert proc.returncode == 1, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["findings"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file keeps its permissions
    assert not list(tmp_path.rglob("*.tmp"))


def test_output_into_a_fifo_is_a_stream(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list = []
    t = _read_fifo(fifo, got)
    proc = run_cli(*SCAN, "-f", "json", "-o", str(fifo))
    t.join(30)
    assert proc.returncode == 1, proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert json.loads(got[0])["findings"]


def test_output_to_a_link_to_dev_null_leaves_both_alone(tmp_path):
    # The link stands in for /dev/null itself: if the writer renamed over it, only the link would be lost.
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    proc = run_cli(*SCAN, "-f", "sarif", "-o", str(link))
    assert proc.returncode == 1, proc.stderr
    assert link.is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_report_dir_writes_through_symlinked_reports(tmp_path):
    out, real = tmp_path / "reports", tmp_path / "elsewhere"
    out.mkdir()
    real.mkdir()
    (real / "driftcheck.sarif").write_text("old")
    (out / "driftcheck.sarif").symlink_to(real / "driftcheck.sarif")
    proc = run_cli(*SCAN, "--report-dir", str(out), "-f", "json")
    assert proc.returncode == 1, proc.stderr
    assert (out / "driftcheck.sarif").is_symlink()
    assert json.loads((real / "driftcheck.sarif").read_text())["version"] == "2.1.0"
    assert json.loads((out / "driftcheck.json").read_text())["findings"]


def test_writer_refuses_folders_and_sockets_and_streams_devices(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    with pytest.raises(OSError):
        write_bytes(folder, b"x")
    assert folder.is_dir()
    sock_path = tmp_path / "s"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        with pytest.raises(OSError):
            write_bytes(sock_path, b"x")
        assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    finally:
        sock.close()
    assert write_bytes(os.devnull, b"x") == Path(os.devnull)
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "made" / "by-the-write.txt")
    write_bytes(dangling, b"new")
    assert dangling.is_symlink() and (tmp_path / "made" / "by-the-write.txt").read_bytes() == b"new"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OSError):
        write_bytes(loop, b"x")
    assert loop.is_symlink()


def test_smoke_result_writers_go_through_the_safe_writer(tmp_path):
    from driftcheck.runner.report import JSON_NAME, write_json

    real = tmp_path / "real.json"
    real.write_text("{}")
    (tmp_path / JSON_NAME).symlink_to(real)
    write_json({"attempts": []}, tmp_path)
    assert (tmp_path / JSON_NAME).is_symlink() and json.loads(real.read_text()) == {"attempts": []}


def _speculators(root: Path, convert=None) -> Path:
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(root)
    if convert:
        for p in (root / "speculators" / "data_generation").glob("*.py"):
            p.write_bytes(convert(p.read_bytes()))
    return root


def test_fix_apply_writes_through_a_symlinked_source_file(tmp_path):
    client = _speculators(tmp_path / "client")
    real = tmp_path / "outside" / "generator.py"
    real.parent.mkdir()
    shutil.move(client / GEN, real)
    (client / GEN).symlink_to(real)
    before = real.read_bytes()
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply")
    assert proc.returncode == 0, proc.stderr
    assert (client / GEN).is_symlink() and os.readlink(client / GEN) == str(real)
    assert real.read_bytes() != before and b"is_encoder_decoder" in real.read_bytes()  # the real file got the fix


def test_fix_apply_keeps_bom_crlf_and_every_other_byte(tmp_path):
    plain = _speculators(tmp_path / "lf")
    dressed = _speculators(tmp_path / "crlf", lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n"))
    for client in (plain, dressed):
        proc = run_cli("fix", "--vllm", "0.32.0", "--client", str(client), "--apply", "--no-backup")
        assert proc.returncode == 0, proc.stderr
    files = sorted((plain / "speculators" / "data_generation").glob("*.py"))
    assert files
    for p in files:
        fixed = (dressed / p.relative_to(plain)).read_bytes()
        assert fixed == b"\xef\xbb\xbf" + p.read_bytes().replace(b"\n", b"\r\n"), p.name
