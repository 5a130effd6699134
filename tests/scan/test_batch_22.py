"""Eighteenth session (batch 22): readings that real clients not tuned for showed wrong.

R1 (22a, AlphaApollo at vLLM 0.8.5): `from vllm.utils import is_hip` then `is_hip()`. 0.8.5 has no `vllm.utils.is_hip`;
DC002 named `vllm.attention.backends.mla.common` as its new home, where `is_hip = current_platform.is_rocm()` is a
flag, and move-import pointed the import there: the call then raised `TypeError: 'bool' object is not callable`. A
module-level value is a new home for a name the file calls only when vLLM's own code calls it too.
"""

from __future__ import annotations

from conftest import run_cli
from scan.helpers import scan_trees, vllm_tree, write_tree

_R1_VLLM = {"vllm/__init__.py": "", "vllm/utils.py": "def cdiv(a, b):\n    return -(a // -b)\n",
            "vllm/platforms.py": "class _P:\n    def is_rocm(self) -> bool:\n        return False\n\n\ncurrent_platform = _P()\n",
            "vllm/mla.py": "from vllm.platforms import current_platform\n\nis_hip = current_platform.is_rocm()\n\n\n"
                           "def block():\n    return 8 if is_hip else 64\n"}
_R1_CLIENT = {"plug/__init__.py": "",
              "plug/config.py": "from vllm.utils import is_hip\n\n\ndef fits(fmt):\n    return not is_hip() or fmt != 'bnb'\n"}


def _r1_scan(tmp_path, vllm_files):
    result = scan_trees(tmp_path, vllm_files, _R1_CLIENT, only=["DC002"])
    assert not result.internal_errors
    [finding] = result.findings
    return finding


def test_r1_a_flag_of_the_same_name_is_no_new_home_for_a_called_function(tmp_path):
    finding = _r1_scan(tmp_path, _R1_VLLM)
    assert finding.severity == "error"
    assert "defined in `vllm.mla` now" not in finding.message
    assert "`vllm.mla` has a `is_hip` too, but as a value (`is_hip = current_platform.is_rocm()`, line 3) that " \
           "vLLM's own code never calls, while this file calls the name (line 5)" in finding.message
    # and move-import leaves the import where it is
    vroot, croot = vllm_tree(tmp_path / "v", _R1_VLLM), write_tree(tmp_path / "c", _R1_CLIENT)
    proc = run_cli("fix", "--vllm", str(vroot), "--client", str(croot), "--apply")
    assert (croot / "plug/config.py").read_text() == _R1_CLIENT["plug/config.py"], proc.stdout + proc.stderr


def test_r1_twin_a_value_vllm_calls_is_a_callable_and_still_the_new_home(tmp_path):
    # `is_hip = lru_cache(maxsize=None)(_probe)`: vLLM's own code calls it, so it is a function-like value
    vllm_files = dict(_R1_VLLM, **{"vllm/mla.py": "from functools import lru_cache\n\nis_hip = lru_cache(maxsize=None)(bool)\n\n\n"
                                                  "def block():\n    return 8 if is_hip() else 64\n"})
    finding = _r1_scan(tmp_path, vllm_files)
    # named as its home; `vllm.mla` shares no part with `vllm.utils` and there is no vLLM of the client's own to
    # compare with, so only as a hint, never moved to (26l R1)
    assert "It is defined in `vllm.mla` now. That module is far from the old one" in finding.message and not finding.fix


# M1 (22b's verl #4380, 21b's kvcached): a function the patching function defines and sets onto a vLLM class is that
# class's method, as a module-level one is: `self.lora_config.lora_extra_vocab_size` fails where LoRAConfig lost it.
_M1_VLLM = {"vllm/__init__.py": "",
            "vllm/lora.py": "class LoRAConfig:\n    max_loras: int = 1\n\n\nclass Manager:\n"
                            "    def __init__(self, lora_config: LoRAConfig):\n        self.lora_config = lora_config\n"
                            "        self.vocab_size = 10\n\n    def _load_adapter(self, request):\n        return request\n"}
_M1_BODY = "        return self.vocab_size + self.lora_config.lora_extra_vocab_size\n"


def _m1(tmp_path, client_code: str):
    result = scan_trees(tmp_path, _M1_VLLM, {"plug/__init__.py": "", "plug/hijack.py": client_code}, only=["DC006"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings]


def test_m1_a_nested_function_set_on_a_vllm_class_is_checked_as_its_method(tmp_path):
    code = ("from vllm.lora import Manager\n\n\ndef hijack():\n    def _load_adapter(self, request):\n" + _M1_BODY
            + "\n    Manager._load_adapter = _load_adapter\n")
    assert _m1(tmp_path, code) == [(6, "error")]


def test_m1_a_helper_that_only_forwards_to_setattr_sets_it_too(tmp_path):
    # verl 0.6.1's shape: `do_hijack(Cls, "name", fn)` whose body is `setattr(target_cls, name, fn)`
    code = ("from vllm.lora import Manager\n\n\nclass Hijack:\n    @staticmethod\n    def hijack():\n"
            "        def _load_adapter(self, request):\n    " + _M1_BODY
            + "\n        def do_hijack(target_cls, target_method_name, hooking_method):\n"
              "            setattr(target_cls, target_method_name, hooking_method)\n\n"
              "        do_hijack(Manager, '_load_adapter', _load_adapter)\n")
    assert _m1(tmp_path, code) == [(8, "error")]


def test_m1_twin_a_name_rebound_in_the_patching_function_is_not_read_as_the_def(tmp_path):
    code = ("from vllm.lora import Manager\n\n\ndef hijack(wrap):\n    def _load_adapter(self, request):\n" + _M1_BODY
            + "\n    _load_adapter = wrap(_load_adapter)\n    Manager._load_adapter = _load_adapter\n")
    assert _m1(tmp_path, code) == []


def test_m1_twin_a_helper_doing_more_than_setattr_is_not_read(tmp_path):
    code = ("from vllm.lora import Manager\n\n\ndef hijack(log):\n    def _load_adapter(self, request):\n" + _M1_BODY
            + "\n    def do_hijack(cls, name, fn):\n        if log:\n            setattr(cls, name, fn)\n\n"
              "    do_hijack(Manager, '_load_adapter', _load_adapter)\n")
    assert _m1(tmp_path, code) == []


# M2 (22b's prime-rl PR 1968): `OpenAIServingChatWithTokens(..., log_error_stack=...)` in server.py builds a client
# subclass defined in another file that adds only methods to vLLM's `OpenAIServingChat`: vLLM's constructor runs, and
# 0.18.0's has no `log_error_stack`. The same-file case was read already (WA3).
_M2_VLLM = {"vllm/__init__.py": "",
            "vllm/serving.py": "class OpenAIServingChat:\n    def __init__(self, engine, models, *, request_logger=None):\n"
                               "        self.engine = engine\n"}
_M2_SUB = "from vllm.serving import OpenAIServingChat\n\n\nclass ChatWithTokens(OpenAIServingChat):\n    async def extra(self):\n        return None\n"
# (prime-rl's server.py imports vLLM too; a file that imports no vLLM is not analysed)
_M2_SERVER = "from vllm.serving import OpenAIServingChat\nfrom plug.chat import ChatWithTokens\n\n\ndef init(engine, models, args):\n" \
             "    return ChatWithTokens(engine, models, log_error_stack=args.log_error_stack)\n"


def _m2(tmp_path, sub: str = _M2_SUB, server: str = _M2_SERVER):
    result = scan_trees(tmp_path, _M2_VLLM, {"plug/__init__.py": "", "plug/chat.py": sub, "plug/server.py": server},
                        only=["DC003"])
    assert not result.internal_errors
    return [(f.client.path, f.client.line, f.severity) for f in result.findings]


def test_m2_a_method_only_subclass_from_another_file_builds_with_vllms_constructor(tmp_path):
    assert _m2(tmp_path) == [("plug/server.py", 6, "error")]


def test_m2_twin_a_subclass_with_its_own_init_decides_its_arguments(tmp_path):
    sub = _M2_SUB.replace("    async def extra(self):", "    def __init__(self, *args, log_error_stack=False, **kw):\n"
                                                          "        super().__init__(*args, **kw)\n\n    async def extra(self):")
    assert _m2(tmp_path, sub=sub) == []


def test_m2_twin_a_name_the_file_rebinds_is_not_read_as_the_class(tmp_path):
    server = _M2_SERVER.replace("def init(engine, models, args):\n",
                                "def init(engine, models, args):\n    ChatWithTokens = args.factory\n")
    assert _m2(tmp_path, server=server) == []


# M3 (22b's tpu-inference PR 2962): `manager = TPUManager(...); manager.create_lora_manager(model)` where the client
# subclass inherits `create_lora_manager`, and 0.24.0 made its `vllm_config` required. A built object of a client class
# of the file is read as the class's own `self` is: its own members first, then its vLLM bases'.
_M3_VLLM = {"vllm/__init__.py": "",
            "vllm/lora.py": "class Manager:\n    def __init__(self, n):\n        self.n = n\n\n"
                            "    def create_lora_manager(self, model, vllm_config):\n        return model\n"}
_M3_CLIENT = ("from vllm.lora import Manager\n\n\nclass TPUManager(Manager):\n    def add_dummy_lora(self):\n        return 1\n\n\n"
              "def wrap(model):\n    manager = TPUManager(4)\n    return manager.create_lora_manager(model)\n")


def _m3(tmp_path, client: str = _M3_CLIENT):
    result = scan_trees(tmp_path, _M3_VLLM, {"plug/__init__.py": "", "plug/wrapper.py": client}, only=["DC005"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings]


def test_m3_a_method_a_built_client_object_inherits_from_vllm_is_checked(tmp_path):
    assert _m3(tmp_path) == [(11, "error")]


def test_m3_twin_the_client_classs_own_method_is_what_runs(tmp_path):
    own = _M3_CLIENT.replace("    def add_dummy_lora(self):", "    def create_lora_manager(self, model):\n        return model\n\n"
                                                             "    def add_dummy_lora(self):")
    assert _m3(tmp_path, own) == []


def test_m3_twin_a_class_whose_new_may_hand_back_another_object_is_not_read(tmp_path):
    new = _M3_CLIENT.replace("    def add_dummy_lora(self):", "    def __new__(cls, *args):\n        return object.__new__(cls)\n\n"
                                                             "    def add_dummy_lora(self):")
    assert _m3(tmp_path, new) == []



def test_m3_twin_a_class_the_file_rebinds_at_its_top_is_not_read(tmp_path):
    # `TPUManager = register(TPUManager)`: the call reaches what the decorator-like function handed back
    rebound = _M3_CLIENT.replace("def wrap(model):", "TPUManager = register(TPUManager)\n\n\ndef wrap(model):")
    assert _m3(tmp_path, "from plug.registry import register\n" + rebound) == []

# R2 (22a, Sparrow's vendored sglang at vLLM 0.9.1): `if _is_cuda: from sgl_kernel import awq_dequantize ... else:
# from vllm._custom_ops import awq_dequantize`, then `if hasattr(layer, "qweight"): if _is_cuda: awq_dequantize(a, b,
# c)`. The call under the test that picked the other package's function was reported as "under a hasattr check"; the
# reason is now the binding itself, said before any other guard's.
_R2_VLLM = {"vllm/__init__.py": "", "vllm/_custom_ops.py": "def awq_dequantize(qweight, scales, zeros, split_k_iters, thx, thy):\n"
                                                            "    return qweight\n"}
_R2_CLIENT = ("from plug.platform import is_cuda\n\n_is_cuda = is_cuda()\n\nif _is_cuda:\n    from other_kernels import awq_dequantize\n"
              "else:\n    from vllm._custom_ops import awq_dequantize\n\n\ndef dequant(layer):\n    if hasattr(layer, 'qweight'):\n"
              "        if _is_cuda:\n            return awq_dequantize(layer.qweight, layer.scales, layer.qzeros)\n"
              "        return awq_dequantize(layer.qweight, layer.scales, layer.qzeros, 0, 0, 0)\n    return layer.weight\n")


def test_r2_a_call_under_the_test_that_picked_the_other_binding_says_so(tmp_path):
    result = scan_trees(tmp_path, _R2_VLLM, {"plug/__init__.py": "", "plug/platform.py": "def is_cuda():\n    return True\n",
                                             "plug/model.py": _R2_CLIENT}, only=["DC005"])
    assert {(f.client.line, f.severity) for f in result.findings} == {(14, "warning")}
    for f in result.findings:
        assert "under the test at line 13, the one that binds it to another package's function (or the client's own) " \
               "at line 5: there the name is not vLLM's." in f.message
        assert "hasattr" not in f.message and "handles it" not in f.message


def test_m3_twin_members_the_client_sets_on_its_own_built_object_are_its_own(tmp_path):
    # vllm-omni 0.30.0's benchmark: `output = MixRequestFuncOutput(); setattr(output, "omniinteract_case", case)`
    client = _M3_CLIENT.replace("    return manager.create_lora_manager(model)\n",
                                "    manager.tag = 'tpu'\n    setattr(manager, 'case', model)\n    return manager.tag, manager.n\n")
    result = scan_trees(tmp_path, _M3_VLLM, {"plug/__init__.py": "", "plug/wrapper.py": client}, only=["DC006"])
    assert not result.internal_errors and result.findings == []
    # twin: a member read off it that neither the class nor vLLM's base has is still an error
    client = client.replace("return manager.tag, manager.n", "return manager.tag, manager.missing_member")
    result = scan_trees(tmp_path / "read", _M3_VLLM, {"plug/__init__.py": "", "plug/wrapper.py": client}, only=["DC006"])
    assert [(f.client.line, f.severity) for f in result.findings] == [(13, "error")]


def test_m3_a_client_class_another_file_defines_is_read_the_same_way(tmp_path):
    # tpu-inference's layout: the subclass in lora/lora_manager.py, built and called in models/wrapper.py
    defining = "from vllm.lora import Manager\n\n\nclass TPUManager(Manager):\n    def add_dummy_lora(self):\n        return 1\n"
    using = ("from vllm.lora import Manager\nfrom plug.manager import TPUManager\n\n\ndef wrap(model):\n"
             "    manager = TPUManager(4)\n    manager.tag = 'tpu'\n    return manager.create_lora_manager(model), manager.tag\n")
    files = {"plug/__init__.py": "", "plug/manager.py": defining, "plug/wrapper.py": using}
    result = scan_trees(tmp_path, _M3_VLLM, files, only=["DC005", "DC006"])
    assert [(f.client.path, f.client.line, f.rule, f.severity) for f in result.findings] == [
        ("plug/wrapper.py", 8, "DC005", "error")]
    # twin: a base driftcheck does not read (a third party's) may define the method: nothing said
    files["plug/manager.py"] = defining.replace("class TPUManager(Manager):", "from other import Mixin\n\n\nclass TPUManager(Mixin, Manager):")
    result = scan_trees(tmp_path / "mixin", _M3_VLLM, files, only=["DC005", "DC006"])
    assert result.findings == []


def test_m3_twin_a_data_member_of_a_built_object_is_not_typed_from_vllm(tmp_path):
    # tpu-inference 0.32.0's test: `attn = VllmMLAAttention(...); attn.kv_b_proj = MagicMock(); attn.kv_b_proj.quant_method
    # .linear_config.mesh = mesh`: what the member holds is the client's, not the type vLLM's base gives it
    vllm = dict(_M3_VLLM, **{"vllm/layer.py": "class Quant:\n    pass\n\n\nclass Proj:\n    quant_method: Quant\n\n\n"
                                              "class Attn:\n    def __init__(self):\n        self.kv_b_proj: Proj = Proj()\n"})
    layer = "from vllm.layer import Attn\n\n\nclass MyAttn(Attn):\n    def extra(self):\n        return 1\n"
    client = ("from unittest.mock import MagicMock\nfrom vllm.layer import Attn\nfrom plug.layer import MyAttn\n\n\n"
              "def test_it():\n    attn = MyAttn()\n    attn.kv_b_proj = MagicMock()\n"
              "    attn.kv_b_proj.quant_method.linear_config.mesh = 1\n")
    result = scan_trees(tmp_path, vllm, {"plug/__init__.py": "", "plug/layer.py": layer, "plug/t.py": client}, only=["DC006"])
    assert not result.internal_errors and result.findings == []
