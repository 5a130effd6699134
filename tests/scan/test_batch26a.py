"""Batch 26a (evaluation harnesses and fine-tuning libraries at their GitHub HEAD,
docs/triage/2026-12-05-eval-finetune-heads-26a.md).

NA1: a module's own object is no new home. unsloth @ 015bdef (`unsloth/models/_utils.py:1585-1637`) silences vLLM's
loggers by importing each module's `logger` (`from vllm.worker.worker import logger as vllm_worker_logger`,
`from vllm.executor.executor_base import logger as vllm_executor_logger`, ...), each under try/except ImportError. At
vLLM 0.27.1 / 0.33.0 those modules are gone, and DC001 said where the import went: "A module of that name is at
`vllm.distributed.ec_transfer.ec_connector.cpu.worker`" and "Where what the client takes from it is defined now:
`logger` in `vllm._custom_ops`". Every vLLM module binds its own `logger = init_logger(__name__)`: another module's
logger is another object (the EC connector's, the custom ops'), so none of them is where the old module's logger went,
and `move-import` would have rewritten an unguarded import to silence the wrong logger. A top-level name bound to a call
handed `__name__` (`init_logger(__name__)`, `logging.getLogger(__name__)`) is now no evidence for a module of the same
name (`_has_names`), no home for a name (`TextIndex.defining_modules`, also DC002's "It is defined in ... now"), and
`move-import` moves it only along with a name that proves the module (the twin: `from vllm.worker.worker import
Worker, logger`, where `vllm.v1.worker.worker` has `Worker`). A logger shared by name (`logging.getLogger("vllm")`) is
the same object wherever it is bound: that one still moves.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import scan_trees

NA1 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "NA1_module_own_logger_is_no_new_home"

LOGGER = "import logging\n\n\ndef init_logger(name):\n    return logging.getLogger(name)\n"
OWN = "from vllm.logger import init_logger\n\nlogger = init_logger(__name__)\n"
VLLM = {
    "vllm/__init__.py": "",
    "vllm/logger.py": LOGGER,
    "vllm/_custom_ops.py": OWN + "\n\ndef gelu():\n    pass\n",
    "vllm/distributed/ec_transfer/cpu/worker.py": OWN + "\n\nclass ECWorker:\n    pass\n",
    "vllm/v1/worker/worker.py": OWN + "\n\nclass Worker:\n    pass\n",
    "vllm/utils/platform_utils.py": "import logging\n\nlogger = logging.getLogger(\n    __name__,\n)\n",
    "vllm/chat_templates/registry.py": "from vllm.logger import init_logger\n\nlogger = init_logger(__file__)\n",
    # the logger of the module this code left, by its old name (0.27.1's entrypoints/serve/utils/server_utils.py)
    "vllm/serve/server_utils.py": "from vllm.logger import init_logger\n\nlogger = init_logger(\"vllm.openai.server_utils\")\n",
}


def _scan(tmp_path: Path, code: str, vllm: dict[str, str] = VLLM) -> list:
    client = {"plugin/__init__.py": "", "plugin/mod.py": code}
    return [f for f in scan_trees(tmp_path, vllm, client).findings if f.rule in ("DC001", "DC002")]


def _fixed(tmp_path: Path) -> list:
    from driftcheck.fix.fixer import FixOptions, plan_fixes
    from driftcheck.scan.pipeline import ScanOptions
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    plan = plan_fixes(resolve_vllm(str(tmp_path / "vllm-src"), tmp_path / "cache"),
                      resolve_client(str(tmp_path / "client"), tmp_path / "cache"),
                      ScanOptions(cache_dir=tmp_path / "cache", use_cache=False), FixOptions(only=["move-import"]))
    return plan.changes


def test_na1_a_module_own_logger_names_no_same_named_module_and_is_not_moved(tmp_path):
    (f,) = _scan(tmp_path, "from vllm.worker.worker import logger as vllm_worker_logger\n\nvllm_worker_logger.setLevel(40)\n")
    assert (f.rule, f.severity) == ("DC001", "error")  # the import still fails: a real error
    assert "A module of that name" not in f.message and "cpu.worker" not in f.message
    assert "init_logger(__name__)" in f.message  # says why no home is named
    assert _fixed(tmp_path) == []


def test_na1_a_module_own_logger_gets_no_home_from_the_definitions_either(tmp_path):
    (f,) = _scan(tmp_path, "from vllm.executor.executor_base import logger\n")
    assert (f.rule, f.severity) == ("DC001", "error")
    assert "_custom_ops" not in f.message and "defined now" not in f.message
    assert _fixed(tmp_path) == []


def test_na1_dc002_names_no_module_own_logger_as_where_the_name_went(tmp_path):
    (f,) = _scan(tmp_path, "from vllm.utils import logger\n")
    assert (f.rule, f.severity) == ("DC002", "error")
    assert "platform_utils" not in f.message


def test_na1_guarded_as_unsloth_imports_it_is_a_warning_without_a_home(tmp_path):
    client = (NA1 / "client" / "plugin" / "silence.py").read_text()
    found = _scan(tmp_path, client, {**VLLM, "vllm/worker/__init__.py": ""})
    assert found and all(f.severity == "warning" for f in found)
    assert not any("A module of that name" in f.message or "defined now" in f.message for f in found)


def test_na1_twin_a_logger_moves_along_with_a_name_that_proves_the_module(tmp_path):
    (f,) = _scan(tmp_path, "from vllm.worker.worker import Worker, logger\n")
    assert f.severity == "error" and "A module of that name is at `vllm.v1.worker.worker`" in f.message
    [change] = _fixed(tmp_path)
    assert change.new == "from vllm.v1.worker.worker import Worker, logger\n"


def test_na1_twin_a_logger_made_for_the_gone_module_by_its_name_is_where_it_went(tmp_path):
    (f,) = _scan(tmp_path, "from vllm.openai.server_utils import logger\n")
    assert f.severity == "error"
    assert "A module of that name is at `vllm.serve.server_utils`" in f.message
    [change] = _fixed(tmp_path)
    assert change.new == "from vllm.serve.server_utils import logger\n"


def test_na1_twin_a_logger_shared_by_name_is_the_same_object_and_still_moves(tmp_path):
    shared = {**VLLM, "vllm/v1/worker/worker.py": "import logging\n\nlogger = logging.getLogger(\"vllm\")\n"}
    (f,) = _scan(tmp_path, "from vllm.worker.worker import logger\n", shared)
    assert f.severity == "error" and "A module of that name is at `vllm.v1.worker.worker`" in f.message
    [change] = _fixed(tmp_path)
    assert change.new == "from vllm.v1.worker.worker import logger\n"


def test_a_logger_named_for_another_package_is_no_new_home(tmp_path):
    """30a: `from vllm.entrypoints.openai.api_server import logger` at 0.34.0 was told "It is defined in
    `vllm.third_party.fmha_sm100.cute.src.common.cute_dsl_utils` now", whose `logger = logging.getLogger("minimax")`
    is the logger named "minimax", no vLLM module's. A logger shared by vLLM's own name still moves (the twin above)."""
    vendored = {**VLLM, "vllm/utils/platform_utils.py": "def f():\n    pass\n",
                "vllm/third_party/kernels/utils.py": "import logging\n\nlogger = logging.getLogger(\"minimax\")\n"}
    (f,) = _scan(tmp_path, "from vllm.utils import logger\n", vendored)
    assert (f.rule, f.severity) == ("DC002", "error")
    assert "third_party" not in f.message and "It is defined in" not in f.message


# ----------------------------------------------------------------------------------------- NA2
# torchforge @ 6e77f0b at vLLM 0.10.0 (`src/forge/actors/generator.py:625-669`) builds `WorkerWrapperBase(vllm_config,
# rank)` and calls `load_model()`, `execute_model(...)`, reads `model_runner`: 7 unknowns, each saying
# "WorkerWrapperBase inherits from a dynamic __getattr__, which driftcheck does not read". The class inherits nothing:
# it defines `__getattr__(self, attr): return getattr(self.worker, attr)` (0.10.0 vllm/worker/worker_base.py:622),
# and `self.worker` is the worker class the config names, built in `init_worker`. The reason now names the method
# and where it hands the name on; still unknown (which worker runs is decided at run time).
WRAPPER = {
    "vllm/__init__.py": "",
    "vllm/worker/worker_base.py": (
        "class WorkerWrapperBase:\n"
        "    def __init__(self, vllm_config, rpc_rank=0):\n        self.rpc_rank = rpc_rank\n        self.worker = None\n\n"
        "    def init_worker(self, cls):\n        self.worker = cls()\n\n"
        "    def __getattr__(self, attr):\n        return getattr(self.worker, attr)\n"),
}
USE = ("from vllm.worker.worker_base import WorkerWrapperBase\n\n\ndef start(config):\n"
       "    worker = WorkerWrapperBase(config, 0)\n    worker.load_model()\n    return worker.rpc_rank\n")


def test_na2_a_member_a_forwarding_getattr_answers_is_unknown_naming_where_it_goes(tmp_path):
    result = scan_trees(tmp_path, WRAPPER, {"plugin/__init__.py": "", "plugin/gen.py": USE}, only=["DC006"])
    assert [f for f in result.findings if f.severity == "error"] == []
    [u] = [u for u in result.unknown if "load_model" in u.message]
    assert "`WorkerWrapperBase.__getattr__` (vllm/worker/worker_base.py:" in u.message
    assert "`self.worker`" in u.message and "inherits from" not in u.message
    assert not any("rpc_rank" in u.message for u in result.unknown)  # what the class defines is known


def test_na2_twin_a_getattr_that_computes_the_answer_is_named_without_a_target(tmp_path):
    computed = {**WRAPPER, "vllm/worker/worker_base.py": WRAPPER["vllm/worker/worker_base.py"].replace(
        "        return getattr(self.worker, attr)\n", "        if attr.startswith('_'):\n            raise AttributeError(attr)\n"
        "        return self.lookup(attr)\n")}
    result = scan_trees(tmp_path, computed, {"plugin/__init__.py": "", "plugin/gen.py": USE}, only=["DC006"])
    [u] = [u for u in result.unknown if "load_model" in u.message]
    assert "`WorkerWrapperBase.__getattr__`" in u.message and "answers names the class does not define" in u.message


# ----------------------------------------------------------------------------------------- NA3
# axolotl @ 067b021 at vLLM 0.33.0: `src/axolotl/scripts/vllm_serve_lora.py:38` (`from vllm.utils import get_open_port`
# in the `except ImportError` fallback of a try, itself in a try) and `:401` (`from vllm.sampling_params import
# GuidedDecodingParams` under `try/except ImportError`) were DC002 warnings whose message gave no reason for being a
# warning ("ImportError when this function runs."), where DC001 says "The import is guarded by a try whose handler catches ImportError".
GUARDED = ("def f():\n    try:\n        from vllm.sampling_params import GuidedDecodingParams\n"
           "    except ImportError:\n        GuidedDecodingParams = None\n    return GuidedDecodingParams\n")


def test_na3_a_guarded_import_of_a_missing_name_says_why_it_is_a_warning(tmp_path):
    vllm = {"vllm/__init__.py": "", "vllm/sampling_params.py": "class SamplingParams:\n    pass\n"}
    (f,) = _scan(tmp_path, GUARDED, vllm)
    assert (f.rule, f.severity) == ("DC002", "warning")
    assert "guarded by a try whose handler catches ImportError" in f.message


def test_na3_twin_the_unguarded_import_is_an_error_that_says_nothing_of_a_guard(tmp_path):
    vllm = {"vllm/__init__.py": "", "vllm/sampling_params.py": "class SamplingParams:\n    pass\n"}
    (f,) = _scan(tmp_path, "from vllm.sampling_params import GuidedDecodingParams\n", vllm)
    assert (f.rule, f.severity) == ("DC002", "error") and "guarded" not in f.message


def test_na3_a_guarded_import_whose_fallback_sets_the_name_says_both(tmp_path):
    # ms-swift @ 3602360 `swift/pipelines/infer/rollout.py:9-14`: the fallback sets the name the import missed
    vllm = {"vllm/__init__.py": "", "vllm/sampling_params.py": "class StructuredOutputsParams:\n    pass\n"}
    code = ("try:\n    from vllm.sampling_params import GuidedDecodingParams\nexcept ImportError:\n"
            "    import vllm.sampling_params\n\n"
            "    vllm.sampling_params.GuidedDecodingParams = vllm.sampling_params.StructuredOutputsParams\n")
    (f,) = _scan(tmp_path, code, vllm)
    assert (f.rule, f.severity) == ("DC002", "warning")
    assert "sets it on that module itself" in f.message and "guarded by a try whose handler catches ImportError" in f.message


# ----------------------------------------------------------------------------------------- NA4
# torchtune @ bd2a0fc at its pin vLLM 0.8.4: `tests/torchtune/rl/test_parameter_server.py:109`
# `self.inference_server.collective_rpc("_check_weights_changed", ...)` was a DC007 error. The method is defined on
# `TestVLLMWorkerWrapper`, a class `DummyCollector.__init__` defines and hands to `LLM(..., worker_cls=
# TestVLLMWorkerWrapper)` as a class object (V0's engine pickles it to the workers, 0.8.4 worker_base.py
# `cloudpickle.loads(self.vllm_config.parallel_config.worker_cls)`): the worker has it. driftcheck read `worker_cls`
# only as a "pkg.mod.Class" string. A class object this file defines (at any depth) is now the worker too.
NA4 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "NA4_worker_cls_class_object_a_function_defines"


def _na4(tmp_path: Path, check: str) -> list:
    vllm_files = {str(p.relative_to(NA4 / "vllm_src")): p.read_text() for p in (NA4 / "vllm_src" / "vllm").rglob("*.py")}
    client = {str(p.relative_to(NA4 / "client")): p.read_text() for p in (NA4 / "client").rglob("*.py")}
    client["plugin/check.py"] = check
    return [f for f in scan_trees(tmp_path, vllm_files, client, only=["DC007"]).findings]


CHECK = (NA4 / "client" / "plugin" / "check.py").read_text()


def test_na4_an_rpc_to_a_method_of_a_class_object_given_as_worker_cls_is_no_error(tmp_path):
    assert _na4(tmp_path, CHECK) == []


def test_na4_twin_a_method_no_worker_defines_stays_an_error(tmp_path):
    (f,) = _na4(tmp_path, CHECK.replace('collective_rpc("_check_weights_changed"', 'collective_rpc("_check_weights"'))
    assert (f.rule, f.severity, f.symbol) == ("DC007", "error", "_check_weights")


def test_na4_twin_a_class_given_as_worker_cls_to_something_else_than_vllm_stays_an_error(tmp_path):
    # `worker_cls=` also names ray or trainer worker classes (ms-swift's `WorkerGroup.from_pool(..., worker_cls=...)`)
    other = CHECK.replace('LLM("gpt2", worker_cls=TestWorker)',
                          'LLM("gpt2")\n        self.group = WorkerGroup(worker_cls=TestWorker)').replace(
        "class Collector:", "class WorkerGroup:\n    def __init__(self, worker_cls):\n        self.cls = worker_cls\n\n\nclass Collector:")
    (f,) = _na4(tmp_path, other)
    assert (f.rule, f.severity, f.symbol) == ("DC007", "error", "_check_weights_changed")


def test_na4_twin_a_local_class_never_given_as_worker_cls_stays_an_error(tmp_path):
    (f,) = _na4(tmp_path, CHECK.replace('LLM("gpt2", worker_cls=TestWorker)', 'LLM("gpt2")'))
    assert (f.rule, f.severity, f.symbol) == ("DC007", "error", "_check_weights_changed")



# ----------------------------------------------------------------------------------------- NA5
# NVIDIA-NeMo/Export-Deploy @ 914daa6 (declares `vllm~=0.24.0`): `nemo_export/vllm_exporter.py:206` and `:222`
# `LLM(..., swap_space=swap_space, ...)` were DC111 errors ("neither LLM.__init__ nor EngineArgs takes `swap_space`; LLM
# hands its **kwargs to EngineArgs(...), which raises TypeError"). 0.24.0's `LLM.__init__` takes it out first (`if
# "swap_space" in kwargs: kwargs.pop("swap_space")` with a DeprecationWarning, vllm/entrypoints/llm.py:224-233). The keys
# LLM.__init__ pops or deletes from its **kwargs before `EngineArgs(**kwargs)` are now keywords it takes. At 0.32.0,
# whose LLM no longer pops it, the same call stays an error (batch 20's reading of nemo-export-deploy 0.4.0).
NA5 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / \
    "NA5_llm_keyword_the_constructor_pops_before_handing_kwargs_on"


def _na5(tmp_path: Path, llm: str | None = None) -> list:
    vllm_files = {str(p.relative_to(NA5 / "vllm_src")): p.read_text() for p in (NA5 / "vllm_src" / "vllm").rglob("*.py")}
    if llm is not None:
        vllm_files["vllm/entrypoints/llm.py"] = llm
    client = {str(p.relative_to(NA5 / "client")): p.read_text() for p in (NA5 / "client").rglob("*.py")}
    return [(f.severity, f.symbol) for f in scan_trees(tmp_path, vllm_files, client, only=["DC111"]).findings]


LLM_SRC = (NA5 / "vllm_src" / "vllm" / "entrypoints" / "llm.py").read_text()


def test_na5_a_keyword_llm_pops_from_its_kwargs_is_taken(tmp_path):
    assert _na5(tmp_path) == []


def test_na5_twin_without_the_pop_the_keyword_reaches_engine_args_and_is_an_error(tmp_path):
    unpopped = LLM_SRC.replace('            kwargs.pop("swap_space")\n', "            pass\n")
    assert _na5(tmp_path, unpopped) == [("error", "vllm.LLM.swap_space")]


def test_na5_twin_a_pop_after_the_forward_does_not_take_it(tmp_path):
    late = LLM_SRC.replace('        if "legacy_flag" in kwargs:\n            del kwargs["legacy_flag"]\n', "").replace(
        "        self.engine_args = EngineArgs(model=model, **kwargs)\n",
        "        self.engine_args = EngineArgs(model=model, **kwargs)\n        kwargs.pop(\"legacy_flag\", None)\n")
    assert _na5(tmp_path, late) == [("error", "vllm.LLM.legacy_flag")]


# ----------------------------------------------------------------------------------------- NA6
# unsloth @ 015bdef at 0.27.1 (no vLLM requirement, so no baseline): DC008 asked "`_unsloth_pre_compute_loss` reads
# `self._old_compute_loss` on `self` ... whether vLLM still has those names is checked against the client's own vLLM,
# and there is none" (`unsloth/models/_utils.py:3250-3251`: `Trainer._old_compute_loss = Trainer.compute_loss;
# Trainer.compute_loss = _unsloth_pre_compute_loss`, `Trainer` a parameter). The client sets that name itself; with a
# baseline DC008 drops such names (`client_set_attrs`), without one it asked about them all. Now only the names the
# check would look at make the unknown, and none makes none.
STORED = ("import vllm  # noqa: F401\n\n\ndef _pre_compute_loss(self, model, inputs):\n"
          "    return self._old_compute_loss(model, inputs)\n\n\n"
          "def patch(Trainer):\n    Trainer._old_compute_loss = Trainer.compute_loss\n"
          "    Trainer.compute_loss = _pre_compute_loss\n")


def _dc008_unknowns(tmp_path: Path, code: str) -> list:
    result = scan_trees(tmp_path, {"vllm/__init__.py": ""}, {"plugin/__init__.py": "", "plugin/patch.py": code},
                        only=["DC008"])
    return [u.message for u in result.unknown]


def test_na6_a_name_the_client_sets_itself_asks_no_baseline_question(tmp_path):
    assert _dc008_unknowns(tmp_path, STORED) == []


def test_na6_twin_a_name_the_client_does_not_set_is_still_unknown_and_named_alone(tmp_path):
    code = STORED.replace("    return self._old_compute_loss(model, inputs)\n",
                          "    self.accelerator.wait()\n    return self._old_compute_loss(model, inputs)\n")
    [message] = _dc008_unknowns(tmp_path, code)
    assert "`self.accelerator`" in message and "_old_compute_loss" not in message
