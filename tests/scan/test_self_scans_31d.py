"""Batch 31d (vLLM's own trees 0.13.0-0.34.0 scanned against themselves, docs/triage/2026-12-05-self-scans-31d.md).

TJ1: the 0.30.0 self-scan's DC008 unknowns on `vllm/platforms/xpu.py` (`torch.accelerator.get_memory_info =
get_mem_info_wrapper`), `vllm/utils/gpu_sync_debug.py` (`torch.Tensor.copy_ = _checked_copy_`) and
`vllm/env_override.py` (`PythonWrapperCodegen.memory_plan_reuse = ...`, `Scheduler.get_graph_partition_signature =
...`, `GraphLowering._update_scheduler = ...`, all imported from `torch._inductor`) treated each function as one
"whose `self` is a vLLM object driftcheck cannot type" and asked the client's own vLLM about the names it reads on
`self`. With a baseline, DC008 looks for vLLM classes that had every such name and lost one in the target: a client
that patches `transformers.PreTrainedModel.resize_token_embeddings` with a function reading
`self.get_input_embeddings()` got a certain error ("2 of 2 vLLM classes that match this receiver defined
'get_input_embeddings' in 0.98.0 and no longer do"; vLLM renamed its models' method to `embed_input_ids` in 0.11.1),
though the object is a transformers model. A function whose every store is on an object of a package the target
vLLM itself requires (its METADATA's Requires-Dist: torch, transformers, ...) or of the standard library, named
through a name the file binds only by imports of that package, has no vLLM `self`: DC008 says nothing about it.
The twins: the same function bound to an untyped object with `types.MethodType`, one stored on a class of a package
vLLM does not require (a platform plugin, which may derive from vLLM's classes), and a target without metadata (no
requirement is known) stay errors.

TJ2: the same scan's DC002 unknowns "cannot tell whether `vllm.ir.ops` exists: import chain too deep (an import
cycle?)" (compilation/passes/fusion/add_rms_fusion.py:32, `import vllm.ir.ops` ... `vllm.ir.ops.rms_norm(...)`) and
`lmcache_integration.vllm_v1_adapter` (lmcache_connector.py:101): a package `__init__` that binds a submodule by
`from . import ops` was followed back to its own binding until the depth limit, so a client's use of the submodule
through the package was never checked. Such a self-import is now what Python's from-import finds without it: the
submodule (or the package's star imports and `__getattr__`). The twins: a wrong call through the package is an error
now, and a package whose `from . import name` has no such submodule gives a certain DC002.

TJ3: every self-scan's DC008 unknown on vllm/entrypoints/openai/api_server.py `def engine_client(request)` ("reads
`request.app` on `request`, its `self` where the object it is stored on (... `state.engine_client = engine_client`)
is a class"): the store is in `init_app_state(engine_client: EngineClient, state: State, ...)`, whose parameter
`engine_client` shadows the module's function, so the value stored is the engine client. With a baseline whose
class had the name the function reads, DC008 called it an error. A name the enclosing function binds itself (a
parameter, a store, an import or a nested definition, unless declared `global`) is not the file's top-level
function. The twins: the same store in a function without that parameter, or under `global`, stays an error.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, line_of, plugin_shape, scan_trees, vllm_tree, write_tree

TJ1_VLLM, TJ1_CLIENT = plugin_shape("TJ1")
PATCH = "plugin/hf_patch.py"
LINE = line_of(TJ1_CLIENT[PATCH], "self.get_input_embeddings()")
METADATA = ("Metadata-Version: 2.1\nName: vllm\nVersion: 0.99.0\nRequires-Dist: torch==2.9.0\n"
            "Requires-Dist: transformers>=4.56.0\n")
OLD_LLAMA = TJ1_VLLM["vllm/model_executor/models/llama.py"].replace("def embed_input_ids", "def get_input_embeddings") \
    .replace("self.embed_input_ids(", "self.get_input_embeddings(")


def _dc008(tmp_path: Path, client: dict[str, str], metadata: bool = True) -> list[tuple[str, str, int]]:
    """DC008's findings on `client` at the TJ1 vLLM (0.99.0), compared with a 0.98.0 whose LlamaModel still has
    `get_input_embeddings`."""
    old = vllm_tree(tmp_path / "old", {"vllm/model_executor/models/llama.py": OLD_LLAMA,
                                       "vllm/_version.py": '__version__ = "0.98.0"\n'})
    vllm = dict(TJ1_VLLM)
    if not metadata:
        vllm["vllm/_version.py"] = '__version__ = "0.99.0"\n'
    result = _scan(tmp_path, vllm, client, str(old), metadata)
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings)


def _scan(tmp_path, vllm, client, client_vllm, metadata):
    if metadata:  # the dist-info beside the package, as an installed wheel has it
        write_tree(tmp_path / "vllm-src", {"vllm-0.99.0.dist-info/METADATA": METADATA})
    return scan_trees(tmp_path, vllm, client, only=["DC008"], client_vllm=client_vllm)


def test_tj1_function_stored_on_a_required_package_class_is_no_dc008(tmp_path):
    assert _dc008(tmp_path, TJ1_CLIENT) == []


def test_tj1_stored_on_a_torch_class_through_the_module_is_no_dc008(tmp_path):
    client = edited(TJ1_CLIENT, PATCH, ("from transformers import PreTrainedModel\n",
                                        "import transformers\nfrom transformers import PreTrainedModel\n"),
                    ("PreTrainedModel.resize_token_embeddings = _resize",
                     "transformers.PreTrainedModel.resize_token_embeddings = _resize"))
    assert _dc008(tmp_path, client) == []


def test_tj1_stored_on_a_standard_library_class_is_no_dc008_without_metadata(tmp_path):
    client = edited(TJ1_CLIENT, PATCH, ("PreTrainedModel.resize_token_embeddings = _resize",
                                        "import argparse\nargparse.Namespace.resize_token_embeddings = _resize"))
    assert _dc008(tmp_path, client, metadata=False) == []


def test_tj1_twin_bound_to_an_untyped_object_stays_error(tmp_path):
    client = edited(TJ1_CLIENT, PATCH, ("PreTrainedModel.resize_token_embeddings = _resize",
                                        "import types\n\n\ndef install(model):\n"
                                        "    model.resize_token_embeddings = types.MethodType(_resize, model)"))
    assert _dc008(tmp_path, client) == [("error", PATCH, LINE)]


def test_tj1_twin_also_stored_on_an_untyped_object_stays_error(tmp_path):
    client = edited(TJ1_CLIENT, PATCH, ("PreTrainedModel.resize_token_embeddings = _resize",
                                        "PreTrainedModel.resize_token_embeddings = _resize\n\n\ndef install(model):\n"
                                        "    type(model).resize_token_embeddings = _resize"))
    assert _dc008(tmp_path, client) == [("error", PATCH, LINE)]


def test_tj1_twin_class_of_a_package_vllm_does_not_require_stays_error(tmp_path):
    client = edited(TJ1_CLIENT, PATCH, ("from transformers import PreTrainedModel\n",
                                        "from vllm_npu.models import PreTrainedModel\n"))
    assert _dc008(tmp_path, client) == [("error", PATCH, LINE)]


def test_tj1_twin_name_also_a_parameter_stays_error(tmp_path):
    client = edited(TJ1_CLIENT, PATCH, ("PreTrainedModel.resize_token_embeddings = _resize",
                                        "def install(PreTrainedModel):\n    PreTrainedModel.resize_token_embeddings = _resize"))
    assert _dc008(tmp_path, client) == [("error", PATCH, LINE)]


def test_tj1_twin_target_without_metadata_stays_error(tmp_path):
    assert _dc008(tmp_path, TJ1_CLIENT, metadata=False) == [("error", PATCH, LINE)]


TJ2_VLLM, TJ2_CLIENT = plugin_shape("TJ2")
FUSION = "plugin/fusion.py"


def _tj2(tmp_path: Path, vllm: dict[str, str], client: dict[str, str]) -> tuple[list, list]:
    result = scan_trees(tmp_path, vllm, client)
    return (sorted((f.rule, f.severity, f.client.line) for f in result.findings),
            sorted((u.rule, u.client.line) for u in result.unknown))


def test_tj2_submodule_a_package_imports_from_itself_resolves(tmp_path):
    assert _tj2(tmp_path, TJ2_VLLM, TJ2_CLIENT) == ([], [])


def test_tj2_twin_wrong_call_through_the_package_is_an_error(tmp_path):
    client = edited(TJ2_CLIENT, FUSION, ("return vllm.ir.ops.rms_norm(out, weight, epsilon)",
                                         "return vllm.ir.ops.rms_norm(out, weight, eps=epsilon)"))
    findings, unknown = _tj2(tmp_path, TJ2_VLLM, client)
    line = line_of(client[FUSION], "eps=epsilon")
    assert ("DC003", "error", line) in findings and unknown == []


def test_tj2_twin_self_import_of_no_submodule_is_missing(tmp_path):
    vllm = {k: v for k, v in TJ2_VLLM.items() if not k.startswith("vllm/ir/ops/")}
    findings, _unknown = _tj2(tmp_path, vllm, TJ2_CLIENT)
    assert any(rule in ("DC001", "DC002") and severity == "error" for rule, severity, _line in findings)


TJ3_VLLM, TJ3_CLIENT = plugin_shape("TJ3")
SERVER = "plugin/server.py"
OLD_HTTP = TJ3_VLLM["vllm/entrypoints/http.py"].replace("application", "app")


def _tj3(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, str, int]]:
    """DC008's findings on `client` at the TJ3 vLLM, compared with a 0.98.0 whose RequestContext had `app`."""
    old = vllm_tree(tmp_path / "old", {"vllm/entrypoints/http.py": OLD_HTTP,
                                       "vllm/_version.py": '__version__ = "0.98.0"\n'})
    result = scan_trees(tmp_path, TJ3_VLLM, client, only=["DC008"], client_vllm=str(old))
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings)


def test_tj3_parameter_named_like_a_module_function_is_not_that_function(tmp_path):
    assert _tj3(tmp_path, TJ3_CLIENT) == []


def test_tj3_twin_the_module_function_itself_stored_stays_error(tmp_path):
    client = edited(TJ3_CLIENT, SERVER, ("def init_app_state(engine_client, state):", "def init_app_state(client, state):"))
    assert _tj3(tmp_path, client) == [("error", SERVER, line_of(client[SERVER], "request.app.state"))]


def test_tj3_twin_global_declaration_stays_error(tmp_path):
    client = edited(TJ3_CLIENT, SERVER, ("def init_app_state(engine_client, state):\n",
                                         "def init_app_state(client, state):\n    global engine_client\n"))
    assert _tj3(tmp_path, client) == [("error", SERVER, line_of(client[SERVER], "request.app.state"))]


def test_unknown_names_a_base_reached_twice_once(tmp_path):
    # 0.13.0's GroupQuantScaleParameter(_ColumnvLLMParameter, RowvLLMParameter) reaches torch.nn.Parameter through both
    # bases: the unknown said "inherits from torch.nn.Parameter, torch.nn.Parameter"
    vllm = {"vllm/parameter.py": "from torch.nn import Parameter\n\n\nclass Base(Parameter):\n    pass\n\n\n"
                                 "class Column(Base):\n    pass\n\n\nclass Row(Base):\n    pass\n\n\n"
                                 "class GroupScale(Column, Row):\n    pass\n"}
    client = {"plug/use.py": "from vllm.parameter import GroupScale\n\n\ndef size(p: GroupScale):\n    return p.shape\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    [u] = result.unknown
    assert "inherits from torch.nn.Parameter, which" in u.message


# TJ1 for DC106: a forward stored on a transformers class replays that package's model, not vLLM's; vLLM's layers
# gaining an argument says nothing about it. The twin bound to an untyped model with types.MethodType keeps its finding.
DC106_LLAMA = '''class LlamaDecoderLayer:
    def forward(self, positions, hidden_states, residual{extra}):
        return hidden_states, residual


class LlamaModel:
    def __init__(self):
        self.layers = []
        self.start_layer = 0
        self.end_layer = 0

    def forward(self, input_ids, positions):
        hidden_states = self.embed_tokens(input_ids)
        residual = None
        for layer in self.layers[self.start_layer:self.end_layer]:
            hidden_states, residual = layer(positions, hidden_states, residual{arg})
        return hidden_states
'''
DC106_CLIENT = '''import types

from transformers import PreTrainedModel

import vllm


def _patched_forward(self, input_ids, positions):
    hidden_states = self.embed_tokens(input_ids)
    residual = None
    for layer in self.layers[self.start_layer:self.end_layer]:
        hidden_states, residual = layer(positions, hidden_states, residual)
    return hidden_states


{store}
'''


def _dc106(tmp_path: Path, store: str) -> list[tuple[str, int]]:
    old = vllm_tree(tmp_path / "old", {"vllm/model_executor/models/llama.py": DC106_LLAMA.format(extra="", arg=""),
                                       "vllm/_version.py": '__version__ = "0.98.0"\n'})
    write_tree(tmp_path / "vllm-src", {"vllm-0.99.0.dist-info/METADATA": METADATA})
    result = scan_trees(tmp_path, {"vllm/model_executor/models/llama.py": DC106_LLAMA.format(extra=", scale",
                                                                                            arg=", self.scale")},
                        {"plug/f.py": DC106_CLIENT.format(store=store)}, only=["DC106"], client_vllm=str(old))
    return sorted((f.severity, f.client.line) for f in result.findings)


def test_tj1_forward_stored_on_a_required_package_class_is_no_dc106(tmp_path):
    assert _dc106(tmp_path, "PreTrainedModel.forward = _patched_forward") == []


def test_tj1_twin_forward_bound_to_an_untyped_model_keeps_dc106(tmp_path):
    found = _dc106(tmp_path, "def install(model):\n    model.forward = types.MethodType(_patched_forward, model)")
    assert found == [("warning", line_of(DC106_CLIENT, "hidden_states, residual = layer("))]
