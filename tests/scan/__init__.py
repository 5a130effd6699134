"""Scan tests: resolution, inference, units, the CLI scan, real releases. A package so that tests/probes and
tests/reports can share `scan.helpers`."""
