"""Batch 24c (KV-cache, disaggregation and serving clients at their stored GitHub HEAD,
docs/triage/2026-12-05-kv-serving-heads-24c.md).

LC1: a vLLM plugin that adds flags, keywords and config keys through patches. ArcticInference (snowflakedb/
ArcticInference 9d46438) registers `arctic_inference = "arctic_inference.vllm.plugin:arctic_inference_plugin"` in the
`vllm.general_plugins` group (pyproject.toml), and that plugin applies `class EngineArgsPatch(ArcticPatch[EngineArgs])`
(arctic_inference/vllm/args.py:51), whose `__new__` builds its own ArcticEngineArgs and whose `add_cli_args` adds
`--ulysses-sequence-parallel-size`, `--enable-shift-parallel`, ...; `SpeculativeConfigPatch(ArcticPatch[
SpeculativeConfig])` (config.py:101) builds ArcticSpeculativeConfig (`method: str | None`, `disable_by_batch_size`,
`enable_suffix_decoding`). `ArcticPatch.apply_patch` sets every member of the patch class's body onto the target
(`for name, attr in cls.__dict__.items(): ... setattr(target, name, attr)`, patching.py), a framework whose base
imports no vLLM. vLLM 0.18.0 loads general plugins in `AsyncEngineArgs.add_cli_args` before it adds EngineArgs's
flags (arg_utils.py:2217) and in `EngineArgs.__post_init__` (arg_utils.py:637). DC111 called the plugin's flags in
server.sh, its `LLM(ulysses_sequence_parallel_size=...)` keywords (after `vllm.plugins.load_general_plugins()`) and
its speculative method and keys errors: 10 false errors. Now the whole-class patch is read (its members are patches of
the target) and DC111 says `unknown` for what a registered plugin's replacement of the parser builder, EngineArgs's or
the config class's constructor may add. The twins: no plugin registered, or a keyword to LLM(...) in a file that does
not load the plugins first (EngineArgs(...) raises TypeError before its __post_init__ loads them): errors. A flag
the replacement of `add_cli_args` does not add, when all its flags are literals, stays an error (`--disable-log-requests`).

Also from ArcticInference: a DC006 warning on a member only a client subclass defines names the client's replacement
of the class's `__new__` that builds that subclass (`ParallelConfigPatch.__new__`); and a method of a client class
copied onto a vLLM class stores on that class what it stores on `self` (`UlyssesVllmConfig._set_cudagraph_sizes`).
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

LC1 = next((Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes").glob("LC1_*"))


def _files(part: str) -> dict[str, str]:
    root = LC1 / part
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


VLLM = _files("vllm_src")
CLIENT = _files("client")
ENTRY = "lcplug-0.1.0.dist-info/entry_points.txt"


def _dc111(tmp_path: Path, client: dict[str, str]) -> list[tuple[str, str]]:
    vllm = {k: v for k, v in VLLM.items() if k.startswith("vllm/")}
    result = scan_trees(tmp_path, vllm, client, only=["DC111"])
    return sorted([(f.severity, f.symbol) for f in result.findings] + [("unknown", u.symbol) for u in result.unknown])


def test_lc1_what_a_registered_plugin_patches_in_is_unknown(tmp_path):
    assert _dc111(tmp_path, CLIENT) == [
        ("unknown", "vllm serve --plugin-parallel-size"),
        ("unknown", "vllm.LLM.plugin_parallel_size"),
        ("unknown", "vllm.config.speculative.SpeculativeConfig.method=plugin"),
        ("unknown", "vllm.config.speculative.SpeculativeConfig.plugin_depth"),
    ]


def test_lc1_the_unknown_names_the_plugin_and_the_replacement(tmp_path):
    vllm = {k: v for k, v in VLLM.items() if k.startswith("vllm/")}
    result = scan_trees(tmp_path, vllm, CLIENT, only=["DC111"])
    flag = next(u for u in result.unknown if u.symbol == "vllm serve --plugin-parallel-size")
    assert "vllm.general_plugins" in flag.message and "`EngineArgs.add_cli_args` (lcplug/patches.py:" in flag.message


def test_lc1_twin_no_plugin_registered_keeps_the_errors(tmp_path):
    client = {k: v for k, v in CLIENT.items() if k != ENTRY}
    assert _dc111(tmp_path, client) == [
        ("error", "vllm serve --plugin-parallel-size"),
        ("error", "vllm.LLM.plugin_parallel_size"),
        ("error", "vllm.config.speculative.SpeculativeConfig.plugin_depth"),
        ("warning", "vllm.config.speculative.SpeculativeConfig.method=plugin"),  # a plain dataclass: no validation
    ]


def test_lc1_twin_a_keyword_before_the_plugins_are_loaded_stays_an_error(tmp_path):
    main = CLIENT["main.py"].replace("\nvllm.plugins.load_general_plugins()\n", "\n")
    assert main != CLIENT["main.py"]
    found = _dc111(tmp_path, {**CLIENT, "main.py": main})
    assert ("error", "vllm.LLM.plugin_parallel_size") in found
    assert ("unknown", "vllm serve --plugin-parallel-size") in found  # vLLM's parser loads them itself


def test_lc1_twin_a_patch_class_whose_base_does_not_apply_its_members(tmp_path):
    patching = CLIENT["lcplug/patching.py"].replace("            setattr(target, name, attr)\n",
                                                   "            print(target, name, attr)\n")
    assert patching != CLIENT["lcplug/patching.py"]
    found = _dc111(tmp_path, {**CLIENT, "lcplug/patching.py": patching})
    assert ("error", "vllm serve --plugin-parallel-size") in found and ("error", "vllm.LLM.plugin_parallel_size") in found


def test_lc1_a_setup_py_or_pyproject_registers_the_plugin_too(tmp_path):
    from driftcheck.client_model.console_scripts import _read_groups
    from driftcheck.sources.sources import FolderTree
    root = tmp_path / "c"
    root.mkdir()
    (root / "setup.py").write_text('setup(entry_points={"vllm.general_plugins": ["p = p.plugin:register"]})\n')
    (root / "pyproject.toml").write_text('[project.entry-points."vllm.platform_plugins"]\nq = "q:register"\n')
    assert _read_groups(FolderTree(root)) == {"vllm.platform_plugins": "pyproject.toml [project.entry-points]",
                                              "vllm.general_plugins": "setup.py entry_points"}


def test_lc1_twin_a_flag_the_replacement_does_not_add_stays_an_error(tmp_path):
    main = CLIENT["main.py"].replace('"--plugin-parallel-size", "2"]', '"--plugin-parallel-size", "2", "--swap-space", "4"]')
    assert main != CLIENT["main.py"]
    found = _dc111(tmp_path, {**CLIENT, "main.py": main})
    assert ("error", "vllm serve --swap-space") in found and ("unknown", "vllm serve --plugin-parallel-size") in found


def test_lc1_a_replacement_with_a_computed_flag_may_add_any(tmp_path):
    main = CLIENT["main.py"].replace('"--plugin-parallel-size", "2"]', '"--plugin-parallel-size", "2", "--swap-space", "4"]')
    patches = CLIENT["lcplug/patches.py"].replace('parser.add_argument("--plugin-parallel-size", type=int, default=1)',
                                                  'parser.add_argument(FLAG, type=int, default=1)')
    patches = patches.replace("from lcplug.patching import Patch\n", 'from lcplug.patching import Patch\n\nFLAG = "--plugin-parallel-size"\n')
    assert patches != CLIENT["lcplug/patches.py"] and "FLAG = " in patches
    found = _dc111(tmp_path, {**CLIENT, "main.py": main, "lcplug/patches.py": patches})
    assert ("unknown", "vllm serve --swap-space") in found


def test_lc1_twin_a_loop_over_an_instance_dict_is_no_patch_framework(tmp_path):
    patching = CLIENT["lcplug/patching.py"].replace("cls.__dict__.items()", "self.__dict__.items()").replace(
        "    @classmethod\n    def apply_patch(cls):\n        target = cls._patch_target",
        "    def apply_patch(self):\n        target = self._patch_target")
    assert "self.__dict__" in patching and "def apply_patch(self)" in patching
    found = _dc111(tmp_path, {**CLIENT, "lcplug/patching.py": patching})
    assert ("error", "vllm serve --plugin-parallel-size") in found


NEW_PATCH_VLLM = {"vllm/__init__.py": "", "vllm/config.py": "class ParallelConfig:\n    def __init__(self):\n        self.tp = 1\n"}
NEW_PATCH_CLIENT = '''from vllm.config import ParallelConfig


class PluginParallelConfig(ParallelConfig):
    def __init__(self):
        super().__init__()
        self.sequence_parallel = 2


def _new(cls, *args, **kwargs):
    return object.__new__(PluginParallelConfig if cls is ParallelConfig else cls)


ParallelConfig.__new__ = _new


def size(config: ParallelConfig) -> int:
    return config.sequence_parallel
'''


def _dc006(tmp_path: Path, client: str) -> list[tuple[str, str]]:
    result = scan_trees(tmp_path, NEW_PATCH_VLLM, {"plug.py": client}, only=["DC006"])
    return [(f.severity, f.message) for f in result.findings]


def test_lc1_a_member_of_the_subclass_a_patched_new_builds_says_so(tmp_path):
    [(severity, message)] = _dc006(tmp_path, NEW_PATCH_CLIENT)
    assert severity == "warning"
    assert "replaces `ParallelConfig.__new__` (plug.py:14) with one that builds PluginParallelConfig" in message


def test_lc1_twin_a_patched_new_that_builds_another_class_keeps_only(tmp_path):
    client = NEW_PATCH_CLIENT.replace("PluginParallelConfig if cls is ParallelConfig else cls", "cls")
    [(severity, message)] = _dc006(tmp_path, client)
    assert severity == "warning" and "__new__" not in message and "only plug.PluginParallelConfig defines it" in message


GRAFT_VLLM = {"vllm/__init__.py": "", "vllm/config.py": (
    "class VllmConfig:\n    def __init__(self):\n        self._set_sizes()\n\n"
    "    def _set_sizes(self):\n        self.sizes = [1]\n")}
GRAFT_CLIENT = '''from vllm.config import VllmConfig


class VllmConfigPatch:
    def _set_sizes(self):
        self.sizes = [1]
        self.shift_sizes = [2]


VllmConfig._set_sizes = VllmConfigPatch._set_sizes


def shift_sizes(config: VllmConfig) -> list:
    return config.shift_sizes
'''


def test_lc1_a_method_copied_onto_a_vllm_class_stores_on_its_objects(tmp_path):
    # ArcticInference's UlyssesVllmConfig._set_cudagraph_sizes, set onto VllmConfig, sets self._shift_cudagraph_capture_sizes
    result = scan_trees(tmp_path, GRAFT_VLLM, {"plug.py": GRAFT_CLIENT}, only=["DC006"])
    assert [(f.severity, f.symbol) for f in result.findings] == []


def test_lc1_twin_a_static_method_copied_stores_nothing_on_the_class(tmp_path):
    client = GRAFT_CLIENT.replace("    def _set_sizes(self):\n        self.sizes = [1]\n        self.shift_sizes = [2]\n",
                                  "    @staticmethod\n    def _set_sizes(self):\n        self.sizes = [1]\n        self.shift_sizes = [2]\n")
    assert "@staticmethod" in client
    result = scan_trees(tmp_path, GRAFT_VLLM, {"plug.py": client}, only=["DC006"])
    assert [f.symbol for f in result.findings] == ["vllm.config.VllmConfig.shift_sizes"]
