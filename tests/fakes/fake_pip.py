"""A stand-in for pip, run through $DRIFTCHECK_PIP, for tests that must not depend on the index.

    index versions NAME   prints $FAKE_PIP_INDEX (JSON {name: [versions]}); a name missing from it
                          fails as an unreachable index would
    download ... -d DIR   with $FAKE_PIP_WHEEL: copies that wheel into DIR (after writing a partial
                          file into $TMPDIR for $FAKE_PIP_DELAY seconds, if set); with FAKE_PIP_SLOW=1:
                          records its pid and a child's in the folder $FAKE_PIP_PIDS, writes a
                          growing partial wheel into $TMPDIR and DIR until killed; otherwise fails
                          with "No matching distribution"
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if argv[:2] == ["index", "versions"]:
        listing = json.loads(os.environ.get("FAKE_PIP_INDEX", "{}"))
        name = argv[2]
        if name not in listing:
            print("ERROR: Could not fetch URL https://pypi.org/simple/: Max retries exceeded", file=sys.stderr)
            return 1
        print(f"{name} ({listing[name][0]})")
        print("Available versions: " + ", ".join(listing[name]))
        return 0
    if argv[:1] == ["download"]:
        dest = argv[argv.index("-d") + 1]
        if os.environ.get("FAKE_PIP_WHEEL"):
            wheel = os.environ["FAKE_PIP_WHEEL"]
            delay = float(os.environ.get("FAKE_PIP_DELAY", "0"))
            if delay:
                print(f"  Downloading {os.path.basename(wheel)} (2.0 MB)", flush=True)
                with open(os.path.join(os.environ.get("TMPDIR", dest), "partial.whl"), "wb") as part:
                    end = time.monotonic() + delay
                    while time.monotonic() < end:
                        part.write(b"\0" * 20000)
                        part.flush()
                        time.sleep(0.02)
            shutil.copy(wheel, dest)
            return 0
        if os.environ.get("FAKE_PIP_SLOW") != "1":
            print(f"ERROR: No matching distribution found for {argv[-1]}", file=sys.stderr)
            return 1
        # a child that ignores SIGTERM, as a stuck download helper would: only SIGKILL stops it
        child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
        with open(os.path.join(os.environ["FAKE_PIP_PIDS"], f"{os.getpid()}.json"), "w") as fh:
            json.dump({"pip": os.getpid(), "child": child.pid}, fh)
        print(f"Collecting {argv[-1]}", flush=True)
        print("  Downloading fake-1.0-py3-none-any.whl (10.0 MB)", flush=True)
        tmp = os.environ.get("TMPDIR", dest)
        with open(os.path.join(tmp, "partial.whl"), "wb") as part, open(os.path.join(dest, "partial.whl"), "wb") as copy:
            while True:
                part.write(b"\0" * 65536)
                copy.write(b"\0" * 65536)
                part.flush()
                copy.flush()
                time.sleep(0.05)
    print(f"fake pip: unsupported {argv}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
