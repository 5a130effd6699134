"""The vLLM model: what the target tree defines, read with `ast` (summaries, names, classes, signatures, bodies)."""
