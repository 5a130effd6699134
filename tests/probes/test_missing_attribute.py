"""DC006 missing-attribute: a member the inferred vLLM class does not have (read: error; write: warning)."""

from __future__ import annotations

from scan.helpers import line_of, scan_client, scan_trees, vline

EXEC = "vllm/v1/executor/multiproc_executor.py"
CLIENT = """
    from vllm.v1.executor.multiproc_executor import MultiprocExecutor


    class Gen:
        def __init__(self, cfg):
            self.executor = MultiprocExecutor(cfg)

        def run(self, out):
            self.executor.execute_model(out)
            self.executor.sample_tokens(None)
            self.executor.vllm_config.cache_config.num_gpu_blocks = 8
            self.executor.vllm_config.cache_config.num_gpu_blokcs = 8
            self.executor.shutdown()
"""


def test_present_read_is_an_error_on_the_class_line(tmp_path):
    result = scan_client(tmp_path, {"gen.py": CLIENT}, only=["DC006"])
    text = (tmp_path / "client/gen.py").read_text()
    errors = [f for f in result.findings if f.severity == "error"]
    assert [(f.symbol, f.client.line) for f in errors] == [
        ("vllm.v1.executor.multiproc_executor.MultiprocExecutor.sample_tokens", line_of(text, "sample_tokens"))]
    assert (errors[0].vllm.path, errors[0].vllm.line) == (EXEC, vline(EXEC, "class MultiprocExecutor"))


def test_present_write_is_a_warning(tmp_path):
    # the executor's vllm_config is untyped here (assigned from a parameter), so no claim is made on it;
    # the write is checked when the receiver is typed
    client = {"c.py": """
        from vllm.config import CacheConfig


        def f():
            cc = CacheConfig()
            cc.num_gpu_blocks = 8
            cc.num_gpu_blokcs = 8
    """}
    result = scan_client(tmp_path, client, only=["DC006"])
    [f] = result.findings
    assert (f.severity, f.client.line, f.symbol) == ("warning", 7, "vllm.config.vllm.CacheConfig.num_gpu_blokcs")
    assert "num_gpu_blocks" in f.details["similar"]


def test_absent_for_members_found_through_the_mro(tmp_path):
    client = {"c.py": """
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def f(cfg, out):
            ex = MultiprocExecutor(cfg)
            ex.execute_model(out)  # defined on the base class Executor
            ex.collective_rpc("load_model")
            return ex.vllm_config, ex.workers  # set in __init__ of the base / in shutdown()
    """}
    result = scan_client(tmp_path, client, only=["DC006"])
    assert result.findings == [] and result.unknown == []


def test_nn_module_members_are_known_from_torch_sources(tmp_path):
    # nn.Module is read from torch's sources (driftcheck/vllm_model/external_apis.py): its API exists, a name that
    # neither it nor the model class defines (and no code assigns) is an error, not unknown.
    client = {"c.py": """
        from vllm.model_executor.models.llama import LlamaModel


        def f(cfg):
            m = LlamaModel(cfg)
            m.eval()
            return m.training, m.something_from_torch
    """}
    result = scan_client(tmp_path, client, only=["DC006"])
    assert [f.symbol for f in result.findings] == ["vllm.model_executor.models.llama.LlamaModel.something_from_torch"]
    assert result.findings[0].severity == "error" and result.unknown == []


# 27b's open message: a member only a subclass defines is a warning by kind; under a hasattr guard it said nothing of
# the guard (certus kv-offload-replay's `self._inner.request_finished_all_groups` under the hasattr of the line above).
SPECS = {"vllm/__init__.py": "", "vllm/specs.py": "class Spec:\n    pass\n\n\nclass Grouped(Spec):\n"
         "    def __init__(self):\n        self.members = {}\n"}


def _spec_warning(tmp_path, body: str):
    code = "from vllm.specs import Spec\n\n\ndef members(spec: Spec):\n" + body
    result = scan_trees(tmp_path, SPECS, {"plugin/__init__.py": "", "plugin/m.py": code}, only=["DC006"])
    [f] = [f for f in result.findings if f.symbol == "vllm.specs.Spec.members"]
    return f


def test_a_subclass_only_member_under_another_guard_names_it(tmp_path):
    f = _spec_warning(tmp_path, "    if hasattr(spec, 'other'):\n        return spec.members\n    return {}\n")
    assert f.severity == "warning" and "Grouped" in f.message
    assert "under a hasattr/getattr check (line 5)" in f.message and f.details["guarded"]


def _spec_findings(tmp_path, body: str) -> list:
    code = "from vllm.specs import Spec\n\n\ndef members(spec: Spec, version_at_least):\n" + body
    result = scan_trees(tmp_path, SPECS, {"plugin/__init__.py": "", "plugin/m.py": code}, only=["DC006"])
    assert not result.internal_errors
    return [f for f in result.findings if f.symbol == "vllm.specs.Spec.members"]


def test_a_subclass_only_member_under_a_hasattr_of_itself_is_no_finding(tmp_path):
    # tri28c FW1 (vLLM's own `elif hasattr(self.base_layer, "B"): return self.base_layer.B`) and 29d R4 (0.34.0's
    # default_loader: `hasattr(qc, "x") and qc.x and torchao_version_at_least("0.15.0")`, whose version call was the
    # guard found first): the line runs only for the objects that have the member
    assert _spec_findings(tmp_path, "    if hasattr(spec, 'members'):\n        return spec.members\n    return {}\n") == []
    assert _spec_findings(tmp_path / "b", "    if hasattr(spec, 'members') and spec.members and version_at_least('0.15'):"
                          "\n        return 1\n    return {}\n") == []
    assert _spec_findings(tmp_path / "c", "    try:\n        return spec.members\n    except AttributeError:\n"
                          "        return {}\n") == []


def test_twin_the_unguarded_subclass_only_member_names_no_guard(tmp_path):
    f = _spec_warning(tmp_path, "    return spec.members\n")
    assert f.severity == "warning" and "check" not in f.message and "guarded" not in f.details


def test_similar_names_are_listed_once(tmp_path):
    # a method the class and a base of its MRO both define was listed twice among the similar names (12a: vLLM
    # 0.21.0's RMSNormGated and CustomOp both define forward_native: "Similar: forward_native, forward_native, ...")
    from scan.helpers import write_tree

    root = write_tree(tmp_path / "vllm_tree", {
        "vllm/__init__.py": "",
        "vllm/ops.py": """\
            class CustomOp:
                def forward_native(self, x):
                    return x

            class Norm(CustomOp):
                def forward_native(self, x):
                    return x

                def forward_tpu(self, x):
                    return x
        """,
    })
    result = scan_client(tmp_path, {"c.py": "from vllm.ops import Norm\n\ndef f(x):\n    return Norm.forward_natives(x)\n"},
                         only=["DC006"], vllm_root=root)
    [f] = result.findings
    assert f.symbol.endswith("Norm.forward_natives")
    similar = f.message.split("Similar: ", 1)[1].rstrip(".").split(", ")
    assert similar[0] == "forward_native" and len(similar) == len(set(similar))


# 28b M1 (nano-grpo, Language-Neurons-*): `llm.llm_engine.model_executor.driver_worker.model_runner.model` on a V1
# LLMEngine, whose `__init__` sets `model_executor` only when `not multiprocess_mode` (the default is multiprocess):
# a warning naming the condition. Twins: set on both branches, on every path but a raise, by another method, by a base
# the `__init__` calls, or read on `self` by the class family: nothing.
_ENGINE = {
    "vllm/__init__.py": "from vllm.entrypoints.llm import LLM\n",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/llm.py": """\
        from vllm.engine.llm_engine import LLMEngine


        class LLM:
            def __init__(self, model: str):
                self.llm_engine = LLMEngine(multiprocess_mode=True)
    """,
    "vllm/engine/__init__.py": "",
    "vllm/engine/llm_engine.py": """\
        class Base:
            def __init__(self):
                self.stats = {}


        class LLMEngine(Base):
            def __init__(self, multiprocess_mode: bool, log: bool = False):
                super().__init__()
                self.engine_core = object()
                if not multiprocess_mode:
                    self.model_executor = self.engine_core
                if log:
                    self.logger = 1
                else:
                    self.logger = None
                if multiprocess_mode:
                    self.mode = "mp"
                else:
                    raise ValueError("in-process engines are gone")
                if log:
                    self.stats = {"on": True}
                    self.later = 1

            def reset(self):
                self.later = 2
    """,
}


def test_28b_m1_an_attribute_init_sets_only_under_an_if_is_a_warning_naming_it(tmp_path):
    client = {"main.py": """\
        from vllm import LLM

        llm = LLM(model="m")
        executor = llm.llm_engine.model_executor
        logger = llm.llm_engine.logger
        mode = llm.llm_engine.mode
        stats = llm.llm_engine.stats
        later = llm.llm_engine.later
    """}
    result = scan_trees(tmp_path, _ENGINE, client, only=["DC006"])
    assert not result.internal_errors and result.unknown == []
    [f] = result.findings
    assert (f.client.line, f.severity, f.symbol) == (4, "warning", "vllm.engine.llm_engine.LLMEngine.model_executor")
    assert "only when `not multiprocess_mode` (the `if` on line 10" in f.message, f.message


def test_28b_m1_twin_a_read_on_self_in_a_client_subclass_is_the_class_familys_own(tmp_path):
    client = {"main.py": """\
        from vllm.engine.llm_engine import LLMEngine


        class MyEngine(LLMEngine):
            def executor(self):
                return self.model_executor
    """}
    result = scan_trees(tmp_path, _ENGINE, client, only=["DC006"])
    assert result.findings == [] and not result.internal_errors


def test_conditional_attrs_follow_every_path_of_init():
    import ast
    import textwrap

    from driftcheck.vllm_model.conditional_attrs import set_only_when

    cls = ast.parse(textwrap.dedent("""\
        class C:
            def __init__(self, a, b):
                if a is None:
                    self.early = None
                    return
                self.early = a
                self.ret = 1
                if b:
                    self.in_if = 1
                    self.both = 1
                else:
                    self.both = 2
                    self.in_else = 2
                try:
                    self.tried = f()
                except OSError:
                    pass
                for x in a:
                    self.looped = x
                def later():
                    self.closure = 1
                if b:
                    self.closure = 2
    """)).body[0]
    init = cls.body[0]
    found = set_only_when(init, [init])
    # the early return's path (without `ret`, `both`, ...) is not weighed: its `if` is not the one they sit under
    assert found == {"in_if": (8, "b"), "in_else": (8, "not (b)")}, found


def test_conditional_attrs_count_torchs_setters_by_name():
    # vLLM's ColumnParallelLinear: `self.bias = Parameter(...)` under `if bias:`, else `self.register_parameter("bias",
    # None)`: `layer.bias` is always there (the first version of this reading warned on 21 lines of vLLM's own tree)
    import ast
    import textwrap

    from driftcheck.vllm_model.conditional_attrs import set_only_when

    init = ast.parse(textwrap.dedent("""\
        def __init__(self, bias):
            if bias:
                self.bias = Parameter(1)
                self.scale = 2
            else:
                self.register_parameter("bias", None)
    """)).body[0]
    assert set_only_when(init, [init]) == {"scale": (2, "bias")}


def test_28b_m1_a_read_the_client_guards_against_absence_is_no_finding(tmp_path):
    """`hasattr(eng, "model_executor")` around the read, or a try that catches AttributeError: the client handles
    the object built the other way. An unrelated guard (a try catching KeyError) keeps the warning."""
    client = {"main.py": """\
        from vllm import LLM


        def f():
            eng = LLM(model="m").llm_engine
            if hasattr(eng, "model_executor"):
                a = eng.model_executor
            try:
                b = eng.model_executor
            except AttributeError:
                b = None
            try:
                c = eng.model_executor
            except KeyError:
                c = None
            return a, b, c
    """}
    result = scan_trees(tmp_path, _ENGINE, client, only=["DC006"])
    assert [(f.client.line, f.severity) for f in result.findings] == [(13, "warning")], result.findings


def test_conditional_attrs_name_the_flags_that_record_their_condition():
    import ast
    import textwrap

    from driftcheck.vllm_model.conditional_attrs import conditions

    init = ast.parse(textwrap.dedent("""\
        def __init__(self, cache, use_norm):
            self.supports_mm = cache is not None
            self.use_norm = use_norm
            if cache is not None:
                self.runner = 1
            if self.use_norm:
                self.norm = 2
            if use_norm and cache:
                self.both = 3
    """)).body[0]
    assert conditions(init, [init]) == {"runner": (4, "cache is not None", ["supports_mm"]),
                                        "norm": (6, "self.use_norm", ["use_norm"]),
                                        "both": (8, "use_norm and cache", [])}
