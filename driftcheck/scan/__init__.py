"""One scan: the client analysed in per-file units, the rules run, guards and suppressions applied."""
