"""Root causes of false errors from the twelfth batch of untriaged plugins, names a-l
(docs/triage/2026-12-03-unseen-plugins-12a.md), one group each: the shape that runs (unknown, no error), and the
same shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _dc007(result) -> list[tuple[str, str, int]]:
    found = [("error", f.client.path, f.client.line) for f in result.findings if f.rule == "DC007"]
    return sorted(found + [("unknown", u.client.path, u.client.line) for u in result.unknown if u.rule == "DC007"])


# ----------------------------------------------------------------------------------------- DP
_WORKERS = {
    "vllm/__init__.py": "", "vllm/v1/__init__.py": "", "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/gpu_worker.py": """
        class Worker:
            def execute_model(self, scheduler_output):
                return None
    """,
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/llm.py": """
        class LLM:
            def __init__(self, model):
                self.model = model

            def collective_rpc(self, method, args=()):
                return []
    """,
}


def _platforms(tpu_returns: str, tpu_module: str) -> dict[str, str]:
    # vLLM 0.22.1 vllm/platforms/__init__.py:35-60 and vllm/platforms/tpu.py:9-19
    return {**_WORKERS, "vllm/platforms/__init__.py": f"""
        def tpu_platform_plugin():
            try:
                import libtpu
            except ImportError:
                return None
            return "{tpu_returns}"


        def cuda_platform_plugin():
            return "vllm.platforms.cuda.CudaPlatform"
    """, "vllm/platforms/cuda.py": "class CudaPlatform:\n    pass\n", "vllm/platforms/tpu.py": tpu_module}


OUT_OF_TREE = """
try:
    from tpu_inference.platforms import TpuPlatform as TpuInferencePlatform

    TpuPlatform = TpuInferencePlatform
except ImportError:
    pass
"""
IN_TREE = "class TpuPlatform:\n    pass\n"

_SAMPLER = """
    from vllm.entrypoints.llm import LLM


    class Sampler:
        def __init__(self):
            self.llm = LLM("m")

        def update(self):
            self.llm.collective_rpc("delete_kv_cache")
"""


def test_dp_an_rpc_the_out_of_tree_platforms_worker_may_serve_is_unknown(tmp_path):
    # google-tunix 0.1.7 tunix/generate/vllm_sampler.py:192 @ 0.22.1: tpu_inference's TPUWorker defines it
    for n, returns in enumerate(["vllm.platforms.tpu.TpuPlatform",  # an in-tree alias of an out-of-tree class
                                 "tpu_inference.platforms.tpu_platform.TpuPlatform"]):  # the class named directly
        result = scan_trees(tmp_path / str(n), _platforms(returns, OUT_OF_TREE),
                            {"pkg/__init__.py": "", "pkg/sampler.py": _SAMPLER}, only=["DC007"])
        assert _dc007(result) == [("unknown", "pkg/sampler.py", 9)], returns
        message = next(u.message for u in result.unknown if u.rule == "DC007")
        assert "tpu_inference.platforms" in message and "vllm/platforms/__init__.py" in message


def test_dp_without_an_out_of_tree_platform_it_stays_an_error(tmp_path):
    # every platform of the list is a class in the tree: its workers are all read
    result = scan_trees(tmp_path / "in", _platforms("vllm.platforms.tpu.TpuPlatform", IN_TREE),
                        {"pkg/__init__.py": "", "pkg/sampler.py": _SAMPLER}, only=["DC007"])
    assert _dc007(result) == [("error", "pkg/sampler.py", 9)]
    # no platform list at all (older releases)
    result = scan_trees(tmp_path / "none", _WORKERS, {"pkg/__init__.py": "", "pkg/sampler.py": _SAMPLER}, only=["DC007"])
    assert _dc007(result) == [("error", "pkg/sampler.py", 9)]


def test_dp_the_clients_own_unregistered_method_stays_an_error(tmp_path):
    # unsloth_zoo 2026.10.9 vllm_utils.py:1283 @ 0.32.0 (batch 4, real): the method is the client's own, defined on
    # an extension it never registers; no platform's worker serves it
    client = {"pkg/__init__.py": "", "pkg/sampler.py": _SAMPLER, "pkg/ext.py": """
        class ColocateWorkerExtension:
            def delete_kv_cache(self):
                return None
    """}
    result = scan_trees(tmp_path, _platforms("vllm.platforms.tpu.TpuPlatform", OUT_OF_TREE), client, only=["DC007"])
    assert _dc007(result) == [("error", "pkg/sampler.py", 9)]
