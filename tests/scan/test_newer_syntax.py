"""A client file in a newer Python's syntax than the one driftcheck runs on (`type X = ...` for Python 3.12, as
vllm-torchtpu-core 0.29.0 writes, scanned on 3.11): the scan checks the other files and reports that one as not
analysed (DC000, an unknown: the gate does not pass on it), where it used to stop at "fix the syntax error". A real
syntax error still stops the scan with one line and exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from driftcheck.client_model.client import ClientParseError, NewerSyntax, parse_client_file
from driftcheck.sources.sources import FolderTree
from scan.helpers import scan_client, write_tree

NEWER = {  # a line of each syntax, and the Python that first parses it
    "type LayerKV = list[int] | None\n": (3, 12),
    "type Pair[T] = tuple[T, T]\n": (3, 12),
    "def first[T](xs: list[T]) -> T:\n    return xs[0]\n": (3, 12),
    "class Box[T]:\n    item: T\n": (3, 12),
    "async def run[T](x: T) -> T:\n    return x\n": (3, 12),
    "x = {'a': 1}\ny = f\"{x[\"a\"]}\"\n": (3, 12),  # PEP 701: the f-string's own quote inside its braces
    "try:\n    pass\nexcept* ValueError:\n    pass\n": (3, 11),
}


@pytest.mark.parametrize("source", list(NEWER), ids=[f"py{v[0]}{v[1]}-{i}" for i, v in enumerate(NEWER.values())])
def test_each_newer_syntax_is_named_with_its_python(tmp_path, source):
    version = NEWER[source]
    (tmp_path / "m.py").write_text(source)
    data = (tmp_path / "m.py").read_bytes()
    if sys.version_info >= version:
        assert parse_client_file(FolderTree(tmp_path), "m.py", data).tree is not None  # this Python reads it
        return
    with pytest.raises(NewerSyntax) as err:
        parse_client_file(FolderTree(tmp_path), "m.py", data)
    assert f"Python {version[0]}.{version[1]} syntax" in err.value.message
    assert f"Python {sys.version_info[0]}.{sys.version_info[1]}" in err.value.message


@pytest.mark.parametrize("source", ["def f(:\n    pass\n", "type = 5\nx = (\n", "class Box(\n", "print 'old'\n",
                                    # Python 2's `except E, e:` (also 3.14's bracketless tuple: not read as newer)
                                    "try:\n    pass\nexcept ValueError, e:\n    pass\n"])
def test_a_real_syntax_error_is_not_taken_for_newer_syntax(tmp_path, source):
    (tmp_path / "m.py").write_text(source)
    with pytest.raises(ClientParseError) as err:
        parse_client_file(FolderTree(tmp_path), "m.py", (tmp_path / "m.py").read_bytes())
    assert not isinstance(err.value, NewerSyntax)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses PEP 695")
def test_the_other_files_are_checked_and_the_newer_one_is_an_unknown(tmp_path):
    result = scan_client(tmp_path, {
        "pkg/kv.py": "import torch\nfrom vllm.v1.request import Request\ntype LayerKV = torch.Tensor | list[torch.Tensor]\n",
        "pkg/worker.py": "from vllm.v1.worker.gpu_worker import NoSuchWorker\n",
    })
    assert [(f.rule, f.client.path) for f in result.findings] == [("DC002", "pkg/worker.py")]
    [u] = result.unknown
    assert u.rule == "DC000" and u.message.startswith("pkg/kv.py was not analysed: line 3 is Python 3.12 syntax")
    assert result.stats["client_files"] == 1


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses PEP 695")
def test_cli_exit_code_is_1_not_2_and_accept_unknown_passes(tmp_path):
    from scan.helpers import MINIVLLM

    root = write_tree(tmp_path / "client", {"pkg/kv.py": "from vllm.v1.request import Request\ntype K = int\n"})
    cmd = [sys.executable, "-m", "driftcheck", "scan", "--vllm", str(MINIVLLM), "--client", str(root),
           "--cache-dir", str(tmp_path / "cache")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "pkg/kv.py was not analysed" in done.stdout
    assert subprocess.run([*cmd, "--accept-unknown"], capture_output=True, text=True).returncode == 0
