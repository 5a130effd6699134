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


# ----------------------------------------------------------------------------------------- FA3
# The same fork at 0.16.0, 0.20.0, 0.32.0: DC104 at vllm_hidden_states_generator.py:379, `responses[0] if responses else
# None` of `collective_rpc("_get_captured_states", unique_reply_rank=0)`, said "the index silently takes the first
# element of the reply" (`when: silent`). The reply is the fork's own extension method's return, `None` or `result:
# dict[str, list[Tensor]] = {...}` keyed by request id (custom_worker.py:166-196): `[0]` looks up key 0 and raises
# KeyError. A real error with a wrong account of how it fails; the message now names the method and the dict. The twins:
# a method that returns a list, or a dict on one path and a list on another, keep the first-element message.

FA3_VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/executor/__init__.py": "",
    "vllm/v1/executor/multiproc_executor.py": (
        "class MultiprocExecutor:\n"
        "    def collective_rpc(self, method, args=(), unique_reply_rank=None):\n"
        "        responses = [getattr(self.worker, method)(*args)]\n"
        "        return responses[0] if unique_reply_rank is not None else responses\n"),
}
FA3_CLIENT = {
    "gen/__init__.py": "",
    "gen/ext.py": (
        "import torch\n"
        "from vllm.v1.executor.multiproc_executor import MultiprocExecutor  # noqa: F401\n"
        "\n"
        "class CaptureExtension:\n"
        "    def _get_captured_states(self):\n"
        "        if self._captured is None:\n"
        "            return None\n"
        "        result: dict[str, list[torch.Tensor]] = {\n"
        "            req_id: chunks for req_id, chunks in self._captured.items()\n"
        "        }\n"
        "        return result\n"),
    "gen/generator.py": (
        "from vllm.v1.executor.multiproc_executor import MultiprocExecutor\n"
        "\n"
        "EXT = \"gen.ext.CaptureExtension\"\n"
        "\n"
        "\n"
        "def states(executor: MultiprocExecutor):\n"
        "    responses = executor.collective_rpc(\"_get_captured_states\", unique_reply_rank=0)\n"
        "    return responses[0] if responses else None\n"
        "\n"
        "\n"
        "def config():\n"
        "    return {\"worker_extension_cls\": EXT}\n"),
}


def _dc104(tmp_path, client_files):
    result = scan_trees(tmp_path, FA3_VLLM, client_files, only=["DC104"])
    return [(f.severity, f.when, f.client.line, f.message) for f in result.findings]


def test_fa3_a_dict_reply_is_indexed_by_key(tmp_path):
    [(severity, when, line, message)] = _dc104(tmp_path, FA3_CLIENT)
    assert (severity, when, line) == ("error", "call", 8)
    assert "CaptureExtension._get_captured_states" in message and "gen/ext.py:11" in message and "key 0" in message


@pytest.mark.parametrize("old, new", [
    ("        return result\n", "        return [result]\n"),  # a list: [0] is its first element
    ("            return None\n", "            return [None]\n"),  # a dict on one path, a list on another
])
def test_fa3_twins_keep_the_first_element_message(tmp_path, old, new):
    [(severity, when, line, message)] = _dc104(tmp_path, edited(FA3_CLIENT, "gen/ext.py", (old, new)))
    assert (severity, when, line) == ("error", "silent", 8)
    assert "silently takes the first element" in message
