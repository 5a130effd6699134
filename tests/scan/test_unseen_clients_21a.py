"""Batch 21a (real clients taken from GitHub at the vLLM each declares, docs/triage/2026-12-05-unseen-clients-21a.md).

WA: which names a vLLM module's `globals()` uses can create. A module that hands its globals() out (protobuf's
builder, `exec`, `globals().update({n: ... for n in data})`) may gain any name, so a name it does not bind is
unknown. But vLLM's own uses are narrower: the lazy-import idiom `xgr = LazyLoader("xgr", globals(), "xgrammar")`
(vllm/multimodal/inputs.py, platforms, v1/structured_output/*, gpu_model_runner 0.8-0.9, config/model.py: 10 to 52
releases each), a `globals()[name] = value` under `elif name in globals():` (vllm/platforms/__init__.py) or in the
helper `__getattr__` calls (vllm/distributed/nixl_utils.py), and vLLM 0.5.0.post1-0.6.5's `_custom_ops`, which
re-wraps its own functions (`names_and_values = globals()` ... `names_and_values.update(names_and_values_to_update)`).
These made every missing name of those modules unknown: wde v0.3.1 (noooop/wde) at its pin vllm==0.6.5 calls
`ops.squeezellm_gemm(...)` (wde/workflows/core/backends/quantization/squeezellm.py:129, 134), which no vLLM 0.6.5
file defines: unknown, now DC002 errors (the same lines are errors at wde's HEAD pin 0.8.3, whose `_custom_ops` has
no globals()). The twins: a module whose globals() really goes out keeps its names unknown.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

# vLLM's LazyLoader, as the WA_ plugin shape's fake vLLM has it
LAZY = (Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "WA_lazy_loader_binds_its_literal_name"
        / "vllm_src" / "vllm" / "utils.py").read_text()

INPUTS = '''
from typing import TYPE_CHECKING

from vllm.utils import LazyLoader

if TYPE_CHECKING:
    import json
else:
    json = LazyLoader("json", globals(), "json")
    me_quant = LazyLoader("model_executor", globals(), "vllm.quant")


class MultiModalKwargs:
    pass
'''

CUSTOM_OPS = '''
def paged_attention(out, query):
    return out


names_and_values = globals()
names_and_values_to_update = {}
for k, v in names_and_values.items():
    if callable(v) and k == "paged_attention":
        names_and_values_to_update[k] = v
names_and_values.update(names_and_values_to_update)
del names_and_values_to_update, names_and_values, v, k
'''

PLATFORMS = '''
_current = None


def __getattr__(name):
    if name == "current_platform":
        return _current
    elif name in globals():
        return globals()[name]
    raise AttributeError(name)


def __setattr__(name, value):
    if name in globals():
        globals()[name] = value
    else:
        raise AttributeError(name)


def resolve():
    return None
'''

NIXL = '''
import importlib

__all__ = ["NixlWrapper"]


def _load(name):
    value = getattr(importlib.import_module("json"), "dumps", None)
    globals()[name] = value
    return value


def __getattr__(name):
    if name in __all__:
        return _load(name)
    raise AttributeError(name)
'''

VLLM = {"vllm/__init__.py": "", "vllm/utils.py": LAZY, "vllm/quant.py": "X = 1\n", "vllm/inputs.py": INPUTS,
        "vllm/_custom_ops.py": CUSTOM_OPS, "vllm/platforms.py": PLATFORMS, "vllm/nixl_utils.py": NIXL}


def _scan(tmp_path, body: str, vllm=VLLM):
    result = scan_trees(tmp_path, vllm, {"plugin/__init__.py": "", "plugin/m.py": body})
    errors = sorted(f"{f.rule} {f.client.line}" for f in result.findings if f.severity == "error")
    unknown = sorted(f"{u.rule} {u.client.line}" for u in result.unknown)
    return errors, unknown


def test_a_missing_name_of_modules_whose_globals_uses_say_what_they_write_is_an_error(tmp_path):
    body = ("from vllm.inputs import MultiModalKwargs, NoSuchKwargs\n"
            "from vllm import _custom_ops as ops\n"
            "from vllm import platforms, nixl_utils\n"
            "\n"
            "\n"
            "def f(x):\n"
            "    ops.paged_attention(x, x)\n"
            "    ops.squeezellm_gemm(x, x)\n"
            "    platforms.resolve()\n"
            "    platforms.no_such_helper()\n"
            "    return nixl_utils.NixlWrapper, nixl_utils.NoSuchWrapper\n")
    errors, unknown = _scan(tmp_path, body)
    assert errors == ["DC002 1", "DC002 10", "DC002 11", "DC002 8"]
    assert unknown == []


def test_the_name_a_lazy_loader_writes_exists(tmp_path):
    # `me_quant = LazyLoader("model_executor", globals(), ...)`: the first use of me_quant binds `model_executor`
    errors, unknown = _scan(tmp_path, "import vllm.inputs as inputs\n\n\ndef f():\n    return inputs.me_quant.X, "
                                      "inputs.model_executor.X, inputs.json.dumps\n")
    assert errors == []


def test_twin_globals_handed_out_keeps_every_missing_name_unknown(tmp_path):
    # the same missing names, where the module's globals() really goes to code that may bind anything
    handouts = {
        "builder": "_globals = globals()\n\n\ndef build(d, g):\n    g.update(d)\n\n\nbuild({}, _globals)\n",
        "exec": "exec('pass', globals())\n",
        "update": "NAMES = ['a']\nglobals().update({n: n for n in NAMES})\n",
        "unassigned": "def build(name, g):\n    g[name + '_x'] = 1\n\n\nbuild('lib', globals())\n",
        "alias_update": "g = globals()\nextra = {'zz': 1}\ng.update(extra)\n",
        "unguarded": "def put(name, value):\n    globals()[name] = value\n",
    }
    for name, text in handouts.items():
        vllm = {**VLLM, "vllm/gen.py": "def present():\n    return 1\n\n\n" + text}
        errors, unknown = _scan(tmp_path / name, "from vllm import gen\n\n\ndef f():\n    gen.present()\n"
                                                 "    return gen.absent_name()\n", vllm)
        assert errors == [], name
        assert unknown == ["DC002 6"], name
