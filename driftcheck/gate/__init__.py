"""The gate over many vLLMs: release matrices, compatible ranges, nightly bisection, scan comparison."""
