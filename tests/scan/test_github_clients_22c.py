"""Batch 22c (vLLM plugins and patch libraries taken from GitHub, each at the vLLM it declares;
docs/triage/2026-12-05-github-clients-22c.md).

ZR: `object.__setattr__(obj, "name", v)`, the way round a frozen dataclass's own `__setattr__`, stores `obj.name` as
`setattr(obj, "name", v)` does. omni-npu (drago1234/omni-npu, vLLM 0.12.0) sets a flag on `vllm_config.cache_config`
that way in its `create_engine_config` patch and logs it on the next line: a false DC006 error. The twin: a read of a
name the call does not set stays an error.

ZS: a store through a parameter annotated with a class name its file never binds (`def update_vllm_config(cls,
vllm_config: 'VllmConfig')` in omni-npu's platform.py, which imports no `VllmConfig`) cannot be typed, but the
annotation names the class the object is: a read of that member on vLLM's `VllmConfig` in another file
(`vllm_config.npu_compilation_config.use_gegraph`, 3 false DC006 errors) is the client's own member. The twins: an
annotation naming another class, and one naming a class the file defines itself, leave the read an error.

ZT: the patch framework of the vLLM blog's plugin-system post, as omni-npu ships it: `@register_patch("Name",
BlockTable) class BlockTablePatch(VLLMPatch): _attr_names_to_apply = ["__init__", ...]`, and in the base class
`for name in cls._attr_names_to_apply: setattr(target, name, cls.__dict__[name])`. Each listed member is a patch of the
target (`BlockTable.__init__ = BlockTablePatch.__init__`): the replacement's signature takes `sink_len=` (4 false DC003
errors on omni-npu's `BlockTable(...)`, `InputBatch(...)`, `MultiGroupBlockTable(...)`), and a listed method is the
target's member. The twins: a replacement that rejects the keyword too, a list naming a member the class lacks, no
loop in the client that sets the listed names, a decorator handed no vLLM class: the errors stay.

ZU: vLLM's `@support_torch_compile` replaces the class's `__init__` with `def __init__(self, *, vllm_config=None,
prefix="", **kwargs)`, which fills in the current config and hands it to the class's own `__init__`: omni-npu's
`OpenPanguModel(VllmOpenPanguModel)` calling `super().__init__()` with no arguments runs (1 false DC005 error). The
parameters such a replacement takes itself with a default are optional in the constructor's signature, followed from
the decorator through the helpers that return the class (a nested one too, and the decorator's call form). The twins:
a replacement without the default, and a decorator that does not replace `__init__`, leave the call an error.

ZV: a store of a member that only a subclass of the receiver's class defines (`self.old_quant_method.fused_experts =
self.fused_experts` in omni-npu's `FusedMoEModularMethod` subclass, where `old_quant_method` is a `FusedMoEMethodBase`
and only `FusedMoEModularMethod` has `fused_experts`) sets it on that object, as a store of a member no class has
does: a read of it on a subclass of the receiver's class (omni-npu's int8 MoE method, 2 false DC006 errors) is the
client's own member. The twins: a store of another name, and a store on an object of an unrelated class, leave the read
an error.

ZW: a class member a diff the client ships for vLLM's source adds (`num_step: Optional[int] = 1` in `SchedulerOutput`,
omni-infer's async_schedule_multi_step.patch), where the diff applies only after earlier diffs of the series its install
script applies in order: the diffs are applied as a series (a fixed point in name order), and the members a hunk adds
to a class (its fields, methods, and what its methods store on `self`) may exist: DC006 says unknown (1 false error).
The twins: the same diff without the one that makes its context, and a diff adding the member to another class, leave
the read an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees

CONFIG_VLLM = {
    "vllm/__init__.py": "",
    "vllm/config.py": ("from dataclasses import dataclass, field\n"
                       "\n"
                       "\n"
                       "@dataclass(frozen=True)\n"
                       "class CacheConfig:\n"
                       "    block_size: int = 16\n"
                       "\n"
                       "\n"
                       "@dataclass\n"
                       "class VllmConfig:\n"
                       "    cache_config: CacheConfig = field(default_factory=CacheConfig)\n"),
}


def _errors(result) -> list[str]:
    return sorted(f"{f.rule} {f.client.path} {f.client.line}" for f in result.findings if f.severity == "error")


def _reader(member: str) -> str:
    """A client file that reads `vllm_config.<member>` on line 5, the parameter typed as vLLM's VllmConfig."""
    return f"from vllm.config import VllmConfig\n\n\ndef read(vllm_config: VllmConfig):\n    return vllm_config.{member}\n"


def _object_setattr_client(name: str) -> dict[str, str]:
    return {
        "plug/__init__.py": "",
        "plug/engine_patch.py": ("from vllm.config import VllmConfig\n"
                                 "\n"
                                 "\n"
                                 "def create_config(enable):\n"
                                 "    vllm_config = VllmConfig()\n"
                                 f"    object.__setattr__(vllm_config.cache_config, {name!r}, enable)\n"
                                 "    print(vllm_config.cache_config.enable_rope_cache)\n"
                                 "    return vllm_config\n"),
        "plug/model.py": _reader("cache_config.enable_rope_cache"),
    }


def test_object_setattr_with_a_literal_name_is_a_store(tmp_path):
    result = scan_trees(tmp_path, CONFIG_VLLM, _object_setattr_client("enable_rope_cache"))
    assert _errors(result) == []
    stores = [f for f in result.findings if f.rule == "DC006" and f.client.path == "plug/engine_patch.py"]
    # the store itself is no warning: the file reads the member back (line 7) and vLLM never names it, so it is the
    # client's own (26d R1), as a plain `x.a = v` would be
    assert stores == []


def test_twin_object_setattr_of_another_name_leaves_the_read_an_error(tmp_path):
    result = scan_trees(tmp_path, CONFIG_VLLM, _object_setattr_client("enable_rope"))
    assert _errors(result) == ["DC006 plug/engine_patch.py 7", "DC006 plug/model.py 5"]


def test_twin_a_client_object_named_object_is_not_the_builtin(tmp_path):
    client = _object_setattr_client("enable_rope_cache")
    client["plug/engine_patch.py"] = client["plug/engine_patch.py"].replace(
        "def create_config", "class object:\n    @staticmethod\n    def __setattr__(o, n, v):\n        pass\n\n\ndef create_config")
    result = scan_trees(tmp_path, CONFIG_VLLM, client)
    assert "DC006 plug/model.py 5" in _errors(result)


PLATFORM_VLLM = {
    "vllm/__init__.py": "",
    "vllm/config.py": ("class ModelConfig:\n"
                       "    def __init__(self, model='m'):\n"
                       "        self.model = model\n"
                       "\n"
                       "\n"
                       "class VllmConfig:\n"
                       "    def __init__(self, model_config=None):\n"
                       "        self.model_config = model_config or ModelConfig()\n"),
}


def _annotated_store_client(annotation: str, own_class: bool = False) -> dict[str, str]:
    own = f"class {annotation}:\n    pass\n\n\n" if own_class else ""
    return {
        "plug/__init__.py": "",
        "plug/platform.py": ("import vllm\n\n\n" + own +
                             "def update_vllm_config(vllm_config: " + repr(annotation) + ") -> None:\n"
                             "    vllm_config.extra_cfg = object()\n"),
        "plug/reader.py": _reader("extra_cfg"),
    }


def test_store_through_a_parameter_annotated_with_an_unbound_class_name(tmp_path):
    result = scan_trees(tmp_path, PLATFORM_VLLM, _annotated_store_client("VllmConfig"))
    assert _errors(result) == []


def test_twin_an_annotation_naming_another_class_is_no_evidence(tmp_path):
    result = scan_trees(tmp_path, PLATFORM_VLLM, _annotated_store_client("ModelConfig"))
    assert _errors(result) == ["DC006 plug/reader.py 5"]


def test_twin_an_annotation_naming_the_file_own_class_is_no_evidence(tmp_path):
    result = scan_trees(tmp_path, PLATFORM_VLLM, _annotated_store_client("VllmConfig", own_class=True))
    assert _errors(result) == ["DC006 plug/reader.py 5"]


BLOCK_VLLM = {
    "vllm/__init__.py": "",
    "vllm/block_table.py": ("class BlockTable:\n"
                            "    def __init__(self, block_size: int, max_num_reqs: int):\n"
                            "        self.block_size = block_size\n"),
}

FRAMEWORK = ("import vllm\n"
             "\n"
             "\n"
             "class VLLMPatch:\n"
             "    _attr_names_to_apply = []\n"
             "\n"
             "    @classmethod\n"
             "    def apply(cls):\n"
             "        for name in cls._attr_names_to_apply:\n"
             "            setattr(cls._target, name, cls.__dict__[name])\n"
             "\n"
             "\n"
             "def register_patch(name, target):\n"
             "    def decorator(cls):\n"
             "        cls._target = target\n"
             "        return cls\n"
             "    return decorator\n")

PATCH = ("from vllm.block_table import BlockTable\n"
         "\n"
         "from plug.core import VLLMPatch, register_patch\n"
         "\n"
         "\n"
         "@register_patch('BlockTablePatch', BlockTable)\n"
         "class BlockTablePatch(VLLMPatch):\n"
         "    _attr_names_to_apply = ['__init__', 'sink_slots']\n"
         "\n"
         "    def __init__(self, block_size, max_num_reqs, sink_len=0):\n"
         "        self.sink_len = sink_len\n"
         "\n"
         "    def sink_slots(self):\n"
         "        return self.sink_len\n")

RUNNER = ("from vllm.block_table import BlockTable\n"
          "\n"
          "\n"
          "def make():\n"
          "    table = BlockTable(16, 4, sink_len=2)\n"
          "    return table.sink_slots()\n")


def _patch_class_errors(tmp_path, framework=FRAMEWORK, patch=PATCH) -> list[str]:
    client = {"plug/__init__.py": "", "plug/core.py": framework, "plug/patch_bt.py": patch, "plug/runner.py": RUNNER}
    return _errors(scan_trees(tmp_path, BLOCK_VLLM, client))


def test_members_a_patch_class_lists_are_set_on_the_target(tmp_path):
    assert _patch_class_errors(tmp_path) == []


def test_twin_a_replacement_that_rejects_the_keyword_too(tmp_path):
    patch = PATCH.replace("max_num_reqs, sink_len=0", "max_num_reqs").replace("self.sink_len = sink_len", "pass")
    assert _patch_class_errors(tmp_path, patch=patch) == ["DC003 plug/runner.py 5"]


def test_twin_a_list_naming_a_member_the_class_lacks_is_no_patch(tmp_path):
    patch = PATCH.replace("'sink_slots']", "'sink_slots', 'gone']")
    assert _patch_class_errors(tmp_path, patch=patch) == ["DC003 plug/runner.py 5", "DC006 plug/runner.py 6"]


def test_twin_no_loop_sets_the_listed_names(tmp_path):
    framework = FRAMEWORK.replace("for name in cls._attr_names_to_apply:", "for name in ():")
    assert _patch_class_errors(tmp_path, framework=framework) == ["DC003 plug/runner.py 5", "DC006 plug/runner.py 6"]


def test_twin_a_decorator_handed_no_vllm_class(tmp_path):
    patch = PATCH.replace("@register_patch('BlockTablePatch', BlockTable)", "@register_patch('BlockTablePatch', 'BlockTable')")
    assert _patch_class_errors(tmp_path, patch=patch) == ["DC003 plug/runner.py 5", "DC006 plug/runner.py 6"]


def _compile_vllm(replaces: bool = True) -> dict[str, str]:
    assign = "    cls.__init__ = __init__\n" if replaces else ""
    return {
        "vllm/__init__.py": "",
        "vllm/config.py": ("class VllmConfig:\n    hidden = 8\n\n\n"
                           "def get_current_vllm_config():\n    return VllmConfig()\n"),
        "vllm/decorators.py": ("from vllm.config import get_current_vllm_config\n"
                               "\n"
                               "\n"
                               "def support_torch_compile(cls=None, *, dynamic_arg_dims=None):\n"
                               "    def cls_decorator_helper(cls):\n"
                               "        return _support_torch_compile(cls, dynamic_arg_dims)\n"
                               "\n"
                               "    if cls is not None:\n"
                               "        return cls_decorator_helper(cls)\n"
                               "    return cls_decorator_helper\n"
                               "\n"
                               "\n"
                               "def _support_torch_compile(cls, dynamic_arg_dims):\n"
                               "    old_init = cls.__init__\n"
                               "\n"
                               "    def __init__(self, *, vllm_config=None, prefix='', **kwargs):\n"
                               "        old_init(self, vllm_config=vllm_config or get_current_vllm_config(), prefix=prefix)\n"
                               "\n"
                               + assign +
                               "    return cls\n"),
        "vllm/models.py": ("from vllm.decorators import support_torch_compile\n"
                           "\n"
                           "\n"
                           "@support_torch_compile\n"
                           "class Plain:\n"
                           "    def __init__(self, *, vllm_config, prefix=''):\n"
                           "        self.hidden = vllm_config.hidden\n"
                           "\n"
                           "\n"
                           "@support_torch_compile(dynamic_arg_dims={'x': 0})\n"
                           "class Called:\n"
                           "    def __init__(self, *, vllm_config, prefix=''):\n"
                           "        self.hidden = vllm_config.hidden\n"),
    }


SUBCLASSES = {"plug/__init__.py": "",
              "plug/models.py": ("from vllm.models import Called, Plain\n"
                                 "\n"
                                 "\n"
                                 "class MyPlain(Plain):\n"
                                 "    def __init__(self, *, vllm_config, prefix=''):\n"
                                 "        super().__init__()\n"
                                 "\n"
                                 "\n"
                                 "def build():\n"
                                 "    return Called(prefix='m')\n")}


def test_a_parameter_the_decorator_replacement_defaults_is_optional(tmp_path):
    assert _errors(scan_trees(tmp_path, _compile_vllm(), SUBCLASSES)) == []


def test_twin_a_replacement_without_the_default(tmp_path):
    vllm = _compile_vllm()
    vllm["vllm/decorators.py"] = vllm["vllm/decorators.py"].replace("*, vllm_config=None,", "*, vllm_config,")
    assert _errors(scan_trees(tmp_path, vllm, SUBCLASSES)) == ["DC005 plug/models.py 10", "DC005 plug/models.py 6"]


def test_twin_a_decorator_that_does_not_replace_init(tmp_path):
    result = scan_trees(tmp_path, _compile_vllm(replaces=False), SUBCLASSES)
    assert _errors(result) == ["DC005 plug/models.py 10", "DC005 plug/models.py 6"]


MOE_VLLM = {
    "vllm/__init__.py": "",
    "vllm/moe.py": ("class FusedMoEMethodBase:\n"
                    "    pass\n"
                    "\n"
                    "\n"
                    "class Int8MoEMethod(FusedMoEMethodBase):\n"
                    "    pass\n"
                    "\n"
                    "\n"
                    "class FusedMoEModularMethod(FusedMoEMethodBase):\n"
                    "    def __init__(self, old_quant_method: FusedMoEMethodBase, experts):\n"
                    "        self.fused_experts = experts\n"
                    "        self.old_quant_method = old_quant_method\n"
                    "\n"
                    "\n"
                    "class Other:\n"
                    "    pass\n"),
}


def _moe_client(store: str) -> dict[str, str]:
    return {"plug/__init__.py": "",
            "plug/layer.py": ("from vllm.moe import FusedMoEModularMethod, Other\n"
                              "\n"
                              "\n"
                              "class NPUModular(FusedMoEModularMethod):\n"
                              "    def __init__(self, old_quant_method, experts):\n"
                              "        super().__init__(old_quant_method, experts)\n"
                              "        self.other = Other()\n"
                              f"        {store} = self.fused_experts\n"),
            "plug/quant.py": ("from vllm.moe import Int8MoEMethod\n"
                              "\n"
                              "\n"
                              "class NPUInt8(Int8MoEMethod):\n"
                              "    def apply(self, x):\n"
                              "        return self.fused_experts(x)\n")}


def test_a_member_only_a_subclass_defines_stored_on_the_base_typed_object(tmp_path):
    assert _errors(scan_trees(tmp_path, MOE_VLLM, _moe_client("self.old_quant_method.fused_experts"))) == []


def test_twin_a_store_of_another_name(tmp_path):
    result = scan_trees(tmp_path, MOE_VLLM, _moe_client("self.old_quant_method.experts"))
    assert _errors(result) == ["DC006 plug/quant.py 6"]


def test_twin_a_store_on_an_unrelated_class(tmp_path):
    assert _errors(scan_trees(tmp_path, MOE_VLLM, _moe_client("self.other.fused_experts"))) == ["DC006 plug/quant.py 6"]


OUTPUT_VLLM = {
    "vllm/__init__.py": "",
    "vllm/output.py": ("from dataclasses import dataclass\n"
                       "\n"
                       "\n"
                       "@dataclass\n"
                       "class SchedulerOutput:\n"
                       "    total_tokens: int = 0\n"
                       "\n"
                       "    # KV Cache Connector metadata.\n"
                       "    kv_connector_metadata: object = None\n"
                       "\n"
                       "\n"
                       "class Other:\n"
                       "    pass\n"),
}

FIRST = ("--- a/vllm/output.py\n+++ b/vllm/output.py\n@@ -5,2 +5,3 @@ from dataclasses import dataclass\n"
         " class SchedulerOutput:\n     total_tokens: int = 0\n+    finished_ids: object = None\n")
SECOND = ("--- a/vllm/output.py\n+++ b/vllm/output.py\n@@ -7,2 +7,3 @@ class SchedulerOutput:\n"
          "     finished_ids: object = None\n+    num_step: int = 1\n     # KV Cache Connector metadata.\n")
READER = ("from vllm.output import SchedulerOutput\n"
          "\n"
          "\n"
          "def steps(out: SchedulerOutput):\n"
          "    return out.num_step\n")


def _series_scan(tmp_path, patches: dict[str, str]):
    client = {"pkg/__init__.py": "", "pkg/runner.py": READER, **{f"pkg/patches/{k}": v for k, v in patches.items()}}
    result = scan_trees(tmp_path, OUTPUT_VLLM, client)
    return _errors(result), [u.message for u in result.unknown if u.rule == "DC006"]


def test_a_member_a_diff_adds_after_an_earlier_diff_of_the_series_may_exist(tmp_path):
    errors, unknown = _series_scan(tmp_path, {"1_first.patch": FIRST, "2_second.patch": SECOND})
    assert errors == []
    assert len(unknown) == 1 and "pkg/patches/2_second.patch" in unknown[0] and "`SchedulerOutput`" in unknown[0]


def test_twin_the_diff_without_the_one_that_makes_its_context(tmp_path):
    errors, unknown = _series_scan(tmp_path, {"2_second.patch": SECOND})
    assert errors == ["DC006 pkg/runner.py 5"] and unknown == []


def test_twin_a_diff_adding_the_member_to_another_class(tmp_path):
    other = ("--- a/vllm/output.py\n+++ b/vllm/output.py\n@@ -12,2 +12,3 @@\n"
             " class Other:\n+    num_step: int = 1\n     pass\n")
    errors, unknown = _series_scan(tmp_path, {"1_other.patch": other})
    assert errors == ["DC006 pkg/runner.py 5"] and unknown == []
