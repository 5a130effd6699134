"""Twentieth session (batches 25a-25d): a fallback bound by the handler of a failed import (25a F1), private
members read off a vLLM class (25a M1), a module `__getattr__` that serves only its globals (25b M1), `self.x` a
client base class sets (25d R2), a probe whose name argument is a module constant (25d R1), a flag only the
handler of a failed import sets (25c F1).

F1 (py-kvcache at vLLM 0.19.1): `try: from vllm.v1.kv_offload.abstract import OffloadKey, PrepareStoreOutput` with
`except Exception:` defining the client's own `PrepareStoreOutput` dataclass. 0.19.1 lacks `OffloadKey`, so the import
stops at it, binds neither name, and the handler's class is what the module's later `PrepareStoreOutput(...)` builds;
it was checked against vLLM's class of that name (4 false DC003/DC005 errors).
"""

from __future__ import annotations

from scan.helpers import scan_trees

_OFFLOAD = ("from dataclasses import dataclass\n\n\n@dataclass\nclass PrepareStoreOutput:\n    block_hashes_to_store: list\n"
            "    store_spec: object\n    block_hashes_evicted: list\n")
_VLLM = {"vllm/__init__.py": "", "vllm/offload.py": _OFFLOAD}

_CLIENT = '''\
from dataclasses import dataclass
from typing import Any

try:
    from vllm.offload import OffloadKey, PrepareStoreOutput
except Exception:
    OffloadKey = Any

    @dataclass(frozen=True)
    class PrepareStoreOutput:
        keys_to_store: list
        store_spec: object
        evicted_keys: list


def prepare_store(keys):
    return PrepareStoreOutput(keys_to_store=list(keys), store_spec=None, evicted_keys=[])
'''


def _errors(tmp_path, client: str = _CLIENT, vllm: dict | None = None) -> list[tuple[str, int]]:
    result = scan_trees(tmp_path, vllm or _VLLM, {"plug/__init__.py": "", "plug/conn.py": client})
    assert not result.internal_errors
    return sorted((f.rule, f.client.line) for f in result.findings if f.severity == "error")


def test_f1_the_handlers_class_is_what_runs_after_a_failed_import(tmp_path):
    assert _errors(tmp_path) == []


def test_f1_twin_where_the_import_succeeds_vllms_class_is_built(tmp_path):
    vllm = {**_VLLM, "vllm/offload.py": _OFFLOAD + "\n\nOffloadKey = int\n"}
    assert _errors(tmp_path, vllm=vllm) == [("DC003", 17), ("DC003", 17), ("DC005", 17), ("DC005", 17)]


def test_f1_a_name_bound_before_the_failing_one_and_not_rebound_stays_vllms(tmp_path):
    """`from m import Kept, Gone` binds Kept before it fails; a handler that binds only Gone leaves vLLM's Kept."""
    client = _CLIENT.replace("import OffloadKey, PrepareStoreOutput", "import PrepareStoreOutput, OffloadKey") \
        .replace("    @dataclass(frozen=True)\n    class PrepareStoreOutput:\n        keys_to_store: list\n"
                 "        store_spec: object\n        evicted_keys: list\n", "")
    assert [rule for rule, _ in _errors(tmp_path, client)] == ["DC003", "DC003", "DC005", "DC005"]


def test_f1_a_handlers_import_replaces_a_name_the_failed_import_never_bound(tmp_path):
    """The handler imports the name from where it moved; the body's import of it (after the missing name) never ran."""
    vllm = {**_VLLM, "vllm/offload.py": "class PrepareStoreOutput:\n    def __init__(self, block_hashes_to_store):\n        pass\n",
            "vllm/moved.py": "class PrepareStoreOutput:\n    def __init__(self, keys_to_store, store_spec, evicted_keys):\n"
                             "        pass\n"}
    client = _CLIENT.replace("    @dataclass(frozen=True)\n    class PrepareStoreOutput:\n        keys_to_store: list\n"
                             "        store_spec: object\n        evicted_keys: list\n",
                             "    from vllm.moved import PrepareStoreOutput\n")
    assert _errors(tmp_path, client, vllm) == []
    # twin: without the missing name the body's import runs, and the handler never does
    twin = _errors(tmp_path / "twin", client.replace("OffloadKey, PrepareStoreOutput", "PrepareStoreOutput"), vllm)
    assert twin == [("DC003", 13), ("DC003", 13), ("DC003", 13), ("DC005", 13)]


# 25a M1 (aitherkvcache at 0.31.0): `original = GPUModelRunner._reshape_kv_cache_tensors` before the patch stores its
# own; 0.31.0's runner has no such method, an AttributeError. Reads of `_private` members off a vLLM class were never
# checked (only public ones), though they are what monkey-patches read and replace.
_RUNNER = {"vllm/__init__.py": "", "vllm/runner.py": "import enum\nfrom abc import ABC\nfrom typing import NamedTuple\n\n\n"
           "class GPUModelRunner:\n    def initialize_kv_cache(self, config):\n        return {}\n\n\n"
           "class Backend(ABC):\n    def name(self):\n        return 'x'\n\n\n"
           "class Status(enum.Enum):\n    WAITING = 1\n\n\nclass Pair(NamedTuple):\n    a: int\n    b: int\n"}
_PATCH = '''\
from vllm.runner import Backend, GPUModelRunner, Pair, Status


def patch():
    original = GPUModelRunner._reshape_kv_cache_tensors

    def _mine(self, raw, sizes):
        return original(self, raw, sizes)

    GPUModelRunner._reshape_kv_cache_tensors = _mine
'''


def _found(tmp_path, vllm: dict, client: str, rule: str, unknowns: bool = False) -> list[tuple[int, str]]:
    """(line, severity) of each `rule` finding on the client module `plug/mod.py` against the fake vLLM `vllm`; with
    `unknowns`, then (line, "unknown") of each unknown."""
    result = scan_trees(tmp_path, vllm, {"plug/__init__.py": "", "plug/mod.py": client}, only=[rule])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings] + \
        ([(u.client.line, "unknown") for u in result.unknown] if unknowns else [])


def _dc006(tmp_path, client: str, vllm: dict | None = None) -> list[tuple[int, str]]:
    return _found(tmp_path, vllm or _RUNNER, client, "DC006")


def test_25a_m1_a_private_method_read_before_the_patch_is_checked(tmp_path):
    assert _dc006(tmp_path, _PATCH) == [(5, "error")]


def test_25a_m1_twin_the_private_method_vllm_has(tmp_path):
    vllm = {**_RUNNER, "vllm/runner.py": _RUNNER["vllm/runner.py"].replace(
        "    def initialize_kv_cache", "    def _reshape_kv_cache_tensors(self, raw, sizes):\n        return raw\n\n"
        "    def initialize_kv_cache")}
    assert _dc006(tmp_path, _PATCH, vllm) == []


def test_25a_m1_what_the_standard_library_gives_a_class_is_no_finding(tmp_path):
    """Enum's, NamedTuple's and ABC's own private members, and a dunder name, are there at run time (CPython runs
    these reads); a private name on a class with a base outside vLLM is therefore never known to be missing, even
    one no base has (`Backend._not_known`: left silent, not guessed)."""
    client = _PATCH + ("\n\ndef read():\n    return (Status._member_map_, Status._value2member_map_, Pair._fields, Pair._make,"
                       " Pair._field_defaults, Backend._abc_impl, GPUModelRunner.__name__, Backend._not_known)\n")
    assert _dc006(tmp_path, client) == [(5, "error")]


# 25b M1 (NousResearch torchtitan at 0.34.0): `from vllm.model_executor.models.transformers import TransformersModel`,
# a class 0.34.0 removed, was unknown: the package's `__getattr__` starts `if name not in globals(): raise
# AttributeError(...)` and then returns `globals()[name]`; only its last statement was read, so it looked open to any
# name. It serves only what the module binds already: an ImportError.
_GETATTR = ('def __getattr__(name: str):\n    """Handle imports of non-existent classes."""\n    if name not in globals():\n'
            '        raise AttributeError(f"no class for {name}")\n    return globals()[name]\n')


def _dc002(tmp_path, getattr_body: str) -> list[tuple[int, str]]:
    vllm = {"vllm/__init__.py": "", "vllm/models/__init__.py": "class TransformersForCausalLM:\n    pass\n\n\n" + getattr_body}
    result = scan_trees(tmp_path, vllm, {"plug/__init__.py": "", "plug/model.py":
                                         "from vllm.models import TransformersModel, TransformersForCausalLM\n"},
                        only=["DC002"])
    assert not result.internal_errors
    return [(f.client.line, f.severity, f.symbol) for f in result.findings] + \
        [(u.client.line, "unknown", u.message[:40]) for u in result.unknown]


def test_25b_m1_a_getattr_refusing_all_but_globals_serves_no_new_name(tmp_path):
    assert _dc002(tmp_path, _GETATTR) == [(1, "error", "vllm.models.TransformersModel")]


def test_25b_m1_twin_a_getattr_that_loads_other_names_may_serve_it(tmp_path):
    opened = _GETATTR.replace("    if name not in globals():\n        raise AttributeError(f\"no class for {name}\")\n",
                              "    if name not in globals():\n        return _load(name)\n")
    found = _dc002(tmp_path, opened)
    assert [sev for _, sev, _ in found] != ["error"] and all(sev != "error" for _, sev, _ in found)


# 25a M1 on the real tree: 0.31.0's GPUModelRunner has `update_config`, which does `setattr(self, config_name, ...)`;
# that made the class "set members by a computed name", and every read off the class itself went unchecked. A setattr
# on an instance adds nothing to the class; one on the class (a classmethod's `cls`, as AttentionBackendEnum.register
# does) still may add any name.
def _runner_setting(method: str) -> dict:
    return {**_RUNNER, "vllm/runner.py": _RUNNER["vllm/runner.py"].replace(
        "    def initialize_kv_cache", method + "\n    def initialize_kv_cache")}


def test_25a_m1_an_instance_setattr_by_name_adds_nothing_to_the_class(tmp_path):
    method = "    def update_config(self, overrides):\n        for name, value in overrides.items():\n" \
             "            setattr(self, name, value)\n"
    assert _dc006(tmp_path, _PATCH, _runner_setting(method)) == [(5, "error")]


def test_25a_m1_twin_a_classmethod_setattr_by_name_may_add_it(tmp_path):
    method = "    @classmethod\n    def register(cls, name, value):\n        setattr(cls, name, value)\n"
    assert _dc006(tmp_path, _PATCH, _runner_setting(method)) == []


# 25d R2 (mteb at 0.16.0 / 0.17.0): `self.llm = LLM(...)` in a client base class's `__init__`, `self.llm.encode(...,
# truncate_prompt_tokens=-1)` in a subclass: the subclass's `self.llm` was "a client member" of unknown type (only the
# class's own methods were read for it), and the TypeError was missed.
_LLM_VLLM = {"vllm/__init__.py": "from vllm.entrypoints.llm import LLM\n", "vllm/entrypoints/__init__.py": "",
             "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model=''):\n        self.model = model\n\n"
                                        "    def encode(self, prompts, pooling_params=None, *, use_tqdm=True):\n"
                                        "        return []\n"}
_WRAPPERS = '''\
from vllm import LLM


class Base:
    def __init__(self, model):
        self.llm = LLM(model=model)


class Encoder(Base):
    def run(self, prompts):
        return self.llm.encode(prompts, truncate_prompt_tokens=-1)
'''


def _dc003(tmp_path, client: str) -> list[tuple[int, str]]:
    return _found(tmp_path, _LLM_VLLM, client, "DC003")


def test_25d_r2_an_attribute_a_client_base_class_sets_is_typed_in_the_subclass(tmp_path):
    assert _dc003(tmp_path, _WRAPPERS) == [(11, "error")]


def test_25d_r2_twin_a_subclass_that_sets_it_otherwise_decides(tmp_path):
    own = _WRAPPERS.replace("class Encoder(Base):\n", "class Encoder(Base):\n    def load(self, other):\n"
                                                      "        self.llm = other.make()\n\n")
    assert _dc003(tmp_path, own) == []


# 25d R1 (dd-trace-py at 0.14.0): `if not getattr(vllm, ATTR_DATADOG_PATCH, False): return` in `unpatch()`, the flag's
# name a module constant, was a hasattr guard over every later line of the function: the AttributeError of
# `vllm.v1.engine.processor.Processor` after it became a warning. The probe checks the client's own flag only.
_DD_VLLM = {"vllm/__init__.py": "", "vllm/v1/__init__.py": "", "vllm/v1/engine/__init__.py": "",
            "vllm/v1/engine/output_processor.py": "class OutputProcessor:\n    pass\n"}
_UNPATCH = '''\
import vllm
import vllm.v1.engine.output_processor

PATCHED = "_datadog_patch"


def unpatch():
    if not getattr(vllm, PATCHED, False):
        return
    setattr(vllm, PATCHED, False)
    return vllm.v1.engine.processor.Processor
'''


def _dd(tmp_path, client: str) -> list[tuple[int, str]]:
    return _found(tmp_path, _DD_VLLM, client, "DC002")


def test_25d_r1_an_early_exit_on_the_clients_own_flag_guards_only_the_flag(tmp_path):
    assert _dd(tmp_path, _UNPATCH) == [(11, "error")]


def test_25d_r1_twin_a_probe_of_the_name_used_still_guards_it(tmp_path):
    probing = _UNPATCH.replace('PATCHED = "_datadog_patch"', 'PATCHED = "processor"') \
        .replace("getattr(vllm, PATCHED, False)", "getattr(vllm.v1.engine, PATCHED, None)")
    assert _dd(tmp_path, probing) == [(11, "warning")]


# 25c F1 (vLLM-Watermark): `try: from vllm.v1.outputs import SamplerOutput; USE_LEGACY = False / except ImportError:
# from vllm.model_executor.layers.sampler import SamplerOutput; USE_LEGACY = True`, then `if USE_LEGACY: return
# self._legacy_output(...)`, whose `SamplerOutput(outputs=...)` is the legacy class's call: it was checked as an
# unguarded call of the v1 class. The flag the handler sets says the handler ran.
_SAMPLER_VLLM = {"vllm/__init__.py": "", "vllm/v1/__init__.py": "",
                 "vllm/v1/outputs.py": "class SamplerOutput:\n    def __init__(self, sampled_token_ids, logprobs_tensors):\n"
                                       "        pass\n",
                 "vllm/model_executor/__init__.py": "", "vllm/model_executor/layers/__init__.py": "",
                 "vllm/model_executor/layers/sampler.py": "class SamplerOutput:\n    def __init__(self, outputs, "
                                                          "sampled_token_ids=None):\n        pass\n"}
_WATERMARK = '''\
try:
    from vllm.v1.outputs import SamplerOutput

    USE_LEGACY = False
except ImportError:
    from vllm.model_executor.layers.sampler import SamplerOutput

    USE_LEGACY = True


class WatermarkSampler:
    def forward(self, tokens):
        if USE_LEGACY:
            return self._legacy_output(tokens)
        return SamplerOutput(sampled_token_ids=tokens, logprobs_tensors=None)

    def _legacy_output(self, tokens):
        return SamplerOutput(outputs=[], sampled_token_ids=tokens)
'''


def test_25c_f1_a_call_made_only_under_the_handlers_flag_is_the_fallbacks(tmp_path):
    assert _found(tmp_path, _SAMPLER_VLLM, _WATERMARK, "DC003") == [(18, "warning")]


def test_25c_f1_twin_where_the_try_fails_the_flagged_code_runs(tmp_path):
    """No v1 module: the handler runs, USE_LEGACY is True, and the legacy class's call is checked as it runs."""
    legacy_only = {k: v for k, v in _SAMPLER_VLLM.items() if not k.startswith("vllm/v1/")}
    legacy_only["vllm/model_executor/layers/sampler.py"] = "class SamplerOutput:\n    def __init__(self, sampled_token_ids):\n" \
                                                           "        pass\n"
    # (DC001 too: its certain error in the try body is what says the handler runs)
    result = scan_trees(tmp_path, legacy_only, {"plug/__init__.py": "", "plug/mod.py": _WATERMARK}, only=["DC001", "DC003"])
    assert [(f.rule, f.client.line, f.severity) for f in result.findings if f.client.line == 18] == [("DC003", 18, "error")]


def test_25c_f1_twin_a_flag_stored_elsewhere_too_says_nothing(tmp_path):
    restored = _WATERMARK + "\n\ndef force_legacy():\n    global USE_LEGACY\n    USE_LEGACY = True\n"
    assert _found(tmp_path, _SAMPLER_VLLM, restored, "DC003") == [(18, "error")]


# 25e F1 (maxtext's vLLM adapter at 0.26.0): `vllm_config.sharding_config` in a model that runs only under
# tpu-inference, whose platform's `check_and_update_config` sets it on every VllmConfig. vLLM hands that object to
# each platform plugin's hook before anything runs; with an unread package imported, the member may be there.
_HOOK_VLLM = {"vllm/__init__.py": "", "vllm/config/__init__.py": "from vllm.config.vllm import VllmConfig\n",
              "vllm/config/vllm.py": "class VllmConfig:\n    def __init__(self, model_config=None):\n"
                                     "        self.model_config = model_config\n",
              "vllm/platforms/__init__.py": "",
              "vllm/platforms/interface.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                             "    from vllm.config import VllmConfig\n\n\nclass Platform:\n"
                                             "    @classmethod\n    def check_and_update_config(cls, vllm_config: "
                                             "\"VllmConfig\") -> None:\n        pass\n"}
_ADAPTER = '''\
from tpu_plugin.models import register_model
from vllm.config import VllmConfig


def generate_config(vllm_config: VllmConfig):
    return vllm_config.sharding_config
'''


def _dc006_unknowns(tmp_path, client: str, vllm: dict) -> list[tuple[int, str]]:
    return _found(tmp_path, vllm, client, "DC006", unknowns=True)


def test_25e_f1_what_platform_plugins_are_handed_may_carry_their_members(tmp_path):
    assert _dc006_unknowns(tmp_path, _ADAPTER, _HOOK_VLLM) == [(6, "unknown")]


def test_25e_f1_twin_no_unread_package_no_plugin(tmp_path):
    assert _dc006_unknowns(tmp_path, _ADAPTER.replace("from tpu_plugin.models import register_model\n", ""),
                           _HOOK_VLLM) == [(5, "error")]


def test_25e_f1_twin_a_class_the_hook_is_not_handed(tmp_path):
    other = {**_HOOK_VLLM, "vllm/platforms/interface.py": _HOOK_VLLM["vllm/platforms/interface.py"].replace(
        'vllm_config: "VllmConfig"', "vllm_config: object")}
    assert _dc006_unknowns(tmp_path, _ADAPTER, other) == [(6, "error")]


# 25f F3: `except ModuleNotFoundError:` catches a missing module only; a name its module lacks raises the plain
# ImportError, which runs the next handler (or escapes). The fallback taken was the first handler naming any import
# error, and a lone `except ModuleNotFoundError:` made the missing name a guarded warning.
_XY_VLLM = {"vllm/__init__.py": "", "vllm/x/__init__.py": "Kept = 1\n",
            "vllm/y/__init__.py": "class OldCls:\n    def __init__(self):\n        pass\n"}
_TWO_HANDLERS = '''\
try:
    from vllm.x import NewCls
except ModuleNotFoundError:
    from vllm.y import OldCls as NewCls
except ImportError:
    class NewCls:
        def __init__(self, size):
            self.size = size

NewCls(size=4)
'''


def test_25f_f3_a_missing_name_runs_the_import_error_handler_not_the_module_one(tmp_path):
    assert _found(tmp_path, _XY_VLLM, _TWO_HANDLERS, "DC003") == []


def test_25f_f3_twin_a_missing_module_runs_the_module_handler(tmp_path):
    moved = _TWO_HANDLERS.replace("from vllm.x import NewCls", "from vllm.gone import NewCls")
    assert _found(tmp_path, _XY_VLLM, moved, "DC003") == [(10, "error")]


def test_25f_f3_a_lone_module_handler_does_not_guard_a_missing_name(tmp_path):
    lone = "try:\n    from vllm.x import Gone\nexcept ModuleNotFoundError:\n    Gone = None\n"
    assert _found(tmp_path, _XY_VLLM, lone, "DC002") == [(2, "error")]
    assert _found(tmp_path / "twin", _XY_VLLM, lone.replace("ModuleNotFoundError", "ImportError"), "DC002") \
        == [(2, "warning")]
