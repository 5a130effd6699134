"""DC005 missing-argument: a parameter (or InitVar field) the target requires is not passed."""

from __future__ import annotations

from scan.helpers import scan_client, vline

SCHED = "vllm/v1/core/sched/scheduler.py"


def test_present_initvar_of_a_config_class(tmp_path):
    client = {"c.py": "from vllm.config import SchedulerConfig\n\n\ndef f():\n"
                      "    return SchedulerConfig(max_model_len=4096, max_num_seqs=8)\n"}
    [f] = scan_client(tmp_path, client, only=["DC005"]).findings
    assert (f.client.line, f.when, f.severity) == (5, "call", "error")
    assert f.symbol == "vllm.config.scheduler.SchedulerConfig(is_encoder_decoder=)"
    # the vLLM side is the field itself, and an @config class fails with pydantic's ValidationError
    assert (f.vllm.path, f.vllm.line) == ("vllm/config/scheduler.py", vline("vllm/config/scheduler.py", "is_encoder_decoder: InitVar"))
    assert "an InitVar field" in f.message and "ValidationError" in f.message
    assert f.details["parameter"] == "is_encoder_decoder" and f.fix == "add-argument"


def test_present_required_parameter_of_a_class_with_init(tmp_path):
    client = {"c.py": "from vllm.v1.core.sched.scheduler import Scheduler\n\n\ndef f(c, k, m):\n"
                      "    return Scheduler(vllm_config=c, kv_cache_config=k, structured_output_manager=m)\n"}
    [f] = scan_client(tmp_path, client, only=["DC005"]).findings
    assert (f.vllm.path, f.vllm.line) == (SCHED, vline(SCHED, "block_size: int,"))
    assert "TypeError (missing required argument 'block_size')" in f.message


def test_absent_when_everything_required_is_passed_or_unpacked(tmp_path):
    client = {"c.py": """
        from vllm.config import SchedulerConfig
        from vllm.v1.core.sched.scheduler import Scheduler


        def f(c, k, m, kw):
            SchedulerConfig(max_model_len=1, is_encoder_decoder=False)
            SchedulerConfig(1, False)
            Scheduler(c, k, m, 16)
            Scheduler(c, k, **kw)  # cannot tell what **kw holds: no guess
    """}
    assert scan_client(tmp_path, client, only=["DC005"]).findings == []


def test_the_finding_carries_the_value_add_argument_passes_through_json_and_the_unit_cache(tmp_path):
    """The fix reads the rule's typed payload (ArgumentToAdd), never the message or a re-resolved symbol, so the
    payload must come back the same from a report's JSON and from a warm unit cache."""
    from driftcheck.probes.missing_argument import ArgumentToAdd
    from driftcheck.rules.findings import decode_payload
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm
    from conftest import CACHE_DIR
    from scan.helpers import write_tree

    client = {"c.py": "from vllm.config import SchedulerConfig\n\n\ndef f(n):\n"
                      "    return SchedulerConfig(max_num_batched_tokens=n, max_model_len=n)\n"}
    croot = write_tree(tmp_path / "client", client)

    def run():
        vllm = resolve_vllm("0.16.0", CACHE_DIR)
        target = resolve_client(str(croot), tmp_path / "cache")
        return scan(vllm, [target], ScanOptions(cache_dir=tmp_path / "cache", only=["DC005"]))

    cold = run()
    [f] = cold.findings
    assert isinstance(f.payload, ArgumentToAdd) and f.payload.parameter == "is_encoder_decoder"
    # the literal SchedulerConfig's own factory fills in, read from vLLM 0.16.0
    assert f.payload.value is not None and f.payload.value.code == "False"
    assert f.payload.value.path == "vllm/config/scheduler.py"
    data = f.to_json()["payload"]
    assert data["parameter"] == "is_encoder_decoder"
    assert decode_payload(ArgumentToAdd, data) == f.payload
    warm = run()
    assert warm.stats["client_cached"] == 1
    [g] = warm.findings
    assert g.payload == f.payload


def test_a_payload_of_the_wrong_shape_is_refused_not_decoded():
    import pytest

    from driftcheck.probes.missing_argument import ArgumentToAdd
    from driftcheck.rules.findings import decode_payload
    from driftcheck.storage.datacodec import CodecError

    with pytest.raises(CodecError):
        decode_payload(ArgumentToAdd, {"parameter": 3, "value": None})
