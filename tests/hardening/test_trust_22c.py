"""Batch 22c (a new user's audit of every verb, eighteenth session): the gate passes only on code it read, and no
command replaces the user's source.

P1: files whose vLLM import the prefilter missed were never read (a BOM before `from vllm`, `import os; from vllm`,
`import os, vllm.x`, `try: from vllm ...` on one line), and the gate passed on a real DC003 error.
P6: a file whose only "import" is a usage line in a docstring counted as a file importing vLLM (exit 0, nothing read).
P3: `-o plug.py` (for `-o plug.json`) replaced the source with the report; `fix -o` even in a dry run.
P4: `fix` rewrote a line the user suppressed (`# driftcheck: ignore[DC003]`).
P5: a `fix` dry run that leaves errors exited 0.
"""

from __future__ import annotations

import pytest

from conftest import run_cli

_DRIFT = ("def build(cfg, groups, spec, mem):\n    return get_kv_cache_config_from_groups(vllm_config=cfg, "
          "kv_cache_groups=groups, kv_cache_specs=spec, available_memory=mem)\n")
_IMPORT = "from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups"


@pytest.mark.parametrize("head", [
    "\ufeff" + _IMPORT + "\n",                                  # a UTF-8 BOM before the first line's import
    "import os; " + _IMPORT + "\n",                             # after a semicolon
    "import os, vllm.v1.core.kv_cache_utils as kcu\n",           # among one import's modules (`kcu.` below)
    "try: " + _IMPORT + "\nexcept ImportError: raise\n",       # a one-line compound statement
])
def test_p1_every_spelling_of_an_import_is_read(tmp_path, head):
    body = _DRIFT.replace("return get_", "return kcu.get_") if "kcu" in head else _DRIFT
    (tmp_path / "plug.py").write_bytes((head + "\n\n" + body).encode("utf-8"))
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(tmp_path), "--select", "DC003", "-q")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 error(s)" in proc.stdout and "1 client file(s) importing vLLM" in proc.stdout


def test_p6_a_usage_line_in_a_docstring_is_nothing_checked(tmp_path):
    (tmp_path / "p.py").write_text('"""Usage:\n\nfrom vllm import LLM\n"""\nimport os\n')
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nothing to check: no client file imports vLLM (1 file(s) name it only in text" in proc.stderr
    assert run_cli("scan", "--vllm", "0.16.0", "--client", str(tmp_path), "--allow-empty").returncode == 0


def test_p6_a_script_that_only_installs_vllm_is_nothing_checked(tmp_path):
    (tmp_path / "setup.sh").write_text("#!/bin/sh\npip install vllm\n")
    assert run_cli("scan", "--vllm", "0.16.0", "--client", str(tmp_path)).returncode == 2
    # twin: a command line that runs vLLM is read (DC111)
    (tmp_path / "serve.sh").write_text("#!/bin/sh\nvllm serve facebook/opt-125m --port 8000\n")
    assert run_cli("scan", "--vllm", "0.16.0", "--client", str(tmp_path)).returncode == 0



@pytest.mark.parametrize("verb", [("matrix", "--vllm", "0.16.0", "--out", "{out}"), ("range", "--vllm", "0.16.0"),
                                  ("bisect", "--vllm", "0.15.0,0.16.0"), ("fix", "--vllm", "0.16.0")])
def test_p6_every_verb_that_scans_refuses_a_client_of_docstring_usage_lines(tmp_path, verb):
    # the check before any release is fetched reads past the prefilter: one file parsed is enough when it imports vLLM
    client = tmp_path / "client"
    client.mkdir()
    (client / "p.py").write_text('"""Usage:\n\nfrom vllm import LLM\n"""\nimport os\n')
    args = [a.replace("{out}", str(tmp_path / "m")) for a in verb]
    proc = run_cli(*args, "--client", str(client))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "name it only in text" in proc.stderr and "Traceback" not in proc.stderr
    # twin: a real import below the docstring is read, and the verb goes on past the check
    (client / "q.py").write_text("import vllm\n")
    proc = run_cli(*args, "--client", str(client))
    assert "nothing to check" not in proc.stderr, proc.stderr

@pytest.mark.parametrize("verb", [("scan", "-f", "json"), ("fix",)])
def test_p3_an_output_naming_a_python_source_is_refused(tmp_path, verb):
    source = tmp_path / "plug.py"
    source.write_text(_IMPORT + "\n\n\n" + _DRIFT)
    before = source.read_bytes()
    proc = run_cli(verb[0], "--vllm", "0.16.0", "--client", str(tmp_path), *verb[1:], "-o", str(source))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "is an existing Python source file: a report would replace it" in proc.stderr
    assert source.read_bytes() == before and "Traceback" not in proc.stderr


def test_p4_fix_leaves_a_line_the_user_suppressed(tmp_path):
    source = tmp_path / "plug.py"
    source.write_text(_IMPORT + "\n\n\n" + _DRIFT.replace("mem)\n", "mem)  # driftcheck: ignore[DC003] known\n"))
    before = source.read_bytes()
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(tmp_path), "--apply")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert source.read_bytes() == before
    # twin: without the comment the same line is fixed
    source.write_text(_IMPORT + "\n\n\n" + _DRIFT)
    assert run_cli("fix", "--vllm", "0.16.0", "--client", str(tmp_path), "--apply").returncode == 0
    assert "kv_cache_specs" not in source.read_text()


def test_p5_a_dry_run_that_leaves_errors_exits_1(tmp_path):
    # `Fp8LinearOp` is gone from 0.16.0's w8a8_utils with no new home a fix could move it to: nothing to change, an error left
    (tmp_path / "plug.py").write_text("from vllm.model_executor.layers.quantization.utils.w8a8_utils import NoSuchThing\n")
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(tmp_path))
    assert "1 error(s) and 0 unknown left" in proc.stderr, proc.stderr
    assert proc.returncode == 1


@pytest.mark.parametrize("verb", ["scan", "fix", "matrix"])
@pytest.mark.parametrize("spec", ["0.11.O", "banana", " "])
def test_p2_a_client_vllm_that_names_no_build_is_exit_2_before_any_fetch(tmp_path, verb, spec):
    # 22c's P2: a typo turned the rules that compare with it into unknowns, which --accept-unknown let pass
    (tmp_path / "plug.py").write_text(_IMPORT + "\n")
    proc = run_cli(verb, "--vllm", "0.16.0", "--client", str(tmp_path), "--client-vllm", spec)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("driftcheck: error: --client-vllm") and "Traceback" not in proc.stderr


def test_p8_an_empty_vllm_is_not_the_current_folder(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "plug.py").write_text(_IMPORT + "\n")
    proc = run_cli("scan", "--vllm", "", "--client", str(tmp_path / "plug.py"), cwd=tmp_path)
    assert proc.returncode == 2 and "--vllm is empty" in proc.stderr, proc.stdout + proc.stderr


def test_p7_a_subpackage_named_build_is_read_and_a_top_level_build_copy_is_not(tmp_path):
    drift = (_IMPORT + "\n\n\n" + _DRIFT).encode()
    for rel in ("mypkg/__init__.py", "mypkg/build/__init__.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "mypkg/build/engine.py").write_bytes(drift)
    (tmp_path / "build/lib/mypkg/build").mkdir(parents=True)  # setuptools' copy of the same file: not read twice
    (tmp_path / "build/lib/mypkg/build/engine.py").write_bytes(drift)
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(tmp_path), "--select", "DC003", "-f", "json")
    assert proc.returncode == 1, proc.stderr
    import json
    assert [f["client"]["path"] for f in json.loads(proc.stdout)["findings"]] == ["mypkg/build/engine.py"]


def test_p14_lines_a_fix_keeps_keep_their_own_endings():
    from driftcheck.fix.fixer import kept_line_endings

    # a keyword inserted after a `\n` line of a file mixing `\r\n` and `\n`: that line keeps its `\n`
    assert kept_line_endings("f(a,\r\n  b,\n)\r\n", "f(a,\r\n  b,\r\n  c=1,\n)\r\n") == "f(a,\r\n  b,\n  c=1,\n)\r\n"
    assert kept_line_endings("x\ry\rz\r", "x\rz") == "x\rz\r"  # a CR-only file keeps its last `\r`


def test_p14_a_cr_only_file_keeps_every_byte_but_the_fixed_ones(tmp_path):
    text = _IMPORT + "\n\n\n" + _DRIFT.replace("kv_cache_specs=spec, available_memory=mem)",
                                                "\n        kv_cache_specs=spec,\n        available_memory=mem)")
    source = tmp_path / "plug.py"
    source.write_bytes(text.replace("\n", "\r").encode())
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(tmp_path), "--apply")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert source.read_bytes() == text.replace("\n        kv_cache_specs=spec,", "").replace("\n", "\r").encode(), \
        source.read_bytes()


def test_p11_a_control_character_in_a_file_name_keeps_the_junit_report_well_formed(tmp_path):
    import xml.dom.minidom

    client = tmp_path / "c"
    client.mkdir()
    (client / "a\x01b.py").write_text(_IMPORT + "\n\n\n" + _DRIFT)
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(client), "--report-dir", str(tmp_path / "rd"), "-q")
    assert proc.returncode == 0, proc.stderr  # (a warning: no module can import a file of that name)
    doc = xml.dom.minidom.parse(str(tmp_path / "rd" / "driftcheck.junit.xml"))  # raises on a malformed document
    [case] = [c for c in doc.getElementsByTagName("testcase") if "DC003" in c.getAttribute("classname")]
    assert case.getAttribute("file") == "a\ufffdb.py"


def test_p9_a_range_over_nothing_readable_is_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "p.py").write_text(_IMPORT + "\n")
    proc = run_cli("range", "--vllm", str(tmp_path / "empty"), "--client", str(tmp_path / "c"))
    assert proc.returncode == 2 and "could not be checked" in proc.stderr, proc.stdout + proc.stderr


def test_p16_a_blocked_report_dir_writes_none_of_the_reports(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "p.py").write_text(_IMPORT + "\n\n\n" + _DRIFT)
    (tmp_path / "rd" / "driftcheck.sarif").mkdir(parents=True)
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(tmp_path / "c"), "--report-dir", str(tmp_path / "rd"))
    assert proc.returncode == 2 and "driftcheck.sarif there is a folder" in proc.stderr, proc.stderr
    assert sorted(p.name for p in (tmp_path / "rd").iterdir()) == ["driftcheck.sarif"]
