"""The bad-input corpus: every case gets one `driftcheck: error:` line naming the problem, exit 2
(or the documented code), no traceback, and nothing half-written.

Each case builds its input in a temporary folder, runs the real CLI in a subprocess (as a user
would) and checks the last stderr line. The dev/CI test environment has no vLLM installed, which
is itself one of the cases.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from conftest import CACHE_DIR, client_sources, run_cli, vllm_sources

PY_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\s*\n\s+File ")
NO_NETWORK = {"PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_EXTRA_INDEX_URL": "", "PIP_FIND_LINKS": "",
              "PIP_CONFIG_FILE": os.devnull, "PIP_RETRIES": "0", "PIP_TIMEOUT": "2"}


def _client_with(tmp: Path, name: str, data: bytes | str) -> Path:
    root = tmp / "client"
    root.mkdir(exist_ok=True)
    path = root / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return root


def _vllm_wheel(tmp: Path) -> Path:
    return vllm_sources("0.16.0")


def _truncated(tmp: Path) -> Path:
    data = vllm_sources("0.16.0").read_bytes()
    out = tmp / "truncated.whl"
    out.write_bytes(data[: len(data) // 2])
    return out


def _random_whl(tmp: Path) -> Path:
    out = tmp / "random.whl"
    out.write_bytes(random.Random(7).randbytes(4096))
    return out


def _zip_without_vllm(tmp: Path) -> Path:
    out = tmp / "other.whl"
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("other/__init__.py", "x = 1\n")
    return out


def _empty_dir(tmp: Path) -> Path:
    d = tmp / "empty"
    d.mkdir()
    return d


def _unreadable_dir(tmp: Path) -> Path:
    d = tmp / "secret"
    (d / "vllm").mkdir(parents=True)
    (d / "vllm" / "__init__.py").write_text("")
    return d


def _traceback_file(tmp: Path, text: str | bytes, name: str = "tb.txt") -> Path:
    p = tmp / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def _speculators_copy(tmp: Path) -> Path:
    root = tmp / "spec"
    with zipfile.ZipFile(client_sources("speculators", "0.3.0")) as z:
        z.extractall(root)
    return root


# (id, argv builder, expected exit code, a phrase the error line must contain, extra env)
CASES = [
    # ---- scan: the vLLM target
    ("scan-no-vllm-installed", lambda t: ["scan", "--client", str(_client_with(t, "a.py", "import vllm\n"))], 2, "no vLLM is installed", None),
    ("scan-vllm-path-missing", lambda t: ["scan", "--vllm", str(t / "nope"), "--client", "speculators==0.3.0"], 2, "no such file", None),
    ("scan-vllm-path-with-slash", lambda t: ["scan", "--vllm", "some/where", "--client", "speculators==0.3.0"], 2, "no such file", None),
    ("scan-vllm-not-a-version", lambda t: ["scan", "--vllm", "latest!", "--client", "speculators==0.3.0"], 2, "not a version", None),
    ("scan-vllm-random-bytes-wheel", lambda t: ["scan", "--vllm", str(_random_whl(t))], 2, "not a wheel", None),
    ("scan-vllm-truncated-wheel", lambda t: ["scan", "--vllm", str(_truncated(t))], 2, "wheel", None),
    ("scan-vllm-zip-without-vllm", lambda t: ["scan", "--vllm", str(_zip_without_vllm(t))], 2, "no vllm/ package", None),
    ("scan-vllm-empty-folder", lambda t: ["scan", "--vllm", str(_empty_dir(t))], 2, "holds no vllm/ package", None),
    ("scan-vllm-text-file", lambda t: ["scan", "--vllm", str(_traceback_file(t, "hello"))], 2, "not a wheel", None),
    ("scan-vllm-unknown-version", lambda t: ["scan", "--vllm", "0.0.0.999", "--client", "speculators==0.3.0"], 2, "no such release", None),
    ("scan-vllm-no-network", lambda t: ["scan", "--vllm", "0.9.9.9", "--client", "speculators==0.3.0"], 2, "cannot fetch", NO_NETWORK),
    # ---- scan: the client
    ("scan-client-missing", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", str(t / "nope")], 2, "no such file", None),
    ("scan-client-not-installed-name", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", "no-such-dist-xyz"], 2, "no such file, folder or installed", None),
    ("scan-client-default-not-installed", lambda t: ["scan", "--vllm", str(_vllm_wheel(t))], 2, "speculators is not installed", None),
    ("scan-client-syntax-error", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", str(_client_with(t, "bad.py", "import vllm\ndef f(:\n"))], 2, "cannot parse", None),
    ("scan-client-python2", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", str(_client_with(t, "old.py", "import vllm\nprint 'hi'\n"))], 2, "Python 2", None),
    ("scan-client-not-utf8", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", str(_client_with(t, "latin.py", b"import vllm\nx = '\xe9\xff'\n"))], 2, "not valid UTF-8", None),
    ("scan-client-nul-bytes", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", str(_client_with(t, "nul.py", b"import vllm\n\x00\x00"))], 2, "NUL bytes", None),
    ("scan-client-binary-file-arg", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", str(_random_whl(t))], 2, "not a .py file, a wheel or a folder", None),
    ("scan-client-bad-name-version", lambda t: ["scan", "--vllm", str(_vllm_wheel(t)), "--client", "speculators==0.0.0.999"], 2, "cannot fetch", None),
    # ---- scan: options and outputs
    ("scan-bad-format", lambda t: ["scan", "--vllm", "0.16.0", "-f", "yaml"], 2, "invalid choice", None),
    ("scan-bad-fail-on", lambda t: ["scan", "--vllm", "0.16.0", "--fail-on", "fatal"], 2, "invalid choice", None),
    ("scan-output-is-a-folder", lambda t: ["scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-o", str(_empty_dir(t))], 2, "is a folder", None),
    ("scan-output-unwritable", lambda t: ["scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-o", "/proc/driftcheck/x.json"], 2, "cannot write", None),
    ("scan-baseline-missing", lambda t: ["scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--baseline", str(t / "no.json")], 2, "does not exist", None),
    ("scan-baseline-not-json", lambda t: ["scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--baseline", str(_traceback_file(t, "{"))], 2, "not valid JSON", None),
    ("scan-baseline-wrong-shape", lambda t: ["scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--baseline", str(_traceback_file(t, "[1, 2]", "b.json"))], 2, "not a driftcheck baseline", None),
    ("scan-unknown-option", lambda t: ["scan", "--frobnicate"], 2, "unrecognized arguments", None),
    ("no-command", lambda t: ["frobnicate"], 2, "invalid choice", None),
    # ---- fix
    ("fix-client-is-a-wheel", lambda t: ["fix", "--vllm", "0.16.0", "--client", str(client_sources("speculators", "0.3.0")), "--apply"], 2, "archive", None),
    ("fix-client-missing", lambda t: ["fix", "--vllm", "0.16.0", "--client", str(t / "nope")], 2, "no such file", None),
    ("fix-vllm-missing", lambda t: ["fix", "--vllm", str(t / "nope"), "--client", str(_empty_dir(t))], 2, "no such file", None),
    ("fix-unknown-option", lambda t: ["fix", "--unsafe-everything"], 2, "unrecognized arguments", None),
    # ---- explain
    ("explain-not-a-traceback", lambda t: ["explain", str(_traceback_file(t, "just some text\nwithout an error\n"))], 2, "no Python traceback", None),
    ("explain-header-without-exception", lambda t: ["explain", str(_traceback_file(t, "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"))], 2, "no exception line", None),
    ("explain-missing-file", lambda t: ["explain", str(t / "nope.txt")], 2, "does not exist", None),
    ("explain-folder", lambda t: ["explain", str(_empty_dir(t))], 2, "is a folder", None),
    ("explain-binary", lambda t: ["explain", str(_traceback_file(t, b"\x00\x01\x02" * 100, "b.bin"))], 2, "binary", None),
    ("explain-empty-file", lambda t: ["explain", str(_traceback_file(t, "", "empty.txt"))], 2, "no Python traceback", None),
    ("explain-bad-vllm", lambda t: ["explain", "--vllm", str(t / "nope"), str(_traceback_file(t, "ValueError: x"))], 2, "no such file", None),
    # ---- matrix / range
    ("matrix-missing-vllm-option", lambda t: ["matrix"], 2, "required", None),
    ("matrix-reversed-range", lambda t: ["matrix", "--vllm", "0.32.0..0.11.0", "--client", "speculators==0.3.0"], 2, "range is empty", None),
    ("matrix-garbage-range", lambda t: ["matrix", "--vllm", "a..b", "--client", "speculators==0.3.0"], 2, "not a version range", None),
    ("matrix-zero-jobs", lambda t: ["matrix", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "-j", "0", "--out", str(t / "m")], 2, "--jobs", None),
    ("matrix-out-is-a-file", lambda t: ["matrix", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--out", str(_traceback_file(t, "x"))], 2, "cannot create", None),
    ("range-bad-client", lambda t: ["range", "--vllm", "0.16.0", "--client", str(t / "nope")], 2, "no such file", None),
    # ---- smoke (its own parser; this environment has no vLLM)
    ("smoke-bad-driver", lambda t: ["smoke", "--driver", "bogus"], 2, "invalid choice", None),
    ("smoke-no-vllm", lambda t: ["smoke"], 2, "no vLLM installed", None),
    ("smoke-bad-python", lambda t: ["smoke", "--python", str(t / "nope" / "python")], 2, "not an executable file", None),
    # ---- bisect / compare
    ("bisect-bad-not-in-range", lambda t: ["bisect", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--good", "0.16.0", "--bad", "0.11.0"], 2, "is not one of the 1 builds", None),
    ("compare-missing-report", lambda t: ["compare", str(t / "old.json"), str(t / "new.json")], 2, "does not exist", None),
    # ---- rules
    ("rules-unknown", lambda t: ["rules", "DC999"], 2, "no rule named", None),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(tmp_path, case):
    _id, build, code, phrase, env = case
    argv = build(tmp_path)
    proc = run_cli(*argv, env=env, timeout=300)
    assert proc.returncode == code, (argv, proc.returncode, proc.stderr[-500:])
    assert not PY_TRACEBACK.search(proc.stderr) and not PY_TRACEBACK.search(proc.stdout)
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    assert "error" in last, proc.stderr
    assert phrase in proc.stderr, (phrase, proc.stderr)


def test_corpus_is_large_enough():
    """Every command of the CLI gets bad input, every case checks a phrase of its error, and no id repeats."""
    from driftcheck.cli.main import COMMANDS

    assert len(CASES) >= 40
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert [c[0] for c in CASES if not c[3].strip()] == []  # an empty phrase is in every stderr: it checks nothing
    commands = {c[0].split("-", 1)[0] for c in CASES}
    assert set(COMMANDS) <= commands, sorted(set(COMMANDS) - commands)


def test_fix_on_read_only_client_writes_nothing(tmp_path):
    root = _speculators_copy(tmp_path)
    files = sorted(root.rglob("*.py"))
    before = {p: p.read_bytes() for p in files}
    gen = root / "speculators/data_generation/vllm_hidden_states_generator.py"
    gen.chmod(0o444)
    try:
        proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(root), "--apply")
    finally:
        gen.chmod(0o644)
    assert proc.returncode == 2 and "read-only" in proc.stderr
    assert {p: p.read_bytes() for p in files} == before
    assert not list(root.rglob("*.driftcheck.bak")) and not list(root.rglob(".*.tmp"))


def test_cache_dir_that_cannot_be_written(tmp_path):
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("not a folder")
    proc = run_cli("scan", "--vllm", "0.0.0.998", "--client", "speculators==0.3.0", "--cache-dir", str(blocked))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "not writable" in proc.stderr or "cannot" in proc.stderr


def test_read_only_cache_still_scans_with_what_it_has(tmp_path):
    """A read-only cache is used read-only: cached sources still scan; summaries are just not written."""
    cache = tmp_path / "ro-cache"
    shutil.copytree(CACHE_DIR / "sources", cache / "sources")
    for p in [cache, *cache.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        proc = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", "--cache-dir", str(cache))
    finally:
        for p in [cache, *cache.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
    assert proc.returncode == 1, proc.stderr  # findings, as with a writable cache
    assert "Traceback" not in proc.stderr
