"""Twenty-fourth session: batch 29's findings and the leftovers of batch 28, on the real releases they came from.

Each case is reduced from a real client's line; the expected lines and conditions are read from the release's own
sources (`source_line`), never written in.
"""

from __future__ import annotations

from conftest import source_line, vllm_sources
from scan.helpers import scan_at_release


def _scan(tmp_path, files: dict[str, str], version: str, only: list[str], client_vllm: str | None = None):
    return scan_at_release(tmp_path, files, version, only, client_vllm)


# 28b M1: nano-grpo's vllm_utils.py, Language-Neurons-Alignment's activation.py (and four other research clients) reach
# the model by `llm.llm_engine.model_executor.driver_worker.model_runner.model`; V1's LLMEngine sets `model_executor`
# only when `not multiprocess_mode`, and LLM builds it multiprocess unless VLLM_ENABLE_V1_MULTIPROCESSING=0.
_REACH_THE_MODEL = {"grab.py": """\
    from vllm import LLM

    llm = LLM(model="Qwen/Qwen2.5-0.5B")
    model = llm.llm_engine.model_executor.driver_worker.model_runner.model
"""}


def test_28b_m1_v1_llm_engine_model_executor_is_a_warning_naming_its_condition(tmp_path):
    result = _scan(tmp_path, _REACH_THE_MODEL, "0.34.0", ["DC006"])
    assert not result.internal_errors
    [f] = result.findings
    assert (f.client.line, f.severity) == (4, "warning")
    assert f.symbol == "vllm.v1.engine.llm_engine.LLMEngine.model_executor"
    line = source_line(vllm_sources("0.34.0"), "vllm/v1/engine/llm_engine.py", "if not multiprocess_mode:")
    assert f"only when `not multiprocess_mode` (the `if` on line {line} of its `__init__`)" in f.message


def test_28b_m1_twin_a_client_that_handles_the_absence_gets_nothing(tmp_path):
    guarded = {"grab.py": """\
        from vllm import LLM

        llm = LLM(model="Qwen/Qwen2.5-0.5B")
        if hasattr(llm.llm_engine, "model_executor"):
            model = llm.llm_engine.model_executor.driver_worker.model_runner.model
    """}
    result = _scan(tmp_path, guarded, "0.34.0", ["DC006"])
    assert result.findings == [] and not result.internal_errors


# 29b R1 (vLLM-Prefill-Decode-Scheduler-Playground, pinned to vllm==0.9.1): two Scheduler subclasses override
# `schedule(self)`; from 0.24.0 vLLM's engine core passes it an argument, so both raise TypeError. Only the first
# subclass was reported: the table of members client subclasses add keeps one class per member.
_OVERRIDE = "class {name}(Scheduler):\n    def schedule(self):\n        return super().schedule()\n"
_IMPORT = "from vllm.v1.core.sched.scheduler import Scheduler\n\n\n"


def test_29b_r1_every_client_subclass_with_the_outdated_override_is_reported(tmp_path):
    one_file = {"sched.py": _IMPORT + _OVERRIDE.format(name="A") + "\n\n" + _OVERRIDE.format(name="B")}
    two_files = {"a.py": _IMPORT + _OVERRIDE.format(name="A"), "b.py": _IMPORT + _OVERRIDE.format(name="B")}
    call = source_line(vllm_sources("0.34.0"), "vllm/v1/engine/core.py", "self.scheduler.schedule(")
    for i, (files, expected) in enumerate(((one_file, [("sched.py", 5), ("sched.py", 10)]),
                                           (two_files, [("a.py", 5), ("b.py", 5)]))):
        result = _scan(tmp_path / str(i), files, "0.34.0", ["DC109"], client_vllm="0.11.0")
        assert not result.internal_errors
        assert [(f.client.path, f.client.line, f.severity) for f in result.findings] == \
            [(path, line, "error") for path, line in expected]
        assert all(f"vllm/v1/engine/core.py:{call}" in f.message for f in result.findings)


# 29c M1 (flute-kernel 0.4.2, flute/integrations/vllm.py, pinned to vllm==0.7.2): `QUANTIZATION_METHODS.keys()` and
# `QUANTIZATION_METHODS["flute"] = ...`, on a name vLLM made a `list[str]` in 0.6.6: the patch fails with AttributeError on
# every release since. A member of a module-level value vLLM builds once from a literal or a builtin's call is the
# builtin type's, which Python lists.
_FLUTE = {"flute/integrations/vllm.py": """\
    def patch_vllm(config_cls) -> None:
        from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS

        if "flute" in QUANTIZATION_METHODS.keys():
            return
        QUANTIZATION_METHODS["flute"] = config_cls
"""}


def test_29c_m1_a_dict_method_on_vllms_quantization_list_is_an_error(tmp_path):
    result = _scan(tmp_path, _FLUTE, "0.33.0", ["DC002"])
    assert not result.internal_errors
    [f] = result.findings
    assert (f.client.line, f.severity, f.rule) == (4, "error", "DC002")
    line = source_line(vllm_sources("0.33.0"), "vllm/model_executor/layers/quantization/__init__.py",
                       "QUANTIZATION_METHODS: list[str] =")
    assert f"`QUANTIZATION_METHODS` is a `list` in vLLM 0.33.0 (vllm/model_executor/layers/quantization/__init__.py:{line})" \
        in f.message and "no attribute 'keys'" in f.message


_TABLES = {
    "vllm/__init__.py": "",
    "vllm/tables.py": """\
        METHODS = ["a", "b"]
        REGISTRY = {"a": 1}
        NAMES = list(REGISTRY)
        LATER = []
        SET_ELSEWHERE = []


        def load():
            global LATER
            LATER = {"x": 1}
    """,
    "vllm/other.py": """\
        from vllm import tables

        tables.SET_ELSEWHERE = {}
    """,
}


def test_29c_m1_members_of_builtin_values_are_checked_where_vllm_keeps_the_type(tmp_path):
    from scan.helpers import scan_trees

    client = {"c.py": """\
        import vllm.tables as t
        from vllm.tables import LATER, METHODS, NAMES, REGISTRY, SET_ELSEWHERE


        def f():
            METHODS.append("c")
            REGISTRY.keys()
            METHODS.keys()
            NAMES.items()
            t.REGISTRY.append(1)
            LATER.keys()
            SET_ELSEWHERE.keys()
            METHODS.__len__()
    """}
    result = scan_trees(tmp_path, _TABLES, client, only=["DC002"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity, f.symbol) for f in result.findings] == [
        (8, "error", "vllm.tables.METHODS.keys"), (9, "error", "vllm.tables.NAMES.items"),
        (10, "error", "vllm.tables.REGISTRY.append")]


def test_29c_m1_twin_a_value_the_client_rebinds_on_vllms_module_is_its_own(tmp_path):
    from scan.helpers import scan_trees

    client = {"c.py": """\
        import vllm.tables
        from vllm.tables import METHODS

        vllm.tables.METHODS = {}


        def f():
            return METHODS.keys()
    """}
    result = scan_trees(tmp_path, _TABLES, client, only=["DC002"])
    assert result.findings == [] and not result.internal_errors


# 29e M1 (tom-doerr/llm's patch scripts, at the vLLM 0.16.0 their vendored files match): a module loaded by its whole
# name, `importlib.import_module("vllm.model_executor.models.qwen3_5")`, which 0.16.0 lacks (first in 0.17.0), fails as
# `import vllm.model_executor.models.qwen3_5` does; under a try catching ImportError it is a warning.
def test_29e_m1_a_module_import_module_loads_by_a_constant_name_is_checked(tmp_path):
    files = {"patches/load.py": """\
        import importlib
        import importlib as il

        mod = importlib.import_module("vllm.model_executor.models.qwen3_5")


        def optional():
            try:
                return il.import_module("vllm.model_executor.models.qwen3_5")
            except ImportError:
                return None


        def present():
            return importlib.import_module("vllm.model_executor.models.qwen3")


        def relative():
            return importlib.import_module(".qwen3_5", package="vllm.model_executor.models")
    """}
    result = _scan(tmp_path, files, "0.16.0", ["DC001"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity, f.symbol, f.fix) for f in result.findings] == [
        (4, "error", "vllm.model_executor.models.qwen3_5", None),
        (9, "warning", "vllm.model_executor.models.qwen3_5", None)]
    assert "ModuleNotFoundError at import time" in result.findings[0].message


def test_29e_m1_twin_an_import_module_that_is_not_importlibs_loads_nothing(tmp_path):
    files = {"patches/load.py": """\
        def import_module(name):
            return name

        mod = import_module("vllm.model_executor.models.qwen3_5")
    """}
    assert _scan(tmp_path, files, "0.16.0", ["DC001"]).findings == []


# 29d (the self-scan oracle at 0.18.0 / 0.26.0 / 0.30.0 / 0.34.0): warnings on vLLM's own code that runs.
# R1: bailing_moe_v3's `_is_block_fp8_config(qc) -> TypeGuard[Fp8Config]`, then `if not _is_block_fp8_config(qc):
# return` and reads of Fp8Config's fields. R2: mooncake's coordinator, `isinstance(spec := _unwrap_spec(...), MambaSpec)
# and spec.mamba_cache_mode`. Twins: the same reads with no test stay warnings; a TypeGuard's False proves nothing.
_NARROWED = {"narrow.py": """\
    from typing import TypeGuard

    from vllm.model_executor.layers.quantization.base_config import QuantizationConfig
    from vllm.model_executor.layers.quantization.fp8 import Fp8Config
    from vllm.v1.kv_cache_interface import KVCacheGroupSpec, KVCacheSpec, MambaSpec


    def _is_block_fp8_config(quant_config: QuantizationConfig | None) -> TypeGuard[Fp8Config]:
        return isinstance(quant_config, Fp8Config) and quant_config.weight_block_size is not None


    def via_typeguard(quant_config: QuantizationConfig):
        if not _is_block_fp8_config(quant_config):
            return None
        return quant_config.weight_block_size


    def positive(quant_config: QuantizationConfig):
        if _is_block_fp8_config(quant_config):
            return quant_config.ignored_layers
        return None


    def untested(quant_config: QuantizationConfig):
        return quant_config.weight_block_size


    def _unwrap(spec: KVCacheSpec) -> KVCacheSpec:
        return spec


    def walrus(groups: list[KVCacheGroupSpec]) -> bool:
        return any(isinstance(spec := _unwrap(g.kv_cache_spec), MambaSpec) and spec.mamba_cache_mode == "align"
                   for g in groups)


    def unguarded(g: KVCacheGroupSpec) -> bool:
        return _unwrap(g.kv_cache_spec).mamba_cache_mode == "align"
"""}


def test_29d_r1_r2_a_typeguard_and_a_walrus_narrow_what_they_test(tmp_path):
    result = _scan(tmp_path, _NARROWED, "0.34.0", ["DC006"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity, f.symbol.rsplit(".", 1)[-1]) for f in result.findings] == [
        (25, "warning", "weight_block_size"), (38, "warning", "mamba_cache_mode")]


# R3: 0.34.0's extract_hidden_states_config.py, a speculator config class naming the method it registers
# (`base_method = "extract_hidden_states"`) and its class's dotted path: no engine is configured there. Twin: an LLM
# given the method with prefix caching on (the default) keeps its warning.
def test_29d_r3_a_class_declaring_the_hidden_states_path_configures_no_engine(tmp_path):
    files = {"spec_cfg.py": """\
        from vllm.v1.worker.gpu.spec_decode.speculator_config import SpeculatorConfig


        class MySpeculatorConfig(SpeculatorConfig):
            base_method = "extract_hidden_states"
            speculator_class = (
                "my_plugin.extract_hidden_states."
                "MySpeculator"
            )


        SPECULATOR_CLASS = "my_plugin.extract_hidden_states.MySpeculator"
    """, "engine.py": """\
        from vllm import LLM


        def build():
            return LLM(model="m", speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1})
    """}
    result = _scan(tmp_path, files, "0.34.0", ["DC102"])
    assert [(f.client.path, f.client.line) for f in result.findings] == [("engine.py", 5)]


# 29d M1: vLLM 0.30.0's kpool indexer calls `xpu_ops.top_k_per_row_prefill`, which its `xpu_ops` class lacks (a latent bug,
# reached on XPU only), after `if not isinstance(attn_metadata, dict): return`: a test against Python's own `dict` picks
# data, not the release, so the certain AttributeError stays an error. Twin: a test against a vLLM class still guards.
def test_29d_m1_an_isinstance_test_of_a_builtin_type_guards_nothing(tmp_path):
    files = {"indexer.py": """\
        from vllm._xpu_ops import xpu_ops
        from vllm.v1.kv_cache_interface import MambaSpec


        def after_dict_test(attn_metadata, logits):
            if not isinstance(attn_metadata, dict):
                return None
            return xpu_ops.top_k_per_row_prefill(logits)


        def after_class_test(spec, logits):
            if not isinstance(spec, MambaSpec):
                return None
            return xpu_ops.top_k_per_row_prefill(logits)
    """}
    result = _scan(tmp_path, files, "0.34.0", ["DC006"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity) for f in result.findings] == [(8, "error"), (14, "warning")]


# 29b R2 (vllm-server-introspection's config_plugin.py): `cfg = getattr(vllm_config, "kv_transfer_config", None)`, a None
# check, then reads of `kv_buffer_size` / `kv_ip`, fields KVTransferConfig lost in 0.32.0: the plugin's `init_state`
# fails whenever a KV connector is configured. A builtin getattr of a literal name holds that member. Twins: a field the
# config still has; a `getattr` the file defines itself.
def test_29b_r2_what_getattr_of_a_literal_name_returns_is_that_member(tmp_path):
    files = {"plugin.py": """\
        from vllm.config import VllmConfig


        def via_getattr(vllm_config: VllmConfig):
            cfg = getattr(vllm_config, "kv_transfer_config", None)
            if cfg is None:
                return None
            return cfg.kv_buffer_size, cfg.kv_buffer_device
    """, "own.py": """\
        from vllm.config import VllmConfig


        def getattr(obj, name, default=None):
            return default


        def via_own(vllm_config: VllmConfig):
            return getattr(vllm_config, "kv_transfer_config", None).kv_buffer_size
    """}
    result = _scan(tmp_path, files, "0.34.0", ["DC006"])
    assert not result.internal_errors
    assert [(f.client.path, f.client.line, f.severity, f.symbol.rsplit(".", 1)[-1]) for f in result.findings] == [
        ("plugin.py", 8, "error", "kv_buffer_size")]


# 29h M1 (kv-cache-learned's vllm_patch/api_server_wrapper.py): `from vllm.entrypoints.openai.api_server import main`;
# from 0.32.0 that module binds `main` only under `if __name__ == "__main__":`, which an importer never runs. Twin: a name
# the module binds at its top (`run_server`) imports.
def test_29h_m1_a_name_bound_only_when_the_module_runs_as_a_script_cannot_be_imported(tmp_path):
    files = {"serve.py": """\
        from vllm.entrypoints.openai.api_server import main
        from vllm.entrypoints.openai.api_server import run_server

        if __name__ == "__main__":
            main()
    """}
    result = _scan(tmp_path, files, "0.34.0", ["DC002"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity, f.symbol) for f in result.findings] == [
        (1, "error", "vllm.entrypoints.openai.api_server.main")]
    guard = source_line(vllm_sources("0.34.0"), "vllm/entrypoints/openai/api_server.py", 'if __name__ == "__main__":')
    assert guard > source_line(vllm_sources("0.34.0"), "vllm/entrypoints/openai/api_server.py", "__all__ = [")


# 29g F1 (LUFFY, laid out as `luffy/verl/setup.py` + `luffy/verl/verl/...`, scanned from `luffy/`): a test script imports
# `verl.utils...`, which is the project folder's own package; it was taken for a package only partly in the tree, and
# every DC006 error in the client became "cannot tell". The folder holding a setup.py is where its package's names start.
def test_29g_f1_a_project_folder_below_the_root_names_its_own_package(tmp_path):
    files = {
        "mypkg/setup.py": 'from setuptools import setup\n\nsetup(name="mypkg", install_requires=["vllm==0.6.3"])\n',
        "mypkg/mypkg/__init__.py": "",
        "mypkg/mypkg/utils/__init__.py": "",
        "mypkg/mypkg/utils/distributed.py": "def init_group():\n    return None\n",
        "mypkg/mypkg/worker.py": """\
            from vllm.config import CacheConfig


            class Worker:
                def __init__(self, cache_config: CacheConfig):
                    self.cache_config = cache_config

                def num_cpu_blocks(self, block_bytes: int) -> int:
                    return int(self.cache_config.swap_space_bytes // block_bytes)
        """,
        "mypkg/tests/rollout/run_fsdp_vllm.py": """\
            from vllm import SamplingParams

            from mypkg.utils.distributed import init_group

            init_group()
            params = SamplingParams(max_tokens=8)
        """,
    }
    result = _scan(tmp_path, files, "0.34.0", ["DC006"])
    assert not result.internal_errors and result.unknown == []
    assert [(f.client.path, f.client.line, f.severity) for f in result.findings] == [("mypkg/mypkg/worker.py", 9, "error")]


def test_29f_d1_a_hedged_override_warning_is_said_once_not_for_every_subclass(tmp_path):
    # without the client's own vLLM the call may be old: a warning, said for the first subclass only (the self-scans'
    # DC109 warnings had doubled with every subclass repeating its base's)
    one_file = {"sched.py": _IMPORT + _OVERRIDE.format(name="A") + "\n\n" + _OVERRIDE.format(name="B")}
    result = _scan(tmp_path, one_file, "0.34.0", ["DC109"])
    assert [(f.client.path, f.client.line, f.severity) for f in result.findings] == [("sched.py", 5, "warning")]


# 29f A2 (vLLM 0.34.0's own gpu model runner): `ModelState.__init__` stores `self.supports_mm_inputs = encoder_cache is
# not None` and sets `encoder_runner` only `if encoder_cache is not None:`; a read under a test of that flag is made where
# the attribute is there. Twin: the same read with no test keeps its warning.
def test_29f_a2_a_read_under_the_flag_recording_the_condition_is_no_finding(tmp_path):
    files = {"runner.py": """\
        from vllm.v1.worker.gpu.model_states.interface import ModelState


        def release(model_state: ModelState) -> None:
            if model_state.supports_mm_inputs:
                model_state.encoder_runner.clear()


        def capture(model_state: ModelState) -> bool:
            return model_state.supports_mm_inputs and model_state.encoder_runner.has_cudagraph()


        def control(model_state: ModelState) -> None:
            model_state.encoder_runner.clear()
    """}
    result = _scan(tmp_path, files, "0.34.0", ["DC006"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity, f.symbol.rsplit(".", 1)[-1]) for f in result.findings] == [
        (14, "warning", "encoder_runner")]
    flag = source_line(vllm_sources("0.34.0"), "vllm/v1/worker/gpu/model_states/interface.py", "self.supports_mm_inputs =")
    assert "encoder_cache is not None" in result.findings[0].message and flag


# 29g M2 (R1-Searcher's OpenRLHF-RAG): `assert vllm.__version__ >= "0.4.2"` compares strings, and "0.34.0" < "0.4.2": the
# package refuses 0.34.0 when it is imported, as an `if ...: raise` does (DC112). Twins: an assert the release passes
# ("0.34.0" >= "0.10.0" as strings too), and one about something else.
def test_29g_m2_a_package_init_assert_the_version_fails_refuses_the_release(tmp_path):
    for i, (check, expected) in enumerate(((' >= "0.4.2", "needs vLLM >= 0.4.2"', [("pkg/__init__.py", 3, "error")]),
                                           (' >= "0.10.0"', []))):
        files = {"pkg/__init__.py": f"import vllm\n\nassert vllm.__version__{check}\nassert vllm is not None\n",
                 "pkg/engine.py": "from vllm import SamplingParams\n\nPARAMS = SamplingParams(max_tokens=8)\n"}
        result = _scan(tmp_path / str(i), files, "0.34.0", ["DC112"])
        assert not result.internal_errors
        assert [(f.client.path, f.client.line, f.severity) for f in result.findings] == expected
