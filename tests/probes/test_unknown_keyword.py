"""DC003 unknown-keyword: a keyword the target's signature (or synthesised constructor) lacks."""

from __future__ import annotations

from scan.helpers import line_of, scan_client, vline

KV = "vllm/v1/core/kv_cache_utils.py"


def test_present_on_a_function(tmp_path):
    client = {"c.py": """
        from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups


        def f(cfg, specs, groups):
            return get_kv_cache_config_from_groups(
                vllm_config=cfg,
                kv_cache_specs=specs,
                kv_cache_groups=groups,
                available_memory=0,
            )
    """}
    [f] = scan_client(tmp_path, client, only=["DC003"]).findings
    text = (tmp_path / "client/c.py").read_text()
    # the finding sits on the call's first line; the vLLM side is the `def`
    assert (f.client.line, f.when) == (line_of(text, "return get_kv_cache_config_from_groups("), "call")
    assert (f.vllm.path, f.vllm.line) == (KV, vline(KV, "def get_kv_cache_config_from_groups"))
    assert f.symbol == "vllm.v1.core.kv_cache_utils.get_kv_cache_config_from_groups(kv_cache_specs=)"
    assert f.details["keyword"] == "kv_cache_specs" and f.fix == "drop-keyword"


def test_present_on_a_constructor_with_a_rename_hint(tmp_path):
    client = {"c.py": "from vllm import SamplingParams\n\nsp = SamplingParams(n=1, max_token=5)\n"}
    [f] = scan_client(tmp_path, client, only=["DC003"]).findings
    assert (f.client.line, f.when) == (3, "import")  # module-level code runs at import
    assert f.details["renamed_to"] == "max_tokens" and "Renamed to 'max_tokens'?" in f.message
    assert (f.vllm.path, f.vllm.line) == ("vllm/sampling_params.py", vline("vllm/sampling_params.py", "def __init__"))


def test_present_on_a_config_dataclass(tmp_path):
    client = {"c.py": "from vllm.config import SchedulerConfig\n\n\ndef f():\n"
                      "    return SchedulerConfig(max_model_len=1, is_encoder_decoder=False, chunked_prefill=True)\n"}
    [f] = scan_client(tmp_path, client, only=["DC003"]).findings
    assert f.symbol == "vllm.config.scheduler.SchedulerConfig(chunked_prefill=)"
    assert f.vllm.line == vline("vllm/config/scheduler.py", "class SchedulerConfig")


def test_absent_for_accepted_keywords_kwargs_and_unpacking(tmp_path):
    client = {"c.py": """
        from vllm import LLM, SamplingParams
        from vllm.v1.request import Request


        def f(opts):
            SamplingParams(n=2, max_tokens=4)
            LLM("m", tokenizer="t", anything_goes=1)  # **kwargs takes it
            Request("r", [], None, None, block_hasher=None)
            SamplingParams(**opts)
    """}
    assert scan_client(tmp_path, client, only=["DC003"]).findings == []


def test_field_with_init_false_is_not_a_keyword(tmp_path):
    client = {"c.py": "from vllm.config import CacheConfig\n\nCacheConfig(block_size=16, num_gpu_blocks=4)\n"}
    [f] = scan_client(tmp_path, client, only=["DC003"]).findings
    assert f.details["keyword"] == "num_gpu_blocks"


def test_a_forbidden_pydantic_extra_is_a_value_error_to_guards(tmp_path):
    # vLLM 0.16's `@config` classes forbid extra fields: the unknown keyword is a pydantic ValidationError, which is a
    # ValueError, so `except ValueError` (or `pytest.raises(ValueError)`) handles it (the TK note's open item)
    from scan.helpers import scan_trees
    from scan.test_constructors import CONFIG_UTILS

    vllm = {"vllm/config/utils.py": CONFIG_UTILS, "vllm/config/scheduler.py": """
        from vllm.config.utils import config


        @config
        class SchedulerConfig:
            max_num_seqs: int = 128
    """}
    client = {"plug/__init__.py": "", "plug/cfg.py": """
        from vllm.config.scheduler import SchedulerConfig


        def make():
            try:
                return SchedulerConfig(max_num_seqs=1, chunked=True)
            except ValueError:
                return None


        def strict():
            try:
                return SchedulerConfig(max_num_seqs=1, chunked=True)
            except KeyError:
                return None
    """}
    found = [(f.severity, f.client.line) for f in scan_trees(tmp_path, vllm, client, only=["DC003"]).findings]
    assert found == [("warning", 6), ("error", 13)]
