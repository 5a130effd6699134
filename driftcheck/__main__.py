from driftcheck.cli import entry

entry()
