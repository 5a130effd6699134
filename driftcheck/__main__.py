from driftcheck.cli.main import entry

entry()
