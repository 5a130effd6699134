"""Sources: where the files come from (folders, wheels, fetched releases, nightlies) and what the targets name."""
