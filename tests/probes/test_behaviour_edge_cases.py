"""Behaviour probes on small hand-written clients, checked against the real vLLM 0.16.0 sources.

Real releases cover the seed's pair (test_behaviour_real_releases.py); these cover the shapes a
client can take that speculators does not: config dicts, CLI scripts, explicit flags, annotations.
"""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR
from driftcheck.engine import ScanOptions, scan
from driftcheck.targets import resolve_client, resolve_vllm


def scan_files(tmp_path, files: dict[str, str], vllm: str = "0.16.0", only=None, client_vllm=None):
    root = tmp_path / "client"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return scan(resolve_vllm(vllm, CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                ScanOptions(cache_dir=CACHE_DIR, only=only, client_vllm=client_vllm))


def rules(result):
    return [(f.rule, f.client.line) for f in result.findings]


REQUEST_CLIENT = """
    from vllm.config import CacheConfig
    from vllm.v1.request import Request


    def build(sp):
        cache = CacheConfig(block_size=16{flag})
        return cache, Request(request_id="r", prompt_token_ids=[1, 2], sampling_params=sp, pooling_params=None,
                              eos_token_id=None{hasher})
"""


def test_dc101_off_when_prefix_caching_is_disabled(tmp_path):
    src = REQUEST_CLIENT.format(flag=", enable_prefix_caching=False", hasher="")
    assert rules(scan_files(tmp_path, {"c.py": src}, only=["DC101"])) == []


def test_dc101_off_when_block_hasher_is_passed(tmp_path):
    src = REQUEST_CLIENT.format(flag="", hasher=", block_hasher=lambda r: []")
    assert rules(scan_files(tmp_path, {"c.py": src}, only=["DC101"])) == []


def test_dc101_is_a_warning_when_the_flag_is_not_a_literal(tmp_path):
    src = REQUEST_CLIENT.format(flag=", enable_prefix_caching=use_cache()", hasher="")
    [f] = scan_files(tmp_path, {"c.py": src}, only=["DC101"]).findings
    assert f.severity == "warning" and f.details["prefix_caching"] == "maybe" and f.client.line == 7


def test_dc102_extract_hidden_states_dict_without_prefix_caching_off(tmp_path):
    src = """
        from vllm import LLM


        def make():
            return LLM(model="m", speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1})
    """
    [f] = scan_files(tmp_path, {"c.py": src}, only=["DC102"]).findings
    assert f.client.line == 5 and f.when == "silent"


def test_dc102_off_when_the_same_call_disables_prefix_caching(tmp_path):
    src = """
        from vllm import LLM


        def make():
            return LLM(model="m", enable_prefix_caching=False,
                       speculative_config={"method": "extract_hidden_states", "num_speculative_tokens": 1})
    """
    assert scan_files(tmp_path, {"c.py": src}, only=["DC102"]).findings == []


def test_dc102_ignores_docstrings_messages_and_comparisons(tmp_path):
    src = '''
        """Works with vLLM's extract_hidden_states method."""
        from vllm.config import VllmConfig


        def check(config: VllmConfig):
            if config.speculative_config.method != "extract_hidden_states":
                raise ValueError("needs the extract_hidden_states speculative method")
    '''
    assert scan_files(tmp_path, {"c.py": src}, only=["DC102"]).findings == []


def test_dc102_cli_script_with_and_without_the_flag(tmp_path):
    files = {
        "c.py": "import vllm\n",
        "serve.sh": """
            vllm serve m \\
              --speculative-config '{"method": "extract_hidden_states"}' \\
              --kv-transfer-config '{"kv_connector": "ExampleHiddenStatesConnector"}'
        """,
        "serve_ok.sh": """
            vllm serve m --no-enable-prefix-caching \\
              --speculative-config '{"method": "extract_hidden_states"}'
        """,
    }
    found = scan_files(tmp_path, files, only=["DC102"]).findings
    assert sorted((f.client.path, f.client.line) for f in found) == [("serve.sh", 2), ("serve.sh", 3)]


def test_dc103_off_when_sample_tokens_follows(tmp_path):
    src = """
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def step(executor: MultiprocExecutor, out):
            if executor.execute_model(out) is None:
                executor.sample_tokens(None)
    """
    assert scan_files(tmp_path, {"c.py": src}, only=["DC103"]).findings == []


def test_dc103_on_for_an_untyped_executor_too(tmp_path):
    src = """
        import vllm


        def step(executor, out):
            executor.execute_model(out)
            executor.execute_model(out)
    """
    found = scan_files(tmp_path, {"c.py": src}, only=["DC103"]).findings
    assert [f.client.line for f in found] == [5, 6]


def test_dc104_and_dc105_follow_the_reply_through_a_variable(tmp_path):
    src = """
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def grab(executor: MultiprocExecutor):
            replies = executor.collective_rpc("get_kv_cache_spec", unique_reply_rank=0)
            first = replies[0]
            if not first:
                return None
            return first
    """
    result = scan_files(tmp_path, {"c.py": src}, only=["DC104", "DC105"])
    assert rules(result) == [("DC104", 6), ("DC105", 7)]


def test_dc104_off_without_unique_reply_rank(tmp_path):
    src = """
        from vllm.v1.executor.multiproc_executor import MultiprocExecutor


        def grab(executor: MultiprocExecutor):
            return executor.collective_rpc("get_kv_cache_spec")[0]
    """
    assert scan_files(tmp_path, {"c.py": src}, only=["DC104"]).findings == []


def test_dc107_without_a_baseline_is_unknown_not_a_pass(tmp_path):
    src = """
        from vllm.config import SchedulerConfig


        def make():
            return SchedulerConfig(max_model_len=1, is_encoder_decoder=False)
    """
    result = scan_files(tmp_path, {"c.py": src}, only=["DC107"])
    assert result.findings == [] and [u.rule for u in result.unknown] == ["DC107"]
    with_baseline = scan_files(tmp_path, {"c.py": src}, only=["DC107"], client_vllm="0.11.0")
    assert with_baseline.unknown == []
    assert {f.symbol.rsplit(".", 1)[-1] for f in with_baseline.findings} >= {"async_scheduling", "enable_chunked_prefill"}
