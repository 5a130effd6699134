"""Nineteenth session (batch 23b, breakages users reported): readings that lowered a certain failure to a warning.

R1 (NeMo-RL at vLLM 0.29.0): `from vllm.entrypoints.openai.engine.protocol import ErrorResponse` in a function, and
elsewhere `logging.getLogger("vllm.entrypoints.openai.engine.protocol").setLevel(...)`. The module's name as a string
was read as a possible registration (`sys.modules[...] = ...`), and the ModuleNotFoundError became a warning; naming a
logger registers nothing.
R4 (unsloth_zoo 2025.7.6 at 0.8.5): `if importlib.util.find_spec("vllm") is not None:` around an import of a module
0.8.5 lacks was read as a vLLM version check; it asks only whether vLLM is installed, true wherever a release is scanned.
"""

from __future__ import annotations

from scan.helpers import scan_against_own, scan_trees

_VLLM = {"vllm/__init__.py": "", "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/openai/__init__.py": "",
         "vllm/entrypoints/openai/protocol.py": "class ErrorResponse:\n    pass\n"}


def _dc001(tmp_path, client: str):
    result = scan_trees(tmp_path, _VLLM, {"plug/__init__.py": "", "plug/server.py": client}, only=["DC001"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings]


_R1 = ("import logging\n\n\ndef setup(app):\n    from vllm.entrypoints.openai.engine.protocol import ErrorResponse\n\n"
       "    logging.getLogger('vllm.entrypoints.openai.engine.protocol').setLevel(40)\n    return ErrorResponse\n")


def test_r1_a_logger_named_after_the_module_registers_nothing(tmp_path):
    assert _dc001(tmp_path, _R1) == [(5, "error")]


def test_r1_a_logger_function_imported_under_another_name_too(tmp_path):
    aliased = _R1.replace("import logging\n", "from logging import getLogger as _getLogger\n") \
        .replace("logging.getLogger(", "_getLogger(")
    assert _dc001(tmp_path, aliased) == [(5, "error")]


def test_r1_twin_a_sys_modules_entry_may_register_it(tmp_path):
    registered = _R1.replace("logging.getLogger('vllm.entrypoints.openai.engine.protocol').setLevel(40)",
                             "import sys\n    sys.modules['vllm.entrypoints.openai.engine.protocol'] = app")
    assert _dc001(tmp_path, registered) == [(5, "warning")]


_R4 = ("import importlib.util\n\nif importlib.util.find_spec('vllm') is not None:\n"
       "    import vllm.model_executor.bitsandbytes_loader\n")


def test_r4_find_spec_of_vllm_itself_is_no_version_check(tmp_path):
    assert _dc001(tmp_path, _R4) == [(4, "error")]


def test_r4_twin_find_spec_of_a_vllm_module_is_one(tmp_path):
    probed = _R4.replace("find_spec('vllm')", "find_spec('vllm.model_executor.bitsandbytes_loader')")
    assert _dc001(tmp_path, probed) == [(4, "warning")]


# M2 (23a, turboquant-amd at vLLM 0.33.0): `orig = attn_utils._reshape_kv_cache; attn_utils._reshape_kv_cache =
# wrap(orig)`, the usual monkey-patch. The client's store was taken as making the name exist, but the read runs first
# and raises AttributeError where vLLM no longer has it.
_M2_VLLM = {"vllm/__init__.py": "", "vllm/attn_utils.py": "def other():\n    return 1\n",
            "vllm/backend.py": "class TritonBackend:\n    @staticmethod\n    def get_name():\n        return 'triton'\n"}
_M2 = ("from vllm import attn_utils\nfrom vllm.backend import TritonBackend\n\n\ndef _wrap(fn):\n    return fn\n\n\n"
       "def apply_patch():\n    orig = attn_utils._reshape_kv_cache\n    attn_utils._reshape_kv_cache = _wrap(orig)\n"
       "    orig_shape = TritonBackend.get_kv_cache_shape\n    TritonBackend.get_kv_cache_shape = staticmethod(_wrap(orig_shape))\n")


def _m2(tmp_path, client: str = _M2, vllm: dict = _M2_VLLM):
    result = scan_trees(tmp_path, vllm, {"plug/__init__.py": "", "plug/patch.py": client}, only=["DC002", "DC006"])
    assert not result.internal_errors
    return sorted((f.rule, f.client.line, f.severity) for f in result.findings)


def test_m2_the_read_saved_before_the_clients_own_store_is_vllms(tmp_path):
    assert _m2(tmp_path) == [("DC002", 10, "error"), ("DC006", 12, "error")]


def test_m2_twin_a_read_after_the_store_is_the_clients(tmp_path):
    after = _M2.replace("    orig = attn_utils._reshape_kv_cache\n    attn_utils._reshape_kv_cache = _wrap(orig)\n",
                        "    attn_utils._reshape_kv_cache = _wrap(len)\n    orig = attn_utils._reshape_kv_cache\n")
    assert _m2(tmp_path, after) == [("DC006", 12, "error")]


def test_m2_twin_a_name_the_file_also_sets_elsewhere_is_the_clients(tmp_path):
    # set up at import, bumped later: the read in the function runs after the first store
    twice = _M2 + "\n\nattn_utils._reshape_kv_cache = _wrap(len)\nTritonBackend.get_kv_cache_shape = staticmethod(len)\n"
    assert _m2(tmp_path, twice) == []


def test_m2_twin_a_name_vllm_still_has_is_no_finding(tmp_path):
    has = dict(_M2_VLLM, **{"vllm/attn_utils.py": "def _reshape_kv_cache(t):\n    return t\n"})
    assert _m2(tmp_path, vllm=has) == [("DC006", 12, "error")]


# M1 (23a, VLLM-TurboQuant-SM120 at vLLM 0.33.0): a backend's `@staticmethod get_kv_cache_shape` override; 0.19.0's
# `TritonAttentionBackend` had it and vLLM called it on backend classes, 0.33.0 neither has nor calls it. DC117 read
# plain methods only, so the silently dead override went unreported.
def _backend_tree(has_it: bool, caller: str) -> dict:
    method = ("    @staticmethod\n    def get_kv_cache_shape(num_blocks, block_size, heads, size):\n"
              "        return (num_blocks, block_size)\n\n") if has_it else ""
    return {"vllm/__init__.py": "", "vllm/backend.py":
            "class TritonAttentionBackend:\n    @staticmethod\n    def get_name():\n        return 'TRITON'\n\n" + method
            + f"\n\ndef allocate(backend: type[TritonAttentionBackend], n):\n    return {caller}\n"}


_M1 = ("from vllm.backend import TritonAttentionBackend\n\n\nclass MyBackend(TritonAttentionBackend):\n"
       "    @staticmethod\n    def get_name():\n        return 'CUSTOM'\n\n"
       "    @staticmethod\n    def get_kv_cache_shape(num_blocks, block_size, heads, size):\n        return (num_blocks, 2, block_size)\n")


def _m1(tmp_path, caller: str = "backend.get_name()"):
    result = scan_against_own(tmp_path, _backend_tree(True, "backend.get_kv_cache_shape(n, 16, 8, 64)"), "0.19.0",
                              _backend_tree(False, caller), {"plug/__init__.py": "", "plug/backend.py": _M1},
                              only=["DC117"], version="0.33.0")
    return [(f.client.line, f.severity) for f in result.findings]


def test_m1_a_static_override_vllm_neither_has_nor_calls_is_an_orphan(tmp_path):
    assert _m1(tmp_path) == [(10, "warning")]


def test_m1_twin_a_static_hook_vllm_still_calls_on_the_backend_class(tmp_path):
    assert _m1(tmp_path, "backend.get_kv_cache_shape(n, 16, 8, 64)") == []


# F1 (23a, pddisagg at 0.25.0): four replacement files of an installed tpu-inference, read as the client. They read
# `self.vllm_config.sharding_config`, which tpu-inference's platform (not in the tree) sets; the files import
# `tpu_inference.layers.common.sharding`, a subpackage the tree lacks, so the rest of the package may set it.
_F1_VLLM = {"vllm/__init__.py": "", "vllm/config.py": "class VllmConfig:\n    def __init__(self):\n        self.model_config = None\n"}
_F1_RUNNER = ("from vllm.config import VllmConfig\nfrom tpu_inference.layers.common.sharding import ShardingConfigManager\n\n\n"
              "class TPUModelRunner:\n    def __init__(self, vllm_config: VllmConfig):\n        self.vllm_config = vllm_config\n"
              "        self.dp_size = self.vllm_config.sharding_config.total_dp_size\n")


def _f1(tmp_path, files: dict):
    result = scan_trees(tmp_path, _F1_VLLM, files, only=["DC006"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings], [u.message for u in result.unknown]


def test_f1_a_tree_holding_part_of_its_package_makes_a_missing_member_unknown(tmp_path):
    findings, unknown = _f1(tmp_path, {"tpu_inference/__init__.py": "", "tpu_inference/runner/__init__.py": "",
                                       "tpu_inference/runner/tpu_runner.py": _F1_RUNNER})
    assert findings == [] and len(unknown) == 1
    assert "imports `tpu_inference.layers.common.sharding`" in unknown[0] and "'sharding_config'" in unknown[0]


def test_f1_twin_the_whole_package_here_keeps_the_error(tmp_path):
    whole = {"tpu_inference/__init__.py": "", "tpu_inference/runner/__init__.py": "",
             "tpu_inference/runner/tpu_runner.py": _F1_RUNNER, "tpu_inference/layers/__init__.py": "",
             "tpu_inference/layers/common/__init__.py": "",
             "tpu_inference/layers/common/sharding.py": "class ShardingConfigManager:\n    pass\n"}
    findings, unknown = _f1(tmp_path, whole)
    assert findings == [(8, "error")] and unknown == []


def test_f1_twin_a_generated_module_right_under_the_package_is_no_part_missing(tmp_path):
    # `from tpu_inference._version import v` (setuptools-scm writes it at build time): the package is here
    runner = _F1_RUNNER.replace("from tpu_inference.layers.common.sharding import ShardingConfigManager",
                                "from tpu_inference._version import version")
    findings, _ = _f1(tmp_path, {"tpu_inference/__init__.py": "", "tpu_inference/runner/__init__.py": "",
                                 "tpu_inference/runner/tpu_runner.py": runner})
    assert findings == [(8, "error")]


# 23c's F2 (vLLM-Kunlun at 0.33.0): the client's `MRotaryEmbedding` subclass overrides `forward_cuda(positions, query,
# key=None)`; vLLM calls `self.forward_cuda(positions, query, key, offsets)` only inside `forward_xpu`, which
# `CustomOp.forward` dispatches to on Intel XPU alone. An error there claimed certainty about the platform.
def _rope(caller: str, args: str) -> dict:
    return {"vllm/__init__.py": "", "vllm/custom_op.py": "class CustomOp:\n    def forward(self, *args):\n        return args\n",
            "vllm/mrope.py": "from vllm.custom_op import CustomOp\n\n\nclass MRotaryEmbedding(CustomOp):\n"
                             "    def forward_cuda(self, positions, query, key=None, offsets=None):\n        return query\n\n"
                             f"    def {caller}(self, positions, query, key=None, offsets=None):\n"
                             f"        return self.forward_cuda({args})\n"}


_ROPE_CLIENT = ("from vllm.mrope import MRotaryEmbedding\n\n\nclass KunlunRope(MRotaryEmbedding):\n"
                "    def forward_cuda(self, positions, query, key=None):\n        return query\n")


def _f2(tmp_path, caller: str):
    result = scan_against_own(tmp_path, _rope(caller, "positions, query, key"), "0.11.0",
                              _rope(caller, "positions, query, key, offsets"), {"plug/__init__.py": "", "plug/rope.py": _ROPE_CLIENT},
                              only=["DC109"], version="0.33.0")
    return [(f.client.line, f.severity) for f in result.findings]


def test_f2_a_call_in_a_customops_per_platform_method_is_a_warning(tmp_path):
    assert _f2(tmp_path, "forward_xpu") == [(5, "warning")]


def test_f2_twin_the_same_call_on_every_platforms_path_is_an_error(tmp_path):
    assert _f2(tmp_path, "forward_native") == [(5, "error")]
