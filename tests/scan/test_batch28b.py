"""Batch 28b (libraries that patch or wrap vLLM's engine and worker internals at their stored GitHub HEAD,
docs/triage/2026-12-05-patch-libs-28b.md).

PB1: unified-cache-management (ModelEngine-Group/unified-cache-management cdd4406,
ucm/integration/vllm/ucm_connector.py:870-900): `UCMCPConnector.__init__` opens with `try: from vllm.distributed
import get_dcp_group, get_pcp_group` whose `except ImportError as e:` raises its own ImportError ("Please check if the
current vLLM version supports DCP and PCP features"), then reads `parallel_config.prefill_context_parallel_size`. At
vLLM 0.11.0 (no `get_pcp_group`, no `prefill_context_parallel_size`) DC006 called that read an error, though it never
runs there: the function has already raised. The rest of a block after a try of nothing but vLLM imports whose every
handler exits is now guarded as the body of `if hasattr(vllm.distributed, "get_pcp_group"):` is (a warning). The twins:
a handler that falls through (logs and goes on), a try that also does other work, and the same read with no probe
before it stay errors.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, plugin_shape, scan_trees

PB1_VLLM, PB1_CLIENT = plugin_shape("PB1")
CONN = "plug/connector.py"
RAISE = '            raise ImportError("this vLLM does not support DCP and PCP") from e\n'


def _pb1(tmp_path: Path, *edits: tuple[str, str]) -> list[tuple[str, str, int]]:
    """DC006's findings on the PB1 client with `edits` made to its connector."""
    found = scan_trees(tmp_path, PB1_VLLM, edited(PB1_CLIENT, CONN, *edits) if edits else PB1_CLIENT, only=["DC006"])
    return sorted((f.severity, f.client.path, f.client.line) for f in found.findings)


def test_pb1_read_after_an_import_probe_that_raises_is_no_error(tmp_path):
    assert _pb1(tmp_path) == [("warning", CONN, 14)]


def test_pb1_probe_whose_except_returns_is_no_error(tmp_path):
    assert _pb1(tmp_path, (RAISE, "            return\n")) == [("warning", CONN, 14)]


def test_pb1_twin_handler_that_falls_through_stays_error(tmp_path):
    assert _pb1(tmp_path, (RAISE, "            get_pcp_group = get_dcp_group\n")) == [("error", CONN, 14)]


def test_pb1_twin_try_that_also_does_other_work_stays_error(tmp_path):
    assert _pb1(tmp_path, ("get_dcp_group, get_pcp_group\n",
                           "get_dcp_group, get_pcp_group\n            size = config.prefill_context_parallel_size\n")) == [("error", CONN, 10), ("error", CONN, 15)]


def test_pb1_twin_no_probe_before_the_read_stays_error(tmp_path):
    assert ("error", CONN, 12) in _pb1(tmp_path, ("        try:\n            from vllm.distributed import get_dcp_group, get_pcp_group\n"
                                       "        except ImportError as e:\n" + RAISE,
                                       "        from vllm.distributed import get_dcp_group\n        get_pcp_group = get_dcp_group\n"))
