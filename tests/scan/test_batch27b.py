"""Batch 27b (KV-cache connectors, offloading backends, custom schedulers and disaggregated-serving glue at their
stored GitHub HEAD, docs/triage/2026-12-05-kv-scheduler-heads-27b.md).

OB1: tair-kvcache's vLLM connector (alibaba/tair-kvcache f6aa2b2,
kv_cache_manager/py_connector/vllm/v1_connector.py:50-54) imports `vllm.attention.AttentionMetadata` under
`if typing_extensions.TYPE_CHECKING:`, a block that never runs. Only `TYPE_CHECKING` and `typing.TYPE_CHECKING` were
read as such, so DC001 called the import an error at vLLM 0.16.0 and 0.33.0 (no `vllm.attention` there). The
constant read through one module name (`typing_extensions.TYPE_CHECKING`, an alias `t.TYPE_CHECKING`) is now the same
block. The twins: the same import outside the block, in the `else` of the block, or under a test that is not the
constant (`if typing_extensions.TYPE_CHECKING or RUNTIME:`) stays an error.

OB2: kvbm 1.6.1 (kvbm/vllm_integration/connector/pd_connector.py:16-27) imports `...v1.nixl_connector` in a try whose
`except ModuleNotFoundError as exc:` re-raises unless `exc.name != "...v1.nixl_connector"` and then imports the new
`...v1.nixl`. DC001 took that string for a registration of the module ("the client names it as a string: it may
register the module itself (sys.modules, an import hook)"): the warning gave a wrong reason. A string a comparison
in an `except` clause reads registers nothing: the warning now says the import is guarded and where the names went.
The twins: the same module imported without a guard in another file is an error (it was a warning); a `sys.modules[...]`
key and an import hook's `if fullname == "..."` (a comparison outside an `except`) still count as a registration.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, plugin_shape, scan_trees

OB1_VLLM, OB1_CLIENT = plugin_shape("OB1")
OB2_VLLM, OB2_CLIENT = plugin_shape("OB2")
OLD = "vllm.distributed.kv_transfer.kv_connector.v1.nixl_connector"
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


def _ob2(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, str, int, bool]]:
    result = scan_trees(tmp_path, OB2_VLLM, client, only=["DC001"])
    return sorted((f.severity, f.client.path, f.client.line, "names it as a string" in f.message) for f in result.findings)


def test_ob2_name_compared_in_the_except_is_a_guarded_import_not_a_registration(tmp_path):
    assert _ob2(tmp_path, OB2_CLIENT) == [("warning", "plug/pd.py", 4, False)]


def test_ob2_twin_unguarded_import_elsewhere_is_an_error(tmp_path):
    client = {**OB2_CLIENT, "plug/old.py": f"from {OLD} import NixlConnector\n"}
    assert _ob2(tmp_path, client) == [("error", "plug/old.py", 1, False), ("warning", "plug/pd.py", 4, False)]


def test_ob2_twin_sys_modules_key_still_counts_as_a_registration(tmp_path):
    client = {**OB2_CLIENT, "plug/old.py": f"from {OLD} import NixlConnector\n",
              "plug/register.py": f"import sys\nimport types\nsys.modules[\"{OLD}\"] = types.ModuleType(\"x\")\n"}
    assert [(s, p, r) for s, p, _, r in _ob2(tmp_path, client)] == [("warning", "plug/old.py", True), ("warning", "plug/pd.py", True)]


def test_ob2_twin_a_finder_comparing_the_name_still_counts_as_a_registration(tmp_path):
    hook = (f"import importlib.abc\nimport importlib.machinery\n\n\nclass Finder(importlib.abc.MetaPathFinder):\n"
            f"    def find_spec(self, fullname, path, target=None):\n        if fullname == \"{OLD}\":\n"
            f"            return importlib.machinery.ModuleSpec(fullname, None)\n        return None\n")
    client = {**OB2_CLIENT, "plug/old.py": f"from {OLD} import NixlConnector\n", "plug/hook.py": hook}
    assert [(s, p, r) for s, p, _, r in _ob2(tmp_path, client)] == [("warning", "plug/old.py", True), ("warning", "plug/pd.py", True)]
