"""Batch 31c (clients pinned to vLLM 0.8.5-0.10.x that reach into V0 internals and early V1, at their stored GitHub
commits, docs/triage/2026-12-05-old-internals-31c.md).

TH1: vLLM-metax at 652e9f0 (lianjiezh/vLLM-metax, the `vllm_metax_plugin` package, `version = "0.8.5"` in setup.py)
writes `from vllm import envs, logger` and then `logger = init_logger(__name__)` at the top of
patch/before_all/patch_0_8_5/utils_patch.py; every function logs through `logger.info(...)`. The imports phase kept
`logger` bound to the module `vllm.logger` whatever the module did with the name afterwards, so DC002 reported
`vllm.logger.info` five times (an error each). An imported name whose last top-level binding is a plain assignment
now holds that value (a vLLM class or module when the value is one, else nothing known). The twins: without the
assignment, or rebound to another vLLM module that lacks the member, the use stays an error; an assignment inside a
`try` fallback changes nothing.

TH2: the same plugin's patch/before_all/patch_0_8_5/env_patch.py rebinds vLLM's table of environment variables,
`vllm.envs.environment_variables = environment_variables | metax_env`; vllm.envs' `__getattr__` serves the names of
the module's table, so `envs.MACA_VLLM_USE_TN_2_NN` works in every module the plugin patches (14 errors, 8 more
warnings). SA3 read `.update(...)`, `[...] =` and `.setdefault(...)` on the table; a rebinding of the module's table to
a merge (`a | b`, `{**a, **b}`, `dict(a, **b)`) now adds the merged literal keys as well. The twins: a key the merge
does not bring in, and a merge bound to a name of the client's own module (vLLM's table unchanged), stay errors.

TH3: the same plugin at 9b0ed3a (vLLM 0.9.1) ships copies of vLLM 0.9.2 modules in patch/vllm_substitution/ and its
`vllm_metax_init` console script (`post_installation`, vllm_metax/__init__.py:44) copies them over the installed
release: `"patch/vllm_substitution/utils.py" : vllm_dist_path / "v1/attention/backends/utils.py"` with
`vllm_dist_path = importlib.metadata.distribution("vllm").locate_file("vllm")`. The plugin's own files import
`AttentionMetadataBuilder` from that module and build/read `CommonAttentionMetadata(num_reqs=..., ...)`: 33 errors
(DC002, DC003, DC006) against 0.9.1's original file. `mounted_copies` read only a path that spells `vllm/` (a mount,
`cp`, `COPY`); it now also reads a join onto a name the file binds to the installed package's folder (`locate_file(
"vllm")`, `vllm.__file__`, `vllm.__path__`), so the module is shadowed by the client's copy as a mount is. The
twins: the same table joined onto a folder that is not vLLM's, and a copy onto another module, keep the errors.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

TH1_VLLM, TH1_CLIENT = plugin_shape("TH1")
TH2_VLLM, TH2_CLIENT = plugin_shape("TH2")
TH3_VLLM, TH3_CLIENT = plugin_shape("TH3")
UTILS = "metax_plugin/utils_patch.py"
ENV_PATCH = "metax_plugin/patch/env_patch.py"


def _dc002(tmp_path, vllm_files, client_files):
    found = scan_trees(tmp_path, vllm_files, client_files, only=["DC002"]).findings
    return sorted((f.severity, f.client.path, f.client.line, f.symbol) for f in found)


def test_th1_imported_module_rebound_to_a_logger_is_not_the_module(tmp_path):
    assert _dc002(tmp_path, TH1_VLLM, TH1_CLIENT) == []


def test_th1_twin_without_the_rebinding_the_module_has_no_info(tmp_path):
    client = edited(TH1_CLIENT, UTILS, ("logger = init_logger(__name__)\n", "\n"))
    assert [(sev, line) for sev, _, line, _ in _dc002(tmp_path, TH1_VLLM, client)] == [
        ("error", 10), ("error", 13), ("error", 16)]


def test_th1_twin_rebound_to_another_vllm_module_checks_that_module(tmp_path):
    client = edited(TH1_CLIENT, UTILS, ("logger = init_logger(__name__)\n", "logger = envs\n"))
    found = _dc002(tmp_path, TH1_VLLM, client)
    assert {(sev, symbol) for sev, _, _, symbol in found} == {("error", "vllm.envs.info")}


def test_th1_twin_a_fallback_assignment_in_the_try_is_no_rebinding(tmp_path):
    client = edited(TH1_CLIENT, UTILS, (
        "from vllm import envs, logger\nfrom vllm.logger import init_logger\n\nlogger = init_logger(__name__)\n",
        "from vllm import envs\ntry:\n    from vllm import logger\nexcept ImportError:\n    logger = None\n"))
    assert {symbol for *_, symbol in _dc002(tmp_path, TH1_VLLM, client)} == {"vllm.logger.info"}


def test_th1_module_level_use_after_the_rebinding(tmp_path):
    client = {**TH1_CLIENT, "metax_plugin/top.py": (
        "from vllm import logger\nfrom vllm.logger import init_logger\n\nlogger = init_logger(__name__)\n"
        "logger.info('loaded')\n")}
    assert _dc002(tmp_path, TH1_VLLM, client) == []


def test_th2_table_rebound_to_a_merge_serves_the_plugins_names(tmp_path):
    assert _dc002(tmp_path, TH2_VLLM, TH2_CLIENT) == []


@pytest.mark.parametrize("merge", [
    "{**environment_variables, **metax_env}",
    "dict(environment_variables, **metax_env)",
    "environment_variables | metax_env | {}",
], ids=["display", "dict-call", "chained-union"])
def test_th2_other_spellings_of_the_merge(tmp_path, merge):
    client = edited(TH2_CLIENT, ENV_PATCH, ("environment_variables | metax_env\n", merge + "\n"))
    assert _dc002(tmp_path, TH2_VLLM, client) == []


def test_th2_twin_a_key_the_merge_does_not_bring_in(tmp_path):
    client = edited(TH2_CLIENT, "metax_plugin/linear.py", ("envs.MACA_VLLM_USE_TN_2_NN", "envs.MACA_VLLM_OTHER"))
    assert [(sev, symbol) for sev, _, _, symbol in _dc002(tmp_path, TH2_VLLM, client)] == [
        ("error", "vllm.envs.MACA_VLLM_OTHER")]


def test_th2_twin_a_merge_bound_in_the_clients_own_module_leaves_vllms_table(tmp_path):
    client = edited(TH2_CLIENT, ENV_PATCH, ("vllm.envs.environment_variables = ", "environment_variables = "))
    assert [(sev, symbol) for sev, _, _, symbol in _dc002(tmp_path, TH2_VLLM, client)] == [
        ("error", "vllm.envs.MACA_VLLM_USE_TN_2_NN")]


def _th3(tmp_path, client_files=TH3_CLIENT):
    found = scan_trees(tmp_path, TH3_VLLM, client_files).findings
    return sorted((f.severity, f.rule, f.client.line) for f in found if f.severity == "error")


def test_th3_module_an_install_helper_copies_over_is_the_clients_copy(tmp_path):
    assert _th3(tmp_path) == []


def test_th3_twin_a_folder_that_is_not_vllms(tmp_path):
    client = edited(TH3_CLIENT, "metax/__init__.py", (
        'importlib.metadata.distribution(\n        "vllm").locate_file("vllm")', 'Path("/tmp/backup")'))
    assert [rule for _, rule, _ in _th3(tmp_path, client)] == ["DC002", "DC003", "DC003", "DC003", "DC006", "DC006"]


def test_th3_twin_a_copy_onto_another_module(tmp_path):
    client = edited(TH3_CLIENT, "metax/__init__.py", ('"v1/attention/backends/utils.py"', '"v1/attention/utils.py"'))
    assert len(_th3(tmp_path, client)) == 6


def test_th3_destination_on_the_next_line(tmp_path):
    """9b0ed3a's successor (5501944) formats each entry over two lines: the source, then `vllm_dist_path / "..."`."""
    client = edited(TH3_CLIENT, "metax/__init__.py", (
        '"patch/vllm_substitution/utils.py" : vllm_dist_path / "v1/attention/backends/utils.py",',
        '"patch/vllm_substitution/utils.py":\n        vllm_dist_path /\n        "v1/attention/backends/utils.py",'))
    assert _th3(tmp_path, client) == []
