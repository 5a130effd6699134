"""Twenty-third session: the readers the third read of the twenty-second found doubled, and batch 28's findings.

`imported_path` answers what a dotted name means through a file's top-level imports, for DC122 (a decorator on a
client dataclass) and DC124 (a builder a client helper calls) alike; it had two copies that differed in which import
forms they read.
"""

from __future__ import annotations

import ast

import pytest

from driftcheck.client_model.imported_functions import imported_path, vllm_callee


@pytest.mark.parametrize("source, name, path", [
    ("from vllm.config.utils import config\n", "config", "vllm.config.utils.config"),
    ("from vllm.config import utils as cu\n", "cu.config", "vllm.config.utils.config"),
    ("import vllm.config.utils as cu\n", "cu.config", "vllm.config.utils.config"),
    ("import vllm.config.utils\n", "vllm.config.utils.config", "vllm.config.utils.config"),
    ("from .utils import config\n", "config", None),  # the client's own module
    ("def config(x):\n    return x\n", "config", None),
])
def test_imported_path_reads_every_import_form(source, name, path):
    assert imported_path(ast.parse(source), name) == path


def test_a_builder_called_by_its_full_module_path_is_vllms():
    """`import vllm.engine.arg_utils` then `vllm.engine.arg_utils.AsyncEngineArgs.add_cli_args(p)`: the callee is
    vLLM's builder (the copy DC124 read before answered None for a module imported without an alias)."""
    tree = ast.parse("import vllm.engine.arg_utils\n\n\ndef build(p):\n"
                     "    return vllm.engine.arg_utils.AsyncEngineArgs.add_cli_args(p)\n")
    call = tree.body[1].body[0].value
    assert vllm_callee(tree, call) == "vllm.engine.arg_utils.AsyncEngineArgs.add_cli_args"
    assert vllm_callee(ast.parse("import numpy as vllm\n"), ast.parse("vllm.f()").body[0].value) is None


# 28b F1 (nano-grpo's cs336 vllm_utils.py): `patch("vllm.worker.worker.Worker....")` with `patch` never imported is a
# NameError, not mock's patch; a client's own `def patch` is not mock's either. Only a `patch` the file's imports bind to
# mock (anywhere in the file: tests import it inside functions and `try` blocks) resolves its path.
from scan.test_batch_27 import _METRICS  # noqa: E402

_PATCHED = '"vllm.engine.metrics.StatLogger.log"'


@pytest.mark.parametrize("source,found", [
    (f"import vllm  # noqa: F401\n\nP = patch({_PATCHED})\n", []),
    (f"import vllm  # noqa: F401\n\n\ndef patch(target):\n    return target\n\n\nP = patch({_PATCHED})\n", []),
    (f"import vllm  # noqa: F401\n\n\ndef test_it():\n    from unittest import mock\n    with mock.patch({_PATCHED}):\n"
     "        pass\n", [("DC001", 6)]),
    (f"try:\n    import mock\nexcept ImportError:\n    from unittest import mock\n\nP = mock.patch({_PATCHED})\n",
     [("DC001", 6)]),
    (f"from unittest.mock import patch as p\n\nP = p({_PATCHED})\n", [("DC001", 3)]),
    (f"import unittest.mock\n\nP = unittest.mock.patch({_PATCHED})\n", [("DC001", 3)]),
], ids=["never imported", "the client's own patch", "imported in the test", "mock or unittest.mock", "an alias",
        "unittest.mock by its module"])
def test_28b_f1_only_a_patch_the_imports_bind_to_mock_resolves_its_path(tmp_path, source, found):
    from scan.helpers import scan_trees
    result = scan_trees(tmp_path, _METRICS, {"tests/__init__.py": "", "tests/test_m.py": source}, only=["DC001", "DC002"])
    assert [(f.rule, f.client.line) for f in result.findings] == found


# 28a U1 (InferenceHackathon's TP all-reduce patch): a module function stored onto a vLLM module that a function of the
# client imports locally (`from vllm.distributed import communication_op as cop; cop.f = fn`) is a plain function: its
# first parameter is an argument, not a `self` of some class, so DC008 has nothing to ask about it.
_DIST = {"vllm/__init__.py": "", "vllm/distributed/__init__.py": "class Group:\n    pass\n",
         "vllm/distributed/communication_op.py": "def tensor_model_parallel_all_reduce(t):\n    return t\n"}


@pytest.mark.parametrize("imported,unknown", [("from vllm.distributed import communication_op as cop", False),
                                              ("from other import holder as cop", True)],
                         ids=["a vLLM module", "an object the file cannot type: the question stays"])
def test_28a_u1_a_function_stored_on_a_locally_imported_vllm_module_has_no_self(tmp_path, imported, unknown):
    from scan.helpers import scan_trees
    client = ("import vllm  # noqa: F401\n\n\ndef _patched_ar(tensor):\n    if tensor.numel() > 4096:\n        return tensor\n    return tensor\n\n\n"
              f"def patch():\n    {imported}\n    cop.tensor_model_parallel_all_reduce = _patched_ar\n")
    result = scan_trees(tmp_path, _DIST, {"pkg/__init__.py": client}, only=["DC008"])
    assert [u.rule for u in result.unknown] == (["DC008"] if unknown else [])


# 28a H1 (InferenceHackathon at 0.34.0): DC001's "defined now" hint sent `from vllm.scripts import serve` to a vendored
# library's socket `serve` that shares only the package with `vllm.scripts` and that no vLLM file imports, and its
# `moved_to` named a same-named `abstract` module (an EPLB policy) while the message named `AttentionType`'s real home.
_MOVED = {"vllm/__init__.py": "", "vllm/v1/__init__.py": "", "vllm/v1/attention/__init__.py": "",
          "vllm/v1/attention/backend.py": "class AttentionType:\n    DECODER = 'decoder'\n",
          "vllm/v1/worker/__init__.py": "", "vllm/v1/worker/runner.py": "from vllm.v1.attention.backend import AttentionType\n",
          "vllm/distributed/__init__.py": "", "vllm/distributed/eplb/__init__.py": "",
          "vllm/distributed/eplb/abstract.py": "class Policy:\n    pass\n",
          "vllm/third_party/__init__.py": "", "vllm/third_party/lib/__init__.py": "",
          "vllm/third_party/lib/socket_utils.py": "def serve(sock):\n    return sock\n"}


@pytest.mark.parametrize("importer,imported", [
    ("", False),
    ("from vllm.third_party.lib.socket_utils import serve\n", True),
    ("from vllm.third_party.lib.socket_utils import listen\n", True),  # 28d: 0.34.0's StatLoggerBase, only defined
], ids=["no vLLM file imports from it", "vLLM imports the name from it", "vLLM imports another of its names"])
def test_28a_h1_a_home_that_shares_only_the_package_is_named_where_vllm_imports_from_it(tmp_path, importer, imported):
    from scan.helpers import scan_trees
    vllm = {**_MOVED, **({"vllm/entrypoints.py": importer} if importer else {})}
    client = {"c.py": "from vllm.attention.backends.abstract import AttentionType\nfrom vllm.scripts import serve\n"}
    found = {f.client.line: f for f in scan_trees(tmp_path, vllm, client, only=["DC001"]).findings}
    assert "`AttentionType` in `vllm.v1.attention.backend`" in found[1].message
    assert found[1].details["moved_to"] == "vllm.v1.attention.backend" and found[1].fix == "move-import"
    assert ("`serve` in `vllm.third_party.lib.socket_utils`" in found[2].message) == imported


# 28c FW1 (vLLM 0.22.0-0.33.0's own multiproc_executor): `if hasattr(self.worker, "device"): return self.worker.device`,
# where whether the name exists cannot be known (`WorkerWrapperBase.__getattr__` hands it on to a run-time object):
# the use runs only where the name is there, so nothing is said of it; a probe of another name or object leaves the
# question, guarded (a warning), and the same read unguarded stays an unknown.
_WRAPPER = {"vllm/__init__.py": "", "vllm/worker_base.py": "class WorkerWrapperBase:\n    def __init__(self):\n"
            "        self.worker = None\n\n    def __getattr__(self, attr):\n        return getattr(self.worker, attr)\n"}


@pytest.mark.parametrize("test,found", [
    ('hasattr(self.worker, "device")', []),
    ("hasattr(self.worker, 'device')", []),
    ('hasattr(self.worker, "other")', [("DC006", "warning", 10)]),
    ('hasattr(self.other, "device")', [("DC006", "warning", 10)]),
], ids=["the very name", "single quotes", "another name", "another object"])
def test_28c_fw1_a_question_under_a_probe_of_the_very_name_is_no_finding(tmp_path, test, found):
    from scan.helpers import scan_trees
    client = ("from vllm.worker_base import WorkerWrapperBase\n\n\nclass Proc:\n"
              "    def __init__(self, worker: WorkerWrapperBase):\n        self.worker = worker\n\n"
              f"    def guarded(self):\n        if {test}:\n            return self.worker.device\n\n"
              "    def unguarded(self):\n        return self.worker.device\n")
    result = scan_trees(tmp_path, _WRAPPER, {"c.py": client}, only=["DC006"])
    assert [(f.rule, f.severity, f.client.line) for f in result.findings] == found
    assert [(u.rule, u.client.line) for u in result.unknown] == [("DC006", 13)]


# 28c FW2 (vLLM 0.32.0 / 0.33.0's MLA indexer): `isinstance(self.kv_cache_spec, MLAAttentionSpec) and
# self.kv_cache_spec.model_version` reads the member only where the test held: narrowed as an `if isinstance(...)`
# around it would be (a local name was already); the same read without the test stays a warning.
_SPECS = {"vllm/__init__.py": "", "vllm/kv.py": "class KVCacheSpec:\n    pass\n\n\nclass AttentionSpec(KVCacheSpec):\n"
          "    pass\n\n\nclass MLAAttentionSpec(AttentionSpec):\n    model_version: str | None = None\n\n\n"
          "class SlidingMLASpec(AttentionSpec):\n    model_version: str | None = None\n"}


@pytest.mark.parametrize("test,found", [
    ("n > 1 and isinstance(self.spec, MLAAttentionSpec) and self.spec.model_version", []),
    ("isinstance(self.spec, MLAAttentionSpec) and self.spec.model_version", []),
    ("not isinstance(self.spec, MLAAttentionSpec) or self.spec.model_version", []),
    ("isinstance(self.spec, MLAAttentionSpec) or self.spec.model_version", [("DC006", 9)]),
    ("n > 1 and self.spec.model_version", [("DC006", 9)]),
], ids=["after an and", "the first term", "after a failed not-or", "after a held or: not narrowed", "no test"])
def test_28c_fw2_a_term_after_an_isinstance_in_an_and_is_narrowed(tmp_path, test, found):
    from scan.helpers import scan_trees
    client = ("from vllm.kv import AttentionSpec, MLAAttentionSpec\n\n\nclass Builder:\n"
              "    def __init__(self, spec: AttentionSpec, n: int):\n        self.spec = spec\n\n"
              f"    def build(self, n):\n        if {test}:\n            return 1\n")
    result = scan_trees(tmp_path, _SPECS, {"c.py": client}, only=["DC006"])
    assert [(f.rule, f.client.line) for f in result.findings] == found


# 28c FW2's message: a test of an object's own field named for a version (`self.spec.model_version == "v4"`) is no
# vLLM version check; a name for vLLM's own version stays one wherever it is read (`self.cfg.vllm_version`).
@pytest.mark.parametrize("test,severity", [('self.spec.model_version == "v4"', "error"),
                                           ("self.cfg.vllm_version > (0, 9)", "warning")],
                         ids=["a model's version", "vLLM's version held by the client"])
def test_28c_a_field_named_version_is_no_vllm_version_check(tmp_path, test, severity):
    from scan.helpers import scan_trees
    vllm = {"vllm/__init__.py": "", "vllm/kv.py": "class Spec:\n    model_version = None\n\n    def kept(self):\n"
            "        return 1\n"}
    client = ("from vllm.kv import Spec\n\n\nclass Builder:\n    def __init__(self, spec: Spec, cfg):\n"
              f"        self.spec = spec\n        self.cfg = cfg\n\n    def build(self):\n        if {test}:\n"
              "            return self.spec.gone()\n")
    [f] = scan_trees(tmp_path, vllm, {"c.py": client}, only=["DC006"]).findings
    assert (f.client.line, f.severity) == (11, severity)


# 27d W1 (ddtrace 4.16.0's vLLM integration): `if not getattr(vllm, ATTR_DATADOG_PATCH, False): return`, the name
# imported from the integration's `_constants`, which the file itself sets with `setattr(vllm, ATTR_DATADOG_PATCH, ...)`:
# a probe of the client's own marker, no guard of the vLLM uses after it; without the file's setattr the probe's name
# is unknown and it still guards what it covers.
_ENGINE = {"vllm/__init__.py": "", "vllm/v1/__init__.py": "", "vllm/v1/engine/__init__.py": ""}


@pytest.mark.parametrize("sets,severity", [(True, "error"), (False, "warning")],
                         ids=["the file sets the marker", "a name it never sets"])
def test_27d_w1_a_probe_of_the_clients_own_marker_guards_no_vllm_use(tmp_path, sets, severity):
    from scan.helpers import scan_trees
    patch = ("import vllm\n\nfrom ._constants import ATTR_DATADOG_PATCH\n\n\ndef unpatch():\n"
             "    if not getattr(vllm, ATTR_DATADOG_PATCH, False):\n        return\n"
             + ("    setattr(vllm, ATTR_DATADOG_PATCH, False)\n" if sets else "    pass\n")
             + "    print(vllm.v1.engine.processor.Processor)\n")
    client = {"ddint/__init__.py": "", "ddint/_constants.py": 'ATTR_DATADOG_PATCH = "_datadog_patch"\n',
              "ddint/patch.py": patch}
    [f] = scan_trees(tmp_path, _ENGINE, client, only=["DC002"]).findings
    assert (f.client.line, f.severity) == (10, severity)


# 28e F2 (vllm-tgis-adapter's tests/test_grpc_server.py): an import inside a test that pytest skips on vLLM >= 0.11.0
# runs only on the releases before it: guarded as the branch of an `if` on the version is (a warning); a skip on
# anything else guards nothing.
@pytest.mark.parametrize("marker,severity", [
    ("@pytest.mark.skipif(vllm_version >= (0, 11, 0), reason='dropped')", "warning"),
    ("@unittest.skipIf(vllm_version >= (0, 11, 0), 'dropped')", "warning"),
    ("@unittest.skipUnless(vllm_version < (0, 11, 0), 'dropped')", "warning"),
    ("@pytest.mark.skipif(sys.platform == 'win32', reason='posix')", "error"),
], ids=["pytest skipif", "unittest skipIf", "unittest skipUnless", "not a version test"])
def test_28e_f2_a_test_skipped_on_newer_releases_guards_its_body(tmp_path, marker, severity):
    from scan.helpers import scan_trees
    test = ("import sys\nimport unittest\n\nimport pytest\nfrom vllm import __version_tuple__ as vllm_version\n\n\n"
            f"{marker}\ndef test_error_handling():\n    from vllm.engine.multiprocessing import MQEngineDeadError\n\n"
            "    assert MQEngineDeadError\n")
    vllm = {"vllm/__init__.py": "__version_tuple__ = (0, 99, 0)\n", "vllm/engine/__init__.py": ""}
    [f] = scan_trees(tmp_path, vllm, {"tests/__init__.py": "", "tests/test_grpc.py": test}, only=["DC001"]).findings
    assert (f.client.line, f.severity) == (10, severity)


# 28e F1 (the Ascend AgentSDK tests' shape): an autouse fixture puts MagicMocks for vLLM modules into `sys.modules`,
# then patches names by string; the patch resolves through the stub on any vLLM. The same patch without the stub is
# DC001's error.
_STUBBED = '''import sys
from unittest.mock import MagicMock, patch

import pytest


@pytest.fixture(autouse=True)
def mock_dependencies(monkeypatch):
{stub}    with patch("vllm.entrypoints.openai.serving_chat.OpenAIServingChat") as chat:
        yield chat


def test_server(mock_dependencies):
    assert mock_dependencies
'''


@pytest.mark.parametrize("stub,found", [
    ('    monkeypatch.setitem(sys.modules, "vllm.entrypoints.openai.serving_chat", MagicMock())\n', []),
    ("", [("DC001", 10)]),
], ids=["stubbed first", "no stub"])
def test_28e_f1_a_patch_through_a_sys_modules_stub_resolves(tmp_path, stub, found):
    from scan.helpers import scan_trees
    vllm = {"vllm/__init__.py": "", "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/openai/__init__.py": ""}
    test = "import vllm  # noqa: F401\n" + _STUBBED.format(stub=stub)
    result = scan_trees(tmp_path, vllm, {"tests/__init__.py": "", "tests/test_srv.py": test}, only=["DC001", "DC002"])
    assert [(f.rule, f.client.line) for f in result.findings] == found


# 28e M1 (vllm-detector-adapter's and kserve's test shapes): the object form of a patch looks the name up on an object
# the file imports from vLLM, as the string form does: `patch.object(Worker, "m")`, `mocker.patch.object(...)`,
# `monkeypatch.setattr(Worker, "m", v)` / `delattr(...)` (both raising by default); `create=True` / `raising=False`
# and a name the class has are fine.
_WORKER = {"vllm/__init__.py": "", "vllm/worker.py": "class Worker:\n    def kept(self):\n        return 1\n"}


@pytest.mark.parametrize("call,found", [
    ('patch.object(Worker, "gone")', [("DC002", 8)]),
    ('mocker.patch.object(Worker, "gone")', [("DC002", 8)]),
    ('monkeypatch.setattr(Worker, "gone", None)', [("DC002", 8)]),
    ('monkeypatch.delattr(Worker, "gone")', [("DC002", 8)]),
    ('monkeypatch.delattr("vllm.worker.Worker.gone")', [("DC002", 8)]),
    ('patch.object(Worker, "gone", create=True)', []),
    ('monkeypatch.setattr(Worker, "gone", None, raising=False)', []),
    ('patch.object(Worker, "kept")', []),
], ids=["patch.object", "mocker", "monkeypatch.setattr", "monkeypatch.delattr", "delattr by path", "create=True",
        "raising=False", "a name the class has"])
def test_28e_m1_the_object_form_of_a_patch_looks_the_name_up(tmp_path, call, found):
    from scan.helpers import scan_trees
    test = ("from unittest.mock import patch\n\nfrom vllm.worker import Worker\n\n\n"
            f"def test_it(monkeypatch, mocker):\n    assert patch\n    {call}\n")
    result = scan_trees(tmp_path, _WORKER, {"tests/__init__.py": "", "tests/test_w.py": test}, only=["DC001", "DC002"])
    assert [(f.rule, f.client.line) for f in result.findings] == found


# 28d's check of FW1: only a use in the branch taken where the name is there drops the question; the `else` of the
# probe, `if not hasattr(...)` and `not hasattr(...) and x.a` keep it (the read runs on the objects that lack it).
_BRANCHES = '''from vllm.worker_base import WorkerWrapperBase


def f(w: WorkerWrapperBase):
    if hasattr(w, "device"):
        a = w.device
    else:
        b = w.device
    if not hasattr(w, "device"):
        c = w.device
    e = w.device if hasattr(w, "device") else None
    x = not hasattr(w, "device") and w.device
    z = hasattr(w, "device") and w.device
    if not hasattr(w, "device"):
        return None
    return a, b, c, e, x, z, w.device
'''


def test_28d_only_the_branch_where_the_probe_held_drops_the_question(tmp_path):
    from scan.helpers import scan_trees
    result = scan_trees(tmp_path, _WRAPPER, {"c.py": _BRANCHES}, only=["DC006"])
    kept = sorted([(f.client.line, f.severity) for f in result.findings] + [(u.client.line, "unknown") for u in result.unknown])
    assert kept == [(8, "warning"), (10, "warning"), (12, "unknown")]
