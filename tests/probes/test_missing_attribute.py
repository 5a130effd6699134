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


def test_a_subclass_only_member_under_hasattr_names_its_guard(tmp_path):
    f = _spec_warning(tmp_path, "    if hasattr(spec, 'members'):\n        return spec.members\n    return {}\n")
    assert f.severity == "warning" and "Grouped" in f.message
    assert "under a hasattr/getattr check (line 5)" in f.message and f.details["guarded"]


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
