"""DC109 for a client `__init__`: vLLM builds the class one of its functions hands back (`-> type[X]`), the client's
subclass where vLLM is set to use it (22b's UCM: a KV connector loaded by `kv_connector_module_path` whose
`__init__(self, vllm_config, role)` vLLM 0.21.0 on builds as `connector_cls(config, role, kv_cache_config)`; the
client's `super().__init__(vllm_config, role, None)` is right, so nothing else reports it)."""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

CONNECTOR = """
    from vllm.distributed.kv_transfer.kv_connector.v1.base import KVConnectorBase_V1, KVConnectorRole


    class MyConnector(KVConnectorBase_V1):
        def __init__(self, vllm_config, role: KVConnectorRole):
            super().__init__(vllm_config, role, None)
            self.ready = True
"""


def _dc109(tmp_path, version: str, text: str = CONNECTOR, client_vllm: str | None = "0.11.0"):
    root = tmp_path / "client" / "plug"
    root.mkdir(parents=True)
    (root / "connector.py").write_text(textwrap.dedent(text))
    result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC109"], client_vllm=client_vllm))
    assert not result.internal_errors
    return [f for f in result.findings if f.rule == "DC109"]


def test_a_two_argument_connector_is_an_error_where_the_factory_passes_three(tmp_path):
    [finding] = _dc109(tmp_path, "0.32.0")
    assert finding.severity == "error" and finding.client.line == 6
    assert "connector_cls(config, role, kv_cache_config)" in finding.message
    assert finding.vllm.path.endswith("kv_connector/factory.py")
    assert "new since vLLM 0.11.0" in finding.message


def test_twin_a_constructor_taking_the_third_argument_fits(tmp_path):
    fits = CONNECTOR.replace("role: KVConnectorRole):", "role: KVConnectorRole, kv_cache_config=None):")
    assert _dc109(tmp_path, "0.32.0", fits) == []


def test_twin_where_the_factory_checks_the_signature_first_nothing_is_reported(tmp_path):
    # 0.20.0 builds `connector_cls(config, role)` for a two-argument class (`compat_sig` from its own signature test)
    assert _dc109(tmp_path, "0.20.0") == []


def test_twin_without_the_clients_vllm_it_is_a_warning(tmp_path):
    [finding] = _dc109(tmp_path, "0.32.0", client_vllm=None)
    assert finding.severity == "warning" and "no vLLM of the client's own" in finding.message


# R2 (23b, vllm-gaudi at vLLM 0.12.0): the plugin sets `compressed_tensors_moe.CompressedTensorsWNA16MarlinMoEMethod` to
# its subclass taking (quant_config, moe); 0.12.0's module builds the name with a third argument, layer_name.
def _moe_tree(call: str) -> dict:
    return {"vllm/__init__.py": "", "vllm/moe.py":
            "class MarlinMoEMethod:\n    def __init__(self, quant_config, moe, layer_name=None):\n        self.moe = moe\n\n\n"
            f"def get_method(quant_config, layer):\n    return {call}\n"}


_MOE_CLIENT = ("from vllm import moe\nfrom vllm.moe import MarlinMoEMethod\n\n\nclass HPUMethod(MarlinMoEMethod):\n"
               "    def __init__(self, quant_config, moe):\n        super().__init__(quant_config, moe)\n\n\n"
               "moe.MarlinMoEMethod = HPUMethod\n")


def _replaced(tmp_path, client: str = _MOE_CLIENT, new_call: str = "MarlinMoEMethod(quant_config, layer.moe_config, layer.name)"):
    from scan.helpers import scan_against_own

    result = scan_against_own(tmp_path, _moe_tree("MarlinMoEMethod(quant_config, layer.moe_config)"), "0.11.0",
                              _moe_tree(new_call), {"plug/__init__.py": "", "plug/ct_moe.py": client},
                              only=["DC109"], version="0.12.0")
    return [(f.client.line, f.severity) for f in result.findings]


def test_a_class_the_client_puts_in_vllms_module_is_built_with_the_modules_arguments(tmp_path):
    assert _replaced(tmp_path) == [(6, "error")]


def test_twin_a_call_the_client_already_ran_with_is_not_new(tmp_path):
    assert _replaced(tmp_path, new_call="MarlinMoEMethod(quant_config, layer.moe_config)") == []


def test_twin_a_function_that_binds_the_name_itself_builds_vllms_class(tmp_path):
    # the replacement is read from the module's globals; a local import of the name reads the class itself
    local = "(lambda: None)()\n    from vllm.moe import MarlinMoEMethod\n    return MarlinMoEMethod(quant_config, layer.moe_config, layer.name)"
    assert _replaced(tmp_path, new_call=local) == []


def test_twin_without_the_replacement_vllm_builds_its_own_class(tmp_path):
    assert _replaced(tmp_path, _MOE_CLIENT.replace("moe.MarlinMoEMethod = HPUMethod\n", "")) == []


# M3 (23a, turboquant-amd at vLLM 0.33.0): `selector._cached_get_attn_backend = selector.cache(_patched)` with
# `_patched(backend, attn_selector_config, num_heads=None)`; 0.33.0's selector calls the name with a new keyword.
def _selector(call: str) -> dict:
    return {"vllm/__init__.py": "", "vllm/selector.py":
            "import functools\n\ncache = functools.cache\n\n\n"
            "def _cached_get_attn_backend(backend, attn_selector_config, num_heads=None, *, _run_kv_cache_dtype=None):\n"
            "    return backend\n\n\n"
            f"def get_attn_backend(backend, config, heads, dtype):\n    return {call}\n"}


_SELECTOR_CLIENT = ("def patch_vllm():\n    import vllm.selector as selector\n\n"
                    "    def _patched(backend, attn_selector_config, num_heads=None):\n        return backend\n\n"
                    "    selector._cached_get_attn_backend = selector.cache(_patched)\n")


def _module_function(tmp_path, new_call: str, client: str = _SELECTOR_CLIENT):
    from scan.helpers import scan_against_own

    result = scan_against_own(tmp_path, _selector("_cached_get_attn_backend(backend=backend, attn_selector_config=config, "
                                                  "num_heads=heads)"), "0.18.0",
                              _selector(new_call), {"plug/__init__.py": "", "plug/patch.py": client},
                              only=["DC109"], version="0.33.0")
    return [(f.client.line, f.severity, f.details.get("argument")) for f in result.findings]


def test_a_module_function_the_client_replaces_is_called_with_the_modules_arguments(tmp_path):
    new = "_cached_get_attn_backend(backend=backend, attn_selector_config=config, num_heads=heads, _run_kv_cache_dtype=dtype)"
    assert _module_function(tmp_path, new) == [(4, "error", "_run_kv_cache_dtype")]


def test_twin_the_call_the_client_ran_with_fits(tmp_path):
    old = "_cached_get_attn_backend(backend=backend, attn_selector_config=config, num_heads=heads)"
    assert _module_function(tmp_path, old) == []


def test_twin_a_wrapper_that_may_change_the_arguments_is_not_read(tmp_path):
    new = "_cached_get_attn_backend(backend=backend, attn_selector_config=config, num_heads=heads, _run_kv_cache_dtype=dtype)"
    wrapped = _SELECTOR_CLIENT.replace("selector.cache(_patched)", "adapt(_patched)")
    assert _module_function(tmp_path, new, "from plug.util import adapt\n" + wrapped) == []


# R6 (23b, vllm-gaudi at vLLM 0.26.0): `Qwen3NextAttention.forward = _hpu_forward(self, positions, output,
# hidden_states)`; 0.26.0's decoder layer calls `self.self_attn(hidden_states=..., positions=...)` (torch's
# `Module.__call__` runs `forward`) without `output`, which 0.25.1 passed. And the saved original, read before the
# file's own store, is vLLM's `forward(self, positions, hidden_states)`: called with one argument too many.
def _qwen(call: str, forward: str = "def forward(self, positions, hidden_states):") -> dict:
    return {"vllm/__init__.py": "", "vllm/qwen3_next.py":
            "from torch import nn\n\n\nclass Qwen3NextAttention(nn.Module):\n"
            f"    {forward}\n        return hidden_states\n\n\n"
            "class Qwen3NextDecoderLayer(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.self_attn = Qwen3NextAttention()\n\n"
            f"    def forward(self, positions, hidden_states, output):\n        return {call}\n"}


_QWEN_CLIENT = ("from vllm.qwen3_next import Qwen3NextAttention\n\n_orig_forward = Qwen3NextAttention.forward\n\n\n"
                "def _hpu_forward(self, positions, output, hidden_states):\n"
                "    if hidden_states.dim() != 3:\n        return _orig_forward(self, positions, output, hidden_states)\n"
                "    return output\n\n\nQwen3NextAttention.forward = _hpu_forward\n")


def _qwen_scan(tmp_path, new_call: str, client: str = _QWEN_CLIENT):
    from scan.helpers import scan_against_own

    result = scan_against_own(tmp_path, _qwen("self.self_attn(positions=positions, output=output, hidden_states=hidden_states)",
                                              "def forward(self, positions, output, hidden_states):"), "0.25.1",
                              _qwen(new_call), {"plug/__init__.py": "", "plug/qwen3_next.py": client},
                              only=["DC109", "DC004"], version="0.26.0")
    return sorted((f.rule, f.client.line, f.severity) for f in result.findings)


def test_a_module_call_runs_the_forward_the_client_set_and_the_saved_original_is_vllms(tmp_path):
    new = "self.self_attn(hidden_states=hidden_states, positions=positions)"
    assert _qwen_scan(tmp_path, new) == [("DC004", 8, "error"), ("DC109", 6, "error")]


def test_twin_a_module_call_passing_what_the_client_takes_fits(tmp_path):
    same = "self.self_attn(positions=positions, output=output, hidden_states=hidden_states)"
    assert ("DC109", 6, "error") not in _qwen_scan(tmp_path, same)


def test_twin_an_original_read_after_the_clients_store_is_the_clients(tmp_path):
    late = _QWEN_CLIENT.replace("_orig_forward = Qwen3NextAttention.forward\n", "") \
        + "\n_orig_forward = Qwen3NextAttention.forward\n"
    new = "self.self_attn(hidden_states=hidden_states, positions=positions)"
    assert not any(rule == "DC004" for rule, _line, _sev in _qwen_scan(tmp_path, new, late))


def test_twin_a_subclass_forward_runs_only_on_the_subclass_vllm_does_not_build(tmp_path):
    # vLLM's decoder layer builds its own Qwen3NextAttention: a client subclass's forward is not what that call runs
    sub = ("from vllm.qwen3_next import Qwen3NextAttention\n\n\nclass HPUAttention(Qwen3NextAttention):\n"
           "    def forward(self, positions, output, hidden_states):\n        return output\n")
    new = "self.self_attn(hidden_states=hidden_states, positions=positions)"
    assert _qwen_scan(tmp_path, new, sub) == []
