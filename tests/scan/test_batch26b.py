"""Batch 26b (quantization, speculative-decoding and model-optimisation projects at their stored GitHub HEAD,
docs/triage/2026-12-05-quant-spec-heads-26b.md).

NB1: auto-round's vLLM extension (intel/auto-round b9f3d00, auto_round_extension/vllm_ext/envs_ext.py:22-40) adds its
own variables to `vllm.envs` with `for name, value_fn in extra_environment_variables.items(): setattr(envs, name,
value_fn())` over a dict literal, and its other files read them as `envs.VLLM_MXFP4_PRE_UNPACK_WEIGHTS` and so on
(moe_impl_mxfp4.py, linear_impl_mxfp4.py:89, vllm_oot_patches.py:29 at import time, after `apply()` imported
envs_ext). The patch phase took only a literal second argument of setattr, so DC002 called 19 reads errors at vLLM
0.33.0 / 0.27.1. The names a loop over literal names gives the setattr are now set on that module. The twins: a name
the dict does not hold, a loop over something that is not a literal, and a setattr on another object stay errors.

NB2: a `self.x` read in a method of a client class that the client never builds and every client subclass of which
overrides that method (auto-round's `AutoRoundMoEMethod.get_fused_moe_quant_config`, below) is a warning that says so.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, plugin_shape, scan_trees

NB1_VLLM, NB1_CLIENT = plugin_shape("NB1")
EXT = "plug/envs_ext.py"


def _dc002(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, str, int]]:
    result = scan_trees(tmp_path, NB1_VLLM, client, only=["DC002"])
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings)


def _with(path: str, old: str, new: str) -> dict[str, str]:
    return edited(NB1_CLIENT, path, (old, new))


def test_nb1_names_set_by_a_setattr_loop_over_a_literal_dict_are_no_error(tmp_path):
    assert _dc002(tmp_path, NB1_CLIENT) == []


def test_nb1_loop_over_a_literal_tuple_of_names_is_no_error(tmp_path):
    client = _with(EXT, "for name, value_fn in extra_environment_variables.items():\n    setattr(envs, name, value_fn())",
                   'for name in ("VLLM_PLUG_PRE_UNPACK", "VLLM_PLUG_WORKSPACE_SIZE"):\n    setattr(envs, name, 0)')
    assert _dc002(tmp_path, client) == []


def test_nb1_twin_name_the_dict_does_not_hold_stays_error(tmp_path):
    client = _with("plug/moe.py", "envs.VLLM_PLUG_PRE_UNPACK", "envs.VLLM_PLUG_CT_EMULATIONS")
    assert _dc002(tmp_path, client) == [("error", "plug/moe.py", 7)]


def test_nb1_twin_loop_over_names_that_are_not_literal_stays_error(tmp_path):
    client = _with(EXT, "extra_environment_variables.items():", "os.environ.items():")
    assert [s for s, _, _ in _dc002(tmp_path, client)] == ["error", "error"]


def test_nb1_twin_setattr_on_another_object_stays_error(tmp_path):
    client = _with(EXT, "setattr(envs, name, value_fn())", "setattr(os, name, value_fn())")
    assert [s for s, _, _ in _dc002(tmp_path, client)] == ["error", "error"]


# NB2: auto-round's `AutoRoundMoEMethod(FusedMoEMethodBase)` (auto_round_extension/vllm_ext/quant_method_moe.py:35-73)
# reads `self.impl` in `get_fused_moe_quant_config`; nothing sets `impl`, but the class is never built: its static
# `get_moe_method` returns a subclass (moe_impl_mxfp4.py:57, moe_impl_mxfp8.py:49), each of which overrides the method,
# or vLLM's UnquantizedFusedMoEMethod. DC006 called the read an error at vLLM 0.33.0 / 0.27.1; the line runs for no
# object the client builds, so it is a warning saying so. The twins stay errors.

NB2_VLLM, NB2_CLIENT = plugin_shape("NB2")
METHOD = "plug/method.py"


def _nb2(tmp_path: Path, client: dict[str, str], vllm: dict[str, str] = NB2_VLLM) -> list[tuple[str, int]]:
    result = scan_trees(tmp_path, vllm, client, only=["DC006"])
    return sorted((f.severity, f.client.line) for f in result.findings if f.client.path == METHOD)


def _nb2_with(path: str, old: str, new: str) -> dict[str, str]:
    return edited(NB2_CLIENT, path, (old, new))


def test_nb2_read_in_a_method_every_subclass_overrides_is_a_warning(tmp_path):
    result = scan_trees(tmp_path, NB2_VLLM, NB2_CLIENT, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("warning", 20)]
    assert "every client subclass of `PlugMoEMethod` overrides `get_fused_moe_quant_config`" in result.findings[0].message


def test_nb2_twin_class_the_client_builds_stays_error(tmp_path):
    client = _nb2_with("plug/config.py", "    method = PlugMoEMethod.get_moe_method(scheme, moe)\n",
                       "    method = PlugMoEMethod.get_moe_method(scheme, moe) if scheme else PlugMoEMethod(moe)\n")
    assert _nb2(tmp_path, client) == [("error", 20)]


def test_nb2_twin_subclass_that_inherits_the_method_stays_error(tmp_path):
    client = _nb2_with("plug/impl_fp8.py", '    def get_fused_moe_quant_config(self, layer):\n        return "fp8"\n',
                       "    pass\n")
    assert _nb2(tmp_path, client) == [("error", 20)]


def test_nb2_twin_class_named_by_a_string_stays_error(tmp_path):
    client = {**NB2_CLIENT, "plug/registry.py": 'METHODS = {"plain": "plug.method.PlugMoEMethod"}\n'}
    assert _nb2(tmp_path, client) == [("error", 20)]


def test_nb2_twin_classmethod_reached_through_the_class_stays_error(tmp_path):
    client = _nb2_with(METHOD, "    @staticmethod\n    def get_moe_method(scheme: str, moe)",
                       "    @classmethod\n    def get_moe_method(cls, scheme: str, moe)")
    assert _nb2(tmp_path, client) == [("error", 20)]


def test_nb2_twin_class_imported_under_another_name_stays_error(tmp_path):
    client = _nb2_with("plug/config.py", "from plug.method import PlugMoEMethod\n",
                       "from plug.method import PlugMoEMethod\nfrom plug.method import PlugMoEMethod as Plain\n\n"
                       "DEFAULT = Plain\n")
    assert _nb2(tmp_path, client) == [("error", 20)]


def test_nb2_twin_decorated_class_stays_error(tmp_path):
    client = _nb2_with(METHOD, "class PlugMoEMethod(", "@register\nclass PlugMoEMethod(")
    assert _nb2(tmp_path, client) == [("error", 21)]


def test_nb2_twin_vllm_base_that_registers_subclasses_stays_error(tmp_path):
    vllm = {**NB2_VLLM, "vllm/layers/fused_moe.py": NB2_VLLM["vllm/layers/fused_moe.py"].replace(
        "    def __init__(self, moe):", "    def __init_subclass__(cls, **kw):\n        pass\n\n    def __init__(self, moe):")}
    assert _nb2(tmp_path, NB2_CLIENT, vllm) == [("error", 20)]


# NB3 (DC102 warnings, no shape: no error either way): Model-Optimizer (NVIDIA/Model-Optimizer a2fbac7) at vLLM 0.26.0.
# tools/launcher/common/eagle3/train_eagle_streaming.sh:165-191 assigns the hidden-states connector to KVCFG and runs
# `vllm serve ... --no-enable-prefix-caching ... --speculative-config "{ <JSON over 8 lines> }" --kv-transfer-config
# "$KVCFG"`; dump_offline_data_vllm.sh:25 and three launcher YAMLs name extract_hidden_states in comments. DC102 warned
# on all six: a comment configures nothing, a quoted JSON over several lines is part of its command, and a variable
# is configured where the commands that expand it are.

SERVE = '''\
KVCFG="{\\"kv_connector\\":\\"RdmaHiddenStatesConnector\\"}"
# `extract_hidden_states` speculative method + a hidden-states connector (don't cache prefixes)
vllm serve m \\
    --no-enable-prefix-caching \\
    --speculative-config "{
        \\"method\\":\\"extract_hidden_states\\",
        \\"num_speculative_tokens\\":1
    }" \\
    --kv-transfer-config "$KVCFG"
'''
YAML = '''\
# Step 1: dump hidden states via vLLM extract_hidden_states.
task_0:
  script: common/eagle3/dump_offline_data_vllm.sh
'''


def _dc102(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    result = scan_trees(tmp_path, {"vllm/__init__.py": ""}, {"c.py": "import vllm\n", **files}, only=["DC102"])
    return sorted((f.client.path, f.client.line) for f in result.findings)


def test_nb3_comments_quoted_json_and_a_variable_the_serve_command_expands_are_no_warning(tmp_path):
    assert _dc102(tmp_path, {"serve.sh": SERVE, "launch.yaml": YAML}) == []


def test_nb3_twin_serve_command_without_the_flag_warns_on_both_lines(tmp_path):
    assert _dc102(tmp_path, {"serve.sh": SERVE.replace("    --no-enable-prefix-caching \\\n", "")}) == [
        ("serve.sh", 1), ("serve.sh", 5)]


def test_nb3_twin_variable_also_expanded_by_a_command_without_the_flag_warns(tmp_path):
    script = SERVE + 'vllm serve other --kv-transfer-config "${KVCFG}"\n'
    assert _dc102(tmp_path, {"serve.sh": script}) == [("serve.sh", 1)]


def test_nb3_twin_variable_no_command_expands_warns(tmp_path):
    script = SERVE.replace('--kv-transfer-config "$KVCFG"', "--max-model-len 4096")
    assert _dc102(tmp_path, {"serve.sh": script}) == [("serve.sh", 1)]


def test_nb3_twin_yaml_line_that_configures_the_path_warns(tmp_path):
    yaml = YAML + '  args: --speculative-config \'{"method": "extract_hidden_states"}\'\n'
    assert _dc102(tmp_path, {"launch.yaml": yaml}) == [("launch.yaml", 4)]


# NB4 (a DC001 reason): Model-Optimizer's modelopt/torch/quantization/plugins/vllm.py:87-100 tries
# `for module_name in ("vllm.attention.layer", ...): importlib.import_module(module_name)` under try/except ImportError,
# and examples/vllm_serve/vllm_ptq_utils.py:145 imports `from vllm.attention.layer import MLAAttention` under its own
# try. DC001 warned that the client "may register the module itself" because it spells the name as a string; a name
# only ever handed to a loader registers nothing, so the warning now gives the try guard as its reason, and the same
# import unguarded is an error. A string the client uses otherwise (`sys.modules[...] = ...`) keeps the old warning.

LOADER = '''\
import importlib


def attention_module():
    for module_name in ("vllm.attention.layer", "vllm.attention"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        return module
    raise ImportError("no attention module")
'''
PTQ = '''\
def update_kv_cfg(cfg):
    try:
        from vllm.attention.layer import MLAAttention
    except ImportError:
        return cfg
    return cfg, MLAAttention
'''
NB4_VLLM = {"vllm/__init__.py": "", "vllm/attention/__init__.py": "class Attention:\n    pass\n"}


def _dc001(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, str, str]]:
    result = scan_trees(tmp_path, NB4_VLLM, {"plug/__init__.py": "import vllm\n", **client}, only=["DC001"])
    return [(f.severity, f.client.path, f.message) for f in result.findings]


def test_nb4_name_only_handed_to_a_loader_gives_the_try_as_the_reason(tmp_path):
    [(severity, path, message)] = _dc001(tmp_path, {"plug/loader.py": LOADER, "plug/ptq.py": PTQ})
    assert (severity, path) == ("warning", "plug/ptq.py")
    assert "guarded by a try whose handler catches ImportError" in message and "as a string" not in message


def test_nb4_twin_unguarded_import_of_a_name_only_loaded_is_an_error(tmp_path):
    ptq = "from vllm.attention.layer import MLAAttention\n"
    assert [(s, p) for s, p, _ in _dc001(tmp_path, {"plug/loader.py": LOADER, "plug/ptq.py": ptq})] == [
        ("error", "plug/ptq.py")]


def test_nb4_twin_name_the_client_registers_keeps_the_warning(tmp_path):
    ptq = "from vllm.attention.layer import MLAAttention\n"
    shim = 'import sys\nimport types\n\nsys.modules["vllm.attention.layer"] = types.ModuleType("layer")\n'
    found = _dc001(tmp_path, {"plug/loader.py": LOADER, "plug/shim.py": shim, "plug/ptq.py": ptq})
    assert [(s, p) for s, p, _ in found] == [("warning", "plug/ptq.py")] and "as a string" in found[0][2]

