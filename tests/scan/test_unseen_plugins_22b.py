"""Batch 22b (PyPI plugins m-z at the vLLM each declares, docs/triage/2026-12-05-unseen-plugins-22b.md).

ZI: where DC002 says a missing name went, and where its move-import fix moves the import. uc-manager-cann900-a3
0.9.0rc3 at vLLM 0.30.0 (and uc-manager-cann901-a5 0.9.0rc1 at 0.27.1) has `from vllm.utils import cdiv`
(ucm/sparse/gsa_on_device/gsa_on_device.py:18). The error is real: 0.30.0's vllm/utils/__init__.py no longer has
`cdiv`. But the finding said "It is defined in `vllm.models.inkling.amd.ops.gluon.rel_mha_decode_gfx950` now", and
`driftcheck fix` would have rewritten the import to that module: the first file, in path order, whose top level binds
`cdiv`, there `cdiv = gl.cdiv` (the Gluon kernel language's own, an AMD-only kernel file). vLLM's integer helper is
`def cdiv` in vllm/utils/math_utils.py. Both now take the definition nearest to the module the name was imported
from (the most leading package parts in common), a `def`/`class` before a plain assignment at the same distance,
then the shallower module (TextIndex.defining_modules). The twins: a name whose only definition is an assignment
far away is still named, and the nearest definition wins even when it is an assignment.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from driftcheck.fix.fixer import FixOptions, plan_fixes
from driftcheck.scan.pipeline import ScanOptions
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import by_rule, scan_trees

ZI = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "ZI_moved_name_imported_from_its_nearest_definition"
FIXED = (ZI / "client" / "plugin" / "sparse.py").read_text()
BROKEN = FIXED.replace("from vllm.utils.math_utils import cdiv", "from vllm.utils import cdiv")


def _copy_client(tmp_path: Path, text: str) -> Path:
    client = tmp_path / "client"
    shutil.copytree(ZI / "client", client)
    (client / "plugin" / "sparse.py").write_text(text)
    return client


def test_zi_hint_names_the_nearest_definition_not_the_first_file(tmp_path):
    from driftcheck.scan.pipeline import scan

    vllm = resolve_vllm(str(ZI / "vllm_src"), tmp_path / "cache")
    client = resolve_client(str(_copy_client(tmp_path, BROKEN)), tmp_path / "cache")
    result = scan(vllm, [client], ScanOptions(cache_dir=tmp_path / "cache", use_cache=False, only=["DC002"]))
    [f] = [f for f in result.findings if f.severity == "error"]
    assert (f.rule, f.symbol, f.client.path) == ("DC002", "vllm.utils.cdiv", "plugin/sparse.py")
    assert f.details["moved_to"] == "vllm.utils.math_utils" and f.fix == "move-import"
    assert "It is defined in `vllm.utils.math_utils` now." in f.message


def test_zi_move_import_writes_the_line_the_shape_runs(tmp_path):
    vllm = resolve_vllm(str(ZI / "vllm_src"), tmp_path / "cache")
    client = resolve_client(str(_copy_client(tmp_path, BROKEN)), tmp_path / "cache")
    plan = plan_fixes(vllm, client, ScanOptions(cache_dir=tmp_path / "cache", use_cache=False),
                      FixOptions(only=["move-import"]))
    assert {c.rel: c.new for c in plan.changes} == {"plugin/sparse.py": FIXED}


def _home(tmp_path: Path, vllm_files: dict[str, str], line: str) -> str | None:
    [f] = by_rule(scan_trees(tmp_path, vllm_files, {"c.py": line + "\n"}, only=["DC002"]), "DC002")
    return f.details.get("moved_to")


def test_zi_a_def_before_an_alias_at_the_same_distance(tmp_path):
    assert _home(tmp_path, {"vllm/a/kernels.py": "import math\nceil_div = math.ceil\n",
                            "vllm/b/helpers.py": "def ceil_div(a, b):\n    return -(a // -b)\n",
                            "vllm/c.py": "X = 1\n"}, "from vllm.c import ceil_div") == "vllm.b.helpers"


def test_zi_twin_an_assignment_is_named_when_it_is_the_nearest_or_the_only_definition(tmp_path):
    # a constant that moved (STR_DTYPE_TO_TORCH_DTYPE went from vllm.utils to vllm.utils.torch_utils): an assignment
    assert _home(tmp_path / "near", {"vllm/utils/__init__.py": "X = 1\n",
                                     "vllm/utils/torch_utils.py": "STR_DTYPE = {'half': 2}\n",
                                     "vllm/aaa/kernel.py": "def STR_DTYPE():\n    return None\n"},
                 "from vllm.utils import STR_DTYPE") == "vllm.utils.torch_utils"
    assert _home(tmp_path / "only", {"vllm/utils/__init__.py": "X = 1\n", "vllm/zzz/consts.py": "LIMIT = 4\n"},
                 "from vllm.utils import LIMIT") == "vllm.zzz.consts"


def test_zi_twin_a_name_defined_nowhere_gets_no_home(tmp_path):
    result = scan_trees(tmp_path, {"vllm/utils/__init__.py": "X = 1\n"}, {"c.py": "from vllm.utils import cdiv\n"},
                        only=["DC002"])
    [f] = by_rule(result, "DC002")
    assert f.severity == "error" and f.details.get("moved_to") is None and f.fix is None


# ZJ: a class whose base is msgspec.Struct was open ("inherits from msgspec.Struct, which driftcheck does not read"), so
# uc-manager 0.9.0rc3's `request.lora_request.id` (ucm/integration/vllm/patch/v0110/vllm/pc/v1/core/block_pool.py:68)
# was unknown at 0.18.0 and 0.30.0. msgspec.Struct's own members are all dunders and its instances have no __dict__
# (msgspec 0.23: setting or reading any other name raises AttributeError), so such a class holds its fields, methods
# and class attributes only. `dict=True` on the class or on one above it gives instances a __dict__: open still.
LORA = '''
import msgspec


class LoRARequest(msgspec.Struct, omit_defaults=True, array_like=True):
    lora_name: str
    lora_int_id: int

    @property
    def adapter_id(self):
        return self.lora_int_id
'''

READ_ID = '''
from vllm.lora.request import LoRARequest


def key(lora: LoRARequest):
    return lora.id
'''


def _dc006(tmp_path: Path, vllm_request: str, client: str = READ_ID) -> list:
    result = scan_trees(tmp_path, {"vllm/lora/request.py": vllm_request}, {"c.py": client}, only=["DC006"])
    return [(f.severity, f.symbol) for f in result.findings] + [("unknown", u.symbol) for u in result.unknown]


def test_zj_a_member_no_msgspec_struct_has_is_missing(tmp_path):
    assert _dc006(tmp_path, LORA) == [("error", "vllm.lora.request.LoRARequest.id")]


def test_zj_twin_dict_true_keeps_the_struct_open(tmp_path):
    own = LORA.replace("array_like=True)", "array_like=True, dict=True)")
    assert _dc006(tmp_path / "own", own) == [("unknown", "vllm.lora.request.LoRARequest.id")]
    above = own.replace("class LoRARequest(", "class _Base(") + "\n\nclass LoRARequest(_Base):\n    pass\n"
    assert _dc006(tmp_path / "above", above) == [("unknown", "vllm.lora.request.LoRARequest.id")]
    below = LORA + "\n\nclass Wide(LoRARequest, dict=True):\n    pass\n"
    assert _dc006(tmp_path / "below", below, READ_ID.replace("LoRARequest", "Wide")) == [("unknown", "vllm.lora.request.Wide.id")]
    assert _dc006(tmp_path / "base", below) == [("error", "vllm.lora.request.LoRARequest.id")]


# ZK: `from vllm.entrypoints.openai import cli_args` (tokenspeed-smg 1.13.0.post20261027 smg/serve.py:759, at 0.32.0)
# imports a submodule the package no longer has; DC002 said only "`cli_args` is not defined in
# `vllm.entrypoints.openai`". It now names the closest module of that name, as DC001 does for a moved module
# (`vllm.entrypoints.launchers.cli_args`), as a hint with no fix: what the client takes from it may not be there.
ZK = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "ZK_submodule_imported_from_its_old_package_under_a_try"
CLI_ARGS = "class FrontendArgs:\n    pass\n"


def _dc002(tmp_path: Path, vllm_files: dict[str, str], line: str):
    [f] = by_rule(scan_trees(tmp_path, vllm_files, {"c.py": line + "\n"}, only=["DC002"]), "DC002")
    return f


def test_zk_shape_warns_and_names_the_module_of_that_name(tmp_path):
    from driftcheck.scan.pipeline import scan

    result = scan(resolve_vllm(str(ZK / "vllm_src"), tmp_path), [resolve_client(str(ZK / "client"), tmp_path)],
                  ScanOptions(cache_dir=tmp_path, use_cache=False, only=["DC002"]))
    [f] = result.findings
    assert (f.severity, f.symbol, f.fix) == ("warning", "vllm.entrypoints.openai.cli_args", None)
    assert "A module of that name is at `vllm.entrypoints.launchers.cli_args`" in f.message


def test_zk_the_closest_module_of_that_name(tmp_path):
    f = _dc002(tmp_path, {"vllm/entrypoints/openai/__init__.py": "X = 1\n",
                          "vllm/benchmarks/cli_args.py": CLI_ARGS,
                          "vllm/entrypoints/launchers/cli_args.py": CLI_ARGS},
               "from vllm.entrypoints.openai import cli_args")
    assert f.severity == "error" and f.fix is None and f.details.get("moved_to") is None
    assert "A module of that name is at `vllm.entrypoints.launchers.cli_args`;" in f.message


def test_zk_twin_no_module_of_that_name_or_not_a_package(tmp_path):
    f = _dc002(tmp_path / "none", {"vllm/entrypoints/openai/__init__.py": "X = 1\n"},
               "from vllm.entrypoints.openai import cli_args")
    assert "A module of that name" not in f.message
    # a plain module has no submodules: `from vllm.envs import cli_args` names a missing attribute, not a module
    f = _dc002(tmp_path / "module", {"vllm/envs.py": "X = 1\n", "vllm/entrypoints/launchers/cli_args.py": CLI_ARGS},
               "from vllm.envs import cli_args")
    assert "A module of that name" not in f.message
