"""Scan-engine tests. A package so that tests/probes and tests/reports can share `engine.helpers`."""
