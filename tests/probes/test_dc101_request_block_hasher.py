"""DC101 request-block-hasher: Request built without block_hasher while prefix caching is on (probes/request_block_hasher.py).

Hand-written clients and the seed pair on real vLLM releases: present where the drift is, absent where not.
"""

from __future__ import annotations

import textwrap

from conftest import real_scan, source_line, vllm_sources
from behaviour import _by_rule, _client_line, GEN, pinned, rules, scan_files, seed


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


def test_dc101_block_hasher_present_on_016_at_request_and_assert(seed):
    [f] = _by_rule(seed, "DC101")
    assert f.client.path == GEN and f.client.line == _client_line("req = Request(")
    assert f.vllm.path == "vllm/v1/core/block_pool.py"
    assert f.vllm.line == source_line(vllm_sources("0.16.0"), f.vllm.path, "assert len(request.block_hashes) >= num_full_blocks")
    assert f.details["failure"] == "assert" and f.details["prefix_caching"] == "on"
    assert "message-less AssertionError" in f.message


def test_dc101_on_032_is_an_index_error_without_assert():
    result = real_scan("0.32.0", "speculators==0.3.0")
    [f] = _by_rule(result, "DC101")
    assert f.details["failure"] == "index" and "IndexError" in f.message
    assert "assert len(request.block_hashes)" not in (f.vllm.code or "")


def test_dc101_absent_on_011_where_prefix_caching_defaults_off(pinned):
    assert _by_rule(pinned, "DC101") == []


def test_dc101_absent_when_client_disables_prefix_caching():
    # speculators 0.4.0 passes enable_prefix_caching=False (and a block_hasher)
    assert _by_rule(real_scan("0.16.0", "speculators==0.4.0"), "DC101") == []


def test_dc101_knows_request_wherever_vllm_defines_it():
    """The anchor is vLLM's v1 Request class, not one exact path: a move keeps the rule (or its unknown) working."""
    from driftcheck.vllm_model.facts import REQUEST, is_request_class

    assert is_request_class(REQUEST) and is_request_class("vllm.v1.request_types.Request")
    assert not is_request_class("vllm.entrypoints.openai.protocol.Request") and not is_request_class("mylib.Request")


# vllm-spyre (fc6b54b9, vLLM 0.19.0): the platform's scheduler subclass runs vLLM's Scheduler.__init__ (a block pool)
# in vllm_spyre/v1/core/scheduler.py; its tests build Requests for a mocked scheduler or for
# `NewRequestData.from_request` in other files. A pool built only in another file does not make those Requests'
# failure certain: a warning naming that file. Twin: the Requests built beside the pool stay an error.
SPYRE_SCHEDULER = """
    from vllm.v1.core.sched.scheduler import Scheduler


    class PlatformScheduler(Scheduler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
"""
SPYRE_REQUESTS = """
    from vllm.v1.request import Request


    def make_request(sp):
        return Request(request_id="r", prompt_token_ids=[1, 2], sampling_params=sp, pooling_params=None,
                       eos_token_id=None)
"""


def test_dc101_a_block_pool_built_only_in_another_file_is_a_warning(tmp_path):
    result = scan_files(tmp_path, {"plugin/__init__.py": "", "plugin/scheduler.py": SPYRE_SCHEDULER,
                                   "tests/util.py": SPYRE_REQUESTS}, only=["DC101"])
    [f] = result.findings
    assert (f.severity, f.client.path) == ("warning", "tests/util.py")
    assert "another file, plugin/scheduler.py" in f.message and f.details["prefix_caching"] == "on"


def test_dc101_twin_requests_built_beside_the_block_pool_are_an_error(tmp_path):
    beside = SPYRE_SCHEDULER + SPYRE_REQUESTS.replace("from vllm.v1.request import Request\n", "")
    beside = "    from vllm.v1.request import Request\n" + beside
    [f] = scan_files(tmp_path, {"plugin/__init__.py": "", "plugin/scheduler.py": beside}, only=["DC101"]).findings
    assert (f.severity, f.client.path) == ("error", "plugin/scheduler.py") and "another file" not in f.message


WARMUP = """
    from vllm import SamplingParams
    from vllm.config import CacheConfig
    from vllm.v1.core.block_pool import BlockPool
    from vllm.v1.core.sched.output import NewRequestData
    from vllm.v1.request import Request


    def make(num_gpu_blocks):
        return CacheConfig(enable_prefix_caching=True), BlockPool(num_gpu_blocks, True, 16)


    def warmup(ids, pool):
        return NewRequestData.from_request(Request("w", ids, SamplingParams(), None), block_ids=([1],),
                                           prefill_token_ids=ids)
"""


def test_dc101_a_request_its_vllm_callee_only_reads_reaches_no_block_pool(tmp_path):
    # vLLM 0.22.0-0.33.0's own worker warmup (28c FW3): the Request is built as the argument of
    # `NewRequestData.from_request`, which copies its fields into the worker's record and keeps nothing of it
    assert rules(scan_files(tmp_path, {"w.py": WARMUP}, vllm="0.33.0", only=["DC101"])) == []
    # twin: the same Request handed to a client function that may keep it stays a finding
    kept = WARMUP.replace("NewRequestData.from_request(", "keep(").replace("    def warmup(", "    def keep(r, **kw):\n"
                                                                             "        return pool_of(r)\n\n\n    def warmup(")
    line = next(i for i, text in enumerate(textwrap.dedent(kept).lstrip("\n").splitlines(), 1) if "keep(Request(" in text)
    assert rules(scan_files(tmp_path / "kept", {"w.py": kept}, vllm="0.33.0", only=["DC101"])) == [("DC101", line)]
