"""Root causes of false errors from the ninth batch of untuned plugins, names m-z (docs/triage/2026-12-03-unseen-plugins-9b.md),
one group each: the shape that runs (no error), and the same shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


# ----------------------------------------------------------------------------------------- BP
WORKERS = {
    "vllm/engine/arg_utils.py": """
        class AsyncEngineArgs:
            def __init__(self, model="m", worker_extension_cls=""):
                self.model = model
                self.worker_extension_cls = worker_extension_cls
    """,
    "vllm/v1/engine/async_llm.py": """
        class AsyncLLM:
            @classmethod
            def from_engine_args(cls, args):
                return cls()

            async def collective_rpc(self, method, args=()):
                return []
    """,
    "vllm/v1/worker/worker_base.py": """
        class WorkerBase:
            def load_model(self):
                pass
    """,
}

EXTENSION = {
    "pkg/__init__.py": "",
    "pkg/worker.py": """
        class ActivationHookExtension:
            def nh_install(self, sites):
                return sites
    """,
}


def _extractor(binding: str, receiver: str, method: str = "nh_install") -> dict[str, str]:
    return {**EXTENSION, "pkg/extractor.py": f"""
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        class Extractor:
            {binding}

            async def start(self):
                args = AsyncEngineArgs(model="m", worker_extension_cls={receiver}._worker_extension_cls)
                self.llm = AsyncLLM.from_engine_args(args)
                return await self.llm.collective_rpc("{method}", args=(["site"],))
    """}


def test_a_worker_extension_named_by_a_class_attribute_is_found(tmp_path):
    """nemotron-extraction 1.0.0 (vllm.py:17, 57-76): `_worker_extension_cls = "pkg.mod.Cls"` in the class body,
    passed as `worker_extension_cls=self._worker_extension_cls`: the extension's methods are the workers'."""
    for receiver in ("self", "Extractor"):
        client = _extractor('_worker_extension_cls = "pkg.worker.ActivationHookExtension"', receiver)
        assert _found(scan_trees(tmp_path / receiver, WORKERS, client), "DC007") == []


def test_a_method_the_extension_named_by_a_class_attribute_lacks_is_still_an_error(tmp_path):
    client = _extractor('_worker_extension_cls = "pkg.worker.ActivationHookExtension"', "self", "nh_missing")
    assert _found(scan_trees(tmp_path, WORKERS, client), "DC007") == [("DC007", "error", "pkg/extractor.py", 10)]


def test_a_class_attribute_that_names_no_extension_class_names_none(tmp_path):
    """A class attribute of another value (not a dotted class name, or bound twice) names no extension."""
    for n, binding in enumerate(('_worker_extension_cls = ""',
                                 '_worker_extension_cls = "pkg.worker.ActivationHookExtension" if X else "pkg.Other"')):
        client = _extractor(binding, "self")
        assert _found(scan_trees(tmp_path / str(n), WORKERS, client), "DC007") == [("DC007", "error", "pkg/extractor.py", 10)]


# ----------------------------------------------------------------------------------------- BQ
PROCESSOR_OLD = {  # 0.19.0: neither name the processor needs exists yet
    "vllm/exceptions.py": "class VLLMValidationError(ValueError):\n    pass\n",
    "vllm/transformers_utils/__init__.py": "",
    "vllm/transformers_utils/processor.py": "def get_video_processor(name):\n    return name\n",
}
PROCESSOR_NEW_FUNCTION_ONLY = {**PROCESSOR_OLD, "vllm/transformers_utils/processor.py": """
    def get_video_processor(name):
        return name

    def get_video_processor_cls_name(config):
        return config
"""}

CHECK = """
        def _require_inprocess_apis(engine) -> None:
            try:
                from vllm.transformers_utils.processor import get_video_processor_cls_name  # noqa: F401
            except ImportError as e:
                {handler}
"""  # indented as the class below it, so that both are at module level, as in the plugin


def _processor(handler: str = 'raise ValueError("needs vllm>=0.20.0") from e', call: str = "_require_inprocess_apis(engine)",
               after: bool = False) -> dict[str, str]:
    uses = """
                from vllm.exceptions import VLLMClientError
                from vllm.transformers_utils.processor import get_video_processor_cls_name
                self.error, self.name = VLLMClientError, get_video_processor_cls_name"""
    body = f"\n                {call}{uses}" if not after else f"{uses}\n                {call}"
    return {"pkg/__init__.py": "", "pkg/mm_processor.py": CHECK.format(handler=handler) + f"""
        class InprocessProcessor:
            def __init__(self, engine):{body}
    """}


def _dc002(result) -> list[tuple[str, int]]:
    return sorted((f.severity, f.client.line) for f in result.findings if f.rule == "DC002")


def test_a_use_after_a_precondition_check_that_fails_here_is_not_reached(tmp_path):
    """tokenspeed-smg-grpc-servicer 0.14.1 (mm_processor.py:239-248, 302-314) at 0.19.0, which its `vllm>=0.19.0`
    allows: `_require_inprocess_apis(engine)` imports what the processor needs and raises ValueError("needs
    vllm>=0.20.0") when it cannot; the imports after the call never run there, the one the check does not test
    (`VLLMClientError`) included."""
    found = _dc002(scan_trees(tmp_path, PROCESSOR_OLD, _processor()))
    assert [s for s, _ in found] == ["warning"] * 3  # the check's own import, and the two after its call


def test_a_use_the_check_does_not_test_still_fails_where_the_check_passes(tmp_path):
    """Where the checked function exists, the check passes and `VLLMClientError`, which it does not test, fails."""
    found = _dc002(scan_trees(tmp_path, PROCESSOR_NEW_FUNCTION_ONLY, _processor()))
    assert [s for s, _ in found] == ["error"]


def test_what_is_not_after_a_raising_check_is_still_an_error(tmp_path):
    """A handler that does not raise (the caller goes on), uses before the call, and no call at all stay errors."""
    for n, client in enumerate((_processor(handler="pass"), _processor(after=True), _processor(call="pass"))):
        found = _dc002(scan_trees(tmp_path / str(n), PROCESSOR_OLD, client))
        assert [s for s, _ in found].count("error") == 2, (n, found)


# ----------------------------------------------------------------------------------------- BR
LAYOUTLESS = {  # 0.28.0: no resolved KV cache layouts yet
    "vllm/v1/__init__.py": "",
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/utils.py": "def bind_kv_cache(kv_caches, ctx):\n    return kv_caches\n",
}


def _engine_sim(resolve_tail: str = 'return "LBNHC"', caller: str = "") -> dict[str, str]:
    caller = caller or """
        def build(cache_config):
            layout = _resolve_kv_cache_layout(cache_config)
            if layout is None:
                return {}
            else:
                return _allocate_with_vllm({}, layout=layout)
    """
    return {"pkg/__init__.py": "", "pkg/engine_sim.py": f"""
        def _resolve_kv_cache_layout(cache_config):
            if not hasattr(cache_config, "kv_cache_layout"):
                return None
            if cache_config.kv_cache_layout is not None:
                return str(cache_config.kv_cache_layout)
            {resolve_tail}


        def _allocate_with_vllm(kv_cache_config, layout):
            from vllm.v1.worker.utils import allocate_kv_cache

            return allocate_kv_cache(kv_cache_config, layout)
    """ + caller}


def _severities(result) -> list[str]:
    return [f.severity for f in result.findings if f.rule in ("DC001", "DC002")]


def test_the_branch_for_a_helpers_non_none_answer_to_its_probe_is_guarded(tmp_path):
    """redhare 0.6.0 (bench/engine_sim.py:427-485, 587-610) at 0.28.0: `_resolve_kv_cache_layout` returns None only
    when `cache_config` has no `kv_cache_layout`; `_allocate_with_vllm`, called only where it returned a layout,
    runs only on a vLLM with resolved layouts. The early-return and `is not None` spellings too."""
    shapes = ("", """
        def build(cache_config):
            layout = _resolve_kv_cache_layout(cache_config)
            if layout is None:
                return {}
            return _allocate_with_vllm({}, layout=layout)
    """, """
        def build(cache_config):
            layout = _resolve_kv_cache_layout(cache_config)
            if layout is not None:
                return _allocate_with_vllm({}, layout=layout)
            return {}
    """)
    for n, caller in enumerate(shapes):
        assert _severities(scan_trees(tmp_path / str(n), LAYOUTLESS, _engine_sim(caller=caller))) == ["warning"], n


def test_a_none_that_does_not_answer_the_probe_guards_nothing(tmp_path):
    """The helper also returns None elsewhere (or falls off its end), the use is on the None branch, or the name is
    bound again before the test: the use stays an error."""
    cases = [
        _engine_sim(resolve_tail="return None"),
        _engine_sim(resolve_tail="pass"),
        _engine_sim(caller="""
        def build(cache_config):
            layout = _resolve_kv_cache_layout(cache_config)
            if layout is None:
                return _allocate_with_vllm({}, layout="LBNHC")
            return {}
        """),
        _engine_sim(caller="""
        def build(cache_config):
            layout = _resolve_kv_cache_layout(cache_config)
            layout = cache_config.get("layout")
            if layout is not None:
                return _allocate_with_vllm({}, layout=layout)
            return {}
        """),
    ]
    for n, client in enumerate(cases):
        assert _severities(scan_trees(tmp_path / str(n), LAYOUTLESS, client)) == ["error"], n
