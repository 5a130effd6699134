"""`driftcheck fix --apply` end to end, and its safety: atomic, backed up, refuses stale or read-only files.

The client is a copy of the real speculators 0.3.0 release (its files and dist-info, as pip
installs them), so the declared `vllm==0.11.0` is read from its metadata like on a user's machine.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import CACHE_DIR, REPO, client_sources, run_cli

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
WORKER = "speculators/data_generation/custom_worker.py"


def installed_copy(tmp_path: Path, version: str = "0.3.0") -> Path:
    """speculators VERSION laid out as in site-packages (package + dist-info)."""
    root = tmp_path / "site-packages"
    with zipfile.ZipFile(client_sources("speculators", version)) as z:
        z.extractall(root)
    return root


def errors(scan_json: dict) -> list[dict]:
    return [f for f in scan_json["findings"] if f["severity"] == "error"]


@pytest.mark.parametrize("vllm", ["0.16.0", "0.32.0"])
def test_fix_apply_then_scan_leaves_no_errors(tmp_path, vllm):
    client = installed_copy(tmp_path)
    before = json.loads(run_cli("scan", "--vllm", vllm, "--client", str(client), "-f", "json").stdout)
    assert len(errors(before)) >= 8  # the seed's drifts are there to begin with
    dry = run_cli("fix", "--vllm", vllm, "--client", str(client))
    assert dry.returncode == 1, dry.stderr  # something to change, nothing written
    assert dry.stdout.startswith("--- a/speculators/")
    assert not list(client.rglob("*.driftcheck.bak"))
    applied = run_cli("fix", "--vllm", vllm, "--client", str(client), "--apply")
    assert applied.returncode == 0, applied.stderr
    after = run_cli("scan", "--vllm", vllm, "--client", str(client), "-f", "json")
    assert errors(json.loads(after.stdout)) == []
    assert sorted(p.name for p in client.rglob("*.driftcheck.bak")) == sorted(
        [Path(GEN).name + ".driftcheck.bak", Path(WORKER).name + ".driftcheck.bak"])
    # applying again changes nothing
    again = run_cli("fix", "--vllm", vllm, "--client", str(client))
    assert again.returncode == 0 and again.stdout == ""


def test_no_backup(tmp_path):
    client = installed_copy(tmp_path)
    assert run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply", "--no-backup").returncode == 0
    assert not list(client.rglob("*.driftcheck.bak"))


def test_formatting_and_comments_outside_the_edits_stay_byte_identical(tmp_path):
    client = installed_copy(tmp_path)
    original = (client / GEN).read_text()
    run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply")
    new = (client / GEN).read_text()
    # every original line that mentions none of the fixed constructs is still there, in order
    untouched = [ln for ln in original.splitlines() if not any(k in ln for k in (
        "kv_cache_specs", "execute_model", "captured_states_list[0]", "Scheduler(", "max_num_batched_tokens=max_num_batched",
        "gpu_memory_utilization=gpu_memory_utilization,", "structured_output_manager=structured_output_manager,"))]
    it = iter(new.splitlines())
    assert all(any(line == other for other in it) for line in untouched)
    assert "# Constants" in new and "# Get captured states from driver worker" in new


def test_read_only_file_is_refused_and_left_alone(tmp_path):
    client = installed_copy(tmp_path)
    target = client / GEN
    original = target.read_bytes()
    target.chmod(0o444)
    try:
        proc = run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply")
        assert proc.returncode == 2
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("driftcheck: error:") and "read-only" in last and "Traceback" not in proc.stderr
        assert target.read_bytes() == original
        assert (client / WORKER).read_bytes() == zipfile.ZipFile(client_sources("speculators", "0.3.0")).read(WORKER)
    finally:
        target.chmod(0o644)


def test_file_changed_between_read_and_write_is_refused(tmp_path):
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.errors import DriftcheckError
    from driftcheck.fix.fixer import FixOptions, apply_plan, plan_fixes
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    client_dir = installed_copy(tmp_path)
    client = resolve_client(str(client_dir), CACHE_DIR)
    plan = plan_fixes(resolve_vllm("0.16.0", CACHE_DIR), client, ScanOptions(cache_dir=CACHE_DIR), FixOptions())
    assert plan.changes
    edited = (client_dir / GEN).read_text() + "\n# edited by a person meanwhile\n"
    (client_dir / GEN).write_text(edited)
    worker_before = (client_dir / WORKER).read_bytes()
    with pytest.raises(DriftcheckError, match="changed since driftcheck read it"):
        apply_plan(plan, client)
    assert (client_dir / GEN).read_text() == edited
    assert (client_dir / WORKER).read_bytes() == worker_before  # nothing written at all



def test_file_changed_while_the_fixes_are_written_is_left_as_it_is(tmp_path, monkeypatch):
    """Batch 20h: a line appended to a file while the first backups were written was lost (in neither the fixed
    file nor its backup). Each file is looked at again just before it is written: a changed one stops the apply,
    kept as the person left it, and the message says what was written before it."""
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.errors import DriftcheckError
    from driftcheck.fix import fixer
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    client_dir = installed_copy(tmp_path)
    client = resolve_client(str(client_dir), CACHE_DIR)
    plan = fixer.plan_fixes(resolve_vllm("0.16.0", CACHE_DIR), client, ScanOptions(cache_dir=CACHE_DIR), fixer.FixOptions())
    assert {c.rel for c in plan.changes} == {GEN, WORKER}
    first, second = (client_dir / plan.changes[0].rel), (client_dir / plan.changes[1].rel)
    real_write = fixer._write
    edits = {"done": False}

    def write_then_edit(path, data, mode):  # another program edits the second file once the first backup is written
        real_write(path, data, mode)
        if not edits["done"] and path.name.endswith(fixer.BACKUP_SUFFIX):
            edits["done"] = True
            second.write_bytes(second.read_bytes() + b"\n# edited by a person meanwhile\n")

    monkeypatch.setattr(fixer, "_write", write_then_edit)
    with pytest.raises(DriftcheckError, match="changed while driftcheck was writing") as caught:
        fixer.apply_plan(plan, client)
    assert "1 file(s) were written before it, each with its backup" in caught.value.one_line()
    assert second.read_bytes().endswith(b"# edited by a person meanwhile\n")  # the person's edit is kept
    assert first.read_bytes() == plan.changes[0].new_bytes  # the file before it was fixed, with its backup
    assert (first.with_name(first.name + fixer.BACKUP_SUFFIX)).read_bytes() == plan.overlay.originals[plan.changes[0].rel]

KILLER = r"""
import os, sys, time
import driftcheck.fix.fixer as fixer
real_replace = os.replace
calls = {"n": 0}
def slow_replace(src, dst):
    if str(dst).startswith(sys.argv[3]):  # only the client's files: cache entries are renamed into place too
        calls["n"] += 1
        if calls["n"] == int(sys.argv[1]):
            open(sys.argv[2], "w").write("ready")
            time.sleep(60)  # killed here: between writing the temp file and renaming it
    return real_replace(src, dst)
fixer.os.replace = slow_replace
from driftcheck.cli.main import main
sys.exit(main(sys.argv[4:]))
"""


@pytest.mark.parametrize("kill_at", [1, 2])
def test_kill_during_apply_leaves_each_file_old_or_new(tmp_path, kill_at):
    client = installed_copy(tmp_path)
    files = [client / GEN, client / WORKER]
    old = {f: f.read_text() for f in files}
    # the new contents, from a dry run on an identical copy
    twin = installed_copy(tmp_path / "twin")
    run_cli("fix", "--vllm", "0.16.0", "--client", str(twin), "--apply", "--no-backup")
    new = {f: (twin / f.relative_to(client)).read_text() for f in files}
    marker = tmp_path / "ready"
    env = dict(os.environ, DRIFTCHECK_CACHE_DIR=str(CACHE_DIR), PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", KILLER, str(kill_at), str(marker), str(client), "fix", "--vllm", "0.16.0",
                             "--client", str(client), "--apply", "--no-backup"], env=env, start_new_session=True)
    deadline = time.time() + 120
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), "the apply never reached the rename"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    states = []
    for f in files:
        text = f.read_text()
        assert text in (old[f], new[f]), f"{f.name} is neither the old nor the new file"
        ast.parse(text)
        states.append("new" if text == new[f] else "old")
    # rename k is the one killed: files renamed before it are new, the rest old
    assert states.count("new") == kill_at - 1


BARRIER = r"""
import sys, time
import driftcheck.fix.fixer as fixer
real_plan = fixer.plan_fixes
def plan_then_wait(*args, **kwargs):
    plan = real_plan(*args, **kwargs)
    with open(sys.argv[1], "a") as fh:
        fh.write("planned\n")
    deadline = time.time() + 120
    while open(sys.argv[1]).read().count("planned") < 2 and time.time() < deadline:
        time.sleep(0.05)  # both runs have read the same old file before either writes
    return plan
fixer.plan_fixes = plan_then_wait
from driftcheck.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def test_two_fix_apply_at_once_keep_both_fixes(tmp_path):
    """Issue 13 item 6: `--only drop-keyword` and `--only disable-prefix-caching` at once on one tree: both fixes
    end up in the file (the second run waits for the lock, sees the first one's write and plans again)."""
    client = installed_copy(tmp_path)
    barrier = tmp_path / "barrier"
    env = dict(os.environ, DRIFTCHECK_CACHE_DIR=str(CACHE_DIR), PYTHONPATH=str(REPO), NO_COLOR="1")
    procs = [subprocess.Popen([sys.executable, "-c", BARRIER, str(barrier), "fix", "--vllm", "0.16.0", "--client", str(client),
                               "--only", only, "--apply", "--no-backup"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for only in ("drop-keyword", "disable-prefix-caching")]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs):
        assert p.returncode in (0, 1), err  # 1: errors of other rules are left, as asked
        assert "wrote 1 file(s)" in err, err
    assert any("planned again" in err for _out, err in outs), [err for _o, err in outs]
    text = (client / GEN).read_text()
    ast.parse(text)
    assert "kv_cache_specs=" not in text  # drop-keyword's fix
    assert "enable_prefix_caching=False" in text  # disable-prefix-caching's fix


def test_a_second_apply_keeps_the_first_backup(tmp_path):
    """Batch 21a: a second `fix --apply` (vllm-rbln, after the first run's added arguments uncovered more drift) wrote
    the first run's output over `<file>.driftcheck.bak`, the only copy of the file as the person had written it. Each
    run's backup now goes to the first free name; one holding the same bytes is not written again."""
    client = installed_copy(tmp_path)
    original = (client / GEN).read_bytes()
    assert run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply").returncode == 0
    backup = client / (GEN + ".driftcheck.bak")
    assert backup.read_bytes() == original
    # the person puts the old file back with a line of their own: the next apply fixes it again
    edited = original + b"\n# kept by hand\n"
    (client / GEN).write_bytes(edited)
    assert run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply").returncode == 0
    assert backup.read_bytes() == original
    assert (client / (GEN + ".driftcheck.bak.1")).read_bytes() == edited
    # the file as the first backup holds it: nothing new to keep
    (client / GEN).write_bytes(original)
    assert run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply").returncode == 0
    assert not (client / (GEN + ".driftcheck.bak.2")).exists()


def test_a_backup_name_taken_by_a_folder_is_left_alone(tmp_path):
    client = installed_copy(tmp_path)
    taken = client / (WORKER + ".driftcheck.bak")
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    original = (client / WORKER).read_bytes()
    assert run_cli("fix", "--vllm", "0.16.0", "--client", str(client), "--apply").returncode == 0
    assert (taken / "keep.txt").read_text() == "mine"
    assert (client / (WORKER + ".driftcheck.bak.1")).read_bytes() == original
