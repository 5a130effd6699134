from driftcheck.runner.analysis import differences, findings


def att(driver, mode, status, checks, engine, **kw):
    return {"name": f"{driver}-{mode}", "driver": driver, "mode": mode, "status": status, "checks": checks,
            "notes": {"engine": engine}, **kw}


ROWS_OK = {"name": "rows", "ok": True, "detail": "one row per token"}
ROWS_BAD = {"name": "rows", "ok": False, "detail": "pass 2 prompt 1: 35 rows for 45 tokens"}
CONV = {"name": "convention", "ok": True, "detail": "layer id L = output of layer L"}


def test_defaults_difference_names_the_setting():
    careful = att("generator", "careful", "passed", [ROWS_OK, CONV], {"enable_prefix_caching": False})
    defaults = att("generator", "defaults", "failed", [ROWS_BAD, CONV], {"enable_prefix_caching": True})
    assert [d["what"] for d in differences(careful, defaults)] == ["status", "rows"]
    found = {f["id"]: f for f in findings([careful, defaults])}
    assert "enable_prefix_caching" in found["smoke.defaults-differ"]["message"]
    assert found["smoke.layer-convention"]["severity"] == "info"


def test_same_outcome_is_no_finding():
    careful = att("native", "careful", "passed", [ROWS_OK], {"enable_prefix_caching": False})
    defaults = att("native", "defaults", "passed", [ROWS_OK], {"enable_prefix_caching": True})
    assert differences(careful, defaults) == []
    assert not [f for f in findings([careful, defaults]) if f["id"] == "smoke.defaults-differ"]


def test_upstream_connector_and_constraints_are_reported():
    calls = [{"path": "/v/c.py", "line": 256, "call": "torch.cuda.Stream()"},
             {"path": "/v/c.py", "line": 402, "call": "torch.empty_like(..., pin_memory=True)"}]
    a = att("native", "careful", "passed", [ROWS_OK], {})
    a["notes"].update(upstream_connector_cuda_calls=calls,
                      constraints=[{"message": "chunked prefill is not supported", "adapted": {"enable_chunked_prefill": False}}])
    found = {f["id"]: f for f in findings([a])}
    assert "pin_memory=True" in found["smoke.upstream-connector-needs-cuda"]["message"]
    assert ":402" in found["smoke.upstream-connector-needs-cuda"]["message"]
    assert "enable_chunked_prefill" in found["smoke.target-constraint"]["message"]
