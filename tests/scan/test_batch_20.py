"""Batches 20a-20c (tool-call / reasoning parser and logits-processor plugins; out-of-tree models; PyPI packages
that depend on vLLM; docs/triage/2026-12-06-*-20{a,b,c}.md), and batch 19d's H1.

W1 (20a): kikikita/mcp_test's xLAM tool parser calls `DeltaMessage(delta_text)` (a pydantic model: a positional
argument raises TypeError) inside `try:`, and its `except Exception:` handler makes the same call. The try-body
line was a warning "so the client handles it"; the handler raises the same error, so the message says that now.

R2 (20c): euroeval 16.11.0 exits early with `if quantization == "gptq" and find_spec("auto_gptq") is None: raise`;
`find_spec` of any name was read as asking which vLLM this is, so a certain AttributeError after it was a warning
"under a vLLM version check". Whether another package is installed says nothing of what vLLM has.

U1 (20b): tecovllm-modelzoo builds `MultipleOf(16)`, a one-field dataclass whose field has no default, and declares no
vLLM: DC107 said "may leave parameters at defaults that changed; no baseline vLLM". No parameter can take a default
there, which the target alone shows.

PB1 (19d, and HF's "left alone"): code after an inline import probe (`try: from vllm.x import Y / except
ImportError: return`) was guarded whatever the probe imported; where every import of the probe works on the
target the rest runs there, so only the uses of what it imported are guarded now (avp-python's
`FlashAttentionMetadata(use_cascade=...)` at 0.33.0, cpu_serving's `from vllm import utils` probe).

R1 (20d): advay-modal/vllm-lora's `endpoint-v1.py` (a file name no `import` can load) defines `@app.cls(...) class
...` with `app = modal.App(...)` at its top level; the method was "in a method that never runs" (QA2's reading for a
script whose top level calls none of its functions). A runner that loads the file by path finds `app` and calls what
the decorators registered on it.

R2 (20d): advay-modal/vllm-lora's `AsyncEngineArgs(...)` at 0.33.0 against its 0.8.5 got 157 DC107 infos
"changed from None to ModelConfig.revision": 0.33.0's `EngineArgs` spells its defaults as other config classes'
fields, whose values are mostly the same. The values are compared now (39 infos; `seed`: None -> 0 is real).

20g (the session's changes against its start, on the batches' trees): VR1, a check of Ray's installed version (vLLM's
old `ray_utils`, copied into forks) was "a vLLM version check"; DF1, a default resolved through another config class
(`enforce_eager = ModelConfig.enforce_eager`, False there; None in 0.8.5, which `ModelConfig` turned into False)
became a warning "None -> False": the off/on/auto reading is kept for defaults written as literals; HS1, DC102 took
the tuple of `self.method not in ("eagle3", "extract_hidden_states")` (a fork's patched `_verify_args`) for a
configuration of the hidden-states path.

20h (`fix` on nine real clients at 0.33.0: 221 edits, 211 right): drop-keyword dropped `BatchDescriptor(
uniform_decode=...)` where 0.33.0 calls the field `uniform` (now left, the message naming `uniform`) and non-empty
literal lists (`AutoWeightsLoader(skip_prefixes=[...])`, now left as asking for something; cases in
tests/codemods/cases/DC003/drop-keyword/); move-import moved an import of a name the client replaces on the old
module itself (W3: vllm-ascend's `chunk_gated_delta_rule`), which now stays.

20i (DC121 on 30 clients, 79 scans: 56 findings at 28 call sites, all real shifts): S1, an unannotated parameter named
like an imported vLLM function did not hide it (`def apply(f): f(1, 2, 3)` was a call of vLLM's `f`: a false DC004
error too); S2, DC121 looked a method up on the class the target defines it in, not on the receiver's class in the
client's vLLM, where a subclass overrode it; W1/20i, a function captured by `_orig = m.f` before `m.f = patched` was
taken for the replacement, whose signature accepted the call, so rdna4's `_orig(..., w13_g_idx=...)` lost its error.

H1 (19d): dgx-vllm's `from vllm.scripts import main` (gone at 0.33.0) was told "`main` in
`vllm.entrypoints.launchers.run_batch`", one of 25 top-level `main`s, because one vLLM file imports it from there.
"""

from __future__ import annotations

from scan.helpers import scan_trees, vllm_tree, write_tree

_PROTOCOL = {
    "vllm/__init__.py": "",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/openai/__init__.py": "",
    "vllm/entrypoints/openai/protocol.py": "from typing import Optional\nfrom pydantic import BaseModel\n\n\n"
                                           "class DeltaMessage(BaseModel):\n    content: Optional[str] = None\n",
}


def _findings(tmp_path, vllm, text, rule):
    result = scan_trees(tmp_path, vllm, {"pkg/__init__.py": "", "pkg/c.py": text}, only=[rule])
    assert not result.internal_errors
    return [(f.client.line, f.severity, f.message) for f in result.findings]


def test_w1_a_try_whose_handler_fails_the_same_way_handles_nothing(tmp_path):
    client = ("from vllm.entrypoints.openai.protocol import DeltaMessage\n\n\n"
              "def stream(delta_text: str):\n    try:\n        return DeltaMessage(delta_text)\n"
              "    except Exception:\n        return DeltaMessage(delta_text)\n")
    found = _findings(tmp_path, _PROTOCOL, client, "DC004")
    assert [(line, severity) for line, severity, _m in found] == [(6, "warning"), (8, "error")]
    assert "inside a try (line 5) that catches everything, but its handler fails on this vLLM too (line 8)" in found[0][2]
    assert "so the client handles it" not in found[0][2]


def test_w1_twin_a_handler_that_works_still_handles_it(tmp_path):
    client = ("from vllm.entrypoints.openai.protocol import DeltaMessage\n\n\n"
              "def stream(delta_text: str):\n    try:\n        return DeltaMessage(delta_text)\n"
              "    except Exception:\n        return DeltaMessage(content=delta_text)\n")
    found = _findings(tmp_path, _PROTOCOL, client, "DC004")
    assert [(line, severity) for line, severity, _m in found] == [(6, "warning")]
    assert found[0][2].endswith("inside a try (line 5) that catches everything, so the client handles it.")


_LLM = {
    "vllm/__init__.py": "from vllm.entrypoints.llm import LLM\n",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model: str) -> None:\n        self.model_config = model\n\n"
                               "    def generate(self, prompts):\n        return prompts\n",
}
_EARLY_EXIT = '''import importlib.util

from vllm import LLM


def load(quantization):
    if quantization == "gptq" and importlib.util.find_spec({name!r}) is None:
        raise RuntimeError("install the quantization extra")
    model = LLM(model="x")
    return model.generate_batch(["hi"])
'''


def test_r2_another_package_installed_is_no_vllm_version_check(tmp_path):
    found = _findings(tmp_path, _LLM, _EARLY_EXIT.format(name="auto_gptq"), "DC006")
    assert [(line, severity) for line, severity, _m in found] == [(10, "error")]
    inside = ("import importlib.util\n\nfrom vllm import LLM\n\n\ndef load():\n    model = LLM(model=\"x\")\n"
              "    if importlib.util.find_spec(\"optimum\") is not None:\n        model.generate_batch([\"hi\"])\n")
    assert [(line, severity) for line, severity, _m in _findings(tmp_path / "inside", _LLM, inside, "DC006")] == [(9, "error")]


def test_r2_twin_find_spec_of_a_vllm_module_still_asks_which_vllm(tmp_path):
    found = _findings(tmp_path, _LLM, _EARLY_EXIT.format(name="vllm.profiler.wrapper"), "DC006")
    assert [(line, severity) for line, severity, _m in found] == [(10, "warning")]
    assert "under a vLLM version check (line 7)" in found[0][2]


_MAINS = {
    "vllm/__init__.py": "",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/cli/__init__.py": "",
    "vllm/entrypoints/cli/main.py": "def main():\n    pass\n",
    "vllm/entrypoints/cli/run_batch.py": "from vllm.entrypoints.launchers.run_batch import main\n\n\n"
                                         "def cmd():\n    return main\n",
    "vllm/entrypoints/launchers/__init__.py": "",
    "vllm/entrypoints/launchers/run_batch.py": "async def main(args):\n    pass\n",
    # three more of 0.33.0's top-level `main`s (it has 25)
    "vllm/benchmarks/__init__.py": "",
    "vllm/benchmarks/serve.py": "def main(args):\n    pass\n",
    "vllm/benchmarks/throughput.py": "def main(args):\n    pass\n",
    "vllm/entrypoints/openai/__init__.py": "",
    "vllm/entrypoints/openai/api_server.py": "def main():\n    pass\n",
    "vllm/v1/__init__.py": "",
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/worker_base.py": "class WorkerWrapperBase:\n    pass\n",
    # vLLM's executors take it from there (a home sharing only the package with the gone module is named where vLLM's
    # own code imports from it: 28a H1)
    "vllm/v1/executor.py": "from vllm.v1.worker.worker_base import WorkerWrapperBase\n",
}


def test_h1_twin_two_modules_and_an_import_still_name_a_home(tmp_path):
    # two definers, one imported from by vLLM's own code: the import decides, as MD1 has it
    two = {rel: text for rel, text in _MAINS.items() if not rel.startswith(("vllm/benchmarks", "vllm/entrypoints/openai"))}
    found = _findings(tmp_path, two, "from vllm.scripts import main\n", "DC001")
    assert "`main` in `vllm.entrypoints.launchers.run_batch`" in found[0][2]


def test_h1_a_name_many_modules_define_gets_no_new_home(tmp_path):
    found = _findings(tmp_path, _MAINS, "from vllm.scripts import main\n", "DC001")
    assert [(line, severity) for line, severity, _m in found] == [(1, "error")]
    assert "Where what the client takes from it is defined now" not in found[0][2]


def test_h1_twin_a_name_one_module_defines_keeps_its_new_home(tmp_path):
    found = _findings(tmp_path, _MAINS, "from vllm.worker.wrapper import WorkerWrapperBase\n", "DC001")
    assert [(line, severity) for line, severity, _m in found] == [(1, "error")]
    assert "`WorkerWrapperBase` in `vllm.v1.worker.worker_base`" in found[0][2]


_BACKEND = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/attention/__init__.py": "",
    "vllm/v1/attention/backend.py": "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass MultipleOf:\n"
                                    "    base: int\n\n\n@dataclass\nclass Stepped:\n    base: int\n    step: int = 1\n",
}


def _dc107_unknowns(tmp_path, text):
    result = scan_trees(tmp_path, _BACKEND, {"pkg/__init__.py": "", "pkg/c.py": text}, only=["DC107"])
    assert not result.internal_errors and result.findings == []
    return [u.message for u in result.unknown]


def test_u1_a_construction_binding_every_defaulted_field_asks_nothing(tmp_path):
    client = "from vllm.v1.attention.backend import MultipleOf, Stepped\n\nSIZES = [MultipleOf(16), Stepped(8, step=2)]\n"
    assert _dc107_unknowns(tmp_path, client) == []


def test_u1_twin_a_field_left_at_its_default_is_still_the_question(tmp_path):
    client = "from vllm.v1.attention.backend import MultipleOf, Stepped\n\nSIZES = [MultipleOf(16), Stepped(8)]\n"
    found = _dc107_unknowns(tmp_path, client)
    assert len(found) == 1 and found[0].startswith("1 construction(s) of vLLM dataclass-like classes (`Stepped`; ")


_ATTN = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/attention/__init__.py": "",
    "vllm/v1/attention/backends/__init__.py": "",
    "vllm/v1/attention/backends/flash_attn.py": "from dataclasses import dataclass\n\n\n@dataclass\n"
                                                "class FlashAttentionMetadata:\n    num_actual_tokens: int\n",
    "vllm/v1/attention/backends/lazy.py": "def __getattr__(name):\n    raise AttributeError(name)\n",
}
_PROBED = """def metadata(n):
    try:
        from vllm.v1.attention.backends.{module} import {name}
    except ImportError:
        return None
    from vllm.v1.attention.backends.flash_attn import FlashAttentionMetadata
    return FlashAttentionMetadata(num_actual_tokens=n, use_cascade=False)
"""


def _dc003(tmp_path, module, name):
    found = _findings(tmp_path, _ATTN, _PROBED.format(module=module, name=name), "DC003")
    return [(line, severity) for line, severity, _m in found], [m for _l, _s, m in found]


def test_pb1_the_rest_after_a_probe_that_works_on_the_target_runs_there(tmp_path):
    found, messages = _dc003(tmp_path, "flash_attn", "FlashAttentionMetadata")
    assert found == [(7, "error")] and "import probe" not in messages[0]


def test_pb1_twin_a_probe_that_fails_on_the_target_still_guards_the_rest(tmp_path):
    found, messages = _dc003(tmp_path, "flash_attn", "FlashAttentionMetadataV2")
    assert found == [(7, "warning")] and "after the import probe at line 2" in messages[0]


def test_pb1_twin_a_probe_driftcheck_cannot_decide_still_guards_the_rest(tmp_path):
    found, messages = _dc003(tmp_path, "lazy", "Anything")  # a module `__getattr__`: may or may not serve it
    assert found == [(7, "warning")] and "after the import probe at line 2" in messages[0]


_ENGINE = {"vllm/__init__.py": "", "vllm/engine.py": "class Engine:\n    def __init__(self, model: str):\n"
                                                        "        self.model = model\n\n    @classmethod\n"
                                                        "    def from_args(cls, model: str) -> \"Engine\":\n"
                                                        "        return cls(model)\n"}
_SERVICE = """import framework
from vllm.engine import Engine

{app}


@{registry}(gpu="H100")
class Service:
    @framework.enter()
    def start(self):
        engine = Engine.from_args("m")
        return engine.get_model_config()
"""


def _service(tmp_path, app, registry):
    result = scan_trees(tmp_path, _ENGINE, {"serve-app.py": _SERVICE.format(app=app, registry=registry)}, only=["DC006"])
    assert not result.internal_errors
    return [(f.client.line, f.severity, f.message) for f in result.findings]


def test_r1_a_class_registered_on_an_object_the_script_makes_may_run(tmp_path):
    [(line, severity, message)] = _service(tmp_path, 'app = framework.App("x")', "app.cls")
    assert (line, severity) == (12, "error") and "never runs" not in message


def test_r1_twin_a_registry_the_script_imports_leaves_the_method_dead(tmp_path):
    [(line, severity, message)] = _service(tmp_path, "from framework import app", "app.cls")
    assert (line, severity) == (12, "warning") and "never runs" in message


_OLD_ARGS = {"vllm/__init__.py": "", "vllm/_version.py": '__version__ = "0.8.5"\n',
             "vllm/engine/__init__.py": "",
             "vllm/engine/arg_utils.py": "from dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass\n"
                                         "class EngineArgs:\n    model: str\n    revision: Optional[str] = None\n"
                                         "    seed: Optional[int] = None\n    max_logprobs: int = 20\n"}
_NEW_ARGS = {"vllm/__init__.py": "",
             "vllm/config/__init__.py": "from vllm.config.model import ModelConfig\n",
             "vllm/config/model.py": "from pydantic import Field\nfrom pydantic.dataclasses import dataclass\n\n\n"
                                     "@dataclass\nclass ModelConfig:\n    revision: str | None = None\n    seed: int = 0\n"
                                     "    max_logprobs: int = Field(default=20)\n",
             "vllm/engine/__init__.py": "",
             "vllm/engine/arg_utils.py": "from dataclasses import dataclass\n\nfrom vllm.config import ModelConfig\n\n\n"
                                         "@dataclass\nclass EngineArgs:\n    model: str\n"
                                         "    revision: str | None = ModelConfig.revision\n    seed: int = ModelConfig.seed\n"
                                         "    max_logprobs: int = ModelConfig.max_logprobs\n"}


def test_r2_a_default_spelled_as_another_config_field_is_compared_by_its_value(tmp_path):
    own = vllm_tree(tmp_path / "own", _OLD_ARGS)
    client = {"pkg/__init__.py": "", "pkg/c.py": "from vllm.engine.arg_utils import EngineArgs\n\nARGS = EngineArgs(model=\"m\")\n"}
    result = scan_trees(tmp_path, _NEW_ARGS, client, only=["DC107"], client_vllm=str(own))
    assert not result.internal_errors and result.unknown == []
    assert [(f.symbol, f.severity) for f in result.findings] == [("vllm.engine.arg_utils.EngineArgs.seed", "info")]
    assert "changed from None in vLLM 0.8.5 to 0 (ModelConfig.seed)" in result.findings[0].message


_ENVS = {"vllm/__init__.py": "", "vllm/envs.py": "VLLM_USE_RAY_SPMD_WORKER = False\n"}
_RAY_CHECK = """import importlib.metadata

from packaging import version

import vllm.envs as envs


def compiled_dag():
    current_version = version.parse(importlib.metadata.version({dist!r}))
    if current_version < version.parse("2.0"):
        raise ValueError("too old")
    return envs.VLLM_USE_RAY_COMPILED_DAG_CHANNEL_TYPE
"""


def test_vr1_another_packages_version_is_no_vllm_version_check(tmp_path):
    found = _findings(tmp_path, _ENVS, _RAY_CHECK.format(dist="ray"), "DC002")
    assert [(line, severity) for line, severity, _m in found] == [(12, "error")]


def test_vr1_twin_vllms_own_version_still_is(tmp_path):
    found = _findings(tmp_path, _ENVS, _RAY_CHECK.format(dist="vllm"), "DC002")
    assert [(line, severity) for line, severity, _m in found] == [(12, "warning")]
    assert "under a vLLM version check (line 10)" in found[0][2]


def test_df1_a_default_resolved_through_another_config_is_no_switch(tmp_path):
    old = {**_OLD_ARGS, "vllm/engine/arg_utils.py": _OLD_ARGS["vllm/engine/arg_utils.py"] + "    enforce_eager: Optional[bool] = None\n"}
    new = {**_NEW_ARGS,
           "vllm/config/model.py": _NEW_ARGS["vllm/config/model.py"] + "    enforce_eager: bool = False\n",
           "vllm/engine/arg_utils.py": _NEW_ARGS["vllm/engine/arg_utils.py"] + "    enforce_eager: bool = ModelConfig.enforce_eager\n"}
    own = vllm_tree(tmp_path / "own", old)
    client = {"pkg/__init__.py": "", "pkg/c.py": "from vllm.engine.arg_utils import EngineArgs\n\nARGS = EngineArgs(model=\"m\")\n"}
    result = scan_trees(tmp_path, new, client, only=["DC107"], client_vllm=str(own))
    assert sorted((f.symbol.rsplit(".", 1)[-1], f.severity) for f in result.findings) == [("enforce_eager", "info"), ("seed", "info")]


_SPEC = {"vllm/__init__.py": "", "vllm/config/__init__.py": "",
         "vllm/config/cache.py": "class CacheConfig:\n    enable_prefix_caching: bool = True\n",
         "vllm/config/speculative.py": "class SpeculativeConfig:\n    method: str = 'eagle'\n\n"
                                       "    def _verify_args(self):\n        if self.method not in ('eagle', 'eagle3'):\n"
                                       "            raise ValueError(self.method)\n"}
_VERIFY = """from vllm.config.speculative import SpeculativeConfig

_orig = SpeculativeConfig._verify_args


def _patched_verify_args(self):
    try:
        return _orig(self)
    except ValueError:
        if self.method not in ("eagle3", "extract_hidden_states"):
            raise


SpeculativeConfig._verify_args = _patched_verify_args
"""


def test_hs1_a_tuple_a_method_is_compared_with_configures_nothing(tmp_path):
    assert _findings(tmp_path, _SPEC, _VERIFY, "DC102") == []


def test_hs1_twin_a_tuple_of_settings_still_configures(tmp_path):
    client = _VERIFY + '\nMETHODS = ("eagle3", "extract_hidden_states")\n'
    found = _findings(tmp_path, _SPEC, client, "DC102")
    assert [(line, severity) for line, severity, _m in found] == [(16, "warning")]


_FLA = {"vllm/__init__.py": "", "vllm/third_party/__init__.py": "", "vllm/third_party/fla/__init__.py": "",
        "vllm/third_party/fla/ops/__init__.py": "",
        "vllm/third_party/fla/ops/chunk.py": "def chunk_gated_delta_rule(q, k, v, g, beta):\n    return q\n"}
_MODEL = "from vllm.model_executor.layers.fla.ops.chunk import chunk_gated_delta_rule\n\n\ndef run(q):\n    return chunk_gated_delta_rule\n"
_PATCH = ("import vllm.model_executor.layers.fla.ops.chunk\n\nfrom plug.ops import own_rule\n\n"
          "vllm.model_executor.layers.fla.ops.chunk.chunk_gated_delta_rule = own_rule\n")


def _fix_preview(tmp_path, client_files):
    from conftest import run_cli

    vroot = vllm_tree(tmp_path / "v", _FLA)
    write_tree(vroot, {"vllm/_version.py": '__version__ = "0.33.0"\n'})
    croot = write_tree(tmp_path / "c", client_files)
    proc = run_cli("fix", "--vllm", str(vroot), "--client", str(croot), "--only", "move-import")
    return proc.stdout, proc.stderr


def test_w3_move_import_leaves_a_name_the_client_replaces_on_the_old_module(tmp_path):
    out, err = _fix_preview(tmp_path, {"plug/__init__.py": "", "plug/ops.py": "def own_rule(query):\n    return query\n",
                                       "plug/model.py": _MODEL, "plug/patch.py": _PATCH})
    assert "+from vllm.third_party" not in out
    assert "the client sets `chunk_gated_delta_rule` on `vllm.model_executor.layers.fla.ops.chunk` itself" in err


def test_w3_twin_without_the_clients_replacement_the_import_moves(tmp_path):
    out, _err = _fix_preview(tmp_path, {"plug/__init__.py": "", "plug/model.py": _MODEL})
    assert "+from vllm.third_party.fla.ops.chunk import chunk_gated_delta_rule" in out


_F = {"vllm/__init__.py": "", "vllm/m.py": "def f(a):\n    return a\n"}


def test_s1_a_parameter_hides_the_imported_vllm_name(tmp_path):
    client = "from vllm.m import f\n\n\ndef apply(f):\n    return f(1, 2, 3)\n"
    assert _findings(tmp_path, _F, client, "DC004") == []


def test_s1_twin_the_imported_name_itself_is_still_checked(tmp_path):
    client = "from vllm.m import f\n\n\ndef apply(g):\n    return f(1, 2, 3)\n"
    assert [(line, severity) for line, severity, _m in _findings(tmp_path, _F, client, "DC004")] == [(5, "error")]


def _run_releases(sub_overrides_then: bool):
    base = "class Base:\n    def run(self, x, {params}):\n        return x\n\n\n"
    old = base.format(params="y=0, z=0") + ("class Sub(Base):\n    def run(self, x, new=0, y=0, z=0):\n        return x\n"
                                             if sub_overrides_then else "class Sub(Base):\n    pass\n")
    new = base.format(params="new=0, y=0, z=0") + "class Sub(Base):\n    pass\n"
    return {"vllm/__init__.py": "", "vllm/m.py": old}, {"vllm/__init__.py": "", "vllm/m.py": new}


def _dc121(tmp_path, sub_overrides_then: bool):
    old, new = _run_releases(sub_overrides_then)
    own = vllm_tree(tmp_path / "own", old)
    client = {"pkg/__init__.py": "", "pkg/c.py": "from vllm.m import Sub\n\n\ndef go():\n    s = Sub()\n    return s.run(1, 2, 3)\n"}
    result = scan_trees(tmp_path, new, client, only=["DC121"], client_vllm=str(own))
    assert not result.internal_errors
    return [(f.client.line, f.details["meant"], f.details["binds"]) for f in result.findings]


def test_s2_a_method_a_subclass_overrode_is_looked_up_from_the_receivers_class(tmp_path):
    assert _dc121(tmp_path, sub_overrides_then=True) == []


def test_s2_twin_the_inherited_method_that_gained_a_parameter_shifts(tmp_path):
    assert _dc121(tmp_path, sub_overrides_then=False) == [(6, "y", "new")]


_M = {"vllm/__init__.py": "", "vllm/m.py": "def f(a, new=0, b=0, c=0):\n    return a\n"}
_CAPTURE = """def install():
    from vllm import m
    _orig = m.f

    def patched(a, b=0, c=0, zz=None, **kw):
        return {call}(a, b, c, zz=zz, **kw)

    m.f = patched
    return m.f
"""


def test_w1_20i_a_function_captured_before_the_patch_is_vllms_own(tmp_path):
    found = _findings(tmp_path, _M, _CAPTURE.format(call="_orig"), "DC003")
    assert [(line, severity) for line, severity, _m in found] == [(6, "error")]
    assert "rebinds" not in found[0][2]


def test_w1_20i_twin_a_call_through_the_module_attribute_may_reach_the_replacement(tmp_path):
    found = _findings(tmp_path, _M, _CAPTURE.format(call="m.f"), "DC003")
    assert found == []  # `m.f` is read when `patched` runs: the replacement, which takes `zz`
