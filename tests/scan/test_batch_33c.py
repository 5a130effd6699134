"""Batch 33c (vLLM plugins: platform, KV and patch libraries, at their declared vLLM and newer releases,
docs/triage/2026-12-05-pypi-plugins-33c.md).

WC1: vllm-kunlun 0.11.1's platform entry point `register()` imports `vllm_utils_wrapper`, which builds
`_wrapped = SimpleNamespace(**vllm.utils.__dict__)`, sets `_wrapped.direct_register_custom_op = ...` and
`_wrapped.weak_ref_tensor = ...` on it, and puts it into `sys.modules["vllm.utils"]`. From then on the plugin's model
modules' `from vllm.utils import direct_register_custom_op` binds the plugin's function, though vLLM 0.11.1's
`vllm/utils/__init__.py` no longer defines it (it moved to `vllm.utils.torch_utils`). DC002 gave an ImportError error
for each such name (deepseek_v2.py:76, qwen3_next.py:88, utils.py:6, worker/model_runner.py:51); batch 3 left the
four undecided. Whether an import runs before the wrapper is installed cannot be told, so such a name is now what a
name the client sets on the vLLM module itself is: a warning that says so ("works only if that assignment ran
first"). Read in one scope: `sys.modules["vllm.x"] = name`, the keywords of the call bound to `name`, its
`name.attr = ...` stores and `setattr(name, "attr", ...)` calls; test files stay module_stand_ins' business. The
twins: a name the namespace does not get, a namespace installed under a non-vLLM key, names set on another object,
and an install in a test file keep the error.

WC2 (below): DC103 on `self.execute_model(...)` in a client runner base whose own subclass defines execute_model.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees

WC1_VLLM, WC1_CLIENT = plugin_shape("WC1")
WRAPPER = "plugin/utils_wrapper.py"
MODEL = "plugin/model.py"


def _dc002(tmp_path, client_files):
    result = scan_trees(tmp_path, WC1_VLLM, client_files, only=["DC002"])
    return sorted((f.severity, f.client.path, f.client.line, f.symbol) for f in result.findings)


def test_wc1_names_set_on_the_installed_namespace_are_warnings(tmp_path):
    result = scan_trees(tmp_path, WC1_VLLM, WC1_CLIENT, only=["DC002"])
    found = sorted((f.severity, f.client.line, f.symbol) for f in result.findings)
    assert found == [("warning", 1, "vllm.utils.direct_register_custom_op"),
                     ("warning", 1, "vllm.utils.weak_ref_tensor")]
    assert all("sets it on that module itself" in f.message for f in result.findings)


def test_wc1_twin_a_name_the_namespace_does_not_get_stays_an_error(tmp_path):
    client = edited(WC1_CLIENT, MODEL, ("from vllm.utils import cdiv,", "from vllm.utils import round_up, cdiv,"))
    assert ("error", MODEL, 1, "vllm.utils.round_up") in _dc002(tmp_path, client)


def test_wc1_twin_a_namespace_installed_under_another_name_keeps_the_errors(tmp_path):
    client = edited(WC1_CLIENT, WRAPPER, ('sys.modules["vllm.utils"] = _wrapped', 'sys.modules["plugin_utils"] = _wrapped'))
    assert _dc002(tmp_path, client) == [("error", MODEL, 1, "vllm.utils.direct_register_custom_op"),
                                        ("error", MODEL, 1, "vllm.utils.weak_ref_tensor")]


def test_wc1_twin_names_set_on_another_object_keep_the_error(tmp_path):
    client = edited(WC1_CLIENT, WRAPPER, ("_wrapped.weak_ref_tensor = plugin_weak_ref_tensor",
                                          "_other = SimpleNamespace()\n_other.weak_ref_tensor = plugin_weak_ref_tensor"))
    assert _dc002(tmp_path, client) == [("error", MODEL, 1, "vllm.utils.weak_ref_tensor"),
                                        ("warning", MODEL, 1, "vllm.utils.direct_register_custom_op")]


def test_wc1_twin_a_tests_stand_in_does_not_credit_the_package(tmp_path):
    client = {**{k: v for k, v in WC1_CLIENT.items() if k != WRAPPER}, "tests/test_wrapper.py": WC1_CLIENT[WRAPPER],
              "plugin/__init__.py": "def register():\n    return 'plugin.platform.Platform'\n"}
    assert _dc002(tmp_path, client) == [("error", MODEL, 1, "vllm.utils.direct_register_custom_op"),
                                        ("error", MODEL, 1, "vllm.utils.weak_ref_tensor")]


# ----------------------------------------------------------------------------------------- WC2
# vllm-kunlun 0.11.1 at vLLM 0.11.1: `vllm_kunlun/worker/model_runner.py:1330` `self.execute_model(model_input,
# kv_caches, intermediate_tensors)` in `GPUModelRunnerBase._dummy_run` was a DC103 error ("never followed by
# sample_tokens()"). The class defines no execute_model; its subclass `ModelRunner` (:1563, :1620) does, a V0-style
# single-phase one, and the base derives from V0's `ModelRunnerBase`, no two-phase vLLM runner. DC103 skipped
# `self.execute_model(...)` only in a class that defines execute_model itself.

WC2_VLLM, WC2_CLIENT = plugin_shape("WC2")
RUNNER = "plug/model_runner.py"


def _dc103(tmp_path, client_files):
    result = scan_trees(tmp_path, WC2_VLLM, client_files, only=["DC103"])
    return [(f.severity, f.client.line) for f in result.findings]


def test_wc2_self_execute_model_reaching_the_clients_own_subclass_is_no_finding(tmp_path):
    assert _dc103(tmp_path, WC2_CLIENT) == []


def test_wc2_twin_a_runner_base_on_vllms_two_phase_runner_keeps_the_error(tmp_path):
    # the subclass hands the call on to vLLM's runner, which keeps its state: the second call raises
    client = edited(WC2_CLIENT, RUNNER,
                    ("from vllm.worker.model_runner_base import ModelRunnerBase\n",
                     "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n"),
                    ("class PlugModelRunnerBase(ModelRunnerBase):", "class PlugModelRunnerBase(GPUModelRunner):"),
                    ("        return [t + 1 for t in tokens]", "        return super().execute_model(tokens)"))
    assert _dc103(tmp_path, client) == [("error", 10), ("error", 11)]


def test_wc2_twin_a_subclass_mixing_in_vllms_runner_keeps_the_error(tmp_path):
    client = edited(WC2_CLIENT, RUNNER,
                    ("from vllm.worker.model_runner_base import ModelRunnerBase\n",
                     "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n"
                     "from vllm.worker.model_runner_base import ModelRunnerBase\n"),
                    ("class PlugModelRunner(PlugModelRunnerBase):\n    def execute_model(self, tokens):\n"
                     "        return [t + 1 for t in tokens]\n",
                     "class PlugModelRunner(PlugModelRunnerBase, GPUModelRunner):\n    pass\n"))
    assert _dc103(tmp_path, client) == [("error", 11), ("error", 12)]
