"""A client class's method taken off the class as a value (not called) may run with any object as `self`: whatever
it is set on (CR, uc-manager-cuda-cu129 0.8.1 @ 0.11.0: a never-built stand-in runner lends `_update_states` to vLLM's
own runner through `patch_or_inject(mod.GPUModelRunner, "_update_states", stand_in.GPUModelRunner._update_states)`,
547 false DC006 errors). A `self.x` its class lacks is then a warning that names the hand-out; a method only ever
called stays an error."""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {"vllm/mixin.py": """
    class LoRAModelRunnerMixin:
        def set_active_loras(self, input_batch):
            return None
"""}


def _client(hand_out: bool) -> dict[str, str]:
    use = ('patch_or_inject(target, "_update_states", gpu_model_runner.GPUModelRunner._update_states)' if hand_out
           else "gpu_model_runner.GPUModelRunner()._update_states([])")
    return {"pkg/__init__.py": "", "pkg/utils.py": """
        def patch_or_inject(target_obj, func_name, replacement_func):
            setattr(target_obj, func_name, replacement_func)
    """, "pkg/gpu_model_runner.py": """
        from vllm.mixin import LoRAModelRunnerMixin


        class GPUModelRunner(LoRAModelRunnerMixin):
            def _update_states(self, finished):
                return len(self.requests)
    """, "pkg/pc_patch.py": f"""
        from pkg.utils import patch_or_inject


        def patch(target):
            from pkg import gpu_model_runner

            {use}
    """}


def _found(result):
    return [(f.rule, f.severity, f.client.path, f.message) for f in result.findings if f.rule == "DC006"]


def test_a_method_handed_out_as_a_function_reads_self_of_whatever_it_is_set_on(tmp_path):
    [(rule, severity, path, message)] = _found(scan_trees(tmp_path, VLLM, _client(True)))
    assert (rule, severity, path) == ("DC006", "warning", "pkg/gpu_model_runner.py")
    assert "`GPUModelRunner._update_states` is handed out as a function (pkg/pc_patch.py:7)" in message


def test_a_method_only_called_keeps_its_error(tmp_path):
    assert [f[:3] for f in _found(scan_trees(tmp_path, VLLM, _client(False)))] == [
        ("DC006", "error", "pkg/gpu_model_runner.py")]
