"""DC109 through a getattr hook: vLLM 0.34.0's weight loader calls `process_weights_after_loading` as
`hook = getattr(module, "process_weights_after_loading", None)`, then `hook()`, on every module of the model, where
0.33.0 called `module.process_weights_after_loading(model_config.dtype)` on attention layers. A client override that
still takes `act_dtype` (sabi-mla-vllm 0.2.0's `SharedMLAAttentionLayer`) then fails when the model loads: a missed
finding of batch 33c. An untyped receiver that a loop binds is every object the loop visits that has the method: a
warning (whether the client's object is among them is not known); a receiver typed as the override's vLLM class is
the `x.m(...)` call DC109 already checks (an error when new since the client's vLLM)."""

from __future__ import annotations

from scan.helpers import scan_trees, vllm_tree

LAYER = '''
class Layer:
    def process_weights_after_loading(self):
        pass
'''

LOOP_LOADER = '''
def finalize(model):
    for module in model.children():
        hook = getattr(module, "process_weights_after_loading", None)
        if callable(hook):
            hook()
'''

TYPED_LOADER = '''
from vllm.layer import Layer


def finalize(layer: Layer):
    getattr(layer, "process_weights_after_loading")()
'''

OLD_LOADER = '''
from vllm.layer import Layer


def finalize(layer: Layer):
    layer.process_weights_after_loading("float16")
'''

CLIENT = '''
from vllm.layer import Layer


class MyLayer(Layer):
    def process_weights_after_loading(self, act_dtype):
        pass
'''


def _line(text: str, needle: str) -> int:
    """The line of `needle` in `text` as the helpers write it (without the leading newline)."""
    return next(i for i, t in enumerate(text.lstrip("\n").splitlines(), 1) if needle in t)


DEF = _line(CLIENT, "def process_weights_after_loading")


def _vllm(loader: str, layer: str = LAYER) -> dict[str, str]:
    return {"vllm/__init__.py": "", "vllm/layer.py": layer, "vllm/loader.py": loader}


def _dc109(tmp_path, loader: str, client: str = CLIENT, baseline: str | None = None):
    client_vllm = None
    if baseline is not None:
        old = _vllm(baseline, LAYER.replace("(self)", "(self, act_dtype)"))
        client_vllm = str(vllm_tree(tmp_path / "old-vllm", {**old, "vllm/_version.py": '__version__ = "0.98.0"\n'}))
    found = scan_trees(tmp_path, _vllm(loader), {"plug/layer.py": client}, only=["DC109"], client_vllm=client_vllm).findings
    return [(f.severity, f.client.path, f.client.line, f.message) for f in found]


def test_a_hook_called_on_every_module_a_loop_visits_is_a_warning(tmp_path):
    [(severity, path, line, message)] = _dc109(tmp_path, LOOP_LOADER)
    assert (severity, path, line) == ("warning", "plug/layer.py", DEF)
    assert "through `getattr` on every object the loop over `model.children()` visits" in message
    assert "does not pass 'act_dtype'" in message and f"vllm/loader.py:{_line(LOOP_LOADER, 'hook()')}" in message


def test_a_hook_on_a_receiver_typed_as_the_base_is_an_error_when_new(tmp_path):
    [(severity, path, line, message)] = _dc109(tmp_path, TYPED_LOADER, baseline=OLD_LOADER)
    assert (severity, path, line) == ("error", "plug/layer.py", DEF), message


def test_twins_without_a_finding(tmp_path):
    # the override takes what the hook passes
    assert _dc109(tmp_path, LOOP_LOADER, client=CLIENT.replace("(self, act_dtype)", "(self)")) == []
    # the client's own vLLM already made the same hook call, and the client ran
    assert _dc109(tmp_path, TYPED_LOADER, baseline=TYPED_LOADER) == []
    # a getattr of another name, and a hook held but never called
    assert _dc109(tmp_path, LOOP_LOADER.replace('"process_weights_after_loading"', '"other_hook"')) == []
    assert _dc109(tmp_path, LOOP_LOADER.replace("            hook()\n", "            pass\n")) == []
