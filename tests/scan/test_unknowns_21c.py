"""Unknowns of real clients that driftcheck could answer from the sources it reads (batch 21c,
docs/triage/2026-12-05-unknowns-21c.md). Each cause has its shape in tests/fixtures/plugin_shapes/Y*_ (no error
there) and here: no unknown for the client line, and a twin where a genuinely broken variant is still reported.

YA (vllm-ascend 0.23.0 @ 0.23.0): vLLM's llama_eagle3.py imports `LlamaDecoderLayer` from llama.py and defines
`class LlamaDecoderLayer(LlamaDecoderLayer)`. The base resolved to the class itself (the module's binding of the name
after the statement), the MRO walk stopped at its cycle guard and the class was "open": every member its real base
sets was unknown, with the reason "inherits from a dynamic __getattr__". A class statement evaluates its bases
before it binds its name: the base is the name's earlier top-level import.

YB (vllm-metax 0.20.0, verl 0.9.1, vllm-gaudi v0.26.0, vllm-rbln 0.11.0): `parser.set_defaults(...)`,
`parser.add_subparsers(...)`, `parser._actions` on vLLM's `FlexibleArgumentParser(argparse.ArgumentParser)` and
`mm_items.get("video")` on `MultiModalDataItems(UserDict)` were unknown: "inherits from argparse.ArgumentParser, which
driftcheck does not read". The standard library's Python sources are on disk: its classes' members (methods, class
attributes, `self.x` its methods set, along its standard-library bases) are read with ast. Only a member found counts;
the class stays open, so a name it lacks is still unknown, never an error (a C base, `ctypes.Structure`, is not read).

YC (vllm-metax 0.20.0 @ 0.20.0): `unique_id.internal` on vLLM's `class ncclUniqueId(ctypes.Structure): _fields_ =
[("internal", ctypes.c_byte * 128)]` was unknown ("inherits from ctypes.Structure"). ctypes makes an attribute of
every name the literal `_fields_` lists: those are members. Another name stays unknown (the base is C).

YD (chatterbox-vllm 0.2.1 @ 0.10.0): its package folder is `src/chatterbox_vllm/` and its `pyproject.toml`, one level
up, pins `vllm==0.10.0`. driftcheck read requirements only from beside the package folder (`src/`), found none, and
every baseline rule said "declares no vLLM requirement" (DC107 unknown). The src layout's project files are read.

YE (a missed error, chatterbox-vllm 0.2.1 @ 0.33.0): `from vllm.multimodal.inputs import MultiModalKwargs` was unknown,
"vllm/multimodal/inputs.py creates its names at import time (it hands out globals())", because the module says
`torch = LazyLoader("torch", globals(), "torch")`. vLLM's LazyLoader writes only the name it is given
(`self._parent_module_globals[self._local_name] = module`), the one the assignment binds anyway; 0.33.0's inputs.py
defines no `MultiModalKwargs` and has no module `__getattr__`: the import certainly fails (DC002 error). A module that
writes through `globals()` otherwise (`globals().update(...)`, protobuf's builders) stays unknown.

YF (DC008, vllm-ascend 0.23.0, vllm-gaudi v0.26.0, tpu-inference 0.30.0, vllm-metax 0.20.0): a client function
assigned onto a module (`mamba_utils.batch_memcpy = _batch_memcpy_triton`, `torch.sum = reduce_sum`,
`vllm.v1.core.kv_cache_utils.group_and_unify_kv_cache_specs = ...`) was a "forward-assignment" whose first parameter
DC008 read as the `self` of an untyped vLLM object: without a baseline, an unknown per function ("uses 2 name(s) on
an untyped vLLM object"). A module's function is not bound; its first parameter is an argument like the others; nor
is a function stored on `self` in an instance method (`self.native_impl = grouped_topk`, vllm-gaudi): an instance
attribute. A function stored only so (on a vLLM module, a module the file binds with `import x`, or `self.x` of an
instance method) is left to the other rules; one also assigned onto another object (`layer.copy = fn`, which may be a
class), or bound with `types.MethodType`, is read as before. A module taken from `sys.modules.get("vllm...")` is a
module too.

YG (DC008's reason, every client without a baseline): "`acquire_read` uses 6 name(s) on an untyped vLLM object
(forward-assignment)" named neither the names nor the object. It now lists the names read on the first parameter and
the line that binds or stores the function, then why they cannot be checked (no baseline, and how to give one).
DC107's one unknown without a baseline named only the first construction's line; it now says how many constructions of
which config classes were not compared.

YH (open, vllm-ascend 0.23.0 patch_shm_broadcast.py): `MessageQueue = shm_broadcast.MessageQueue` then
`MessageQueue.acquire_read = acquire_read` patches a vLLM class through a module-level alias. The patch phase
(client_model/phases.py, not editable in this batch) did not follow the alias, so DC006 did not check `self` there,
and DC008 read the function as bound to an untyped object (unknown without a baseline). Fixed after the batch:
`collect_imports` binds a module-level name assigned once from an attribute of an imported module or class
(`MessageQueue = shm_broadcast.MessageQueue`) as it binds `_TARGET = ImportedCls`.
"""

from __future__ import annotations

from pathlib import Path


from scan.helpers import scan_trees

SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.py"))}


def _scan_shape(tmp_path, case: str, client_edit: tuple[str, str, str] | None = None, **kw):
    root = SHAPES / case
    vllm_files, client = _files(root / "vllm_src"), _files(root / "client")
    if client_edit is not None:
        rel, old, new = client_edit
        assert old in client[rel]
        client[rel] = client[rel].replace(old, new)
    return scan_trees(tmp_path, vllm_files, client, **kw)


def _assert_clean(tmp_path, case: str, path: str, *needles: str) -> None:
    """The shape as it is: nothing on the client lines holding `needles`, and no unknown at all."""
    result = _scan_shape(tmp_path, case)
    for needle in needles:
        assert _at(result, path, needle) == [], needle
    assert result.unknown == []


def _twin(tmp_path, case: str, path: str, old: str, new: str, needle: str) -> list:
    """(rule, severity) on the line holding `needle` once the client's `old` text is `new`."""
    return _at(_scan_shape(tmp_path, case, (path, old, new)), path, needle)


def _at(result, path: str, needle: str) -> list:
    """(rule, severity) of every finding and unknown on the client line holding `needle`."""
    out = [(f.rule, f.severity) for f in result.findings if f.client.path.endswith(path) and needle in (f.client.code or "")]
    out += [(u.rule, "unknown") for u in result.unknown if u.client.path.endswith(path) and needle in (u.client.code or "")]
    return out


# ----------------------------------------------------------------------------------------- YA
YA = "YA_class_derives_from_the_imported_class_of_its_own_name"


def test_ya_members_of_the_imported_base_of_a_same_named_class_are_known(tmp_path):
    result = _scan_shape(tmp_path, YA)
    assert _at(result, "plugin/vwn.py", "self.hidden_size") == []
    assert _at(result, "plugin/vwn.py", "self.self_attn.qkv_proj") == []
    assert _at(result, "plugin/vwn.py", "self.mlp(hidden)") == []
    assert result.unknown == []


def test_ya_twin_a_member_no_class_of_the_real_mro_has_is_an_error(tmp_path):
    result = _scan_shape(tmp_path, YA, ("plugin/vwn.py", "hs = self.hidden_size", "hs = self.hidden_dim"))
    assert ("DC006", "error") in _at(result, "plugin/vwn.py", "self.hidden_dim")


def test_ya_a_same_named_base_bound_otherwise_stays_unknown(tmp_path):
    """`LlamaDecoderLayer = make()` before the class: not an import driftcheck reads, so still unknown, and the
    reason names the class statement."""
    root = SHAPES / YA
    vllm_files = _files(root / "vllm_src")
    eagle = "vllm/models/llama_eagle3.py"
    vllm_files[eagle] = vllm_files[eagle].replace(
        "from vllm.models.llama import LlamaDecoderLayer\n",
        "from vllm.models import llama\n\nLlamaDecoderLayer = getattr(llama, 'LlamaDecoderLayer')\n")
    result = scan_trees(tmp_path, vllm_files, _files(root / "client"))
    hits = [u for u in result.unknown if "self.hidden_size" in (u.client.code or "")]
    assert hits and all("llama_eagle3.py" in u.message for u in hits)
    assert [f for f in result.findings if f.severity == "error"] == []


# ----------------------------------------------------------------------------------------- YB
YB = "YB_member_of_a_standard_library_base_of_a_vllm_class"


def test_yb_members_of_a_standard_library_base_are_known(tmp_path):
    _assert_clean(tmp_path, YB, "plugin/platform.py", "parser.set_defaults", "parser._actions", "parser.add_subparsers",
                  'mm_items.get("video")')


def test_yb_twin_a_name_the_standard_library_class_lacks_is_still_unknown(tmp_path):
    result = _scan_shape(tmp_path, YB, ("plugin/platform.py", "parser.set_defaults(", "parser.set_default("))
    assert _at(result, "plugin/platform.py", "parser.set_default(") == [("DC006", "unknown")]
    [u] = [u for u in result.unknown if "set_default(" in (u.client.code or "")]
    assert "argparse.ArgumentParser" in u.message


def test_yb_reads_the_running_pythons_standard_library():
    from driftcheck.vllm_model.stdlib_classes import stdlib_members

    assert {"set_defaults", "add_subparsers", "_actions", "parse_args"} <= stdlib_members("argparse.ArgumentParser")
    assert {"get", "data", "items"} <= stdlib_members("collections.UserDict")
    assert stdlib_members("ctypes.Structure") == frozenset()  # implemented in an extension module: not read
    # a class of a module compiled into the interpreter, re-exported under a `try` (JC5): read with dir()
    assert {"popleft", "append", "extend"} <= stdlib_members("collections.deque")
    assert stdlib_members("torch.nn.Module") == frozenset()  # not the standard library


# ----------------------------------------------------------------------------------------- YC
YC = "YC_field_a_ctypes_structure_declares"


def test_yc_a_field_of_a_ctypes_structure_is_a_member(tmp_path):
    _assert_clean(tmp_path, YC, "plugin/wrapper.py", "unique_id.internal")


def test_yc_twin_a_name_the_fields_do_not_list_is_still_unknown(tmp_path):
    found = _twin(tmp_path, YC, "plugin/wrapper.py", "unique_id.internal", "unique_id.internals", "unique_id.internals")
    assert found == [("DC006", "unknown")]


# ----------------------------------------------------------------------------------------- YD
YD = "YD_src_layout_package_declares_its_vllm_in_the_project"


def test_yd_a_src_layout_package_reads_the_projects_pin(tmp_path):
    from driftcheck.sources.targets import resolve_client

    client = resolve_client(str(SHAPES / YD / "client" / "src" / "ttsplug"), tmp_path)
    assert client.requires == ["vllm==0.10.0"]


def test_yd_twin_a_src_folder_without_a_project_beside_declares_nothing(tmp_path):
    from driftcheck.sources.targets import resolve_client

    pkg = tmp_path / "checkout" / "src" / "ttsplug"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    assert resolve_client(str(pkg), tmp_path / "cache").requires == []
    (tmp_path / "checkout" / "lib").mkdir()  # not the src layout: a pyproject two levels up is another project's
    other = tmp_path / "checkout" / "lib" / "ttsplug"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (tmp_path / "checkout" / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["vllm==0.10.0"]\n')
    assert resolve_client(str(other), tmp_path / "cache").requires == []
    assert resolve_client(str(pkg), tmp_path / "cache").requires == ["vllm==0.10.0"]


# ----------------------------------------------------------------------------------------- YE
YE = "YE_lazy_loader_given_globals_makes_no_other_name"


def test_ye_names_of_a_module_with_a_lazy_loader_are_read(tmp_path):
    _assert_clean(tmp_path, YE, "plugin/t3.py", "import MultiModalKwargsItem")


def test_ye_twin_a_name_such_a_module_lacks_is_an_error(tmp_path):
    found = _twin(tmp_path, YE, "plugin/t3.py", "import MultiModalKwargsItem\n",
                  "import MultiModalKwargs, MultiModalKwargsItem\n", "import MultiModalKwargs,")
    assert found == [("DC002", "error")]


def test_ye_twin_a_module_that_writes_through_globals_stays_unknown(tmp_path):
    root = SHAPES / YE
    vllm_files = _files(root / "vllm_src")
    inputs = "vllm/multimodal/inputs.py"
    vllm_files[inputs] += "\nglobals().update({'MultiModalKwargs': dict})\n"
    client = _files(root / "client")
    client["plugin/t3.py"] = client["plugin/t3.py"].replace("import MultiModalKwargsItem\n", "import MultiModalKwargs, MultiModalKwargsItem\n")
    result = scan_trees(tmp_path, vllm_files, client)
    assert _at(result, "plugin/t3.py", "import MultiModalKwargs,") == [("DC002", "unknown")]


# ----------------------------------------------------------------------------------------- YF
YF = "YF_function_assigned_onto_a_module_is_not_bound"


def test_yf_a_function_assigned_onto_a_module_has_no_self(tmp_path):
    result = _scan_shape(tmp_path, YF)
    assert _at(result, "plugin/patch_mamba_utils.py", "def _batch_memcpy_loop") == []
    assert _at(result, "plugin/patch_mamba_utils.py", "def group_and_unify_kv_cache_specs") == []
    assert result.unknown == []


PATCH, LOOP = "plugin/patch_mamba_utils.py", "mamba_utils.batch_memcpy = _batch_memcpy_loop\n"


def _yf_with(tmp_path, extra: str) -> list:
    """What is reported on `def _batch_memcpy_loop` once `extra` replaces (or follows, when it starts with the
    module assignment) the shape's `mamba_utils.batch_memcpy = _batch_memcpy_loop`."""
    return _twin(tmp_path, YF, PATCH, LOOP, extra, "def _batch_memcpy_loop")


def test_yf_a_function_also_stored_on_self_of_an_instance_method_has_no_self(tmp_path):
    assert _yf_with(tmp_path, LOOP + "\n\nclass Copier:\n    def __init__(self):\n        self.copy = _batch_memcpy_loop\n") == []


def test_yf_twin_stored_on_cls_of_a_classmethod_is_still_read(tmp_path):
    found = _yf_with(tmp_path, LOOP + "\n\nclass Copier:\n    @classmethod\n    def install(cls):\n"
                     "        cls.copy = _batch_memcpy_loop\n")
    assert found == [("DC008", "unknown")]


def test_yf_twin_the_same_function_also_set_on_an_object_is_still_read(tmp_path):
    assert _yf_with(tmp_path, LOOP + "\n\ndef install(layer):\n    layer.copy = _batch_memcpy_loop\n") == [("DC008", "unknown")]


def test_yf_twin_a_function_bound_to_an_object_is_still_read(tmp_path):
    found = _yf_with(tmp_path, "import types\n\n\ndef install(layer):\n    layer.copy = types.MethodType(_batch_memcpy_loop, layer)\n")
    assert found == [("DC008", "unknown")]


def test_yf_a_module_from_sys_modules_is_a_module(tmp_path):
    client = _files(SHAPES / YF / "client")
    client["plugin/patch_mamba_utils.py"] += ("\nimport sys\n\n_mgr = sys.modules.get('vllm.v1.mamba_utils')\n"
                                              "if _mgr is not None:\n    _mgr.batch_memcpy = _batch_memcpy_loop\n")
    result = scan_trees(tmp_path, _files(SHAPES / YF / "vllm_src"), client)
    assert result.unknown == []


# ----------------------------------------------------------------------------------------- YG
def test_yg_the_no_baseline_reason_names_the_names_and_the_binding(tmp_path):
    result = _scan_shape(tmp_path, YF, (PATCH, LOOP, "import types\n\n\ndef install(layer):\n"
                                        "    layer.copy = types.MethodType(_batch_memcpy_loop, layer)\n"))
    [u] = [u for u in result.unknown if u.rule == "DC008"]
    assert "`src_ptrs.count`" in u.message
    assert "patch_mamba_utils.py:" in u.message and "types.MethodType(_batch_memcpy_loop, layer)" in u.message
    assert "--client-vllm" in u.message


def test_yg_dc107_names_the_config_classes_not_compared(tmp_path):
    vllm_files = {"vllm/__init__.py": "", "vllm/config.py": "from dataclasses import dataclass\n\n\n@dataclass\n"
                  "class CacheConfig:\n    block_size: int = 16\n\n\n@dataclass\nclass LoadConfig:\n    fmt: str = 'auto'\n"}
    client = {"p/__init__.py": "", "p/m.py": "from vllm.config import CacheConfig, LoadConfig\n\n\n"
              "def make():\n    return CacheConfig(), LoadConfig(), CacheConfig(block_size=8)\n"}
    result = scan_trees(tmp_path, vllm_files, client, only=["DC107"])
    [u] = result.unknown
    # `CacheConfig(block_size=8)` binds its one defaulted field: no question (batch 20b's U1)
    assert "2 construction(s) of vLLM dataclass-like classes" in u.message and "`CacheConfig`, `LoadConfig`" in u.message and "--client-vllm" in u.message


# ----------------------------------------------------------------------------------------- YH (fixed since)
ALIAS_VLLM = {"vllm/__init__.py": "", "vllm/shm.py": "class MessageQueue:\n    def __init__(self):\n"
              "        self.current_idx = 0\n\n    def acquire_read(self):\n        return self.current_idx\n"}
ALIAS_CLIENT = ("from vllm import shm\n\nMessageQueue = shm.MessageQueue\n\n\ndef acquire_read(self):\n"
                "    return self.{name}\n\n\nMessageQueue.acquire_read = acquire_read\n")


def test_yh_a_patch_through_a_module_level_alias_types_self(tmp_path):
    broken = scan_trees(tmp_path / "broken", ALIAS_VLLM, {"p/__init__.py": "", "p/patch.py": ALIAS_CLIENT.format(name="next_idx")})
    assert ("DC006", "error") in _at(broken, "p/patch.py", "self.next_idx")
    ok = scan_trees(tmp_path / "ok", ALIAS_VLLM, {"p/__init__.py": "", "p/patch.py": ALIAS_CLIENT.format(name="current_idx")})
    assert ok.unknown == []
