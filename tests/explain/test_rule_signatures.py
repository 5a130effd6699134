"""`driftcheck explain` reads each rule's own traceback signatures from the registry; facts are specific.

No network: these are hand-written tracebacks; the real ones are in test_explain_real_tracebacks.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from driftcheck.report.explain import explain_text


def _tb(code: str, exc: str, path: str = "/home/me/client/gen.py") -> str:
    return f'Traceback (most recent call last):\n  File "{path}", line 10, in run\n    {code}\n{exc}\n'


def _one(text: str) -> dict:
    [d] = explain_text(text)
    return d


def test_an_unrelated_attribute_error_gets_no_seed_facts():
    d = _one(_tb("self.model.warmup()", "AttributeError: 'LlamaModel' object has no attribute 'warmup'"))
    assert d["rule"] == "DC008"
    assert "get_input_embeddings" not in d["message"] + d["vllm_change"]
    assert "0.11.1" not in d["message"] + d["vllm_change"]


def test_the_seed_attribute_error_gets_its_fact():
    d = _one(_tb("self.get_input_embeddings(ids)", "AttributeError: 'LlamaModel' object has no attribute 'get_input_embeddings'"))
    assert "get_input_embeddings became embed_input_ids in vLLM 0.11.1" in d["vllm_change"]


def test_a_tensor_truthiness_test_on_any_value_is_not_blamed_on_collective_rpc():
    d = _one(_tb("if not mask:", "RuntimeError: Boolean value of Tensor with more than one value is ambiguous"))
    assert d["rule"] == "DC105"
    text = d["message"] + d["vllm_change"]
    assert "DC104" not in text and "collective_rpc" not in text and "0.12" not in text


def test_the_hidden_states_reply_gets_the_dc104_root_cause():
    d = _one(_tb("if not aux_hidden_states:", "RuntimeError: Boolean value of Tensor with more than one value is ambiguous"))
    assert "DC104" in d["message"] and "collective_rpc" in d["vllm_change"]


@pytest.mark.parametrize("kw,fact", [("kv_cache_specs", "get_kv_cache_config_from_groups"), ("eos_token_id", "Request()")])
def test_unexpected_keyword_facts_only_for_their_keyword(kw, fact):
    d = _one(_tb("f(x=1)", f"TypeError: f() got an unexpected keyword argument '{kw}'"))
    assert d["rule"] == "DC003" and fact in d["vllm_change"]
    other = _one(_tb("f(x=1)", "TypeError: f() got an unexpected keyword argument 'verbose'"))
    assert "kv_cache_specs" not in other["vllm_change"] and "eos_token_id" not in other["vllm_change"]


def test_missing_argument_fact_only_for_scheduler_block_size():
    d = _one(_tb("Scheduler(vllm_config=c)", "TypeError: Scheduler.__init__() missing 1 required positional argument: 'block_size'"))
    assert "Scheduler(block_size=)" in d["vllm_change"]
    other = _one(_tb("Worker(c)", "TypeError: Worker.__init__() missing 1 required positional argument: 'rank'"))
    assert other["rule"] == "DC005" and "block_size" not in other["vllm_change"]


def test_every_signature_belongs_to_one_registered_rule_and_names_a_real_fix():
    from driftcheck.report import explain
    from driftcheck.rules.registry import entries, fix_modules, signature_fix, traceback_signatures

    assert not hasattr(explain, "PATTERNS")  # no second table of rules in explain
    fixes = {m.FIX.id for m in fix_modules()}
    pairs = traceback_signatures()
    assert {e.id for e, _s in pairs} >= {"DC001", "DC002", "DC003", "DC004", "DC005", "DC008", "DC101", "DC103", "DC105", "DC106", "DC108"}
    for e, sig in pairs:
        assert sig in e.signatures and e in entries()
        fix = signature_fix(e, sig)
        assert fix is None or fix in fixes, (e.id, fix)
    priorities = [s.priority for _e, s in pairs]
    assert priorities == sorted(priorities, reverse=True)


def test_no_rule_imports_a_rule_and_no_fix_imports_a_fix():
    for folder, package in (("probes", "driftcheck.probes"), ("fixes", "driftcheck.fixes")):
        for path in sorted((REPO / folder).glob("*.py")):
            if path.name == "__init__.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    assert node.level == 0, f"{path.name} imports a sibling module (from .{node.module})"
                    assert not (node.module or "").startswith(package), f"{path.name} imports {node.module}"
                elif isinstance(node, ast.Import):
                    assert not any(a.name.startswith(package) for a in node.names), path.name


def test_a_fix_takes_from_a_rule_only_the_payload_of_a_rule_it_repairs():
    """A fix reads what its rule knew from the finding's typed payload; importing anything else of a rule (a helper,
    a fact) would put a shared question in a rule instead of in vllm_model/facts.py."""
    import importlib

    seen = 0
    for path in sorted((REPO / "fixes").glob("*.py")):
        fix = importlib.import_module(f"driftcheck.fixes.{path.stem}")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("driftcheck.probes."):
                rule = importlib.import_module(node.module).RULE
                assert rule.id in fix.FIX.rules, f"{path.name} imports {node.module}, a rule it does not repair"
                assert [a.name for a in node.names] == [rule.payload.__name__], f"{path.name} imports more than the payload"
                seen += 1
    assert seen >= 3  # add-argument, replay-engine-setup and disable-prefix-caching read payloads


def test_rules_shows_one_rule_whole_by_its_id():
    proc = run_cli("rules", "dc105")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("DC105 tensor-truthiness [error, behaviour, fix: tensor-truthiness]")
    assert "detector: driftcheck.probes.tensor_truthiness" in out
    assert "fixes: tensor-truthiness" in out
    assert "traceback signatures (driftcheck explain):" in out and "Boolean value of Tensor" in out
    assert "fact when" in out and "DC104" in out
    assert Path(out.split("detector: driftcheck.probes.tensor_truthiness (", 1)[1].split(")", 1)[0]).name == "tensor_truthiness.py"


def test_an_await_of_a_plain_method_is_dc118():
    d = _one(_tb("self.tokenizer = await self.engine.get_tokenizer()",
                 "TypeError: object TokenizerLike can't be used in 'await' expression"))
    assert d["rule"] == "DC118" and "drop the `await`" in d["vllm_change"]


def test_a_read_coroutine_is_dc118_but_not_any_attribute_error():
    d = _one(_tb("n = engine.stats().queued", "AttributeError: 'coroutine' object has no attribute 'queued'"))
    assert d["rule"] == "DC118"
    other = _one(_tb("n = engine.stats().queued", "AttributeError: 'Stats' object has no attribute 'queued'"))
    assert other["rule"] != "DC118"
