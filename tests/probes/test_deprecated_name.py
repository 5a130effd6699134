"""DC009 deprecated-name: an import the target only serves through a warning module __getattr__."""

from __future__ import annotations

from scan.helpers import scan_client, vline


def test_present_points_at_the_new_home(tmp_path):
    client = {"c.py": "from vllm.utils import get_open_port, random_uuid\n"}
    result = scan_client(tmp_path, client, only=["DC009"])
    [f] = result.findings
    assert (f.symbol, f.severity, f.when, f.client.line) == ("vllm.utils.get_open_port", "warning", "import", 1)
    rel = "vllm/utils/network_utils.py"
    assert (f.vllm.path, f.vllm.line) == (rel, vline(rel, "def get_open_port"))
    assert f.details["moved_to"] == "vllm.utils.network_utils" and f.fix == "move-import"


def test_absent_for_the_new_home_and_for_plain_names(tmp_path):
    client = {"c.py": "from vllm.utils.network_utils import get_open_port\nfrom vllm.utils import random_uuid\n"
                      "from vllm import LLM\n"}
    assert scan_client(tmp_path, client, only=["DC009"]).findings == []


def test_type_checking_import_of_a_deprecated_name_is_ignored(tmp_path):
    client = {"c.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from vllm.utils import get_open_port\n"}
    assert scan_client(tmp_path, client, only=["DC009"]).findings == []
