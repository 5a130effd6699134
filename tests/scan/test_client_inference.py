"""Client-side inference: which client expressions driftcheck knows to be vLLM objects.

Each case checks the recorded use (its kind, the vLLM symbol, the client line) and, where it
matters, that a wrong member on the inferred object becomes a finding at the right line.
"""

from __future__ import annotations

from driftcheck.vllm_model.resolved import Missing, Resolved

from scan.helpers import by_rule, fixture_usage, line_of, scan_client, vline

SCHED = "vllm.v1.core.sched.scheduler.Scheduler"


def _calls(usage, kind=None):
    return [(c.kind, c.target.qualname, c.loc.line) for c in usage.calls if kind is None or c.kind == kind]


def test_local_assignment_of_a_constructed_object(tmp_path):
    src = """
        from vllm.v1.core.sched.scheduler import Scheduler


        def run(cfg, kv):
            sched = Scheduler(cfg, kv, None, block_size=16)
            sched.add_request(None)
            return sched.schedule()
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    text = (tmp_path / "client/c.py").read_text()
    assert ("construct", SCHED, line_of(text, "Scheduler(cfg")) in _calls(usage)
    assert _calls(usage, "method") == [
        ("method", f"{SCHED}.add_request", line_of(text, "sched.add_request(")),
        ("method", f"{SCHED}.schedule", line_of(text, "sched.schedule(")),
    ]


def test_self_attribute_set_in_init_is_typed_in_other_methods(tmp_path):
    src = """
        from vllm.v1.core.sched.scheduler import Scheduler


        class Generator:
            def __init__(self, cfg, kv):
                self.scheduler = Scheduler(cfg, kv, None, 16)

            def step(self):
                out = self.scheduler.schedule()
                self.scheduler.finish_request("r")
                return out
    """
    result = scan_client(tmp_path, {"gen.py": src}, only=["DC006"])
    text = (tmp_path / "client/gen.py").read_text()
    [finding] = by_rule(result, "DC006")
    assert finding.symbol == f"{SCHED}.finish_request"
    assert finding.client.line == line_of(text, "self.scheduler.finish_request")
    assert "finish_requests" in finding.details["similar"]
    assert (finding.vllm.path, finding.vllm.line) == (
        "vllm/v1/core/sched/scheduler.py", vline("vllm/v1/core/sched/scheduler.py", "class Scheduler"))


def test_parameter_annotation_types_the_parameter(tmp_path):
    src = """
        from typing import Optional

        from vllm.v1.request import Request


        def tokens(req: Request, other: Optional["Request"] = None) -> int:
            return req.num_tokens + other.num_tokenz
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    attrs = {(a.attr, a.owner.qualname, type(a.result)) for a in usage.attrs}
    assert attrs == {("num_tokens", "vllm.v1.request.Request", Resolved), ("num_tokenz", "vllm.v1.request.Request", Missing)}


def test_walrus_in_a_while_test_and_vllm_return_annotation(tmp_path):
    # `out` comes from a walrus on Scheduler.schedule(), whose return annotation is SchedulerOutput
    src = """
        from vllm.v1.core.sched.scheduler import Scheduler


        def drain(scheduler: Scheduler):
            while (out := scheduler.schedule()).total_num_scheduled_tokens:
                print(out.num_scheduled_token)
    """
    result = scan_client(tmp_path, {"c.py": src}, only=["DC006"])
    text = (tmp_path / "client/c.py").read_text()
    [finding] = by_rule(result, "DC006")
    assert finding.symbol == "vllm.v1.core.sched.output.SchedulerOutput.num_scheduled_token"
    assert finding.client.line == line_of(text, "out.num_scheduled_token")


def test_vllm_function_return_annotation(tmp_path):
    src = """
        from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups


        def blocks(cfg, groups):
            kv = get_kv_cache_config_from_groups(cfg, groups, 1 << 30)
            return kv.num_blocks, kv.block_count
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    owner = {a.owner.qualname for a in usage.attrs}
    assert owner == {"vllm.v1.core.kv_cache_utils.KVCacheConfig"}
    assert {a.attr: isinstance(a.result, Missing) for a in usage.attrs} == {"num_blocks": False, "block_count": True}


def test_client_function_return_annotation(tmp_path):
    src = """
        from vllm.v1.core.sched.scheduler import Scheduler


        def make_scheduler(cfg) -> "Scheduler | None":
            return None


        def use(cfg):
            s = make_scheduler(cfg)
            s.schedule()
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    assert ("method", f"{SCHED}.schedule", line_of((tmp_path / "client/c.py").read_text(), "s.schedule()")) in _calls(usage)


def test_conflicting_assignments_are_not_guessed(tmp_path):
    src = """
        from vllm.v1.core.sched.scheduler import Scheduler
        from vllm.v1.request import Request


        def f(cfg, kv):
            x = Scheduler(cfg, kv, None, 16)
            x = Request("id", [], None, None)
            x.schedule()
            x.add_request(1)
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    # both constructions are checked, but `x` could be either: no method call or attribute is claimed
    assert {k for k, _q, _l in _calls(usage)} == {"construct"}
    assert usage.attrs == []


def test_module_object_attribute_access(tmp_path):
    src = """
        import vllm.v1.core.kv_cache_utils as kvu
        from vllm.v1 import request


        def f(cfg):
            kvu.get_kv_cache_config_from_groups(cfg, [], 0)
            return request.RequestState
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    # recorded once each (the body of a top-level function is one scope, walked once) and as runtime-only
    assert [(c.kind, c.target.qualname, c.loc.line, c.runtime_only) for c in usage.calls] == [
        ("function", "vllm.v1.core.kv_cache_utils.get_kv_cache_config_from_groups", 6, True)]
    missing = [(a.module, a.attr, a.runtime_only) for a in usage.module_attrs if isinstance(a.result, Missing)]
    assert missing == [("vllm.v1.request", "RequestState", True)]


def test_method_type_bound_function_records_self_names(tmp_path):
    src = """
        import types

        from vllm.distributed import get_pp_group


        def _patched_forward(self, input_ids, positions):
            self._extension = 1
            h = self.get_input_embeddings(input_ids)
            return self.norm(h)


        def patch(model):
            model.forward = types.MethodType(_patched_forward, model)
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    [bound] = usage.bound
    assert (bound.name, bound.how) == ("_patched_forward", "method-type")
    # names the function itself stores on `self` are not vLLM's
    assert sorted(bound.self_names) == ["get_input_embeddings", "norm"]
    assert bound.self_names["get_input_embeddings"].line == 8


def test_submodule_imported_with_from_is_a_module_object(tmp_path):
    # `from vllm.v1.core import kv_cache_utils` binds the submodule even though v1/core/__init__ is empty
    src = """
        from vllm.v1.core import kv_cache_utils


        def f(cfg):
            return kv_cache_utils.get_kv_cache_config_from_groups(cfg, [], 0, 1)
    """
    result = scan_client(tmp_path, {"c.py": src}, only=["DC004"])
    [f] = result.findings
    assert f.symbol == "vllm.v1.core.kv_cache_utils.get_kv_cache_config_from_groups" and f.client.line == 5


def test_an_import_inside_a_method_is_one_use_however_many_phases_build_its_environment(tmp_path):
    # prepare_classes builds a method's environment in each of its two rounds and the visit builds it again; only the
    # visit records the method's imports (each phase used to add one more copy of every import inside a method)
    src = """
        from vllm.v1.core.sched.scheduler import Scheduler


        class Runner:
            def setup(self, cfg):
                from vllm.v1.core.sched.scheduler import Scheduler as S
                self.sched = S(cfg)

            def other(self):
                from vllm.v1.core.sched import scheduler
                return scheduler

            def go(self):
                return self.sched.schedule()


        def free():
            from vllm.v1.core.sched.scheduler import Scheduler
            return Scheduler
    """
    usage = fixture_usage(tmp_path, {"c.py": src})
    text = (tmp_path / "client/c.py").read_text()
    imports = [(u.loc.line, u.module, u.name, u.runtime_only) for u in usage.imports]
    assert imports == sorted(set(imports), key=imports.index) and len(imports) == 4
    ends = [i for i, line in enumerate(text.splitlines(), 1) if line.endswith("import Scheduler")]
    assert {line for line, *_ in imports} == {*ends, line_of(text, "import Scheduler as S"), line_of(text, "import scheduler")}
    assert len(ends) == 2
    # the environment that types `self.sched` is still built from the method's own import
    assert ("method", f"{SCHED}.schedule", line_of(text, "self.sched.schedule(")) in _calls(usage)
