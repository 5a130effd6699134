"""DC007 unknown-rpc-method: `collective_rpc("name")` names a method no worker class defines."""

from __future__ import annotations

from scan.helpers import scan_client, vline

GEN = """
    from vllm.v1.executor.multiproc_executor import MultiprocExecutor


    class Gen:
        def __init__(self, cfg):
            self.executor = MultiprocExecutor(cfg)
            self.executor.collective_rpc("get_kv_cache_spec")
            self.executor.collective_rpc("load_model")
            self.executor.collective_rpc(method="sample_tokens", args=(None,))
            self.executor.collective_rpc("_reset_capture")
            self.executor.collective_rpc(self.name)  # not a literal: nothing to check
"""

EXTENSION = {
    "pkg/__init__.py": "",
    "pkg/ext.py": """
        import vllm


        class CaptureExtension:
            def _reset_capture(self):
                self._captured = []
    """,
}


def test_present_for_a_method_no_worker_defines(tmp_path):
    result = scan_client(tmp_path, {"pkg/__init__.py": "", "pkg/gen.py": GEN}, only=["DC007"])
    [f] = result.findings
    assert (f.symbol, f.client.path, f.client.line, f.severity) == ("_reset_capture", "pkg/gen.py", 10, "error")
    rel = "vllm/v1/worker/gpu_worker.py"
    assert (f.vllm.path, f.vllm.line) == (rel, vline(rel, "class Worker"))


def test_absent_when_the_client_worker_extension_defines_it(tmp_path):
    gen = GEN.replace("MultiprocExecutor(cfg)", 'MultiprocExecutor(cfg, worker_extension_cls="pkg.ext.CaptureExtension")')
    result = scan_client(tmp_path, {**EXTENSION, "pkg/gen.py": gen}, only=["DC007"])
    # get_kv_cache_spec lives on WorkerBase (another module), _reset_capture on the extension
    assert result.findings == [] and result.unknown == []


def test_extension_named_for_another_class_does_not_help(tmp_path):
    gen = GEN.replace("MultiprocExecutor(cfg)", 'MultiprocExecutor(cfg, worker_extension_cls="pkg.ext.Other")')
    result = scan_client(tmp_path, {**EXTENSION, "pkg/gen.py": gen}, only=["DC007"])
    assert [f.symbol for f in result.findings] == ["_reset_capture"]


def _extension_deriving(tmp_path, header: str, bases: str):
    gen = GEN.replace("MultiprocExecutor(cfg)", 'MultiprocExecutor(cfg, worker_extension_cls="pkg.ext.CaptureExtension")')
    ext = f"""
        import vllm
        {header}


        class CaptureExtension({bases}):
            def other(self):
                pass
    """
    return scan_client(tmp_path, {"pkg/__init__.py": "", "pkg/ext.py": ext, "pkg/gen.py": gen}, only=["DC007"])


def test_unknown_when_the_extension_derives_from_a_class_outside_the_tree(tmp_path):
    # an installed library's base class may define the method the rpc names: no error, an unknown naming that base
    result = _extension_deriving(tmp_path, "from rollout_lib.workers import BaseExtension", "BaseExtension")
    assert result.findings == []
    [u] = result.unknown
    assert u.symbol == "_reset_capture" and "derives from rollout_lib.workers.BaseExtension" in u.message


def test_the_extensions_own_methods_still_answer_beside_such_a_base(tmp_path):
    # 12c: making the whole class unreadable turned rpcs to the methods it defines itself into unknowns
    gen = GEN.replace("MultiprocExecutor(cfg)", 'MultiprocExecutor(cfg, worker_extension_cls="pkg.ext.CaptureExtension")')
    ext = """
        import vllm
        from rollout_lib.workers import BaseExtension


        class CaptureExtension(BaseExtension):
            def _reset_capture(self):
                pass
    """
    result = scan_client(tmp_path, {"pkg/__init__.py": "", "pkg/ext.py": ext, "pkg/gen.py": gen}, only=["DC007"])
    assert result.findings == [] and result.unknown == []
    gen = gen.replace('collective_rpc("_reset_capture")', 'collective_rpc("_warm_up")')
    result = scan_client(tmp_path / "2", {"pkg/__init__.py": "", "pkg/ext.py": ext, "pkg/gen.py": gen}, only=["DC007"])
    assert result.findings == [] and [u.symbol for u in result.unknown] == ["_warm_up"]


def test_unknown_when_a_mixin_of_the_module_derives_from_such_a_class(tmp_path):
    header = "from rollout_lib.workers import BaseExtension\n\n\n        class Mixin(BaseExtension):\n            pass"
    result = _extension_deriving(tmp_path, header, "Mixin")
    assert result.findings == [] and [u.symbol for u in result.unknown] == ["_reset_capture"]


def test_a_dotted_base_through_a_module_import(tmp_path):
    result = _extension_deriving(tmp_path, "import rollout_lib.workers as rw", "rw.BaseExtension")
    assert result.findings == []
    [u] = result.unknown
    assert "derives from rollout_lib.workers.BaseExtension" in u.message
    # a module of the client's own tree is read: its class defines the method
    files = {"pkg/__init__.py": "", "pkg/base.py": "class Base:\n    def _reset_capture(self):\n        pass\n"}
    gen = GEN.replace("MultiprocExecutor(cfg)", 'MultiprocExecutor(cfg, worker_extension_cls="pkg.ext.CaptureExtension")')
    ext = "import vllm\nimport pkg.base\n\n\nclass CaptureExtension(pkg.base.Base):\n    pass\n"
    result = scan_client(tmp_path / "own", {**files, "pkg/ext.py": ext, "pkg/gen.py": gen}, only=["DC007"])
    assert result.findings == [] and result.unknown == []


def test_a_standard_library_or_vllm_base_adds_nothing_and_the_error_stays(tmp_path):
    result = _extension_deriving(tmp_path, "from abc import ABC", "ABC")
    assert [f.symbol for f in result.findings] == ["_reset_capture"] and result.unknown == []
    result = _extension_deriving(tmp_path / "v", "from vllm.v1.worker.worker_base import WorkerBase", "WorkerBase")
    assert [f.symbol for f in result.findings] == ["_reset_capture"] and result.unknown == []
    result = _extension_deriving(tmp_path / "a", "import abc", "abc.ABC")
    assert [f.symbol for f in result.findings] == ["_reset_capture"] and result.unknown == []


def test_an_extension_named_by_a_module_constant_spelling_its_own_module(tmp_path):
    # SkyRL: `EXT = f"{__name__}.Wrap"` in the extension's module, imported and handed on by another file (12c)
    gen = GEN.replace("from vllm.v1.executor.multiproc_executor import MultiprocExecutor",
                      "from vllm.v1.executor.multiproc_executor import MultiprocExecutor\n    from pkg.ext import EXT")
    gen = gen.replace("MultiprocExecutor(cfg)", "MultiprocExecutor(cfg, worker_extension_cls=EXT)")
    ext = {"pkg/ext.py": EXTENSION["pkg/ext.py"] + '\n\n        EXT = f"{__name__}.CaptureExtension"\n'}
    result = scan_client(tmp_path, {"pkg/__init__.py": "", **ext, "pkg/gen.py": gen}, only=["DC007"])
    assert result.findings == [] and result.unknown == []
    # the same constant used in its own file
    own = EXTENSION["pkg/ext.py"] + '''
        EXT = f"{__name__}.CaptureExtension"


        def start(cfg):
            from vllm.v1.executor.multiproc_executor import MultiprocExecutor
            executor = MultiprocExecutor(cfg, worker_extension_cls=EXT)
            executor.collective_rpc("_reset_capture")
            executor.collective_rpc("_not_there")
    '''
    result = scan_client(tmp_path / "own", {"pkg/__init__.py": "", "pkg/ext.py": own}, only=["DC007"])
    assert [f.symbol for f in result.findings] == ["_not_there"] and result.unknown == []


SCRIPT = """
    from vllm.v1.executor.multiproc_executor import MultiprocExecutor


    def main(cfg):
        executor = MultiprocExecutor(cfg, worker_extension_cls="dft_ext.DumpExt")
        executor.collective_rpc("dump_hidden")
        executor.collective_rpc("dump_nothing")
"""

BESIDE = {
    "tools/dft/dft_ext.py": """
        class DumpExt:
            def dump_hidden(self):
                pass
    """,
}


def test_an_extension_module_beside_the_script_that_names_it(tmp_path):
    # 12b: `python tools/dft/extract.py` has tools/dft first on sys.path; "dft_ext.DumpExt" is tools/dft/dft_ext.py
    script = SCRIPT + '\n\n    if __name__ == "__main__":\n        main(None)\n'
    result = scan_client(tmp_path, {**BESIDE, "tools/dft/extract.py": script}, only=["DC007"])
    assert [f.symbol for f in result.findings] == ["dump_nothing"] and result.unknown == []
    # a module that is no script (imported from elsewhere, its folder not on sys.path): still unknown
    result = scan_client(tmp_path / "lib", {**BESIDE, "tools/dft/extract.py": SCRIPT}, only=["DC007"])
    assert result.findings == [] and {u.symbol for u in result.unknown} == {"dump_hidden", "dump_nothing"}
