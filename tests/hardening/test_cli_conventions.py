"""Issue 13 items 10 and 12: the conventions users expect from a command-line tool.

`-f/--output-format` and `-o` on every verb that reports (JSON on stdout when asked); tables as wide as the
terminal; `rules` in aligned columns; a single-valued option given twice is an error; `explain` reads coloured
tracebacks; SARIF URIs are percent-encoded and every `uriBaseId` is declared."""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO, run_cli

TRACEBACKS = REPO / "tests" / "fixtures" / "tracebacks"
TB = TRACEBACKS / "vllm-0.16.0-cache-full-blocks-assert.txt"


def test_explain_json_on_stdout_and_to_a_file(tmp_path):
    proc = run_cli("explain", "-f", "json", str(TB))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["diagnoses"][0]["rule"] == "DC101"
    out = tmp_path / "explain.json"
    proc = run_cli("explain", "-f", "json", "-o", str(out), str(TB))
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    assert json.loads(out.read_text()) == doc
    text = tmp_path / "explain.txt"
    assert run_cli("explain", "-o", str(text), str(TB)).returncode == 0
    assert text.read_text().startswith("DC101")


def test_range_and_matrix_take_format_and_output(tmp_path):
    proc = run_cli("range", "--vllm", "0.16.0,0.17.0", "--client", "speculators==0.4.0", "-f", "json", timeout=600)
    assert proc.returncode == 0, proc.stderr
    (r,) = json.loads(proc.stdout)
    assert r["client"] == "speculators==0.4.0"
    out = tmp_path / "range.txt"
    proc = run_cli("range", "--vllm", "0.16.0,0.17.0", "--client", "speculators==0.4.0", "-o", str(out), timeout=600)
    assert proc.returncode == 0 and proc.stdout == "" and "computed vllm" in out.read_text()
    proc = run_cli("matrix", "--vllm", "0.16.0,0.17.0", "--client", "speculators==0.4.0", "--out", str(tmp_path / "m"),
                   "-f", "json", timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["versions"] == ["0.16.0", "0.17.0"] and doc["ranges"]


def test_fix_summary_as_json(tmp_path):
    (tmp_path / "c.py").write_text("from vllm.v1.core.sched.scheduler import Scheduler\n\n\ndef f(c, k, s):\n"
                                   "    return Scheduler(vllm_config=c, kv_cache_config=k, structured_output_manager=s)\n")
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(tmp_path), "-f", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    (client,) = doc["clients"]
    (change,) = client["changes"]
    assert change["path"] == "c.py" and change["fixes"][0]["fix"] == "add-argument" and change["diff"].startswith("--- a/c.py")
    assert doc["applied"] is False and client["left"]["errors"] == []
    out = tmp_path / "fix.json"
    proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(tmp_path), "-f", "json", "-o", str(out))
    assert proc.stdout == "" and json.loads(out.read_text())["clients"][0]["changes"]


@pytest.mark.parametrize("columns", [80, 200])
def test_text_tables_fit_the_terminal(columns):
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", "speculators==0.3.0", env={"COLUMNS": str(columns)})
    assert proc.returncode == 1, proc.stderr
    widths = [len(line) for line in proc.stdout.splitlines()]
    assert max(widths) <= columns
    assert max(widths) > columns - 10  # the tables use the width they are given


def test_rules_columns_are_aligned():
    proc = run_cli("rules")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:5] == ["id", "name", "severity", "kind", "fix"]
    header = lines[0]
    starts = [header.index(word) for word in ("name", "severity", "kind", "fix", "title")]
    for line in lines[1:]:
        for start in starts:  # every column starts where its header does, after a gap
            assert line[start - 1] == " " and line[start] != " ", line


@pytest.mark.parametrize("args", [
    ("scan", "--vllm", "0.16.0", "--vllm", "0.11.0", "--client", "x"),
    ("fix", "--vllm", "0.16.0", "--client", "a", "--client", "b"),
    ("scan", "--vllm", "0.16.0", "-o", "a.json", "-o", "b.json"),
    ("explain", "--vllm", "0.16.0", "--vllm", "0.17.0", "tb.txt"),
])
def test_single_valued_option_given_twice_is_an_error(args):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert re.search(r"driftcheck: error: (--vllm|--client|-o) given twice", proc.stderr), proc.stderr


def test_explain_reads_a_coloured_traceback(tmp_path):
    plain = TB.read_text()
    coloured = tmp_path / "coloured.txt"
    # what rich / IPython / pytest --color=yes print: SGR colours, bold, an OSC 8 hyperlink on the file name
    painted = re.sub(r'File "([^"]+)"', lambda m: f'File "\x1b]8;;file://{m.group(1)}\x1b\\{m.group(1)}\x1b]8;;\x1b\\"', plain)
    painted = painted.replace("Traceback", "\x1b[1;31mTraceback\x1b[0m").replace("AssertionError", "\x1b[38;5;196mAssertionError\x1b[0m")
    coloured.write_text(painted)
    a = run_cli("explain", "-f", "json", str(TB))
    b = run_cli("explain", "-f", "json", str(coloured))
    assert b.returncode == a.returncode == 0, b.stderr
    assert json.loads(b.stdout)["diagnoses"] == json.loads(a.stdout)["diagnoses"]


def test_sarif_uris_are_encoded_and_every_base_id_declared(tmp_path):
    client = tmp_path / "my client #1" / "pkg ü"
    client.mkdir(parents=True)
    (client / "gen 100%.py").write_text("from vllm.v1.core.sched.scheduler import Scheduler\n\n\ndef f(c, k, s):\n"
                                        "    return Scheduler(vllm_config=c, kv_cache_config=k, structured_output_manager=s)\n")
    proc = run_cli("scan", "--vllm", "0.16.0", "--client", str(client.parent), "--client", "speculators==0.3.0", "-f", "sarif")
    assert proc.returncode == 1, proc.stderr
    run = json.loads(proc.stdout)["runs"][0]
    declared = set(run["originalUriBaseIds"])
    used = set()
    for res in run["results"]:
        for loc in res.get("locations", []) + res.get("relatedLocations", []):
            art = loc["physicalLocation"]["artifactLocation"]
            used.add(art["uriBaseId"])
            assert re.fullmatch(r"[A-Za-z0-9._~/%!$&'()*+,;=:@-]+", art["uri"]), art["uri"]
    assert used <= declared, used - declared
    mine = [r for r in run["results"] if r["properties"]["client"] != "speculators"]
    uri = mine[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "pkg%20%C3%BC/gen%20100%25.py"
    base = run["originalUriBaseIds"][mine[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"]]["uri"]
    assert base.startswith("file://") and "my%20client%20%231" in base


def test_the_fast_exit_flushes_output_runs_exit_handlers_and_keeps_the_code(tmp_path):
    """`entry` ends with `_exit_now` (no heap teardown): buffered output and atexit handlers must not be lost."""
    import subprocess
    import sys

    marker = tmp_path / "handler-ran"
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
            "sys.stdout.write('x' * 100000)\n"  # more than one buffer's worth, not flushed by hand
            "from driftcheck.cli.main import _exit_now\n"
            "_exit_now(3)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 3
    assert proc.stdout == "x" * 100000
    assert marker.read_text() == "yes"


def test_a_scan_never_imports_the_codemods(tmp_path):
    """libcst (the fixes' editor) costs a tenth of a second to import: a scan, cold or from the caches (where findings
    and their payloads are read back), must not pay it."""
    import subprocess
    import sys

    from scan.helpers import MINIVLLM

    client = tmp_path / "client"
    client.mkdir()
    (client / "c.py").write_text("from vllm.v1.core.sched.scheduler import Scheduler\n\n\ndef f(c, k, m):\n"
                                 "    return Scheduler(vllm_config=c, kv_cache_config=k, structured_output_manager=m)\n")
    code = ("import sys\nfrom driftcheck.cli.main import main\n"
            f"args = ['scan', '--vllm', {str(MINIVLLM)!r}, '--client', {str(client)!r}, '--cache-dir', {str(tmp_path / 'c')!r},"
            " '-f', 'json', '-o', " + repr(str(tmp_path / "r.json")) + ", '--fail-on', 'never']\n"
            "for _ in range(2):\n    assert main(args) == 0\n"  # the second one reads the findings back from the cache
            "print('libcst' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["findings"] and report["stats"]["client_cached"] == 1  # it did check something, from the cache
