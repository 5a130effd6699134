"""Batch 23c (PyPI clients of vLLM internals at their newest release, docs/triage/2026-12-05-unseen-plugins-23c.md).

KC1: a store on a msgspec.Struct. unsloth 2026.10.9 at vLLM 0.32.0 keeps the kwargs a SamplingParams was made from on
it (`sampling_params._set_kwargs = kwargs`, unsloth/models/rl.py:151). 0.32.0's SamplingParams is
`class SamplingParams(PydanticMsgspecMixin, msgspec.Struct, omit_defaults=True, dict=True)`
(vllm/sampling_params.py:268): `dict=True` gives its instances a __dict__ (and so does the plain mixin, which declares
no __slots__), so the store works (msgspec 0.23). DC006 said it could not tell whether the attribute exists, "because
SamplingParams inherits from msgspec.Struct, which driftcheck does not read": a question a store does not ask, and a
reason that is not so (driftcheck reads every base; `dict=True` is what opens the class, ZJ). Now such a store is
what a store of a new attribute on any plain class is (a warning: vLLM never reads it), and a read's unknown names
`dict=True` as its reason. The twins, where the store raises AttributeError (msgspec 0.23, checked): no `dict=True`
and every other base a Struct or declaring `__slots__`, or `frozen=True` anywhere ("immutable type"): an error now,
where it was the warning "creates a new attribute that vLLM never reads". Guarded by `try/except AttributeError`, a
warning at most.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scan.helpers import scan_trees

KC1 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "KC1_store_on_a_msgspec_struct_with_a_dict"
MIXIN = (KC1 / "vllm_src" / "vllm" / "v1" / "serial_utils.py").read_text()
PARAMS = (KC1 / "vllm_src" / "vllm" / "sampling_params.py").read_text()
STORE = (KC1 / "client" / "plugin" / "rl.py").read_text()
NO_DICT = PARAMS.replace("    dict=True,\n", "")
NO_MIXIN = NO_DICT.replace("    PydanticMsgspecMixin,\n", "")
SLOTS_MIXIN = MIXIN.replace("class PydanticMsgspecMixin:\n", "class PydanticMsgspecMixin:\n    __slots__ = ()\n\n")


def _dc006(tmp_path: Path, params: str, mixin: str = MIXIN, client: str = STORE) -> list:
    vllm = {"vllm/__init__.py": "from vllm.sampling_params import SamplingParams\n", "vllm/v1/__init__.py": "",
            "vllm/v1/serial_utils.py": mixin, "vllm/sampling_params.py": params}
    result = scan_trees(tmp_path, vllm, {"c.py": client}, only=["DC006"])
    return [(f.severity, f.symbol, f.message) for f in result.findings] + \
        [("unknown", u.symbol, u.message) for u in result.unknown]


def test_kc1_a_store_on_a_struct_with_a_dict_is_a_new_attribute_not_an_unknown(tmp_path):
    [(severity, symbol, message)] = _dc006(tmp_path, PARAMS)
    assert (severity, symbol) == ("warning", "vllm.sampling_params.SamplingParams._set_kwargs")
    assert "creates a new attribute" in message and "__dict__" in message


@pytest.mark.parametrize("params, mixin", [(NO_DICT, MIXIN), (PARAMS.replace("    dict=True,\n", "    dict=False,\n"), MIXIN)],
                         ids=["plain-mixin", "dict-false-plain-mixin"])
def test_kc1_a_plain_mixin_without_slots_gives_a_dict_too(tmp_path, params, mixin):
    [(severity, _, message)] = _dc006(tmp_path, params, mixin)
    assert severity == "warning" and "creates a new attribute" in message


@pytest.mark.parametrize("params, mixin, why", [
    (NO_MIXIN, MIXIN, "no __dict__"),
    (NO_DICT, SLOTS_MIXIN, "no __dict__"),
    (PARAMS.replace("    dict=True,\n", "    dict=True,\n    frozen=True,\n"), MIXIN, "frozen"),
], ids=["struct-only", "slots-mixin", "frozen-with-dict"])
def test_kc1_twin_a_store_a_struct_refuses_is_an_error(tmp_path, params, mixin, why):
    [(severity, symbol, message)] = _dc006(tmp_path, params, mixin)
    assert (severity, symbol) == ("error", "vllm.sampling_params.SamplingParams._set_kwargs")
    assert why in message and "AttributeError" in message


def test_kc1_twin_a_field_store_stays_silent_and_a_guarded_refused_store_is_no_error(tmp_path):
    field = STORE.replace("sampling_params._set_kwargs = kwargs", "sampling_params.n = 2")
    assert _dc006(tmp_path / "field", NO_MIXIN, client=field) == []
    guarded = STORE.replace("    sampling_params._set_kwargs = kwargs\n",
                            "    try:\n        sampling_params._set_kwargs = kwargs\n    except AttributeError:\n        pass\n")
    assert all(severity != "error" for severity, _, _ in _dc006(tmp_path / "guarded", NO_MIXIN, client=guarded))


def test_kc1_a_read_on_a_struct_with_a_dict_names_dict_true_as_the_reason(tmp_path):
    read = "from vllm import SamplingParams\n\n\ndef f(p: SamplingParams):\n    return p._set_kwargs\n"
    [(severity, _, message)] = _dc006(tmp_path, PARAMS.replace("    PydanticMsgspecMixin,\n", ""), client=read)
    assert severity == "unknown" and "`dict=True`" in message and "does not read" not in message


def test_kc1_a_frozen_flag_driftcheck_cannot_read_is_no_error(tmp_path):
    """`frozen=FROZEN` (a name, decided at import time) says nothing certain: the store is not an error."""
    params = NO_MIXIN.replace("class SamplingParams(", "FROZEN = False\n\n\nclass SamplingParams(", 1)
    params = params.replace("    omit_defaults=True,", "    frozen=FROZEN,\n    omit_defaults=True,", 1)
    assert "frozen=FROZEN" in params
    assert all(severity != "error" for severity, _, _ in _dc006(tmp_path, params))
