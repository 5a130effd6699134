"""Batch 27b (KV-cache connectors, offloading backends, custom schedulers and disaggregated-serving glue at their
stored GitHub HEAD, docs/triage/2026-12-05-kv-scheduler-heads-27b.md).

OB1: tair-kvcache's vLLM connector (alibaba/tair-kvcache f6aa2b2,
kv_cache_manager/py_connector/vllm/v1_connector.py:50-54) imports `vllm.attention.AttentionMetadata` under
`if typing_extensions.TYPE_CHECKING:`, a block that never runs. Only `TYPE_CHECKING` and `typing.TYPE_CHECKING` were
read as such, so DC001 called the import an error at vLLM 0.16.0 and 0.33.0 (no `vllm.attention` there). The
constant read through one module name (`typing_extensions.TYPE_CHECKING`, an alias `t.TYPE_CHECKING`) is now the same
block. The twins: the same import outside the block, in the `else` of the block, or under a test that is not the
constant (`if typing_extensions.TYPE_CHECKING or RUNTIME:`) stays an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, plugin_shape, scan_trees

OB1_VLLM, OB1_CLIENT = plugin_shape("OB1")
CONN = "plug/connector.py"
HELP = "plug/helpers.py"


def _dc001(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, str, int]]:
    result = scan_trees(tmp_path, OB1_VLLM, client, only=["DC001"])
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings)


def test_ob1_imports_under_typing_extensions_or_an_alias_type_checking_are_no_error(tmp_path):
    assert _dc001(tmp_path, OB1_CLIENT) == []


def test_ob1_from_typing_extensions_import_type_checking_is_no_error(tmp_path):
    client = edited(OB1_CLIENT, CONN, ("import typing_extensions\n", "from typing_extensions import TYPE_CHECKING\n"),
                    ("if typing_extensions.TYPE_CHECKING:", "if TYPE_CHECKING:"))
    assert _dc001(tmp_path, client) == []


def test_ob1_twin_import_outside_the_block_stays_error(tmp_path):
    client = edited(OB1_CLIENT, CONN, ("if typing_extensions.TYPE_CHECKING:\n    from vllm.attention",
                                       "if typing_extensions.TYPE_CHECKING:\n    pass\nfrom vllm.attention"))
    assert _dc001(tmp_path, client) == [("error", CONN, 8)]


def test_ob1_twin_import_in_the_else_of_the_block_stays_error(tmp_path):
    client = edited(OB1_CLIENT, HELP, ("if t.TYPE_CHECKING:\n    from", "if t.TYPE_CHECKING:\n    pass\nelse:\n    from"))
    assert _dc001(tmp_path, client) == [("error", HELP, 6)]


def test_ob1_twin_test_that_is_not_the_constant_stays_error(tmp_path):
    client = edited(OB1_CLIENT, CONN, ("if typing_extensions.TYPE_CHECKING:",
                                       "RUNTIME = True\nif typing_extensions.TYPE_CHECKING or RUNTIME:"))
    assert _dc001(tmp_path, client) == [("error", CONN, 8)]


def test_ob1_twin_deeper_attribute_named_type_checking_stays_error(tmp_path):
    client = edited(OB1_CLIENT, HELP, ("import typing as t\n", "import types\nt = types.SimpleNamespace(cfg=types.SimpleNamespace(TYPE_CHECKING=True))\n"),
                    ("if t.TYPE_CHECKING:", "if t.cfg.TYPE_CHECKING:"))
    assert _dc001(tmp_path, client) == [("error", HELP, 5)]
