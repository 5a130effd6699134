"""Root causes of false errors from the fifteenth batch (real vLLM clients taken from GitHub,
docs/triage/2026-12-03-github-clients-15.md): the shape that runs (a warning at most), and the same shape where the
code really runs on the target, which must stay an error.
"""

from __future__ import annotations

import textwrap

from scan.helpers import scan_trees
from scan.test_unseen_plugins_5 import PLUGGABLE

# ----------------------------------------------------------------------------------------- GA
# vllm-gcu 0.9.2 (EnflameTechnology/vllm-gcu @ v0.9.2, `vllm==0.9.2`): vllm_gcu/patch/__init__.py loads its per-release
# patch packages with `if is_vllm_equal("0.8.0"): from vllm_gcu.patch import patch_0_8_0`, where `is_vllm_equal` is a
# helper of vllm_gcu/utils.py comparing vLLM's base version with its argument for equality
VLLM = {"vllm/__init__.py": "__version__ = '0.99.0'\n", "vllm/core.py": "def present():\n    return 1\n"}
COPY = "from vllm.core import gone\n"  # the patch for an old release imports a name this vLLM lacks


def _utils(compare: str) -> str:
    return textwrap.dedent(f"""
        from packaging import version


        def is_vllm_equal(target: str) -> bool:
            try:
                import vllm
                vllm_base_version = version.parse(str(vllm.__version__)).base_version
                target_base_version = version.parse(target).base_version
                return vllm_base_version {compare} target_base_version
            except Exception:
                return False
    """)


def _client(compare: str = "==", test: str = 'is_vllm_equal("0.8.0")', own: bool = False) -> dict[str, str]:
    helper = _utils(compare) if own else ""
    imports = "" if own else "from pkg.utils import is_vllm_equal\n"
    return {"pkg/__init__.py": "", "pkg/utils.py": _utils(compare), "pkg/patch_0_8_0/__init__.py": "import pkg.patch_0_8_0.fc\n",
            "pkg/patch_0_8_0/fc.py": COPY,
            "pkg/patch/__init__.py": f"{imports}{helper}\nif {test}:\n    from pkg import patch_0_8_0  # noqa\n"}


def _severities(result) -> dict[str, str]:
    return {f.client.path: f.severity for f in result.findings if f.rule in ("DC001", "DC002")}


def test_ga_a_release_equality_helper_of_another_file_dispatches_the_patch(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _client())) == {"pkg/patch_0_8_0/fc.py": "warning"}


def test_ga_the_helper_defined_in_the_same_file_and_an_or_of_releases(tmp_path):
    test = 'is_vllm_equal("0.8.0") or is_vllm_equal("0.8.1")'
    assert _severities(scan_trees(tmp_path, VLLM, _client(test=test, own=True))) == {"pkg/patch_0_8_0/fc.py": "warning"}


def test_ga_an_ordering_helper_loads_the_patch_on_every_newer_release(tmp_path):
    # `return base >= target`: "at least 0.8.0" holds on the target too, so the patch runs there
    assert _severities(scan_trees(tmp_path, VLLM, _client(compare=">="))) == {"pkg/patch_0_8_0/fc.py": "error"}


def test_ga_a_negated_helper_call_loads_the_patch_everywhere_else(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _client(test='not is_vllm_equal("0.8.0")'))) == {
        "pkg/patch_0_8_0/fc.py": "error"}


# ----------------------------------------------------------------------------------------- GC
# ROLL 0.3.0 (alibaba/ROLL @ v0.3.0, requirements_torch280_vllm.txt `vllm==0.10.2`, requirements_torch260_vllm.txt
# `vllm==0.8.4`): roll/third_party/vllm/__init__.py picks its patches by an `if` chain on vLLM's version; the branch
# for 0.15 and later imports patch_transformers (modules of vLLM 0.16+) and names ray_distributed_executor's class
# by string (`safe_import_class("roll.third_party.vllm.ray_distributed_executor.CustomRayDistributedExecutor")`)
def _chain(test: str = 'Version("0.15") <= Version(vllm.__version__)', elsewhere: str = "") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/newer.py": COPY, "pkg/executor.py": COPY, "pkg/other.py": elsewhere,
            "pkg/third_party/__init__.py": f"""
import vllm
from packaging.version import Version

from pkg.utils import safe_import_class

if Version("0.8.4") == Version(vllm.__version__):
    executor = None
elif {test}:
    import pkg.newer  # apply patch
    executor = safe_import_class("pkg.executor.Executor")
else:
    executor = None
""", "pkg/utils.py": "import importlib\n\n\ndef safe_import_class(path):\n    module, _, name = path.rpartition('.')\n"
                    "    return getattr(importlib.import_module(module), name)\n"}


_GC = {"pkg/newer.py": "warning", "pkg/executor.py": "warning"}


def test_gc_a_module_loaded_only_past_a_bound_the_target_is_below_is_not_run(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _chain(), version="0.10.2")) == _GC


def test_gc_the_same_branch_runs_on_a_release_past_the_bound(tmp_path):
    assert _severities(scan_trees(tmp_path, VLLM, _chain(), version="0.99.0")) == {
        "pkg/newer.py": "error", "pkg/executor.py": "error"}


def test_gc_an_undecided_test_or_a_load_elsewhere_keeps_the_module_checked(tmp_path):
    undecided = _chain(test='Version("0.15") <= Version(other.__version__)')
    assert _severities(scan_trees(tmp_path / "a", VLLM, undecided, version="0.10.2")) == {
        "pkg/newer.py": "error", "pkg/executor.py": "error"}
    loaded = _chain(elsewhere="import pkg.newer\n")  # a file without vLLM loads it unconditionally
    assert _severities(scan_trees(tmp_path / "b", VLLM, loaded, version="0.10.2")) == {
        "pkg/newer.py": "error", "pkg/executor.py": "warning"}


def test_gc_an_upper_bound_the_target_is_past_skips_its_body(tmp_path):
    client = _chain(test='Version(vllm.__version__) < Version("0.15")')
    # on 0.99.0 the test is False: its body (the import) is skipped
    assert _severities(scan_trees(tmp_path, VLLM, client, version="0.99.0")) == _GC


def test_gc_the_else_of_a_test_the_target_passes_is_not_run(tmp_path):
    client = {"pkg/__init__.py": "", "pkg/newer.py": COPY, "pkg/apply.py": """
import vllm

release = vllm.__version__
if release < "0.15":
    pass
else:
    import pkg.newer
"""}
    assert _severities(scan_trees(tmp_path / "a", VLLM, client, version="0.10.2")) == {"pkg/newer.py": "warning"}
    assert _severities(scan_trees(tmp_path / "b", VLLM, client, version="0.99.0")) == {"pkg/newer.py": "error"}


# ----------------------------------------------------------------------------------------- GH
# vllm-ascend v0.22.1rc1 (vllm-project/vllm-ascend, .github/vllm-release-tag.commit `v0.22.1`): vllm_ascend/utils.py
# registers `"FusedMoE": AscendFusedMoE` with `CustomOp.register_oot(_decorated_op_cls=op_cls, name=name)` in a loop;
# in vLLM 0.22.1 `FusedMoE` is a `PluggableLayer`, whose `__new__` reads the module's `op_registry_oot`, the dict
# `CustomOp.register_oot` fills (model_executor/custom_op.py:22, 47-62, 332-337). AscendFusedMoE's
# `__init__(*args, **kwargs)` pops `hash` and `tid2eid`, which its DeepSeek V4 model passes to `FusedMoE(...)`.
_CUSTOM_OP = """

        other_oot = {{}}

        class CustomOp:
            @classmethod
            def register_oot(cls, _decorated_op_cls=None, name=None):
                def decorator(op_cls):
                    {table}[name or cls.__name__] = op_cls
                    return op_cls
                return decorator(_decorated_op_cls)
"""


def _moe_vllm(table: str = "op_registry_oot") -> dict[str, str]:
    """test_unseen_plugins_5's PluggableLayer (its `__new__` reads `op_registry_oot`) and a `CustomOp` of the same
    module whose `register_oot` fills `table`."""
    return {**PLUGGABLE, "vllm/custom_op.py": PLUGGABLE["vllm/custom_op.py"] + _CUSTOM_OP.format(table=table)}


def _moe_client(register: str = "CustomOp.register_oot") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/moe.py": """
from vllm.mla import Wrapper


class AscendWrapper(Wrapper):
    def __init__(self, *args, **kwargs):
        kwargs.pop("hash", None)
        super().__init__(*args, **kwargs)
""", "pkg/utils.py": f"""
def register_ascend_customop():
    from vllm.custom_op import CustomOp, PluggableLayer

    from pkg.moe import AscendWrapper

    ops = {{"Wrapper": AscendWrapper}}
    for name, op_cls in ops.items():
        {register}(_decorated_op_cls=op_cls, name=name)
""", "pkg/model.py": """
from vllm.mla import Wrapper


def build():
    return Wrapper(64, hash=True)
"""}


def _dc003(result) -> list[tuple[str, str]]:
    return [(f.client.path, f.severity) for f in result.findings if f.rule == "DC003" and f.client.path == "pkg/model.py"]


def test_gh_a_registrar_of_another_class_filling_the_table_new_reads_builds_the_replacement(tmp_path):
    assert _dc003(scan_trees(tmp_path, _moe_vllm(), _moe_client())) == []


def test_gh_a_registrar_filling_another_table_replaces_nothing(tmp_path):
    # register_oot filling a dict `__new__` never reads, or the in-tree `register`: FusedMoE(...) builds a FusedMoE
    assert _dc003(scan_trees(tmp_path / "a", _moe_vllm("other_oot"), _moe_client())) == [("pkg/model.py", "error")]
    assert _dc003(scan_trees(tmp_path / "b", _moe_vllm(), _moe_client("PluggableLayer.register"))) == [
        ("pkg/model.py", "error")]
