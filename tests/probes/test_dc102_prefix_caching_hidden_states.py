"""DC102 prefix-caching-hidden-states: hidden-state capture with prefix caching on (probes/prefix_caching_hidden_states.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

from conftest import real_scan, source_line, vllm_sources
from behaviour import _by_rule, _client_line, scan_files, seed


def test_dc102_extract_hidden_states_dict_without_prefix_caching_off(tmp_path):
    src = """
        from vllm import LLM


        def make():
            return LLM(model="m", speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1})
    """
    [f] = scan_files(tmp_path, {"c.py": src}, only=["DC102"]).findings
    assert f.client.line == 5 and f.when == "silent"


def test_dc102_off_when_the_same_call_disables_prefix_caching(tmp_path):
    src = """
        from vllm import LLM


        def make():
            return LLM(model="m", enable_prefix_caching=False,
                       speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1})
    """
    assert scan_files(tmp_path, {"c.py": src}, only=["DC102"]).findings == []


def test_dc102_ignores_docstrings_messages_and_comparisons(tmp_path):
    src = '''
        """Works with vLLM's extract_hidden_states method."""
        from vllm.config import VllmConfig


        def check(config: VllmConfig):
            if config.speculative_config.method != "extract_hidden_states":
                raise ValueError("needs the extract_hidden_states speculative method")
    '''
    assert scan_files(tmp_path, {"c.py": src}, only=["DC102"]).findings == []


def test_dc102_cli_script_with_and_without_the_flag(tmp_path):
    files = {
        "c.py": "import vllm\n",
        "serve.sh": """
            vllm serve m \\
              --speculative-config '{"method": "extract_hidden_states"}' \\
              --kv-transfer-config '{"kv_connector": "ExampleHiddenStatesConnector"}'
        """,
        "serve_ok.sh": """
            vllm serve m --no-enable-prefix-caching \\
              --speculative-config '{"method": "extract_hidden_states"}'
        """,
    }
    found = scan_files(tmp_path, files, only=["DC102"]).findings
    assert sorted((f.client.path, f.client.line) for f in found) == [("serve.sh", 2), ("serve.sh", 3)]


def test_dc102_prefix_caching_warning_present_on_016(seed):
    [f] = _by_rule(seed, "DC102")
    assert f.severity == "warning" and f.when == "silent"
    assert f.client.line == _client_line("cache_config = CacheConfig(")
    assert f.vllm.path == "vllm/config/cache.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "enable_prefix_caching: bool = True")


def test_dc102_absent_when_prefix_caching_off():
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC102") == []
    assert _by_rule(real_scan("0.11.0", "speculators==0.3.0"), "DC102") == []


PATCHES = """
    import types

    from vllm.engine.arg_utils import EngineArgs
    from vllm.config import CacheConfig

    _orig = EngineArgs.create_engine_config


    def _patched_create_engine_config(self, *args, **kwargs):
        config = _orig(self, *args, **kwargs)
        config.parallel_config.worker_extension_cls = "pkg.ext.Ext"
        return config


    def _skip_weight(name, loaded_weight):
        return name.endswith("rotary_emb.inv_freq")


    def _forward_linear(self, hidden_states, residual):
        hidden_states = self.proj(hidden_states) + residual
        return hidden_states


    class Layer:
        def __init__(self, config, hidden_size):
            self.hidden_size = hidden_size  # a size, not hidden states
            self.hidden_dim = config.hidden_size


    def set_sizes(self, sizes):
        self.hidden_size = sizes[0]
        self.compilation_config.cudagraph_capture_sizes = sorted(sizes)


    def install(model):
        model.set_sizes = types.MethodType(set_sizes, model)
        EngineArgs.create_engine_config = _patched_create_engine_config
        model.skip = _skip_weight
        model.forward = types.MethodType(_forward_linear, model)
        return CacheConfig(block_size=16)
"""


def test_dc102_a_bound_function_that_keeps_no_hidden_states_is_no_capture(tmp_path):
    # functions a plugin binds onto vLLM objects that compute with hidden states, keep a hidden *size* or patch configs
    # (vllm-lens, duplexjev-vllm, vllm-torchtpu-core, vllm-hust-vspec, vllm-ascend 0.13.0), but keep no hidden states:
    # no capture, no warning
    assert scan_files(tmp_path, {"c.py": PATCHES}, only=["DC102"], vllm="0.16.0").findings == []


def test_dc102_the_same_binding_that_appends_hidden_states_is_a_capture(tmp_path):
    capturing = PATCHES.replace("        hidden_states = self.proj(hidden_states) + residual\n",
                                "        hidden_states = self.proj(hidden_states) + residual\n"
                                "        self.captured.append(hidden_states.clone())\n")
    [f] = scan_files(tmp_path, {"c.py": capturing}, only=["DC102"], vllm="0.16.0").findings
    assert f.details["capture"] == "_forward_linear" and f.severity == "warning"
    stored = PATCHES.replace("        return hidden_states\n", "        STORE[0] = hidden_states\n        return hidden_states\n")
    [f] = scan_files(tmp_path / "2", {"c.py": stored}, only=["DC102"], vllm="0.16.0").findings
    assert f.details["capture"] == "_forward_linear"
    # vllm-lens 1.3.0's shape: the value is renamed (`activation = hidden_states[a:b].cpu()`), the place says it
    named = PATCHES.replace("        return hidden_states\n",
                            "        activation = hidden_states[0:4].cpu()\n"
                            "        self._captured_states.setdefault(0, []).append(activation)\n        return hidden_states\n")
    [f] = scan_files(tmp_path / "3", {"c.py": named}, only=["DC102"], vllm="0.16.0").findings
    assert f.details["capture"] == "_forward_linear"


EXTENSION_CAPTURE = """
    from vllm import LLM


    class Probe:
        def capture(self, layer):
            self.captured = []
            hidden_states = layer.output
            self.captured.append(hidden_states.cpu())


    def run(helper):
        llm = LLM("m", worker_extension_cls="c.Probe")
        helper("m", worker_extension_cls="c.Probe", enable_prefix_caching=False)
        return llm.collective_rpc("capture", args=(None,))
"""


def test_dc102_an_engine_call_that_turns_prefix_caching_off(tmp_path):
    # vLLM 0.32.0's own test (tests/models/test_dsv41_mono_layers.py) captures in a worker extension and hands
    # `enable_prefix_caching=False` to its `vllm_runner` fixture; it builds no CacheConfig of its own
    assert scan_files(tmp_path, {"c.py": EXTENSION_CAPTURE}, only=["DC102"], vllm="0.16.0").findings == []
    # the twin: no call turns it off, so the capture is a warning as before
    on = EXTENSION_CAPTURE.replace(", enable_prefix_caching=False", "")
    [f] = scan_files(tmp_path / "on", {"c.py": on}, only=["DC102"], vllm="0.16.0").findings
    assert f.severity == "warning" and "builds no CacheConfig" in f.message


STAND_IN = """
    from types import SimpleNamespace

    from vllm import LLM


    def fake_speculative_config(method):
        return SimpleNamespace(method=method, num_speculative_tokens=1)


    def test_dispatch():
        config = SimpleNamespace(speculative_config=fake_speculative_config(method="extract_hidden_states"))
        return config
"""


def test_dc102_a_tests_stand_in_config_configures_no_engine(tmp_path):
    """vLLM 0.34.0's tests/v1/worker/test_gpu_extract_hidden_states_speculator.py: a unit test's `SimpleNamespace`
    stand-in of a VllmConfig names the path, but no engine reads it (and `fix --warnings` put
    `enable_prefix_caching=False` into it)."""
    assert scan_files(tmp_path, {"tests/test_spec.py": STAND_IN}, only=["DC102"]).findings == []


def test_dc102_twins_of_the_stand_in_stay(tmp_path):
    # the same config in package code, and a test's config handed to vLLM's LLM
    [f] = scan_files(tmp_path, {"c.py": STAND_IN}, only=["DC102"]).findings
    assert f.client.path == "c.py"
    handed = STAND_IN.replace('config = SimpleNamespace(speculative_config=fake_speculative_config(method="extract_hidden_states"))',
                              'config = LLM(model="m", speculative_config={"method": "extract_hidden_states"})')
    [f] = scan_files(tmp_path / "b", {"tests/test_spec.py": handed}, only=["DC102"]).findings
    assert f.client.path == "tests/test_spec.py"


def test_dc102_a_place_named_for_hidden_states_that_gets_only_constants_keeps_none(tmp_path):
    # tpu-spec-decode's benchmarks/layer_truncation.py (batch 12e): a patched model `__init__` picks the layers vLLM's
    # drafter reads (`self.aux_hidden_state_layers = tuple(range(n))`); no hidden state is captured by the client
    layers = PATCHES.replace("        return hidden_states\n",
                             "        self.aux_hidden_state_layers = tuple(range(self.num_layers))\n"
                             "        self.hidden_state_ids = (2, 5, -1)\n        return hidden_states\n")
    assert scan_files(tmp_path, {"c.py": layers}, only=["DC102"], vllm="0.16.0").findings == []
    # twins: an empty buffer to fill, and a value that may hold tensors, into the same kind of place, are captures
    for i, value in enumerate(("{}", "tuple(outputs)", "[h.cpu() for h in hidden_states]")):
        kept = PATCHES.replace("        return hidden_states\n",
                               f"        self._captured_states = {value}\n        return hidden_states\n")
        [f] = scan_files(tmp_path / str(i), {"c.py": kept}, only=["DC102"], vllm="0.16.0").findings
        assert f.details["capture"] == "_forward_linear", value


AUX_FORWARD = """
    from vllm.model_executor.models import deepseek_v2


    def _patched_forward(self, input_ids, positions):
        hidden_states = self.embed_input_ids(input_ids)
        aux_hidden_states = []
        for idx, layer in enumerate(self.layers):
            if idx in self.aux_hidden_state_layers:
                aux_hidden_states.append(hidden_states)
            hidden_states = layer(positions, hidden_states)
        if len(aux_hidden_states) > 0:
            return hidden_states, aux_hidden_states
        return hidden_states


    deepseek_v2.DeepseekV2Model.forward = _patched_forward
"""


def test_dc102_a_forward_that_returns_its_own_list_of_aux_hidden_states_keeps_none(tmp_path):
    # vllm-gaudi's models/deepseek_v2.py, vllm-ascend's patch_deepseek_v2.py (27e X2): the replaced forward collects the
    # layers' outputs in a list it made and returns them to vLLM's own EAGLE-3 drafter; nothing outlives the call
    assert scan_files(tmp_path, {"c.py": AUX_FORWARD}, only=["DC102"], vllm="0.16.0").findings == []
    # twins: the same list kept on the model, handed to a call of the client's, or a module's list: captures
    for i, change in enumerate((("        if len(", "        self.kept = aux_hidden_states\n        if len("),
                                ("        if len(", "        SINK(aux_hidden_states)\n        if len("),
                                ("        aux_hidden_states = []\n", "        global aux_hidden_states\n"
                                                                      "        aux_hidden_states = []\n"))):
        kept = AUX_FORWARD.replace(*change)
        [f] = scan_files(tmp_path / str(i), {"c.py": kept}, only=["DC102"], vllm="0.16.0").findings
        assert f.details["capture"] == "_patched_forward", change
