"""Twenty-second session (the left items of batch 26).

26n FALSE-1 (vllm-ascend 0.23.0 at vLLM 0.34.0): a platform plugin names its own worker (`worker_cls = "pkg.NPUWorker"`,
a `WorkerBase` subclass) and subclasses vLLM's `GPUModelRunner`. vLLM's CUDA `Worker` calls the runner with a new
keyword, but only the plugin's worker ever holds the plugin's runner: the CUDA worker is another platform's, so DC109 is
a warning that says so, not an error.
"""

from __future__ import annotations

import pytest

from scan.helpers import scan_against_own

_RUNNER = "class GPUModelRunner:\n    def initialize_kv_cache(self, kv_cache_config, ctx=None):\n        return ctx\n"
_PREPARE = "\n    def prepare(self, cfg):\n        self.initialize_kv_cache(cfg, ctx=1)\n"
_WORKER = ("from vllm.worker_base import WorkerBase\nfrom vllm.runner import GPUModelRunner\n\n\n"
           "class Worker(WorkerBase):\n    def init_device(self):\n        self.model_runner: GPUModelRunner = GPUModelRunner()\n\n"
           "    def initialize_from_config(self, cfg):\n        self.model_runner.{call}\n")
_PLATFORM = "class Platform:\n    @classmethod\n    def check_and_update_config(cls, vllm_config):\n        pass\n"
_OWN_RUNNER = "class GPUModelRunner:\n    def initialize_kv_cache(self, kv_cache_config):\n        return None\n"
_OWN_WORKER = _WORKER.replace("{call}", "initialize_kv_cache(cfg)")


def _vllm(call: str, extra: dict | None = None) -> dict:
    runner = _RUNNER + (_PREPARE if call.startswith("prepare") else "")
    return {"vllm/__init__.py": "", "vllm/platforms.py": _PLATFORM, "vllm/worker_base.py": "class WorkerBase:\n    pass\n",
            "vllm/runner.py": runner, "vllm/gpu_worker.py": _WORKER.replace("{call}", call), **(extra or {})}


def _client(worker_base: str = "WorkerBase", names_worker: bool = True, extra: str = "") -> dict:
    base_module = "vllm.worker_base" if worker_base == "WorkerBase" else "vllm.gpu_worker"
    platform = ("from vllm.platforms import Platform\n\n\nclass NPUPlatform(Platform):\n    @classmethod\n"
                "    def check_and_update_config(cls, vllm_config):\n        parallel_config = vllm_config.parallel_config\n"
                "        if parallel_config.worker_cls == \"auto\":\n"
                "            parallel_config.worker_cls = \"plug.worker.NPUWorker\"\n")
    return {"plug/__init__.py": "",
            "plug/runner.py": "from vllm.runner import GPUModelRunner\n\n\nclass NPURunner(GPUModelRunner):\n"
                              "    def initialize_kv_cache(self, kv_cache_config):\n        return None\n" + extra,
            "plug/worker.py": f"from {base_module} import {worker_base}\nfrom plug.runner import NPURunner\n\n\n"
                              f"class NPUWorker({worker_base}):\n    def init_device(self):\n"
                              "        self.model_runner = NPURunner()\n",
            **({"plug/platform.py": platform} if names_worker else {})}


def _dc109(tmp_path, vllm: dict, client: dict) -> list[tuple[str, str, int]]:
    own = {**_vllm("initialize_kv_cache(cfg)"), "vllm/runner.py": _OWN_RUNNER, "vllm/gpu_worker.py": _OWN_WORKER}
    result = scan_against_own(tmp_path, own, "0.98.0", vllm, client, ["DC109"], "0.99.0")
    return [(f.severity, f.vllm.path, f.message) for f in result.findings]


def test_26n_false1_a_call_only_another_platforms_worker_makes_is_a_warning(tmp_path):
    [(severity, path, message)] = _dc109(tmp_path, _vllm("initialize_kv_cache(cfg, ctx=1)"), _client())
    assert (severity, path) == ("warning", "vllm/gpu_worker.py")
    assert "the call is in vLLM's `Worker`, another platform's worker" in message
    assert "`plug.worker.NPUWorker`" in message


@pytest.mark.parametrize("client", [_client(worker_base="Worker"), _client(names_worker=False)],
                         ids=["the plugin's worker derives from vLLM's", "no worker of its own"])
def test_26n_false1_twin_vllms_worker_runs_with_the_clients_runner(tmp_path, client):
    [(severity, path, _message)] = _dc109(tmp_path, _vllm("initialize_kv_cache(cfg, ctx=1)"), client)
    assert (severity, path) == ("error", "vllm/gpu_worker.py")


def test_26n_false1_a_method_only_that_worker_calls_is_a_warning_too(tmp_path):
    [(severity, path, message)] = _dc109(tmp_path, _vllm("prepare(cfg)"), _client())
    assert (severity, path) == ("warning", "vllm/runner.py")
    assert "vLLM calls `prepare` only from its `Worker`, another platform's worker" in message


def test_26n_false1_twin_a_method_the_client_calls_itself_is_an_error(tmp_path):
    client = _client(extra="\n    def warm_up(self, cfg):\n        self.prepare(cfg)\n")
    [(severity, path, _message)] = _dc109(tmp_path, _vllm("prepare(cfg)"), client)
    assert (severity, path) == ("error", "vllm/runner.py")


def test_26n_false1_twin_another_call_site_of_the_problem_still_makes_the_error(tmp_path):
    # the worker's call is read first (file order), its warning must not hide the engine's call of the same keyword
    engine = {"vllm/zz_engine.py": "from vllm.runner import GPUModelRunner\n\n\n"
                                   "def step(r: GPUModelRunner, cfg):\n    return r.initialize_kv_cache(cfg, ctx=2)\n"}
    found = _dc109(tmp_path, _vllm("initialize_kv_cache(cfg, ctx=1)", engine), _client())
    assert [(s, p) for s, p, _m in found] == [("error", "vllm/zz_engine.py")]


# 26n MISS-1 (ATOM @78b1a4d at vLLM 0.17.0): the platform class is defined under `if not disable_vllm_plugin:`; vLLM's
# selector passes `num_heads=` to every platform's `get_attn_backend_cls`, and ATOM's def lacks it. DC109 read only a
# module's top-level classes, so the override went unchecked.
@pytest.mark.parametrize("wrap", ["top", "if", "try"])
def test_26n_miss1_an_override_in_a_class_an_if_defines_is_checked(tmp_path, wrap):
    from scan.test_batch_26 import _PLATFORMS
    cls = ("class AtomPlatform(Platform):\n    @classmethod\n"
           "    def get_attn_backend_cls(cls, selected_backend, attn_selector_config):\n        return 'x.Y'\n")
    head = "import os\n\nfrom vllm.platforms.interface import Platform\n\n"
    if wrap == "top":
        client = head + cls
    else:
        block = "".join(f"    {ln}\n" if ln else "\n" for ln in cls.splitlines())
        client = head + ("if not os.environ.get('OFF'):\n" + block + "else:\n    AtomPlatform = None\n" if wrap == "if"
                         else "try:\n" + block + "except ImportError:\n    AtomPlatform = None\n")
    own = {**_PLATFORMS, "vllm/selector.py": "def pick(backend, config, heads):\n    from vllm.platforms import "
           "current_platform\n\n    return current_platform.get_attn_backend_cls(backend, attn_selector_config=config)\n"}
    result = scan_against_own(tmp_path, own, "0.16.0", _PLATFORMS, {"atom/__init__.py": "", "atom/platform.py": client},
                              ["DC109"], "0.17.0")
    line = next(i for i, ln in enumerate(client.splitlines(), 1) if "def get_attn_backend_cls" in ln)
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", line)]


# 26o M3 (a serving script at vLLM 0.34.0): `assert isinstance(llm, AsyncLLMEngine)`, then `llm.engine.model_executor`.
# `AsyncLLMEngine` is 0.34.0's alias of `AsyncLLM`, a concrete class below the ABC `EngineClient`: a leaf, so the test
# types `llm`; and the test names the finding's own class through the alias, so it guards nothing.
def _engine(cls_line: str = "class AsyncLLM(EngineClient):", generate: bool = True, subclass: bool = False) -> dict:
    body = "    def generate(self):\n        return 1\n\n" if generate else ""
    return {"vllm/__init__.py": "",
            "vllm/protocol.py": "from abc import ABC, abstractmethod\n\n\nclass EngineClient(ABC):\n    @abstractmethod\n"
                                "    def generate(self):\n        ...\n",
            "vllm/async_llm.py": "from abc import ABC\n\nfrom vllm.protocol import EngineClient\n\n\n" + cls_line + "\n" + body +
                                 "    def __init__(self):\n        self.engine_core = None\n" +
                                 ("\n\nclass Sub(AsyncLLM):\n    pass\n" if subclass else ""),
            "vllm/async_llm_engine.py": "from vllm.async_llm import AsyncLLM\n\nAsyncLLMEngine = AsyncLLM\n"}


@pytest.mark.parametrize("test", ["if", "assert"])
@pytest.mark.parametrize("name", ["AsyncLLMEngine", "AsyncLLM"])
def test_26o_m3_an_isinstance_test_of_a_concrete_class_below_an_abc_types_the_receiver(tmp_path, test, name):
    from scan.helpers import scan_trees
    module = "vllm.async_llm_engine" if name == "AsyncLLMEngine" else "vllm.async_llm"
    use = (f"    if isinstance(llm, {name}):\n        return llm.engine.model_executor\n" if test == "if" else
           f"    assert isinstance(llm, {name})\n    return llm.engine.model_executor\n")
    client = f"from {module} import {name}\n\n\ndef use(llm):\n" + use
    result = scan_trees(tmp_path, _engine(), {"srv/__init__.py": "", "srv/b.py": client}, only=["DC006"])
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 6)]


@pytest.mark.parametrize("engine", [_engine(generate=False), _engine("class AsyncLLM(EngineClient, ABC):"),
                                    _engine(subclass=True)],
                         ids=["an abstract method left", "lists ABC itself", "a vLLM subclass"])
def test_26o_m3_twin_a_class_that_may_be_a_base_types_nothing(tmp_path, engine):
    from scan.helpers import scan_trees
    client = ("from vllm.async_llm_engine import AsyncLLMEngine\n\n\ndef use(llm):\n"
              "    if isinstance(llm, AsyncLLMEngine):\n        return llm.engine.model_executor\n")
    result = scan_trees(tmp_path, engine, {"srv/__init__.py": "", "srv/b.py": client}, only=["DC006"])
    assert result.findings == []


# 26o M4 (setup_srv's vllm_backend.py at vLLM 0.34.0): `vllm_engine = None` at the top, `global vllm_engine;
# vllm_engine = AsyncLLMEngine.from_engine_args(...)` in a setup function, then `vllm_engine.generate(p, sp, rid, ids)`
# elsewhere: 0.34.0's `generate` takes three positionals. The placeholder and the one global store type the name.
_LAZY_VLLM = {"vllm/__init__.py": "",
              "vllm/engine.py": "class Engine:\n    @classmethod\n    def from_args(cls, args):\n        return cls()\n\n"
                                "    def generate(self, prompt, params, request_id):\n        return prompt\n"}


@pytest.mark.parametrize("setup,found", [
    ("def setup(args):\n    global engine\n    engine = Engine.from_args(args)\n", [("DC004", "error")]),
    ("def setup(args):\n    global engine\n    engine = Engine.from_args(args)\n\n\n"
     "def reset(args):\n    global engine\n    engine = Engine.from_args(args)\n", []),
    ("def setup(args, engine=None):\n    engine = Engine.from_args(args)\n    return engine\n", []),
], ids=["one global store", "two global stores", "a local of the same name"])
def test_26o_m4_a_none_placeholder_set_once_through_global_is_typed(tmp_path, setup, found):
    from scan.helpers import scan_trees
    client = ("from vllm.engine import Engine\n\nengine = None\n\n\n" + setup +
              "\n\nasync def generate(prompt, sp, rid, ids):\n    return engine.generate(prompt, sp, rid, ids)\n")
    result = scan_trees(tmp_path, _LAZY_VLLM, {"srv/__init__.py": "", "srv/b.py": client}, only=["DC004"])
    assert [(f.rule, f.severity) for f in result.findings] == found



# 26f M1 (happy_vllm's 0.6.4.post1 and 0.8.1 upgrades): the client replaces the api_server module's `run_mp_engine`
# with its own function, imported from another of its files, through an aliased module import; vLLM starts it as
# `context.Process(target=run_mp_engine, args=(...))` with one argument more than the client's def takes. The child's
# call is a call of the module's global like any other.
def _api_server(args: str) -> dict:
    return {"vllm/__init__.py": "", "vllm/engine/__init__.py": "", "vllm/entrypoints/__init__.py": "",
            "vllm/engine/mp_engine.py": f"def run_mp_engine({args}):\n    return None\n",
            "vllm/entrypoints/api_server.py": "import multiprocessing\n\nfrom vllm.engine.mp_engine import run_mp_engine\n\n\n"
                                              "def build(args):\n    context = multiprocessing.get_context('spawn')\n"
                                              f"    proc = context.Process(target=run_mp_engine, args=({args},))\n"
                                              "    proc.start()\n    return proc\n"}


_LAUNCH = ("import vllm.entrypoints.api_server as vllm_api_server\n\nfrom pkg.engine import run_mp_engine\n\n\n"
           "def build(args):\n    vllm_api_server.run_mp_engine = run_mp_engine\n    return vllm_api_server.build(args)\n")


@pytest.mark.parametrize("own,new,client_def,found", [
    ("engine_args, usage_context, ipc_path", "engine_args, usage_context, ipc_path, engine_alive",
     "engine_args, usage_context, ipc_path", [("error", "pkg/engine.py", 1)]),
    ("engine_args, usage_context, ipc_path, engine_alive", "engine_args, usage_context, ipc_path, engine_alive",
     "engine_args, usage_context, ipc_path", []),
    ("engine_args, usage_context, ipc_path", "engine_args, usage_context, ipc_path, engine_alive",
     "engine_args, usage_context, ipc_path, *rest", []),
], ids=["one argument more than the def takes", "the client's vLLM started it the same way", "the def takes *rest"])
def test_26f_m1_a_replaced_function_vllm_starts_in_a_process_is_checked(tmp_path, own, new, client_def, found):
    client = {"pkg/__init__.py": "", "pkg/launch.py": _LAUNCH,
              "pkg/engine.py": f"def run_mp_engine({client_def}):\n    return None\n"}
    result = scan_against_own(tmp_path, _api_server(own), "0.6.3", _api_server(new), client, ["DC109"], "0.6.4")
    assert [(f.severity, f.client.path, f.client.line) for f in result.findings] == found
    if found:
        assert "starts its module function `run_mp_engine` in a child, `context.Process(target=run_mp_engine" \
            in result.findings[0].message


def test_26f_m1_twin_a_start_whose_arguments_are_not_written_out_is_not_read(tmp_path):
    new = _api_server("engine_args, usage_context, ipc_path, engine_alive")
    new["vllm/entrypoints/api_server.py"] = new["vllm/entrypoints/api_server.py"].replace(
        "args=(engine_args, usage_context, ipc_path, engine_alive,)", "args=args")
    client = {"pkg/__init__.py": "", "pkg/launch.py": _LAUNCH,
              "pkg/engine.py": "def run_mp_engine(engine_args, usage_context, ipc_path):\n    return None\n"}
    result = scan_against_own(tmp_path, _api_server("engine_args, usage_context, ipc_path"), "0.6.3", new, client,
                              ["DC109"], "0.6.4")
    assert result.findings == []


# 26f M4 (ENOVA's llmo at vLLM 0.5.1): a tracing library patches vLLM through wrapt by strings, without importing vLLM:
# `wrap_function_wrapper("vllm.engine.metrics", "StatLogger.__init__", w)`, the strings held in locals and joined by
# an f-string. 0.5.1 has no `StatLogger`: wrapt's getattr raises AttributeError when the patch starts.
_METRICS = {"vllm/__init__.py": "", "vllm/engine/__init__.py": "",
            "vllm/engine/metrics.py": "class StatLoggerBase:\n    def log(self, stats):\n        return stats\n"}

_LLMO = '''from wrapt import wrap_function_wrapper


def _w(wrapped, instance, args, kwargs):
    return wrapped(*args, **kwargs)


def instrument():
    package = "vllm.engine.metrics"
    obj = "{obj}"
    method = "{method}"
    wrap_function_wrapper(package, f"{{obj}}.{{method}}", _w)
'''


@pytest.mark.parametrize("obj,method,found", [
    ("StatLogger", "__init__", [("DC002", "error", 12, "vllm.engine.metrics.StatLogger")]),
    ("StatLoggerBase", "log_old", [("DC002", "error", 12, "vllm.engine.metrics.StatLoggerBase.log_old")]),
    ("StatLoggerBase", "log", []),
], ids=["a class the release lacks", "a method its class lacks", "both there"])
def test_26f_m4_a_wrapt_patch_named_by_strings_is_checked(tmp_path, obj, method, found):
    from scan.helpers import scan_trees
    client = {"llmo/__init__.py": "", "llmo/vllm_instr.py": _LLMO.format(obj=obj, method=method)}
    result = scan_trees(tmp_path, _METRICS, client, only=["DC001", "DC002"])
    assert [(f.rule, f.severity, f.client.line, f.symbol) for f in result.findings] == found


@pytest.mark.parametrize("patch,found", [
    ('mock.patch("vllm.engine.metrics.log_stats")', [("DC002", 7)]),
    ('mock.patch("vllm.engine.metrics.log_stats", create=True)', []),
    ('mock.patch("vllm.engine.metrics.StatLogger.log")', [("DC001", 7)]),
    ('mock.patch("vllm.engine.metrics.StatLoggerBase.log")', []),
], ids=["a missing last name", "create=True", "past a missing name: mock imports it as a module", "there"])
def test_26f_m4_a_mock_patch_path_is_checked(tmp_path, patch, found):
    from scan.helpers import scan_trees
    client = f"from unittest import mock\n\nimport vllm  # noqa: F401\n\n\ndef test_it():\n    with {patch}:\n        pass\n"
    result = scan_trees(tmp_path, _METRICS, {"tests/__init__.py": "", "tests/test_m.py": client}, only=["DC001", "DC002"])
    assert [(f.rule, f.client.line) for f in result.findings] == found


# 26m N5 (vLLM 0.24.0 / 0.34.0's own trees): DC102 read every string naming extract_hidden_states as configuring it:
# a `Literal[...]` alias, a config class's `model_type`, a registry entry `("extract_hidden_states", "Model")`. Only
# a value given for a configuration key (`method=`, `"kv_connector":`, `spec_method = ...`), after a flag in a
# command list, or a JSON / command text of its own configures it.
_SPEC_CFG = {"vllm/__init__.py": "", "vllm/config.py": "class SpeculativeConfig:\n    method: str = 'eagle'\n",
             "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model, **kw):\n"
             "        self.kw = kw\n"}


@pytest.mark.parametrize("line,found", [
    ('MyMethods = Literal["eagle", "eagle3", "extract_hidden_states"]', False),
    ('class MyHiddenConfig:\n    model_type = "extract_hidden_states"', False),
    ('MY_MODELS = {"MyHidden": ("extract_hidden_states", "MyHiddenModel")}', False),
    ('llm = LLM(model="m", speculative_config={"method": "extract_hidden_states"})', True),
    ('SPEC_METHODS = ("eagle3", "extract_hidden_states")', True),
    ('cmd = ["vllm", "serve", "m", "--speculative-config.method", "extract_hidden_states"]', True),
    ("cmd = ['vllm', 'serve', 'm', '--speculative-config', '{\"method\": \"extract_hidden_states\"}']", True),
], ids=["a Literal alias", "a model_type", "a registry entry", "a method keyword", "a tuple given for a name",
        "after a flag", "a JSON text"])
def test_26m_n5_only_a_string_that_configures_the_path_is_read(tmp_path, line, found):
    from scan.helpers import scan_trees
    client = "from typing import Literal\n\nfrom vllm.entrypoints.llm import LLM  # noqa: F401\n\n" + line + "\n"
    result = scan_trees(tmp_path, _SPEC_CFG, {"plug/__init__.py": "", "plug/cfg.py": client}, only=["DC102"])
    assert bool(result.findings) == found


# 26k M2a (vllm-supa at vLLM 0.34.0): `import vllm.platforms.cuda as cuda_platform`, then
# `cuda_platform._get_backend_priorities = _get_backend_priorities`; vLLM calls its global from a method of a class
# of that module with keywords the replacement lacks. The aliased module import names the module as its last part does.
_CUDA = {"vllm/__init__.py": "", "vllm/platforms/__init__.py": "",
         "vllm/platforms/cuda.py": "def _get_backend_priorities(use_mla, device_capability, head_size=None):\n"
                                   "    return []\n\n\nclass CudaPlatformBase:\n    def get_valid_backends(self, cap):\n"
                                   "        return _get_backend_priorities(False, cap, head_size=64)\n"}
_CUDA_OWN = {**_CUDA, "vllm/platforms/cuda.py": _CUDA["vllm/platforms/cuda.py"].replace(", head_size=None", "")
             .replace(", head_size=64", "")}


@pytest.mark.parametrize("imported", ["import vllm.platforms.cuda as cuda_platform",
                                      "from vllm.platforms import cuda as cuda_platform"])
def test_26k_m2a_a_module_function_replaced_through_an_aliased_module(tmp_path, imported):
    client = (f"{imported}\n\n\ndef _get_backend_priorities(use_mla, device_capability):\n    return []\n\n\n"
              "cuda_platform._get_backend_priorities = _get_backend_priorities\n")
    result = scan_against_own(tmp_path, _CUDA_OWN, "0.27.1", _CUDA, {"supa/__init__.py": "", "supa/platform.py": client},
                              ["DC109"], "0.34.0")
    assert [(f.severity, f.client.line, f.vllm.path) for f in result.findings] == [("error", 4, "vllm/platforms/cuda.py")]


# 27c M1 (ThinkRL's vllm_worker.py, better-vllm-api's api_server.py): the placeholder is annotated,
# `engine: AsyncLLMEngine | None = None`, then set once through `global`: typed as the unannotated one is.
def test_27c_m1_an_annotated_none_placeholder_set_through_global_is_typed(tmp_path):
    from scan.helpers import scan_trees
    client = ("from typing import Optional\n\nfrom vllm.engine import Engine\n\nengine: Optional[Engine] = None\n\n\n"
              "def setup(args):\n    global engine\n    engine = Engine.from_args(args)\n\n\n"
              "async def generate(prompt, sp, rid, ids):\n    return engine.generate(prompt, sp, rid, ids)\n")
    result = scan_trees(tmp_path, _LAZY_VLLM, {"srv/__init__.py": "", "srv/b.py": client}, only=["DC004"])
    assert [(f.rule, f.severity, f.client.line) for f in result.findings] == [("DC004", "error", 14)]


# 27c F1 (probe): V0/V1 dispatch code, `if isinstance(e, AsyncLLM): ... elif isinstance(e, AsyncLLMEngine): e.engine`,
# on a release where `AsyncLLMEngine` is `AsyncLLM`: the first test took every such object, the branch never runs.
@pytest.mark.parametrize("shape,found", [
    ("    if isinstance(llm, AsyncLLM):\n        return llm.engine_core\n"
     "    elif isinstance(llm, AsyncLLMEngine):\n        return llm.engine.model_executor\n", False),
    ("    if isinstance(llm, AsyncLLM):\n        return llm.engine_core\n"
     "    if isinstance(llm, AsyncLLMEngine):\n        return llm.engine.model_executor\n", False),
    ("    if isinstance(llm, AsyncLLMEngine):\n        return llm.engine.model_executor\n", True),
], ids=["elif", "after an exiting if", "the test alone"])
def test_27c_f1_a_branch_an_earlier_test_took_every_object_from_never_runs(tmp_path, shape, found):
    from scan.helpers import scan_trees
    client = ("from vllm.async_llm import AsyncLLM\nfrom vllm.async_llm_engine import AsyncLLMEngine\n\n\n"
              "def use(llm):\n" + shape)
    result = scan_trees(tmp_path, _engine(), {"srv/__init__.py": "", "srv/b.py": client}, only=["DC006"])
    lines = [i for i, ln in enumerate(client.splitlines(), 1) if "llm.engine.model_executor" in ln]
    assert [f.client.line for f in result.findings] == ([lines[0]] if found else [])


# 27b F1 (vllm-ascend 0.18.0 at vLLM 0.33.0): the call is two steps from the CUDA worker, through a module function
# imported under another name: `cudagraph._init_minimal(runner)` < `GPUModelRunner.profile_cudagraph_memory` (as
# `from vllm.cudagraph import profile as _profile`) < `Worker.determine_available_memory`.
_CHAIN = {"vllm/cudagraph.py": "from vllm.runner import GPUModelRunner\n\n\n"
                               "def _init_minimal(runner: GPUModelRunner):\n    runner.initialize_kv_cache(None, ctx=1)\n\n\n"
                               "def profile(runner):\n    _init_minimal(runner)\n    return 0\n",
          "vllm/runner.py": _RUNNER + "\n    def profile_cudagraph_memory(self):\n        from vllm.cudagraph import profile "
                            "as _profile\n\n        return _profile(self)\n"}


@pytest.mark.parametrize("elsewhere,severity", [("", "warning"),
                                                ("\n\ndef step(r):\n    return profile(r)\n", "error")],
                         ids=["only the CUDA worker reaches it", "a module function of vLLM calls it too"])
def test_27b_f1_a_call_a_module_function_chain_brings_from_another_platforms_worker(tmp_path, elsewhere, severity):
    vllm = _vllm("profile_cudagraph_memory()", {**_CHAIN, "vllm/cudagraph.py": _CHAIN["vllm/cudagraph.py"] + elsewhere})
    vllm["vllm/runner.py"] = _CHAIN["vllm/runner.py"]
    [(found, path, message)] = _dc109(tmp_path, vllm, _client())
    assert (found, path) == (severity, "vllm/cudagraph.py")
    assert ("vLLM calls `_init_minimal` only from its `Worker`" in message) == (severity == "warning")


# 27b W1 (vllm-ascend's GLM tool-parser patch at vLLM 0.26.0): the vLLM method that calls the client's replacement with
# a new keyword also builds `{"chat_template_kwargs": ...}` for another call; that key tests nothing about a signature.
def _serving(extra: str) -> dict:
    return {"vllm/__init__.py": "", "vllm/serving.py": "class OpenAIServingChat:\n"
            "    def stream(self, request, tokenizer=None):\n        return []\n\n"
            "    def create(self, request, params):\n" + extra +
            "        return self.stream(request, tokenizer=None)\n"}


@pytest.mark.parametrize("extra,severity", [
    ("        kwargs = {'tokenizer': params}\n", "error"),
    ("        if 'tokenizer' in params:\n            pass\n", "warning"),
], ids=["a dict key of the name", "a membership test of the name"])
def test_27b_w1_a_dict_key_of_the_keyword_is_no_signature_check(tmp_path, extra, severity):
    own = {"vllm/__init__.py": "", "vllm/serving.py": "class OpenAIServingChat:\n    def stream(self, request):\n"
           "        return []\n\n    def create(self, request, params):\n        return self.stream(request)\n"}
    client = ("from vllm.serving import OpenAIServingChat\n\n\ndef _patched(self, request):\n    return []\n\n\n"
              "OpenAIServingChat.stream = _patched\n")
    result = scan_against_own(tmp_path, own, "0.18.0", _serving(extra), {"p/__init__.py": "", "p/chat.py": client},
                              ["DC109"], "0.26.0")
    assert [(f.severity, f.client.line) for f in result.findings] == [(severity, 4)]


# 27d M1 (tapm-instrumentation-vllm at 0.33.0): wrapt imports the module it is handed, `vllm.engine.metrics`, which
# 0.33.0 no longer has: ModuleNotFoundError when the patch starts (DC001), strings held in names as before.
def test_27d_m1_a_wrapt_patch_of_a_module_the_release_lacks(tmp_path):
    from scan.helpers import scan_trees
    client = {"tapm/__init__.py": "", "tapm/instr.py": _LLMO.format(obj="StatLoggerBase", method="log")}
    vllm = {"vllm/__init__.py": "", "vllm/engine/__init__.py": ""}
    result = scan_trees(tmp_path, vllm, client, only=["DC001", "DC002"])
    assert [(f.rule, f.client.line, f.symbol) for f in result.findings] == [("DC001", 12, "vllm.engine.metrics")]
    assert "raises ModuleNotFoundError" in result.findings[0].message


# 27e C3b (vllm-ascend HEAD's v2 runner): a method the client class defines in both branches of a class-body
# `if` / `else`, neither calling super(): vLLM's own body of it never runs for the client's object, nor its calls.
_PREP_OWN = {"vllm/__init__.py": "", "vllm/runner.py": "class GPUModelRunner:\n    def step(self, x):\n        return x\n\n"
             "    def prepare_inputs(self, out):\n        return self.step(out)\n"}
_PREP_NEW = {"vllm/__init__.py": "", "vllm/runner.py": "class GPUModelRunner:\n    def step(self, x, desc=None):\n"
             "        return x\n\n    def prepare_inputs(self, out):\n        return self.step(out, desc=1)\n"}


@pytest.mark.parametrize("orelse,found", [(True, []), (False, [("error", 7)])], ids=["both branches", "one branch"])
def test_27e_c3b_a_method_both_branches_of_a_class_body_if_replace(tmp_path, orelse, found):
    client = ("import os\n\nfrom vllm.runner import GPUModelRunner\n\n\nclass NPURunner(GPUModelRunner):\n"
              "    def step(self, x):\n        return x\n\n"
              "    if os.environ.get('OLD'):\n        def prepare_inputs(self, out):\n            return None\n" +
              ("    else:\n        def prepare_inputs(self, out, desc=None):\n            return None\n" if orelse else ""))
    result = scan_against_own(tmp_path, _PREP_OWN, "0.27.1", _PREP_NEW, {"npu/__init__.py": "", "npu/r.py": client},
                              ["DC109"], "0.33.0")
    assert [(f.severity, f.client.line) for f in result.findings] == found


# 27d M2 (tpu-inference's and vllm-ascend's test suites): a test that mocks `vllm.x.f` by its path and imports only the
# plugin is a client file too: the patch imports vLLM's module when it starts.
def test_27d_m2_a_test_that_mocks_a_vllm_path_without_importing_vllm_is_read(tmp_path):
    from scan.helpers import scan_trees
    test = ('from unittest import mock\n\nimport myplugin  # noqa: F401\n\n\n@mock.patch("vllm.engine.metrics.log_stats")\n'
            "def test_x(log):\n    pass\n")
    result = scan_trees(tmp_path, _METRICS, {"tests/__init__.py": "", "tests/test_x.py": test}, only=["DC001", "DC002"])
    assert [(f.rule, f.client.line) for f in result.findings] == [("DC002", 6)]


def test_26n_false1_twin_a_client_file_that_imports_vllms_worker_keeps_the_error(tmp_path):
    # another client file builds vLLM's own worker: it may run with the client's runner, whichever file the unit is
    client = {**_client(), "plug/bench.py": "from vllm.gpu_worker import Worker\n\n\ndef run():\n    return Worker()\n"}
    [(severity, path, _message)] = _dc109(tmp_path, _vllm("initialize_kv_cache(cfg, ctx=1)"), client)
    assert (severity, path) == ("error", "vllm/gpu_worker.py")


# 27d M3: `mock.patch.multiple("vllm.engine.metrics", log_stats=...)` looks each keyword's name up on the target.
@pytest.mark.parametrize("keywords,found", [("log_stats=None", [("DC002", 7)]), ("StatLoggerBase=None", []),
                                            ("log_stats=None, create=True", [])],
                         ids=["a missing name", "a name there", "create=True"])
def test_27d_m3_patch_multiple_looks_each_keyword_up(tmp_path, keywords, found):
    from scan.helpers import scan_trees
    test = ("from unittest import mock\n\nimport vllm  # noqa: F401\n\n\ndef test_it():\n"
            f'    with mock.patch.multiple("vllm.engine.metrics", {keywords}):\n        pass\n')
    result = scan_trees(tmp_path, _METRICS, {"tests/__init__.py": "", "tests/test_m.py": test}, only=["DC001", "DC002"])
    assert [(f.rule, f.client.line) for f in result.findings] == found
