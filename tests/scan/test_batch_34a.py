"""Batch 34a (clients that drive vLLM's worker or model runner from outside to extract hidden states,
docs/triage/2026-12-05-hidden-state-clients-34a.md).

FA1: numindai/vLLM-Last-Hidden-State's launcher `serve.py` imports no vLLM. It appends `["--worker-extension-cls",
WORKER_CLASS]` (a module constant, "vllm_last_hidden_state.worker.LastHiddenStateWorker") to the serve arguments and
execs `python -m vllm.entrypoints.cli.main serve *arguments`; its endpoint plugin then sends
`engine_client.collective_rpc("last_hidden_state_initialize")`, a method of that extension class. DC007 said no
worker class defines it (an error at every release, two more as warnings under a try): a worker extension was read
from `worker_extension_cls=` keywords, dict keys, assignments and `add_argument` defaults, not from the serve flag
written in an argument list. Now the item after a `"--worker-extension-cls"` (or `--worker_extension_cls`) item of
a list or tuple literal, or the tail of one `"--worker-extension-cls=pkg.Cls"` item, names the extension too. The
twins: an rpc the named class does not define, and the same constant after another flag, keep the error.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

FA1_VLLM, FA1_CLIENT = plugin_shape("FA1")
SERVE = "plug/serve.py"
ENDPOINT = "plug/endpoint.py"


def _dc007(tmp_path, client_files):
    result = scan_trees(tmp_path, FA1_VLLM, client_files, only=["DC007"])
    return [(f.severity, f.client.path, f.client.line) for f in result.findings]


FLAG_ITEMS = 'arguments += ["--worker-extension-cls", WORKER_CLASS]'


@pytest.mark.parametrize("rel, old, new", [
    (SERVE, FLAG_ITEMS, FLAG_ITEMS),  # the shape as it is: the flag and a module constant, in a file without vLLM
    (SERVE, FLAG_ITEMS, 'arguments += ["--worker_extension_cls=plug.worker.HiddenStateWorker"]'),  # one item
    (SERVE, "import sys\n", "import sys\n\nimport vllm  # noqa: F401\n"),  # a launcher that imports vLLM
])
def test_fa1_extension_named_by_the_serve_flag_defines_the_rpc(tmp_path, rel, old, new):
    assert _dc007(tmp_path, edited(FA1_CLIENT, rel, (old, new))) == []


@pytest.mark.parametrize("rel, old, new", [
    (ENDPOINT, 'collective_rpc("hs_initialize")', 'collective_rpc("hs_initialise")'),  # not the extension's method
    (SERVE, FLAG_ITEMS, 'arguments += ["--served-model-name", WORKER_CLASS]'),  # the constant after another flag
])
def test_fa1_twins_keep_the_dc007_error(tmp_path, rel, old, new):
    assert _dc007(tmp_path, edited(FA1_CLIENT, rel, (old, new))) == [("error", ENDPOINT, 6)]


# ----------------------------------------------------------------------------------------- FA2
# wangyichao1999/Speculator_Train_For_Multimodal (338cf79, a speculators fork with a `src/` layout) at vLLM 0.16.0:
# `src/speculators/data_generation/vllm_hidden_states_generator.py:226` names its worker extension
# `worker_extension_cls="speculators.data_generation.custom_worker.HiddenStatesWorkerExtension"`, the import name of
# the installed project; the file is `src/speculators/data_generation/custom_worker.py`. Each
# `collective_rpc("_setup_hidden_states_capture")` etc. was unknown, "in a module the client's tree does not hold", and
# the extension's own methods were never checked as the worker's. A dotted name that no module of the tree has is now
# also looked up under `src/` (as `own_packages` already knew the names below `src/`). The twin: an rpc the extension
# does not define, unknown before, is now the error it is.

FA2_VLLM, FA2_CLIENT = plugin_shape("FA2")
GENERATOR = "src/plug/generator.py"


def _dc007_all(tmp_path, client_files):
    result = scan_trees(tmp_path, FA2_VLLM, client_files, only=["DC007"])
    return ([(f.severity, f.client.path, f.client.line) for f in result.findings],
            [u.message for u in result.unknown])


def test_fa2_extension_of_a_src_layout_is_read(tmp_path):
    assert _dc007_all(tmp_path, FA2_CLIENT) == ([], [])


def test_fa2_twin_an_rpc_the_extension_does_not_define_is_an_error(tmp_path):
    client = edited(FA2_CLIENT, GENERATOR, ('collective_rpc("_get_captured")', 'collective_rpc("_get_captures")'))
    assert _dc007_all(tmp_path, client) == ([("error", GENERATOR, 10)], [])


def test_fa2_twin_a_module_outside_the_tree_stays_unknown(tmp_path):
    client = edited(FA2_CLIENT, GENERATOR, ('"plug.ext.CaptureExtension"', '"other_pkg.ext.CaptureExtension"'))
    findings, unknowns = _dc007_all(tmp_path, client)
    assert findings == [] and len(unknowns) == 2 and all("does not hold" in m for m in unknowns)
