"""Causes found in batch 14 (unseen GitHub clients that modify vLLM, and entry-point plugins;
docs/triage/2026-12-06-unseen-github-14.md): the shape that runs (no error) and its twins where the code really fails
(still an error). The runnable case is tests/fixtures/plugin_shapes/MC1_module_a_nested_overlay_folder_copies_into_vllm."""

from __future__ import annotations

from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- MC1
# CARD ships replacement vLLM files and one new module under `vllm_patches/vllm/`, which its README copies over the
# installed package; the files of that overlay import the new module by its vLLM name.
_VLLM = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/sample/__init__.py": "",
    "vllm/v1/sample/logits_processor/__init__.py": "def build_logitsprocs():\n    return []\n",
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/scheduler.py": "class Scheduler:\n    def schedule(self):\n        return []\n",
}
_NEW = {"vllm/v1/sample/logits_processor/paired_logits.py": "def get_pair(i):\n    return i\n"}
_USERS = {
    "vllm/v1/core/scheduler.py": """
        from vllm.v1.sample.logits_processor.paired_logits import get_pair


        class Scheduler:
            def schedule(self):
                return [get_pair(0)]
    """,
    "vllm/v1/sample/logits_processor/ck_pair.py": "from vllm.v1.sample.logits_processor import paired_logits\n",
}


def _under(folder: str, files: dict[str, str]) -> dict[str, str]:
    return {f"{folder}/{rel}": text for rel, text in files.items()}


def _errors(result) -> list[tuple[str, str, int]]:
    assert not result.internal_errors
    return sorted((f.rule, f.client.path, f.client.line) for f in result.findings if f.severity == "error")


def test_mc1_a_nested_overlay_of_vllms_package_provides_its_modules(tmp_path):
    client = _under("vllm_patches", {**_NEW, **_USERS})
    assert _errors(scan_trees(tmp_path, _VLLM, client)) == []


def test_mc1_twins_a_package_of_the_client_or_no_replaced_file_stays_an_error(tmp_path):
    expected = [("DC001", "vllm_patches/vllm/v1/core/scheduler.py", 1),
                ("DC002", "vllm_patches/vllm/v1/sample/logits_processor/ck_pair.py", 1)]
    # the folder above is a package of the client's: its `vllm` is imported as `vllm_patches.vllm`, never copied over
    package = {**_under("vllm_patches", {**_NEW, **_USERS}), "vllm_patches/__init__.py": ""}
    assert _errors(scan_trees(tmp_path / "package", _VLLM, package)) == expected
    # no file of the folder is at a place the release has, and none imports another by vLLM's name (the module's user
    # is a script outside it): nothing says the folder is laid over vLLM's package
    outside = {"run.py": _USERS["vllm/v1/core/scheduler.py"]}
    found = _errors(scan_trees(tmp_path / "loose", _VLLM, {**_under("vllm_patches", _NEW), **outside}))
    assert found == [("DC001", "run.py", 1)]
    # with a file of the folder importing the new module by vLLM's name, it is (batch 19a's R1, all files new)
    renamed = {rel.replace("core/scheduler.py", "core/my_scheduler.py"): text for rel, text in _USERS.items()}
    assert _errors(scan_trees(tmp_path / "self", _VLLM, _under("vllm_patches", {**_NEW, **renamed}))) == []
    # without the new module in the overlay, its import fails wherever the overlay is copied
    assert _errors(scan_trees(tmp_path / "missing", _VLLM, _under("vllm_patches", _USERS))) == expected


# ----------------------------------------------------------------------------------------- MD1
# VAETKI at vLLM 0.34.0: `from vllm.attention.layer import Attention`, a module that is gone. Two modules define a class
# `Attention`: the layer every model imports (through its package), and pixtral's private vision block, one level
# shallower. The hint and `move-import` named pixtral's, and the fix then dropped the keywords that class lacks.
_ATTENTION = {
    "vllm/__init__.py": "",
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/layers/__init__.py": "",
    "vllm/model_executor/layers/attention/__init__.py":
        "from vllm.model_executor.layers.attention.attention import Attention\n\n__all__ = ['Attention']\n",
    "vllm/model_executor/layers/attention/attention.py":
        "class Attention:\n    def __init__(self, num_heads, head_size, scale, num_kv_heads=None, cache_config=None):\n"
        "        self.num_heads = num_heads\n",
    "vllm/model_executor/models/__init__.py": "",
    "vllm/model_executor/models/pixtral.py": "class Attention:\n    def __init__(self, args):\n        self.args = args\n",
    "vllm/model_executor/models/llama.py": "from vllm.model_executor.layers.attention import Attention\n",
    "vllm/model_executor/models/qwen2.py": "from vllm.model_executor.layers.attention import (\n    Attention,\n)\n",
}
_LAYER_USER = {"pkg/__init__.py": "", "pkg/model.py": "from vllm.attention.layer import Attention\n"}


def test_md1_the_home_vllms_own_code_imports_from_is_named(tmp_path):
    [f] = scan_trees(tmp_path, _ATTENTION, _LAYER_USER, only=["DC001"]).findings
    assert "`Attention` in `vllm.model_executor.layers.attention.attention`" in f.message


def test_md1_twin_with_no_import_of_either_no_home_is_named(tmp_path):
    # nothing in the release imports either class, and each shares only the package with `vllm.attention.layer`: no
    # home is likelier than the other (the shallower pixtral was named before 28a H1, the very class MD1 was about)
    alone = {rel: text for rel, text in _ATTENTION.items() if not rel.endswith(("llama.py", "qwen2.py"))}
    alone["vllm/model_executor/layers/attention/__init__.py"] = ""
    [f] = scan_trees(tmp_path, alone, _LAYER_USER, only=["DC001"]).findings
    assert "Where what the client takes from it is defined now" not in f.message


# ----------------------------------------------------------------------------------------- ME1
# CARD's copy of vLLM 0.18.1's scheduler: `if not isinstance(self.connector, SupportsHMA): return`, then
# `self.connector.request_finished_all_groups(...)`, which only NixlConnector among KVConnectorBase_V1's subclasses
# defines, and the mixin SupportsHMA declares: DC006 warned that the line fails for other connectors.
_CONNECTORS = {
    "vllm/__init__.py": "",
    "vllm/kv.py": """
        from abc import ABC, abstractmethod


        class KVConnectorBase:
            def start_load_kv(self):
                pass


        class SupportsHMA(ABC):
            @abstractmethod
            def request_finished_all_groups(self, request):
                raise NotImplementedError


        class NixlConnector(KVConnectorBase, SupportsHMA):
            def request_finished_all_groups(self, request):
                return True


        class OtherConnector(KVConnectorBase):
            pass
    """,
}
_HEAD = """
    from vllm.kv import KVConnectorBase, OtherConnector, SupportsHMA


    class Scheduler:
        def __init__(self, connector: KVConnectorBase, backup: KVConnectorBase):
            self.connector = connector
            self.backup = backup

        def finished(self, request):
"""
_NARROWING = {  # each proves the object has the member: no warning
    "early_exit": """
            if not isinstance(self.connector, SupportsHMA):
                return None
            return self.connector.request_finished_all_groups(request)
    """,
    "early_exit_or": """
            if request is None or not isinstance(self.connector, SupportsHMA):
                raise ValueError(request)
            return self.connector.request_finished_all_groups(request)
    """,
    "inside": """
            if isinstance(self.connector, SupportsHMA) and request is not None:
                return self.connector.request_finished_all_groups(request)
    """,
    "asserted": """
            assert isinstance(self.connector, SupportsHMA), "needs HMA"
            return self.connector.request_finished_all_groups(request)
    """,
}
_NOT_NARROWING = {  # twins: each leaves the warning
    "class_lacks_it": """
            if not isinstance(self.connector, OtherConnector):
                return None
            self.connector.request_finished_all_groups(request)
    """,
    "other_receiver": """
            if not isinstance(self.connector, SupportsHMA):
                return None
            return self.backup.request_finished_all_groups(request)
    """,
    "no_exit": """
            if not isinstance(self.connector, SupportsHMA):
                print("not HMA")
            return self.connector.request_finished_all_groups(request)
    """,
}


def _sched(body: str) -> dict[str, str]:
    import textwrap

    return {"pkg/__init__.py": "", "pkg/sched.py": textwrap.dedent(_HEAD) + textwrap.indent(textwrap.dedent(body), " " * 8)}


def test_me1_a_member_of_the_class_an_isinstance_test_narrows_to(tmp_path):
    for name, body in _NARROWING.items():
        result = scan_trees(tmp_path / name, _CONNECTORS, _sched(body), only=["DC006"])
        assert not result.internal_errors and result.findings == [], name


def test_me1_twins_that_do_not_narrow_keep_the_warning(tmp_path):
    for name, body in _NOT_NARROWING.items():
        result = scan_trees(tmp_path / name, _CONNECTORS, _sched(body), only=["DC006"])
        assert [f.severity for f in result.findings] == ["warning"], name


def test_md1_a_class_still_comes_before_an_assignment_of_the_same_name(tmp_path):
    # llm-service (batch 15a) at vLLM 0.11.2: `from vllm.utils import Device`, the enum, now `vllm.engine.protocol`'s
    # class; `vllm.config.device` assigns a `Literal` of the same name, which vLLM's own code imports
    release = {
        "vllm/__init__.py": "",
        "vllm/utils.py": "def cdiv(a, b):\n    return -(a // -b)\n",
        "vllm/engine/__init__.py": "",
        "vllm/engine/protocol.py": "import enum\n\n\nclass Device(enum.Enum):\n    GPU = enum.auto()\n",
        "vllm/config/__init__.py": "",
        "vllm/config/device.py": "from typing import Literal\n\nDevice = Literal['auto', 'cuda']\n",
        "vllm/config/model.py": "from vllm.config.device import Device\n",
        "vllm/config/cache.py": "from vllm.config.device import Device\n",
    }
    [f] = scan_trees(tmp_path, release, {"pkg/__init__.py": "", "pkg/dev.py": "from vllm.utils import Device\n"},
                     only=["DC002"]).findings
    assert "vllm.engine.protocol" in f.message and "vllm.config.device" not in f.message


# ----------------------------------------------------------------------------------------- MF1
# olmes_setup (batch 15a) ships a whole modified vLLM 0.8.5 in `libs/vllm/` (with its `__init__.py`), which its
# requirements install (`-e ./libs/vllm`): its `engine/metrics.py` adds keywords its `engine/llm_engine.py` passes.
_METRICS = {
    "vllm/__init__.py": "",
    "vllm/engine/__init__.py": "",
    "vllm/engine/metrics.py": "class LoggingStatLogger:\n    def __init__(self, interval):\n        self.interval = interval\n",
}
_COPY = {
    "libs/vllm/__init__.py": "",
    "libs/vllm/engine/__init__.py": "",
    "libs/vllm/engine/metrics.py": "class LoggingStatLogger:\n    def __init__(self, interval, olmes_task=None):\n"
                                   "        self.interval = interval\n        self.task = olmes_task\n",
    "libs/vllm/engine/llm_engine.py": "from vllm.engine.metrics import LoggingStatLogger\n\n\n"
                                      "def loggers():\n    return [LoggingStatLogger(5, olmes_task='gsm8k')]\n",
}


def test_mf1_a_whole_copy_of_vllm_below_the_root_is_the_vllm_that_runs(tmp_path):
    assert _errors(scan_trees(tmp_path, _METRICS, _COPY)) == []


def test_mf1_twin_a_copy_inside_a_package_of_the_client_is_its_own_module(tmp_path):
    # `libs` is a package: the copy is imported as `libs.vllm`, and `vllm.engine.metrics` is the release's
    packaged = {**_COPY, "libs/__init__.py": ""}
    assert _errors(scan_trees(tmp_path, _METRICS, packaged)) == [("DC003", "libs/vllm/engine/llm_engine.py", 5)]


# ----------------------------------------------------------------------------------------- MG1 (batch 16a)
# a DeepSeek-V4.1 image's sitecustomize.py replaces a module-level function of vLLM's, once on the module it imports
# and once on each module `__import__` loads: a function stored only on modules has no `self`, so DC008 has no
# question about the names it reads on its first parameter
_INDEXER = {"vllm/__init__.py": "", "vllm/indexer.py": "def uses_fp4(vllm_config):\n    return False\n"}
_SITE = """
    import vllm.indexer as _idx


    def _uses_fp4(vllm_config):
        return vllm_config.attention_config.use_fp4


    _idx.uses_fp4 = _uses_fp4
    for _m in ("vllm.indexer",):
        __import__(_m, fromlist=["_"]).uses_fp4 = _uses_fp4
"""


def test_mg1_a_function_stored_on_modules_a_loader_returns_has_no_self(tmp_path):
    result = scan_trees(tmp_path, _INDEXER, {"sitecustomize.py": _SITE}, only=["DC008"])
    assert not result.internal_errors and result.unknown == [] and result.findings == []
