import os
import sys
import textwrap
import time

from driftcheck.runner.procs import group_members, run_isolated

# A child that leaves two grandchildren behind (one in a new process group) and exits at once.
LEAVER = textwrap.dedent("""
    import os, subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=os.setpgrp)
    print("children", flush=True)
    if sys.argv[1] == "hang":
        time.sleep(60)
""")


def test_nothing_left_after_the_child_exits(tmp_path):
    out = run_isolated([sys.executable, "-c", LEAVER, "exit"], env=dict(os.environ), timeout_s=30,
                       log_path=tmp_path / "log.txt")
    assert out.returncode == 0 and not out.timed_out
    assert out.leftovers == []
    assert "children" in (tmp_path / "log.txt").read_text()


def test_timeout_kills_the_whole_group(tmp_path):
    t0 = time.monotonic()
    out = run_isolated([sys.executable, "-c", LEAVER, "hang"], env=dict(os.environ), timeout_s=2,
                       log_path=tmp_path / "log.txt")
    assert out.timed_out and out.returncode is None
    assert out.leftovers == []
    assert time.monotonic() - t0 < 20
    assert out.peak_rss_mb > 1  # three Python processes were sampled


def test_group_members_sees_this_process_group():
    assert os.getpid() in group_members(os.getpgid(0))
