from driftcheck.runner.summary import describe

CRASH = {"name": "generator-careful", "status": "crashed", "log": "/o/log.txt", "wall_s": 9.0, "metrics": {},
         "error": {"type": "ValidationError", "message": "is_encoder_decoder\n  Field required",
                   "client_frame": {"file": "/c/gen.py", "line": 194, "function": "_create_vllm_config",
                                    "code": "scheduler_config=SchedulerConfig("}}}


def test_crash_names_frame_rule_and_fix():
    text = "\n".join(describe(CRASH | {"explain": [{"rule": "DC005", "name": "missing-argument",
                                                     "message": "SchedulerConfig requires it", "fix": "add-argument"}]}))
    assert "ValidationError: is_encoder_decoder Field required" in text
    assert "at /c/gen.py:194 in _create_vllm_config: scheduler_config=SchedulerConfig(" in text
    assert "rule DC005 (missing-argument)" in text and "fix: add-argument" in text


def test_crash_without_explain_says_so():
    assert "driftcheck.explain is not available" in "\n".join(describe(CRASH | {"explain": None}))
    assert "no rule matches" in "\n".join(describe(CRASH | {"explain": []}))


def test_pass_prints_load_throughput_and_memory():
    a = {"name": "native-careful", "status": "passed", "wall_s": 30.0,
         "metrics": {"load_s": 17.6, "tokens_per_s": 2536.4, "peak_rss_mb": 2938.9},
         "checks": [{"name": "rows", "ok": True, "detail": "fine"},
                    {"name": "convention", "ok": True, "detail": "layer id L = input of layer L"}],
         "differences": [], "notes": {"cached_tokens_per_pass": [0, 512]}}
    text = "\n".join(describe(a))
    assert "load 17.6 s, 2536 tokens/s, peak RSS 2.87 GiB" in text
    assert "convention: ok" in text and "rows" not in text  # passing checks other than these stay quiet
    assert "vs careful: same outcome" in text and "[0, 512]" in text


def test_timeout_shows_the_last_log_line():
    a = {"name": "native-careful", "status": "timeout", "log": "/o/log.txt", "wall_s": 12.0, "metrics": {},
         "error": {"type": "Timeout", "message": "no result within 12 s", "log_tail": "a\nloading weights"}}
    text = "\n".join(describe(a))
    assert "no result within 12 s" in text and "last line: loading weights" in text and "explain" not in text
