"""speculators' hidden-state generator against real vLLM releases (fetched once, cached).

Every expected line is derived from the real files in the sources zips: the client line by
searching the speculators source, the vLLM line by parsing the vLLM file with `ast`.
"""

from __future__ import annotations

import functools

import pytest

from conftest import CACHE_DIR, client_sources, vllm_sources
from driftcheck.scan.pipeline import ScanOptions, ScanResult, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

from scan.helpers import def_line, defines_at, field_line, line_of, param_line, zip_text

pytestmark = pytest.mark.network

GENERIC_RULES = {f"DC00{i}" for i in range(1, 10)}  # the nine generic probes (behaviour probes are DC1xx)
GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
WORKER = "speculators/data_generation/custom_worker.py"


@functools.lru_cache(maxsize=None)
def scan_release(vllm_version: str, spec_version: str) -> ScanResult:
    vllm_sources(vllm_version)  # fetch (or reuse) through the shared conftest cache
    client_sources("speculators", spec_version)
    vllm = resolve_vllm(vllm_version, CACHE_DIR)
    client = resolve_client(f"speculators=={spec_version}", CACHE_DIR)
    return scan(vllm, [client], ScanOptions(cache_dir=CACHE_DIR))


def vsrc(version: str, rel: str) -> str:
    return zip_text(vllm_sources(version), rel)


def csrc(version: str, rel: str) -> str:
    return zip_text(client_sources("speculators", version), rel)


def only(result: ScanResult, rule: str, symbol_part: str):
    hits = [f for f in result.visible() if f.rule == rule and symbol_part in (f.symbol or "")]
    assert len(hits) == 1, [(f.rule, f.symbol) for f in result.visible()]
    return hits[0]


# ------------------------------------------------------------------ 0.3.0 against vLLM 0.16.0
def test_scheduler_config_misses_is_encoder_decoder():
    f = only(scan_release("0.16.0", "0.3.0"), "DC005", "SchedulerConfig(is_encoder_decoder=)")
    assert f.severity == "error"
    assert (f.client.path, f.client.line) == (GEN, line_of(csrc("0.3.0", GEN), "scheduler_config=SchedulerConfig("))
    rel = "vllm/config/scheduler.py"
    assert (f.vllm.path, f.vllm.line) == (rel, field_line(vsrc("0.16.0", rel), "SchedulerConfig", "is_encoder_decoder"))
    assert f.vllm.code == "is_encoder_decoder: InitVar[bool]" and f.vllm.version == "0.16.0"


def test_kv_cache_config_keyword_was_dropped():
    f = only(scan_release("0.16.0", "0.3.0"), "DC003", "get_kv_cache_config_from_groups(kv_cache_specs=)")
    assert f.severity == "error"
    assert f.client.line == line_of(csrc("0.3.0", GEN), "= get_kv_cache_config_from_groups(")
    rel = "vllm/v1/core/kv_cache_utils.py"
    assert (f.vllm.path, f.vllm.line) == (rel, def_line(vsrc("0.16.0", rel), "get_kv_cache_config_from_groups"))


def test_scheduler_misses_block_size():
    f = only(scan_release("0.16.0", "0.3.0"), "DC005", "Scheduler(block_size=)")
    assert f.severity == "error"
    assert f.client.line == line_of(csrc("0.3.0", GEN), "self.scheduler = Scheduler(")
    rel = "vllm/v1/core/sched/scheduler.py"
    assert (f.vllm.path, f.vllm.line) == (rel, param_line(vsrc("0.16.0", rel), "Scheduler.__init__", "block_size"))


def test_get_input_embeddings_renamed_in_custom_worker():
    f = only(scan_release("0.16.0", "0.3.0"), "DC008", ".get_input_embeddings")
    assert f.severity == "error" and f.details["renamed_to"] == "embed_input_ids"
    assert (f.client.path, f.client.line) == (WORKER, line_of(csrc("0.3.0", WORKER), "self.get_input_embeddings("))
    # the vLLM side is an `embed_input_ids` definition in 0.16.0, the baseline the old name in 0.11.0
    assert "embed_input_ids" in defines_at(vsrc("0.16.0", f.vllm.path), f.vllm.line)
    old = f.details["baseline"]
    assert old["version"] == "0.11.0"
    assert "get_input_embeddings" in defines_at(vsrc("0.11.0", old["path"]), old["line"])


def test_only_the_known_generic_errors_against_016():
    # the four above are the generic-probe errors; anything else would be a new false positive
    generic = {(f.rule, f.symbol) for f in scan_release("0.16.0", "0.3.0").visible()
               if f.severity == "error" and f.rule in GENERIC_RULES}
    assert {r for r, _s in generic} == {"DC003", "DC005", "DC008"} and len(generic) == 4


# ------------------------------------------------------------------ clean pairs
@pytest.mark.parametrize("vllm_version,spec_version", [("0.11.0", "0.3.0"), ("0.12.0", "0.4.0"), ("0.16.0", "0.4.0")])
def test_no_errors_for_the_vllm_each_release_was_built_for(vllm_version, spec_version):
    result = scan_release(vllm_version, spec_version)
    assert [f for f in result.visible() if f.severity == "error"] == []
    assert result.internal_errors == []
    assert result.stats["client_files"] >= 2  # it did look at the generator and the worker


# ------------------------------------------------------------------ 0.32.0 dropped Request(eos_token_id=)
@pytest.mark.parametrize("spec_version", ["0.3.0", "0.4.0"])
def test_request_eos_token_id_flagged_on_032(spec_version):
    f = only(scan_release("0.32.0", spec_version), "DC003", "Request(eos_token_id=)")
    assert f.severity == "error" and f.details["keyword"] == "eos_token_id"
    assert (f.client.path, f.client.line) == (GEN, line_of(csrc(spec_version, GEN), "= Request("))
    rel = "vllm/v1/request.py"
    assert (f.vllm.path, f.vllm.line) == (rel, def_line(vsrc("0.32.0", rel), "Request.__init__"))
