"""Class members: the MRO across modules, attributes assigned in any method, open vs closed bases."""

from __future__ import annotations

from driftcheck.vllm_model.resolved import External, Missing, Resolved, Unknown

from scan.helpers import file_line, index

HIERARCHY = {
    "vllm/worker/base.py": """
        from abc import ABC


        class WorkerBase(ABC):
            def __init__(self, config):
                self.config = config

            def get_kv_cache_spec(self):
                return {}

            def load_model(self):
                self.model = object()
                self.model_runner: "ModelRunner" = None
    """,
    "vllm/worker/mixin.py": """
        class LoRAMixin:
            def add_lora(self, request):
                pass
    """,
    "vllm/worker/gpu_worker.py": """
        from vllm.worker.base import WorkerBase
        from vllm.worker import mixin


        class Worker(mixin.LoRAMixin, WorkerBase):
            def execute_model(self, scheduler_output):
                self.step += 1
    """,
}


def test_method_found_on_a_base_class_in_another_module(tmp_path):
    api = index(tmp_path, HIERARCHY)
    worker = api.resolve("vllm.worker.gpu_worker.Worker")
    found = api.class_member(worker, "get_kv_cache_spec")
    assert isinstance(found, Resolved) and found.kind == "method"
    assert found.owner.qualname == "vllm.worker.base.WorkerBase"
    assert (found.path, found.line) == ("vllm/worker/base.py",
                                        file_line(tmp_path / "vllm-src", "vllm/worker/base.py", "def get_kv_cache_spec"))
    # a base reached through a module attribute (`mixin.LoRAMixin`) counts too
    lora = api.class_member(worker, "add_lora")
    assert isinstance(lora, Resolved) and lora.path == "vllm/worker/mixin.py"


def test_mro_order_and_closed_external_base(tmp_path):
    api = index(tmp_path, HIERARCHY)
    worker = api.resolve("vllm.worker.gpu_worker.Worker")
    order, is_open, _externals = api.mro(worker)
    assert [c.qualname.rsplit(".", 1)[1] for c in order] == ["Worker", "LoRAMixin", "WorkerBase"]
    assert not is_open  # abc.ABC has no members we cannot see
    missing = api.class_member(worker, "get_input_embeddings")
    assert isinstance(missing, Missing)


def test_attributes_assigned_in_any_method_are_members(tmp_path):
    api = index(tmp_path, HIERARCHY)
    worker = api.resolve("vllm.worker.gpu_worker.Worker")
    root = tmp_path / "vllm-src"
    model = api.class_member(worker, "model")  # assigned in load_model, not __init__
    assert isinstance(model, Resolved) and model.kind == "attribute"
    assert model.line == file_line(root, "vllm/worker/base.py", "self.model = object()")
    runner = api.class_member(worker, "model_runner")  # annotated assignment keeps its type
    assert isinstance(runner, Resolved) and runner.type_expr == "'ModelRunner'"
    step = api.class_member(worker, "step")  # augmented assignment in the subclass
    assert isinstance(step, Resolved) and step.path == "vllm/worker/gpu_worker.py"


def test_unreadable_base_makes_lookups_unknown(tmp_path):
    api = index(tmp_path, {
        "vllm/model.py": """
            import torch.nn as nn
            from some_plugin import PluginBase


            class Model(nn.Module):
                def forward(self, x):
                    return x


            class Plugged(PluginBase):
                pass
        """,
    })
    model = api.resolve("vllm.model.Model")
    # nn.Module's members are read from torch's sources (driftcheck/vllm_model/external_apis.py): a name that neither
    # nn.Module nor the class defines is missing (registered buffers and parameters are attributes too)
    assert isinstance(api.class_member(model, "parameters"), External)
    assert isinstance(api.class_member(model, "whatever"), Missing)
    assert isinstance(api.class_member(api.resolve("vllm.model.Plugged"), "anything"), Unknown)


def test_class_level_getattr_makes_lookups_unknown(tmp_path):
    api = index(tmp_path, {
        "vllm/cfg.py": """
            class Dyn:
                def __getattr__(self, name):
                    return 1
        """,
    })
    assert isinstance(api.class_member(api.resolve("vllm.cfg.Dyn"), "x"), Unknown)


def test_properties_and_class_attributes(tmp_path):
    api = index(tmp_path, {
        "vllm/req.py": """
            import enum


            class RequestStatus(enum.IntEnum):
                WAITING = enum.auto()
                RUNNING = enum.auto()


            class Request:
                kind = "text"

                @property
                def num_tokens(self) -> int:
                    return 0
        """,
    })
    req = api.resolve("vllm.req.Request")
    prop = api.class_member(req, "num_tokens")
    assert isinstance(prop, Resolved) and prop.kind == "attribute" and prop.type_expr == "int"
    assert isinstance(api.class_member(req, "kind"), Resolved)
    status = api.resolve("vllm.req.RequestStatus")
    assert isinstance(api.class_member(status, "RUNNING"), Resolved)
    assert isinstance(api.class_member(status, "FINISHED"), Missing)  # IntEnum is a closed base
