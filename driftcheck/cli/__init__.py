"""The command line, one module a verb: parser.py (the grammar), main.py (dispatch, exit codes, `entry`),
common.py (what the verbs share), scan, fix, gate (matrix, range, bisect, compare), explain, rules, smoke."""
