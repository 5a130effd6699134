"""Twenty-first session (batch 26 and the left items of 25).

25f F2 (genesis-vllm-patches): `subprocess.run(["python3", "-m", "vllm.gone", ...])` whose exit status the client tests
and turns into `{"available": False}`: the command fails, the client's code does not, so DC111 is a warning there. A
`try` around `subprocess.Popen` catches nothing of the child's failure (mini-r1's `vllm serve` launcher): an error
stays an error, in a file that imports vLLM too.
"""

from __future__ import annotations

import pytest

from scan.helpers import scan_trees

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


# 26a R1 (diffing-toolkit at 0.14.0/0.15.0): `response = await serving_models.load_lora_adapter(req)` (untyped), then
# `if isinstance(response, ErrorResponse): return response.code`: 0.14.0's ErrorResponse has only `error`. The test
# makes `response` an ErrorResponse in its branch, as an annotation would; and an isinstance test of the very class
# the finding is about picks the objects that fail, so it guards nothing.
_PROTO = {"vllm/__init__.py": "", "vllm/proto.py": "class ErrorInfo:\n    pass\n\n\nclass ErrorResponse:\n"
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
