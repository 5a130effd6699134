"""Twenty-first session (batch 26 and the left items of 25).

25f F2 (genesis-vllm-patches): `subprocess.run(["python3", "-m", "vllm.gone", ...])` whose exit status the client tests
and turns into `{"available": False}`: the command fails, the client's code does not, so DC111 is a warning there. A
`try` around `subprocess.Popen` catches nothing of the child's failure (mini-r1's `vllm serve` launcher): an error
stays an error, in a file that imports vLLM too.
"""

from __future__ import annotations

import pytest

from scan.helpers import scan_against_own, scan_trees, usage_of

_VLLM = {"vllm/__init__.py": "", "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/cli/__init__.py": "",
         "vllm/entrypoints/cli/main.py": "def main():\n    return None\n"}


def _dc111(tmp_path, body: str, imports_vllm: bool = False) -> list[tuple[str, int, str]]:
    head = "import subprocess\n" + ("import vllm  # noqa\n" if imports_vllm else "")
    result = scan_trees(tmp_path, _VLLM, {"plug/__init__.py": "", "plug/tool.py": head + body}, only=["DC111"])
    assert not result.internal_errors
    return [(f.severity, f.client.line, f.message) for f in result.findings if f.rule == "DC111"]


_GENESIS = '''
def self_test():
    try:
        out = subprocess.run(["python3", "-m", "vllm.gone.cli", "self-test"], capture_output=True, timeout=15)
        if out.returncode != 0:
            return dict(available=False, reason=f"exit={out.returncode}")
        return dict(available=True)
    except Exception as e:
        return dict(available=False, reason=repr(e))
'''


@pytest.mark.parametrize("imports_vllm", [False, True])
def test_25f_f2_an_exit_status_the_client_tests_makes_a_warning(tmp_path, imports_vllm):
    [(severity, line, message)] = _dc111(tmp_path, _GENESIS, imports_vllm)
    assert (severity, line) == ("warning", 5 + imports_vllm)
    assert "tests its exit status (line" in message


_POPEN = '''
def launch(model):
    proc = None
    try:
        proc = subprocess.Popen(["python", "-m", "vllm.gone.api_server", "--model", model])
        proc.wait(timeout=600)
    except Exception:
        pass
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
'''


@pytest.mark.parametrize("imports_vllm", [False, True])
def test_25f_f2_twin_a_try_around_popen_handles_nothing_of_the_child(tmp_path, imports_vllm):
    """mini-r1's shape: the try catches only a failure to start; `poll() is None` asks whether it still runs."""
    [(severity, line, _message)] = _dc111(tmp_path, _POPEN, imports_vllm)
    assert (severity, line) == ("error", 6 + imports_vllm)


@pytest.mark.parametrize("handler,severity", [
    ("except subprocess.CalledProcessError:\n        return False", "warning"),
    ("except (OSError, subprocess.SubprocessError):\n        return False", "warning"),
    ("except KeyError:\n        return False", "error"),
])
def test_25f_f2_a_raising_call_is_handled_by_a_try_that_catches_its_error(tmp_path, handler, severity):
    body = ("\ndef ok():\n    try:\n        subprocess.run([\"python\", \"-m\", \"vllm.gone\"], check=True)\n"
            f"        return True\n    {handler}\n")
    assert [s for s, _line, _m in _dc111(tmp_path, body)] == [severity]


@pytest.mark.parametrize("branch,severity", [
    ("raise RuntimeError('self-test failed')", "error"),  # the client fails as the child did
    ("sys.exit(1)", "error"),
    ("print('skipped')", "warning"),
])
def test_25f_f2_a_status_test_that_raises_is_no_handling(tmp_path, branch, severity):
    body = ("import sys\n\ndef ok():\n    if subprocess.call([\"python\", \"-m\", \"vllm.gone\"]) != 0:\n"
            f"        {branch}\n")
    assert [s for s, _line, _m in _dc111(tmp_path, body)] == [severity]


def test_25f_f2_a_module_the_release_has_is_not_reported(tmp_path):
    assert _dc111(tmp_path, _GENESIS.replace("vllm.gone.cli", "vllm.entrypoints.cli.main")) == []


# 26e N1 (runpod worker-vllm at 0.11.0): `ErrorResponse(message=..., type=..., code=...)` misses the model's required
# `error` field; `ErrorResponse` is a pydantic BaseModel (through vLLM's OpenAIBaseModel), so the failure is pydantic's
# ValidationError, which the message named TypeError.
_PROTOCOL = '''from pydantic import BaseModel, ConfigDict


class OpenAIBaseModel(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorResponse(OpenAIBaseModel):
    error: dict
'''


@pytest.mark.parametrize("base,raised", [("OpenAIBaseModel", "ValidationError (error: Field required)"),
                                         ("object", "TypeError (missing required argument 'error')")])
def test_26e_n1_a_pydantic_models_missing_field_is_a_validation_error(tmp_path, base, raised):
    protocol = _PROTOCOL.replace("class ErrorResponse(OpenAIBaseModel):\n    error: dict\n",
                                 f"class ErrorResponse({base}):\n" +
                                 ("    error: dict\n" if base != "object" else "    def __init__(self, error):\n        pass\n"))
    client = ("from vllm.protocol import ErrorResponse\n\n\ndef bad(message):\n"
              "    return ErrorResponse(message=message, code=400)\n")
    result = scan_trees(tmp_path, {"vllm/__init__.py": "", "vllm/protocol.py": protocol},
                        {"plug/__init__.py": "", "plug/err.py": client}, only=["DC005"])
    [finding] = [f for f in result.findings if f.rule == "DC005"]
    assert (finding.severity, finding.client.line) == ("error", 5)
    assert raised in finding.message


# 26e W1 (runpod worker-vllm e6950bd at 0.19.1): `if hasattr(self.chat_engine, "warmup"): await
# self.chat_engine.warmup()` where 0.19.1's `warmup` is a plain def: the probe holds on the target, so the branch runs
# and the await fails; a probe of the very member the finding is about guards nothing.
_SERVING = '''class OpenAIServingChat:
    def __init__(self, engine):
        self.engine = engine

    def warmup(self) -> None:
        return None

    def encode(self, prompts, *, pooling_task=None):
        return prompts
'''


def _guarded_errors(tmp_path, body: str, serving: str = _SERVING) -> list[tuple[str, str, int]]:
    client = ("from vllm.serving import OpenAIServingChat\n\n\nclass Engine:\n    async def init(self, llm):\n"
              "        self.chat = OpenAIServingChat(llm)\n" + body)
    result = scan_trees(tmp_path, {"vllm/__init__.py": "", "vllm/serving.py": serving},
                        {"plug/__init__.py": "", "plug/engine.py": client})
    assert not result.internal_errors
    return sorted((f.rule, f.severity, f.client.line) for f in result.findings if f.rule in ("DC003", "DC006", "DC118"))


def test_26e_w1_a_probe_of_the_awaited_member_the_target_has_guards_nothing(tmp_path):
    body = "        if hasattr(self.chat, 'warmup'):\n            await self.chat.warmup()\n"
    assert _guarded_errors(tmp_path, body) == [("DC118", "error", 8)]


def test_26e_w1_a_probe_of_a_called_member_the_target_has_guards_nothing(tmp_path):
    body = "        if hasattr(self.chat, 'encode'):\n            self.chat.encode(['x'], truncate_prompt_tokens=-1)\n"
    assert _guarded_errors(tmp_path, body) == [("DC003", "error", 8)]


def test_26e_w1_twin_a_probe_of_a_member_the_target_lacks_still_guards(tmp_path):
    body = "        if hasattr(self.chat, 'warmup'):\n            await self.chat.warmup()\n"
    serving = _SERVING.replace("    def warmup(self) -> None:\n        return None\n\n", "")
    assert _guarded_errors(tmp_path, body, serving) == [("DC006", "warning", 8)]


def test_26e_w1_twin_a_probe_of_another_name_guards_the_branch(tmp_path):
    """`if hasattr(chat, "new_api"):` on a release that may lack `new_api`: the branch is that release's code."""
    body = "        if hasattr(self.chat, 'new_api'):\n            await self.chat.warmup()\n"
    assert _guarded_errors(tmp_path, body) == [("DC118", "warning", 8)]


# 26c M1 (teacher-fusion-rollout's verl fork at 0.34.0): `engine_args = AsyncEngineArgs.from_cli_args(args)` then
# `engine_args.disable_log_requests`: `from_cli_args` is a classmethod building `cls(...)` into a local it returns,
# unannotated; its result was untyped, so the removed field went unreported.
_ARGS = '''import dataclasses


@dataclasses.dataclass
class EngineArgs:
    model: str = "m"
    enable_log_requests: bool = False

    @classmethod
    def from_cli_args(cls, args):
        attrs = [attr.name for attr in dataclasses.fields(cls)]
        engine_args = cls(**{a: getattr(args, a) for a in attrs if hasattr(args, a)})
        return engine_args


@dataclasses.dataclass
class AsyncEngineArgs(EngineArgs):
    enable_log_outputs: bool = False
'''


def _dc006(tmp_path, args_module: str = _ARGS) -> list[tuple[str, int, str]]:
    client = ("from vllm.arg_utils import AsyncEngineArgs\n\n\ndef run(args):\n"
              "    engine_args = AsyncEngineArgs.from_cli_args(args)\n    return engine_args.disable_log_requests\n")
    result = scan_trees(tmp_path, {"vllm/__init__.py": "", "vllm/arg_utils.py": args_module},
                        {"plug/__init__.py": "", "plug/serve.py": client}, only=["DC006"])
    return [(f.severity, f.client.line, f.message.split(":")[0]) for f in result.findings if f.rule == "DC006"]


def test_26c_m1_a_classmethod_building_cls_gives_an_object_of_the_class_it_is_called_on(tmp_path):
    assert _dc006(tmp_path) == [("error", 6, "`AsyncEngineArgs` has no attribute 'disable_log_requests' in vLLM 0.99.0")]


@pytest.mark.parametrize("body", [
    "        engine_args = cls(**{})\n        engine_args = engine_args.clone()\n        return engine_args\n",
    "        return make(cls)\n",
    "        if args:\n            return None\n        return cls()\n",
])
def test_26c_m1_twin_a_classmethod_that_may_return_something_else_stays_untyped(tmp_path, body):
    module = _ARGS.replace("        attrs = [attr.name for attr in dataclasses.fields(cls)]\n"
                           "        engine_args = cls(**{a: getattr(args, a) for a in attrs if hasattr(args, a)})\n"
                           "        return engine_args\n", body)
    assert body in module
    assert _dc006(tmp_path, module) == []


# 26b VB1 (tirdyhouse/cascade's DiskCacheConnector at 0.21.0-0.34.0): `if not self._is_disk_cache_meta(meta): return`
# with `def _is_disk_cache_meta(self, meta): return isinstance(meta, DiskCacheMeta)`, then `meta.requests`: the
# helper narrows `meta` as the inline isinstance does (which gave nothing), not a warning that the base lacks it.
_KV = '''class KVConnectorMetadata:
    pass


class SharedMeta(KVConnectorMetadata):
    def __init__(self):
        self.requests = []


class KVConnectorBase_V1:
    def _get_connector_metadata(self) -> KVConnectorMetadata:
        return KVConnectorMetadata()
'''

_CONN = '''from dataclasses import dataclass, field

from vllm.kv_base import KVConnectorBase_V1, KVConnectorMetadata


@dataclass
class MyMeta(KVConnectorMetadata):
    requests: list = field(default_factory=list)


def is_my_meta(meta):
    return isinstance(meta, MyMeta)


class MyConnector(KVConnectorBase_V1):
    def _is_my_meta(self, meta):
        """Whether vLLM handed us our own metadata."""
        return isinstance(meta, MyMeta)

    def save_kv_layer(self):
        meta = self._get_connector_metadata()
        if not CHECK:
            return
        for req in meta.requests:
            print(req)
'''


@pytest.mark.parametrize("check,found", [
    ("self._is_my_meta(meta)", []),
    ("is_my_meta(meta)", []),
    ("isinstance(meta, MyMeta)", []),
    ("self._is_my_meta(other)", [("DC006", "warning")]),  # a predicate of another object narrows nothing here
    ("self.ready(meta)", [("DC006", "warning")]),  # not a predicate of the file
])
def test_26b_vb1_a_one_line_isinstance_predicate_narrows_like_the_inline_test(tmp_path, check, found):
    conn = _CONN.replace("CHECK", check).replace("    def save_kv_layer(self):", "    def ready(self, meta):\n"
                                                  "        return True\n\n    def save_kv_layer(self, other=None):")
    result = scan_trees(tmp_path, {"vllm/__init__.py": "", "vllm/kv_base.py": _KV},
                        {"plug/__init__.py": "", "plug/conn.py": conn}, only=["DC006"])
    line = conn.splitlines().index("        for req in meta.requests:") + 1
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == [(r, s, line) for r, s in found]


# 26d R3 (ds4-spark-vllm at 0.24.0-0.26.0): `isinstance(layer, FusedMoE)` where the release makes `FusedMoE` a
# function; the file also re-imports `FusedMoE` under `if TYPE_CHECKING:` for the type checker, which never runs and
# left the name looking bound twice, so DC119 said nothing.
_MOE = {"vllm/__init__.py": "", "vllm/moe.py": "def FusedMoE(*args, **kwargs):\n    return object()\n"}


@pytest.mark.parametrize("extra,found", [
    ("if TYPE_CHECKING:\n    from vllm.moe import FusedMoE  # noqa: F811\n", [("DC119", 10)]),
    ("", [("DC119", 10)]),
    ("FusedMoE = FusedMoE or object  # noqa\n\n", []),  # a runtime rebinding: the test may not reach vLLM's function
])
def test_26d_r3_a_type_checking_reimport_does_not_rebind_the_name(tmp_path, extra, found):
    head = "from typing import TYPE_CHECKING\n\nfrom vllm.moe import FusedMoE\n\n" + extra
    client = head + "\n" * (9 - head.count("\n") - 1) + "def pick(layer):\n    return isinstance(layer, FusedMoE)\n"
    result = scan_trees(tmp_path, _MOE, {"plug/__init__.py": "", "plug/cfg.py": client}, only=["DC119"])
    assert sorted((f.rule, f.client.line) for f in result.findings) == found


# 26d R1 (ds4-spark-vllm): `if not getattr(layer, "_ds4_prefix_dumped", False): layer._ds4_prefix_dumped = True` on a
# vLLM FusedMoE: the client's own marker, which it reads back itself; the store warned "creates a new attribute that
# vLLM never reads" on every such line.
_LAYER = {"vllm/__init__.py": "", "vllm/layer.py": "class FusedMoE:\n    def __init__(self):\n        self.w = 1\n"}


@pytest.mark.parametrize("body,found", [
    ("    if not getattr(layer, '_dumped', False):\n        layer._dumped = True\n", []),
    ("    layer._dumped = True\n    return layer._dumped\n", []),
    ("    layer._dumped = True\n", [("DC006", "warning", 5)]),  # set for someone else to read: a renamed setting?
])
def test_26d_r1_a_marker_the_client_reads_back_is_its_own(tmp_path, body, found):
    client = "from vllm.layer import FusedMoE\n\n\ndef dump_once(layer: FusedMoE):\n" + body
    result = scan_trees(tmp_path, _LAYER, {"plug/__init__.py": "", "plug/dump.py": client}, only=["DC006"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == found


def test_26d_r1_twin_a_name_vllm_mentions_may_be_a_setting_it_no_longer_reads(tmp_path):
    """vLLM's sources still name `_dumped` (here a comment): the store may be meant for an older vLLM: still warned."""
    vllm = {**_LAYER, "vllm/old.py": "# layers used to carry _dumped\n"}
    client = ("from vllm.layer import FusedMoE\n\n\ndef dump_once(layer: FusedMoE):\n"
              "    layer._dumped = True\n    return layer._dumped\n")
    result = scan_trees(tmp_path, vllm, {"plug/__init__.py": "", "plug/dump.py": client}, only=["DC006"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == [("DC006", "warning", 5)]




# 26a R1 (diffing-toolkit at 0.14.0/0.15.0): `response = await serving_models.load_lora_adapter(req)` (untyped), then
# `if isinstance(response, ErrorResponse): return response.code`: 0.14.0's ErrorResponse has only `error`. The test
# makes `response` an ErrorResponse in its branch, as an annotation would; and an isinstance test of the very class
# the finding is about picks the objects that fail, so it guards nothing.
_PROTO = {"vllm/__init__.py": "", "vllm/proto.py": "class ErrorInfo:\n    message = ''\n\n\nclass ErrorResponse:\n"
          "    def __init__(self, error):\n        self.error = error\n\n\nclass Other:\n    code = 1\n"}


@pytest.mark.parametrize("test,found", [
    ("isinstance(response, ErrorResponse)", [("DC006", "error", 7)]),
    ("not isinstance(response, ErrorResponse)", []),  # the branch where it is not one
    ("isinstance(response, (ErrorResponse, Other))", []),  # one of two classes: which one is not known
    ("isinstance(other, ErrorResponse)", []),  # another object tested
])
def test_26a_r1_an_isinstance_test_types_an_untyped_receiver_in_its_branch(tmp_path, test, found):
    client = ("from vllm.proto import ErrorResponse, Other  # noqa\n\n\nasync def load(models, req, other=None):\n"
              f"    response = await models.load(req)\n    if {test}:\n        return response.code\n    return 200\n")
    result = scan_trees(tmp_path, _PROTO, {"plug/__init__.py": "", "plug/amp.py": client}, only=["DC006"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == found


@pytest.mark.parametrize("tested", ["ErrorResponse", "ErrorInfo"])
def test_26a_r1_in_the_branch_the_tested_class_decides_not_the_annotation(tmp_path, tested):
    """Neither class has `code`: the branch runs for objects of the tested class, and fails there."""
    client = ("from vllm.proto import ErrorInfo, ErrorResponse\n\n\ndef load(response: ErrorResponse):\n"
              f"    if isinstance(response, {tested}):\n        return response.code\n    return 200\n")
    result = scan_trees(tmp_path, _PROTO, {"plug/__init__.py": "", "plug/amp.py": client}, only=["DC006"])
    assert [(f.severity, f.client.line, f.symbol) for f in result.findings] == [("error", 6, f"vllm.proto.{tested}.code")]


# 26g R1 (an NVTX profiling sitecustomize at 0.11.0-0.34.0): `_ensure_state(self)` sets `self._open = set()` on the
# patched EngineCore and is a closure of the installer, defined beside the patch: the store was credited only for a
# module-level helper, so the next line's `self._open.clear()` got a false DC006 error.
_CORE = {"vllm/__init__.py": "", "vllm/core.py": "class EngineCore:\n    def shutdown(self):\n        return None\n"}


@pytest.mark.parametrize("helper_body,found", [
    ("        if not hasattr(core, '_open'):\n            core._open = set()\n", []),
    ("        core._open = set()\n", []),
    ("        core._other = set()\n", [("DC006", "error")]),  # the helper sets something else
])
def test_26g_r1_a_nested_helper_storing_on_the_patched_self_is_credited(tmp_path, helper_body, found):
    client = ("from vllm.core import EngineCore\n\n\ndef install():\n    orig = EngineCore.shutdown\n\n"
              "    def _ensure_state(core):\n" + helper_body +
              "\n    def _patched_shutdown(self):\n        _ensure_state(self)\n        self._open.clear()\n"
              "        return orig(self)\n\n    EngineCore.shutdown = _patched_shutdown\n")
    line = client.splitlines().index("        self._open.clear()") + 1
    result = scan_trees(tmp_path, _CORE, {"plug/__init__.py": "", "plug/patch.py": client}, only=["DC006"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == [(r, s, line) for r, s in found]


# 26g R2 (the same sitecustomize): `try: self._open.clear() finally: return orig(self)`: a `return` in `finally:`
# drops whatever the body raised, so the body is guarded as a catch-all `except` would guard it.
@pytest.mark.parametrize("final,severity", [("        return orig(self)\n", "warning"),
                                            ("        orig(self)\n", "error")])
def test_26g_r2_a_return_in_finally_swallows_the_bodys_failure(tmp_path, final, severity):
    client = ("from vllm.core import EngineCore\n\norig = EngineCore.shutdown\n\n\ndef _patched(self):\n    try:\n"
              "        self.gone.clear()\n    finally:\n" + final + "\n\nEngineCore.shutdown = _patched\n")
    result = scan_trees(tmp_path, _CORE, {"plug/__init__.py": "", "plug/patch.py": client}, only=["DC006"])
    found = [(f.severity, f.client.line, f.message) for f in result.findings]
    assert [(s, ln) for s, ln, _m in found] == [(severity, 8)]
    assert ("whose `finally:` returns (line 10)" in found[0][2]) == (severity == "warning")


# 26g M2 (openshift-psap/profilemate at 0.34.0): `try: ... def instrumented_schedule(self): ...;
# Scheduler.schedule = instrumented_schedule / except Exception:` installs a patch vLLM then calls with a new argument:
# the TypeError is raised where vLLM calls it, outside the try that installed it, so the try guards nothing.
_SCHED = {"vllm/__init__.py": "", "vllm/sched.py": "class Scheduler:\n    def schedule(self, throttle=False):\n"
          "        return throttle\n", "vllm/core.py": "from vllm.sched import Scheduler\n\n\ndef step(s: Scheduler):\n"
          "    return s.schedule(True)\n"}


@pytest.mark.parametrize("wrapped", [True, False])
def test_26g_m2_a_try_around_installing_a_patch_does_not_guard_vllms_later_call(tmp_path, wrapped):
    inner = ("from vllm.sched import Scheduler\n\noriginal = Scheduler.schedule\n\ndef instrumented(self):\n"
             "    return original(self)\n\nScheduler.schedule = instrumented\n")
    indent = "        " if wrapped else "    "
    body = "def patch_scheduler():\n" + ("    try:\n" if wrapped else "") + \
        "".join(f"{indent}{ln}\n" if ln else "\n" for ln in inner.splitlines()) + \
        ("    except Exception as e:\n        print(e)\n" if wrapped else "")
    own = {**_SCHED, "vllm/sched.py": "class Scheduler:\n    def schedule(self):\n        return None\n",
           "vllm/core.py": "from vllm.sched import Scheduler\n\n\ndef step(s: Scheduler):\n    return s.schedule()\n"}
    result = scan_against_own(tmp_path, own, "0.98.0", _SCHED, {"plug/__init__.py": "", "plug/patch.py": body},
                              ["DC109"], "0.99.0")
    line = next(i for i, ln in enumerate(body.splitlines(), 1) if "def instrumented" in ln)
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", line)]


# 26g R3 (a profiler patch at 0.10.1.1): `m = self.model; m.forward = lambda ...` where the model is a CUDAGraphWrapper
# whose `__getattr__` answers the names it lacks: a store never consults `__getattr__`, so there is nothing to ask.
_WRAPPER = {"vllm/__init__.py": "", "vllm/graph.py": "class CUDAGraphWrapper:\n    def __init__(self, runnable):\n"
            "        self.runnable = runnable\n\n    def __getattr__(self, key):\n        raise AttributeError(key)\n"}


@pytest.mark.parametrize("use,unknowns", [("    m.forward = lambda *a: None\n", 0), ("    return m.forward\n", 1)])
def test_26g_r3_a_store_on_an_object_with_getattr_raises_no_question(tmp_path, use, unknowns):
    client = "from vllm.graph import CUDAGraphWrapper\n\n\ndef patch(m: CUDAGraphWrapper):\n" + use
    result = scan_trees(tmp_path, _WRAPPER, {"plug/__init__.py": "", "plug/patch.py": client}, only=["DC006"])
    assert (len(result.findings), len([u for u in result.unknown if u.rule == "DC006"])) == (0, unknowns)


# 26i R2/R3 (vLLM's own trees as clients, 0.20.0-0.34.0: ~180 warnings a release): `self.gate.weight` on a GateLinear
# was warned "only Step5FusedQKVIndexerLinear defines it" because a client class deriving from a *sibling* of GateLinear
# (a common vLLM base) defines the member. Reading only the receiver's own subclasses made a false error in the
# 0.8.5-0.10.2 self-scans (an attribute typed by its first assignment), so siblings still count; `.weight` is fixed
# by 26m N1 below, R3 is left.
_GATE = {"vllm/__init__.py": "", "vllm/layers.py": "class PluggableLayer:\n    pass\n\n\nclass GateLinear(PluggableLayer):\n"
         "    def __init__(self, n):\n        self.n = n\n"}


@pytest.mark.parametrize("base,found", [("PluggableLayer", [("DC006", "warning", 14)]), ("GateLinear", [("DC006", "warning", 14)])])
def test_26i_r2_a_client_class_of_a_sibling_may_still_be_what_the_receiver_holds(tmp_path, base, found):
    """Kept as it was: the receiver's type is often the first class vLLM assigns, and a sibling may be the object
    (0.10.2's `runner.attn_state`); 26i's `.weight` warnings went through 26m N1 (made by the quant method)."""
    client = (f"from vllm.layers import GateLinear, PluggableLayer  # noqa\n\n\nclass Experts({base}):\n"
              "    def __init__(self):\n        self.e_bias = None\n\n\nclass MoE:\n    def __init__(self):\n"
              "        self.gate = GateLinear(4)\n\n    def bias(self):\n        return self.gate.e_bias\n")
    result = scan_trees(tmp_path, _GATE, {"plug/__init__.py": "", "plug/moe.py": client}, only=["DC006"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == found


# 26h F1 (MineDraft at 0.9.2, ArcticInference's patch framework): `class P(MinePatch[parallel_state])` with a
# `@staticmethod def ensure_model_parallel_initialized(..., initialize_non_driver_tp_group=False)`; the framework swaps
# the vLLM function's `__code__` in place, so the call through `vllm.distributed`'s re-export reaches the replacement.
_FRAMEWORK = '''import inspect


class MinePatch:
    @classmethod
    def __class_getitem__(cls, target):
        return type(f"{cls.__name__}[{target.__name__}]", (cls,), {"_target": target})

    @classmethod
    def apply_patch(cls):
        target = cls._target
        for name, replacement in cls.__dict__.items():
            if name.startswith("__") or name == "_target":
                continue
            if inspect.ismodule(target) and inspect.isfunction(getattr(target, name, None)):
                SWAP
                continue
            setattr(target, name, replacement)
'''
_DIST = {"vllm/__init__.py": "", "vllm/dist/__init__.py": "from vllm.dist.ps import *  # noqa\n",
         "vllm/dist/ps.py": "__all__ = ['ensure']\n\n\ndef ensure(tp, pp, backend=None):\n    return tp\n"}


@pytest.mark.parametrize("swap,found", [
    ("getattr(target, name).__code__ = replacement.__func__.__code__", []),
    ("setattr(target, name, replacement)", [("DC003", "error", 5)]),  # rebinds the name: the re-export keeps vLLM's
])
def test_26h_f1_a_function_changed_in_place_is_changed_behind_its_reexports(tmp_path, swap, found):
    patch = ("from vllm.dist import ps\n\nfrom plug.patching import MinePatch\n\n\nclass PsPatch(MinePatch[ps]):\n"
             "    @staticmethod\n    def ensure(tp, pp, backend=None, extra=False):\n        return tp\n\n\n"
             "PsPatch.apply_patch()\n")
    use = "from vllm.dist import ensure\n\n\ndef go():\n    ensure(1, 1, extra=True)\n"
    result = scan_trees(tmp_path, _DIST, {"plug/__init__.py": "", "plug/patching.py": _FRAMEWORK.replace("SWAP", swap),
                                          "plug/ps_patch.py": patch, "plug/use.py": use}, only=["DC003"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == found


@pytest.mark.parametrize("base", ["class Meta:\n    pass\n", "from abc import ABC\n\n\nclass Meta(ABC):\n    n = 0\n"])
def test_26a_r1_twin_a_marker_or_abstract_base_tested_does_not_type_the_receiver(tmp_path, base):
    """`assert isinstance(meta, KVConnectorMetadata)` (an empty ABC): the object is some subclass's, perhaps a third
    party's that defines `requests` (LMCache's): nothing is checked against the base."""
    client = ("from vllm.meta import Meta\n\n\ndef finished(connector):\n    meta = connector.metadata\n"
              "    assert isinstance(meta, Meta)\n    return meta.requests\n")
    result = scan_trees(tmp_path, {"vllm/__init__.py": "", "vllm/meta.py": base},
                        {"plug/__init__.py": "", "plug/conn.py": client}, only=["DC006"])
    assert result.findings == []


# 26h M1 (Fast-Spark-TTS at 0.10.0 / 0.34.0): `engine_kwargs = dict(model=..., device=device, ..., **kwargs);
# AsyncEngineArgs(**engine_kwargs)`: `device` is a keyword the call certainly passes, which 0.10.0's EngineArgs lacks.
_ARGS2 = {"vllm/__init__.py": "", "vllm/args.py": "import dataclasses\n\n\n@dataclasses.dataclass\nclass EngineArgs:\n"
          "    model: str = 'm'\n    seed: int = 0\n"}


@pytest.mark.parametrize("body,found", [
    ("    kw = dict(model=m, device='cpu', **extra)\n    return EngineArgs(**kw)\n", [("error", 6)]),
    ("    kw = {'model': m, 'device': 'cpu'}\n    return EngineArgs(**kw)\n", [("error", 6)]),
    ("    kw: dict = dict(model=m, device='cpu')\n    return EngineArgs(**kw)\n", [("error", 6)]),  # 26o M2
    ("    return EngineArgs(**dict(model=m, device='cpu'))\n", [("error", 5)]),
    ("    kw = dict(model=m, device='cpu')\n    kw['seed'] = 1\n    kw.update(extra)\n    return EngineArgs(**kw)\n",
     [("error", 8)]),  # keys added: the spelled ones are still there (26j M2)
    ("    kw = dict(model=m, device='cpu')\n    kw.pop('device')\n    return EngineArgs(**kw)\n", []),  # changed
    ("    kw = dict(model=m, device='cpu')\n    del kw['device']\n    return EngineArgs(**kw)\n", []),
    ("    kw = dict(model=m, device='cpu')\n    strip(kw)\n    return EngineArgs(**kw)\n", []),  # handed on
    ("    kw = dict(model=m)\n    if extra:\n        kw = dict(device='cpu')\n    return EngineArgs(**kw)\n", []),
    ("    kw = dict(model=m, seed=1)\n    return EngineArgs(**kw)\n", []),  # every key a field
])
def test_26h_m1_the_keys_of_a_spelled_out_dict_are_keywords_the_call_passes(tmp_path, body, found):
    client = "from vllm.args import EngineArgs\n\n\ndef make(m, extra, strip=print):\n" + body
    result = scan_trees(tmp_path, _ARGS2, {"plug/__init__.py": "", "plug/gen.py": client}, only=["DC003", "DC005"])
    assert [(f.severity, f.client.line) for f in result.findings] == found
    assert all(f.fix is None and "unpacks with `**`" in f.message for f in result.findings)


# 26h F2 (MineDraft at 0.9.2): the client replaces `SchedulerRunningOutputs.__new__` with one that builds its dataclass
# subclass adding `preempted_requests_ids`; `SchedulerRunningOutputs(..., preempted_requests_ids=[])` then runs the
# subclass's `__init__`, which takes it: no DC003 from vLLM's signature.
_OUT = {"vllm/__init__.py": "", "vllm/sched.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Outputs:\n"
        "    a: int\n"}


@pytest.mark.parametrize("install,found", [("Outputs.__new__ = _new\n", []), ("", [("DC003", "error", 18)])])
def test_26h_f2_a_replaced_new_building_a_client_subclass_decides_the_constructor(tmp_path, install, found):
    client = ("from dataclasses import dataclass\n\nfrom vllm.sched import Outputs\n\n\n@dataclass\nclass MyOutputs(Outputs):\n"
              "    ids: list\n\n\ndef _new(cls, *args, **kwargs):\n    if cls is Outputs:\n"
              "        return MyOutputs.__new__(MyOutputs, *args, **kwargs)\n    return object.__new__(cls)\n\n\n"
              "def build():\n    return Outputs(a=1, ids=[])\n\n\n" + install)
    result = scan_trees(tmp_path, _OUT, {"plug/__init__.py": "", "plug/sched.py": client}, only=["DC003"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == found


# 26i R1 (vLLM 0.33.0/0.34.0's minimax_m3 as a client): `assert isinstance(self.impl, MiniMaxM3SparseAiterPAImpl)`
# then `self.impl.forward(..., decode_sparse_table=t)`: the call reaches the subclass's `forward`, which takes it.
_IMPL = {"vllm/__init__.py": "", "vllm/impl.py": "class Impl:\n    def forward(self, layer, q):\n        return q\n\n\n"
         "class SubImpl(Impl):\n    def forward(self, layer, q, *, table=None):\n        return q\n"}


@pytest.mark.parametrize("test,found", [
    ("        assert isinstance(self.impl, SubImpl)\n", []),
    ("        if not isinstance(self.impl, SubImpl):\n            return None\n", []),
    ("", [("DC003", "warning")]),  # not narrowed: a subclass's override may take it
])
def test_26i_r1_an_isinstance_test_narrows_the_receiver_of_a_method_call(tmp_path, test, found):
    client = ("from vllm.impl import Impl, SubImpl  # noqa\n\n\nclass Layer:\n    def __init__(self, make):\n"
              "        self.impl: Impl = make()\n\n    def run(self, q, t):\n" + test +
              "        return self.impl.forward(self, q, table=t)\n")
    result = scan_trees(tmp_path, _IMPL, {"plug/__init__.py": "", "plug/layer.py": client}, only=["DC003"])
    assert [(f.rule, f.severity) for f in result.findings] == found


# 26g M3 (a profiler's module check): `modules_to_check = [("vllm.v1.worker.gpu_model_runner", "why"), ...]` looped
# as `for name, why in modules_to_check: importlib.import_module(name)` only loads the module by its name; it
# registers nothing, so the unguarded import of the missing module elsewhere stays an error.
@pytest.mark.parametrize("check,severity", [
    ("CHECKS = [('vllm.gone', 'timing')]\nfor name, why in CHECKS:\n    importlib.import_module(name)\n", "error"),
    ("for name in ('vllm.gone',):\n    importlib.import_module(name)\n", "error"),
    ("import sys\nsys.modules['vllm.gone'] = object()\n", "warning"),  # a registration: the client may provide it
])
def test_26g_m3_a_module_name_only_handed_to_a_loader_registers_nothing(tmp_path, check, severity):
    result = scan_trees(tmp_path, {"vllm/__init__.py": ""},
                        {"plug/__init__.py": "", "plug/check.py": "import importlib\n\n" + check,
                         "plug/patch.py": "from vllm.gone import Runner\n\nRunner.execute = None\n"}, only=["DC001"])
    assert [(f.severity, f.client.path) for f in result.findings] == [(severity, "plug/patch.py")]


# 26b VB3 (cascade_vllm at 0.34.0): a connector's `@property prefer_cross_layer_blocks` overrides a property vLLM 0.19.1
# read on its connectors and 0.34.0 no longer has: the override never runs, a DC117 warning like a method's.
_BASE_OWN = {"vllm/__init__.py": "", "vllm/base.py": "class KVConnectorBase:\n    @property\n"
             "    def prefer_cross_layer_blocks(self) -> bool:\n        return False\n\n    def start(self):\n        return None\n",
             "vllm/runner.py": "from vllm.base import KVConnectorBase\n\n\ndef run(c: KVConnectorBase):\n"
             "    return c.prefer_cross_layer_blocks\n"}
_BASE_NOW = {"vllm/__init__.py": "", "vllm/base.py": "class KVConnectorBase:\n    def start(self):\n        return None\n"}


@pytest.mark.parametrize("decorator,found", [("    @property\n", [("DC117", "warning", 7)]),
                                             ("    @functools.cached_property\n", [])])  # not a passive decorator
def test_26b_vb3_a_property_override_of_a_dropped_hook_is_orphaned(tmp_path, decorator, found):
    client = ("import functools  # noqa\nfrom vllm.base import KVConnectorBase\n\n\nclass MyConnector(KVConnectorBase):\n" + decorator +
              "    def prefer_cross_layer_blocks(self) -> bool:\n        return True\n")
    result = scan_against_own(tmp_path, _BASE_OWN, "0.98.0", _BASE_NOW, {"plug/__init__.py": "", "plug/conn.py": client},
                              ["DC117"], "0.99.0")
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == found


# 26m N1 (vLLM 0.34.0's own tree, 72 warnings): `.weight` on a ColumnParallelLinear warned "only
# Step5FusedQKVIndexerLinear defines it", a subclass that registers `weight` itself; every linear layer gets `weight`
# from its quant method's `create_weights` (`layer.register_parameter("weight", ...)`), whatever subclass it is.
_LINEAR = {"vllm/__init__.py": "", "vllm/linear.py": '''from torch import nn


class UnquantizedLinearMethod:
    def create_weights(self, layer):
        layer.register_parameter("weight", nn.Parameter())


class LinearBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant_method = UnquantizedLinearMethod()
        self.quant_method.create_weights(self)


class ColumnParallelLinear(LinearBase):
    pass
'''}


def test_26m_n1_a_member_vllm_makes_on_every_layer_is_there_whatever_subclass(tmp_path):
    client = ("from torch import nn\n\nfrom vllm.linear import ColumnParallelLinear\n\n\n"
              "class FusedLinear(ColumnParallelLinear):\n    def __init__(self):\n        super().__init__()\n"
              "        self.weight = nn.Parameter()\n\n\nclass Router(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = ColumnParallelLinear()\n\n    def dtype(self):\n"
              "        return self.proj.weight.dtype\n")
    result = scan_trees(tmp_path, _LINEAR, {"plug/__init__.py": "", "plug/router.py": client}, only=["DC006"])
    assert result.findings == []


# 26l R1 (a tool-parser plugin at 0.14.0) and 26b VB4: `from vllm.tool_parsers.abstract_tool_parser import Tool`,
# gone there; the only `Tool` of the release is Harmony's, in `vllm.entrypoints.tool`, an unrelated class. Without a
# vLLM of the client's own to compare the objects, a home far from the old module is a hint only: no move-import.
@pytest.mark.parametrize("home,moved", [("vllm/entrypoints/tool.py", None),
                                        ("vllm/tool_parsers/tool.py", "vllm.tool_parsers.tool")])
def test_26l_r1_a_far_home_found_by_name_alone_is_not_moved_to(tmp_path, home, moved):
    vllm = {"vllm/__init__.py": "", "vllm/entrypoints/__init__.py": "", "vllm/tool_parsers/__init__.py": "",
            "vllm/tool_parsers/abstract_tool_parser.py": "class ToolParser:\n    pass\n", home: "class Tool:\n    name = ''\n"}
    client = "from vllm.tool_parsers.abstract_tool_parser import Tool, ToolParser  # noqa\n"
    result = scan_trees(tmp_path, vllm, {"plug/__init__.py": "", "plug/parser.py": client}, only=["DC002"])
    [finding] = result.findings
    far = moved is None
    assert (finding.severity, finding.fix is not None, bool(finding.details.get("move_unchecked"))) == ("error", not far, far)
    assert finding.details.get("moved_to") == (moved or "vllm.entrypoints.tool")


# 26k M1 (vllm-vulkan at 0.17.0+, ATOM, IREE, an OpenVINO fork): vLLM calls `current_platform.get_attn_backend_cls(
# backend, attn_selector_config=..., num_heads=...)`, `current_platform` being a global `vllm.platforms` annotates
# `current_platform: Platform` (under TYPE_CHECKING; its `__getattr__` serves it): the call reaches every platform
# plugin's override, whose def without `num_heads` raises TypeError. DC109 typed no receiver read through a global.
_PLATFORMS = {
    "vllm/__init__.py": "",
    "vllm/platforms/__init__.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                  "    from vllm.platforms.interface import Platform\n\n    current_platform: Platform\n\n"
                                  "_current = None\n\n\ndef __getattr__(name):\n    if name == 'current_platform':\n"
                                  "        return _current\n    raise AttributeError(name)\n",
    "vllm/platforms/interface.py": "class Platform:\n    @classmethod\n"
                                   "    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None):\n"
                                   "        return ''\n",
    "vllm/selector.py": "def pick(backend, config, heads):\n    from vllm.platforms import current_platform\n\n"
                        "    return current_platform.get_attn_backend_cls(backend, attn_selector_config=config, "
                        "num_heads=heads)\n",
}


@pytest.mark.parametrize("params,found", [("cls, selected_backend, attn_selector_config", [("DC109", "warning", 5)]),
                                          ("cls, selected_backend, attn_selector_config, **kwargs", [])])
def test_26k_m1_a_call_through_a_global_annotated_with_the_class_reaches_the_override(tmp_path, params, found):
    client = ("from vllm.platforms.interface import Platform\n\n\nclass VkPlatform(Platform):\n"
              f"    @classmethod\n    def get_attn_backend_cls({params}):\n        return 'x.Y'\n")
    result = scan_trees(tmp_path, _PLATFORMS, {"vkplug/__init__.py": "", "vkplug/platform.py": client}, only=["DC109"])
    assert sorted((f.rule, f.severity, f.client.line) for f in result.findings) == \
        [(r, s, ln + 1) for r, s, ln in found]


# 26k W2 (vllm_windows_rocm): `register()` calls `_register_kernel_class()` inside `try/except Exception`; that
# function only defines a kernel class and returns it, and vLLM calls the class's methods later, when it builds a
# layer: the try guards the definition, not the methods' bodies (6 warnings that were errors).
_KERNEL = {"vllm/__init__.py": "", "vllm/kernel.py": "class Kernel:\n    def __init__(self, config):\n"
           "        self.config = config\n", "vllm/registry.py": "KERNELS = []\n"}


@pytest.mark.parametrize("use,severity", [("    return MyKernel\n", "error"),  # handed out: runs later
                                          ("    return MyKernel(None).run()\n", "warning")])  # runs inside the try
def test_26k_w2_a_try_around_defining_a_class_does_not_guard_its_methods(tmp_path, use, severity):
    client = ("from vllm.kernel import Kernel\n\n\ndef _make():\n    class MyKernel(Kernel):\n        def run(self):\n"
              "            return self.gone\n\n" + use + "\n\ndef register():\n    try:\n"
              "        from vllm.registry import KERNELS\n        KERNELS.append(_make())\n    except Exception:\n"
              "        pass\n")
    result = scan_trees(tmp_path, _KERNEL, {"plug/__init__.py": "", "plug/kern.py": client}, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [(severity, 7)]


# 26j M3/M4 (openai-cookbook's vLLM recipe at 0.10.2, GLM-4's server): `llm = LLM(model=...)` at a module's top, then
# `llm.generate(prompt_token_ids=...)` there or in its functions: the global, bound once, is an LLM (it was untyped).
_LLM = {"vllm/__init__.py": "from vllm.llm import LLM\n", "vllm/llm.py": "class LLM:\n    def __init__(self, model):\n"
        "        self.model = model\n\n    def generate(self, prompts=None, sampling_params=None):\n        return []\n"}


@pytest.mark.parametrize("client,found", [
    ("from vllm import LLM\n\nllm = LLM(model='m')\nout = llm.generate(prompt_token_ids=[[1]])\n", [4]),
    ("from vllm import LLM\n\nllm = LLM(model='m')\n\n\ndef go():\n    return llm.generate(prompt_token_ids=[[1]])\n", [7]),
    ("from vllm import LLM\n\nllm = LLM(model='m')\n\n\ndef go(other):\n    global llm\n    llm = other\n"
     "    return llm.generate(prompt_token_ids=[[1]])\n", []),  # rebound elsewhere: not known
])
def test_26j_m3_a_module_global_built_once_is_an_object_of_its_class(tmp_path, client, found):
    result = scan_trees(tmp_path, _LLM, {"plug/__init__.py": "", "plug/run.py": client}, only=["DC003"])
    assert [f.client.line for f in result.findings if f.severity == "error"] == found


# 26p (ludic at 0.12.0 / 0.34.0, 10 false DC007 errors): `worker_ext = "pkg.server.SyncExt"; engine_args.
# worker_extension_cls = worker_ext`: the extension named through a local holding one string is the extension.
_RPC = {"vllm/__init__.py": "", "vllm/engine.py": "class Engine:\n    def collective_rpc(self, method, args=()):\n"
        "        return []\n"}


@pytest.mark.parametrize("ext,named", [("    ext = 'plug.server.SyncExt'\n    args.worker_extension_cls = ext\n", True),
                                       ("    ext = 'plug.server.SyncExt'\n    ext = pick(ext)\n"
                                        "    args.worker_extension_cls = ext\n", False),  # rebound to something else
                                       ("    args.worker_extension_cls = other\n", False)])  # a parameter
def test_26p_an_extension_named_through_a_local_string_is_read(tmp_path, ext, named):
    client = ("from vllm.engine import Engine\n\n\nclass SyncExt:\n    def init_communicator(self, host):\n        pass\n\n\n"
              "def main(args, other, pick=str):\n" + ext + "    engine = Engine()\n"
              "    engine.collective_rpc('init_communicator', args=('h',))\n")
    usage = usage_of(tmp_path, _RPC, {"plug/__init__.py": "", "plug/server.py": client})
    assert [text for text, _loc in usage.worker_extensions] == (["plug.server.SyncExt"] if named else [])


# 26p: the serve argv held in a local (`cmd = [...]`) and launched under a handler of its exit status is handled as the
# inline list is (a warning), not an error.
def test_26p_a_launch_list_held_in_a_local_is_read_with_its_call(tmp_path):
    body = ("\ndef ok():\n    cmd = ['python', '-m', 'vllm.gone']\n    try:\n        subprocess.check_call(cmd)\n"
            "    except subprocess.CalledProcessError:\n        return False\n    return True\n")
    assert [s for s, _line, _m in _dc111(tmp_path, body)] == ["warning"]


# 26o M1 (a server script at 0.34.0): `engine = LLM(...)` inside `if __name__ == "__main__":`, used by the functions
# the block calls: a module-level global all the same.
def test_26o_m1_a_global_bound_in_the_main_block_is_typed(tmp_path):
    client = ("from vllm import LLM\n\n\ndef go():\n    return llm.generate(prompt_token_ids=[[1]])\n\n\n"
              "if __name__ == '__main__':\n    llm = LLM(model='m')\n    go()\n")
    result = scan_trees(tmp_path, _LLM, {"plug/__init__.py": "", "plug/run.py": client}, only=["DC003"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 5)]
