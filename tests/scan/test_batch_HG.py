"""Batch HG (pooling / reward-model plugins, IO processors, evaluation-harness backends and structured-generation glue;
docs/triage/2026-12-06-pooling-eval-structured-HG.md).

HG1: simplescaling/s1 (77272c6) vendors sglang 0.1.14 (eval/rebase/sglang, written for vLLM 0.3.3), whose
`srt/managers/router/model_rpc.py:34` has `from vllm.logger import _default_handler as vllm_default_handler`. The
error is real: vLLM's logger has had no `_default_handler` for many releases. But at 0.33.0 and 0.34.0 DC002 added
"It is defined in `vllm.third_party.tml_fa4.fa_logging` now" with the `move-import` fix, which would have rewritten
the import to a vendored FlashAttention 4 module: 0.33.0-0.34.0 ship two identical copies of `fa_logging.py` (under
`third_party/tml_fa4/` and `vllm_flash_attn/cute/`), each binding its own `_default_handler` (None until FA_LOG_LEVEL
is set). The two were alike on every count TextIndex.defining_modules ranks by (leading package parts shared with
`vllm.logger`, a def/class before an assignment, depth): the first in file order was named. Now, where a home is
named (DC002's hint and fix, DC001's "Where what the client takes from it is defined now", `move-import`), no home
is named when the first two candidates tie, as DC008 names no rename on a tie. Twins: one copy only, a `def` or a
shallower module among the candidates, still name their leader; the ImportError stays an error.
"""

from __future__ import annotations

from driftcheck.fix.fixer import FixOptions, plan_fixes
from driftcheck.scan.pipeline import ScanOptions
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import by_rule, edited, plugin_shape, scan_trees, vllm_tree, write_tree

HG1_VLLM, HG1_FIXED = plugin_shape("HG1")  # the fixture's client runs on its vLLM (test_plugin_shapes)
RPC = "router/model_rpc.py"
COPY_A = "vllm/third_party/fa4/fa_logging.py"
COPY_B = "vllm/vllm_flash_attn/cute/fa_logging.py"
# the vendored router's own line, as written for vLLM 0.3.3
HG1_CLIENT = edited(HG1_FIXED, RPC, ("from vllm.logger import init_logger\n",
                                     "from vllm.logger import _default_handler as vllm_default_handler\n"
                                     "from vllm.logger import init_logger\n"))


def _dc002(tmp_path, vllm_files, client_files=HG1_CLIENT):
    [f] = by_rule(scan_trees(tmp_path, vllm_files, client_files, only=["DC002"]), "DC002")
    return f


def test_hg1_two_equally_near_definitions_name_no_new_home(tmp_path):
    f = _dc002(tmp_path, HG1_VLLM)
    assert (f.severity, f.symbol, f.client.path, f.client.line) == ("error", "vllm.logger._default_handler", RPC, 5)
    assert f.details.get("moved_to") is None and f.fix is None
    assert "ImportError at import time." in f.message and "It is defined in" not in f.message


def test_hg1_move_import_leaves_the_import_alone(tmp_path):
    vroot = vllm_tree(tmp_path / "vllm-src", HG1_VLLM)
    write_tree(vroot, {"vllm/_version.py": '__version__ = "0.99.0"\n'})
    croot = write_tree(tmp_path / "client", HG1_CLIENT)
    plan = plan_fixes(resolve_vllm(str(vroot), tmp_path / "cache"), resolve_client(str(croot), tmp_path / "cache"),
                      ScanOptions(cache_dir=tmp_path / "cache", use_cache=False), FixOptions(only=["move-import"]))
    assert plan.changes == []


def test_hg1_twin_one_copy_keeps_its_hint(tmp_path):
    # the only definition, however far, is still named (ZI's twin): the rule is about a tie, not about distance
    one = {k: v for k, v in HG1_VLLM.items() if k != COPY_B}
    f = _dc002(tmp_path, one)
    assert f.severity == "error" and f.details.get("moved_to") == "vllm.third_party.fa4.fa_logging"
    # named, but `fa_logging` shares no part with `vllm.logger` and no vLLM of the client's own compares the two:
    # a hint, never a move-import (26l R1)
    assert f.fix is None and "It is defined in `vllm.third_party.fa4.fa_logging` now. That module is far" in f.message


def test_hg1_twin_a_def_leads_two_tied_assignments(tmp_path):
    led = {**HG1_VLLM, "vllm/logging_utils/__init__.py": "",
           "vllm/logging_utils/handlers.py": "def _default_handler():\n    return None\n"}
    f = _dc002(tmp_path, led)
    assert f.severity == "error" and f.details.get("moved_to") == "vllm.logging_utils.handlers"


def test_hg1_twin_a_shallower_copy_leads(tmp_path):
    shallow = {k: v for k, v in HG1_VLLM.items() if k != COPY_B}
    shallow["vllm/fa_logging.py"] = HG1_VLLM[COPY_B]
    f = _dc002(tmp_path, shallow)
    assert f.details.get("moved_to") == "vllm.fa_logging" and f.fix is None  # far from `vllm.logger`: a hint (26l R1)


def test_hg1_twin_a_nearer_definition_leads(tmp_path):
    # the name left `vllm.utils`; `vllm.utils.logs` shares two package parts with it, the two copies one
    near = {**HG1_VLLM, "vllm/utils/__init__.py": "X = 1\n", "vllm/utils/logs.py": "_default_handler = None\n"}
    client = edited(HG1_CLIENT, RPC, ("from vllm.logger import _default_handler", "from vllm.utils import _default_handler"))
    f = _dc002(tmp_path, near, client)
    assert f.details.get("moved_to") == "vllm.utils.logs"


def test_hg1_dc001_hint_names_no_home_on_a_tie(tmp_path):
    # a module that is gone (`vllm.old_logging`): DC001's "Where what the client takes from it is defined now"
    client = edited(HG1_CLIENT, RPC, ("from vllm.logger import _default_handler", "from vllm.old_logging import _default_handler"))
    [tied] = by_rule(scan_trees(tmp_path / "tied", HG1_VLLM, client, only=["DC001"]), "DC001")
    assert tied.severity == "error" and "Where what the client takes from it is defined now" not in tied.message
    one = {k: v for k, v in HG1_VLLM.items() if k != COPY_B}
    [single] = by_rule(scan_trees(tmp_path / "one", one, client, only=["DC001"]), "DC001")
    assert single.severity == "error"
    # one copy left: it shares only the package with `vllm.old_logging` and no vLLM file imports the name from it, so
    # it is no likelier a home than a tie's (28a H1; test_batch_28 names it where vLLM's own code imports it)
    assert "Where what the client takes from it is defined now" not in single.message
