"""`driftcheck fix` on real clients' errors (docs/triage/2026-12-04-fix-on-real-clients-20b.md): each case in
cases/<DCxxx>/<fix>/<client>_shaped.* is reduced from a client line where `fix` once rewrote wrongly; here, the part
that must be left alone is left alone and `fix` says why, in words a person can act on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codemods.fixture_util import CASES_DIR
from conftest import CACHE_DIR
from driftcheck.fix.fixer import FixOptions, plan_fixes
from driftcheck.scan.pipeline import ScanOptions
from driftcheck.sources.targets import resolve_client, resolve_vllm


def _plan(tmp_path: Path, case: Path, only: list[str], text: str | None = None, extra: dict[str, str] | None = None):
    text = case.read_text() if text is None else text
    version = text.split("\n", 1)[0].removeprefix("# vllm ").strip()
    folder = tmp_path / "client"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "client.py").write_text(text)
    for name, other in (extra or {}).items():  # the client's other files
        (folder / name).write_text(other)
    plan = plan_fixes(resolve_vllm(version, CACHE_DIR), resolve_client(str(folder), CACHE_DIR),
                      ScanOptions(cache_dir=CACHE_DIR, client_vllm="0.11.0"), FixOptions(only=only))
    return plan, {c.rel: c.new for c in plan.changes}.get("client.py", text)


def _why(plan, line: int) -> list[str]:
    return [why for f, why in plan.skipped if f.client and f.client.line == line]


def test_a_keyword_whose_value_the_target_reads_from_another_parameter_is_kept(tmp_path):
    """hcx: get_rope's `base = rope_parameters.get("rope_theta", 10000)`; every keyword of that call stays."""
    plan, new = _plan(tmp_path, CASES_DIR / "DC003/drop-keyword/hcx_shaped.before.py", ["DC003", "drop-keyword"])
    assert "base=rope_theta," in new and "rope_scaling=rope_scaling," in new and "rotary_dim=head_dim," in new
    assert "kv_cache_specs=specs" not in new
    reasons = _why(plan, 14)
    assert len(reasons) == 3, plan.skipped
    assert any("reads 'base' from 'rope_parameters'" in r and "rotary_embedding/__init__.py" in r for r in reasons)
    assert all("rope_parameters" in r for r in reasons)
    assert [f.rule for f in plan.final.findings if f.rule == "DC003" and f.severity == "error"] == ["DC003"] * 3
    # the keyword that is just gone is dropped, and the summary names the value that no longer reaches vLLM
    assert any(n.startswith("dropped `kv_cache_specs=specs` (client.py:10)") for n in plan.notes), plan.notes


def test_a_keyword_of_a_call_that_misses_a_required_parameter_is_kept(tmp_path):
    """flow-judge: LLM.generate(prompt_token_ids=...) lacks `prompts`: the keyword is the call's input."""
    plan, new = _plan(tmp_path, CASES_DIR / "DC003/drop-keyword/flowjudge_shaped.before.py", ["DC003", "drop-keyword"])
    assert "prompt_token_ids=prompt_token_ids, sampling_params=params" in new
    assert any("lacks 'prompts'" in r and "prompt_token_ids" in r for r in _why(plan, 8)), plan.skipped


def test_a_literal_that_asks_for_a_behaviour_is_kept_and_a_neutral_one_dropped(tmp_path):
    plan, new = _plan(tmp_path, CASES_DIR / "DC003/drop-keyword/megrez_shaped.before.py", ["DC003", "drop-keyword"])
    assert "use_beam_search=True" in new and "use_beam_search=False" not in new
    assert any("`use_beam_search=True` asks for something" in r for r in _why(plan, 7)), plan.skipped
    assert not plan.notes  # a neutral literal is dropped without a word: nothing it asked for is lost


def test_a_name_no_module_defines_stays_on_the_old_import_and_is_reported(tmp_path):
    plan, new = _plan(tmp_path, CASES_DIR / "DC001/move-import/metax_shaped.before.py", ["DC001", "move-import"])
    assert "from vllm.model_executor.layers.sampler import get_sampler\n" in new
    assert any("no module of the target defines `get_sampler`" in r for r in _why(plan, 5)), plan.skipped


@pytest.mark.parametrize("layout", ["(\n    ChatCompletionRequest,\n    ErrorResponse,\n)", "ChatCompletionRequest, ErrorResponse",
                                    "(ChatCompletionRequest,\n    ErrorResponse)"])
def test_a_split_import_keeps_the_statement_layout(tmp_path, layout):
    text = f"# vllm 0.33.0\nfrom vllm.entrypoints.openai.protocol import {layout}\n\nX = (ChatCompletionRequest, ErrorResponse)\n"
    _plan_, new = _plan(tmp_path, CASES_DIR / "DC001/move-import/noop.py", ["DC001", "move-import"], text)
    assert new.count("from vllm.") == 2, new
    compile(new, "client.py", "exec")
    if layout.startswith("(\n"):  # one name a line, trailing comma: each new statement too
        assert "import (\n    ChatCompletionRequest,\n)\n" in new and "import (\n    ErrorResponse,\n)\n" in new, new
    elif not layout.startswith("("):
        assert "import ChatCompletionRequest\n" in new and "import ErrorResponse\n" in new, new


def test_a_keyword_the_clients_own_copy_of_the_callee_takes_is_kept(tmp_path):
    """genesis: the overlay's sibling block_pool.py takes block_mask; without that sibling the keyword is dropped."""
    overlay = Path(__file__).resolve().parent / "fixtures/drop-keyword/genesis_overlay"
    manager = (overlay / "manager.py").read_text()
    # in a client package (`__init__.py`): loose, the two files would be read as drop-in copies of vLLM's
    # `vllm.v1.core` files (drop_ins.py), the call as one that may reach the copy, and no error as left to fix
    plan, new = _plan(tmp_path, overlay / "manager.py", ["DC003", "drop-keyword"],
                      extra={"block_pool.py": (overlay / "block_pool.py").read_text(), "__init__.py": ""})
    assert new == manager
    assert any("defines its own cache_full_blocks taking 'block_mask' (client/block_pool.py:6)" in r for r in _why(plan, 14)), \
        plan.skipped
    plan, new = _plan(tmp_path, overlay / "manager.py", ["DC003", "drop-keyword"],
                      extra={"block_pool.py": (overlay / "block_pool.py").read_text()})
    assert new == manager and not any(f.rule == "DC003" for f, _why in plan.skipped)
    plan, new = _plan(tmp_path, overlay / "manager.py", ["DC003", "drop-keyword"])
    assert "block_mask=block_mask" not in new and "kv_cache_group_id=0,\n        )" in new


def test_two_lines_of_the_same_code_are_two_lines_left(tmp_path):
    """flow-judge's two `async for output in self.engine.generate(inputs=prompt, ...)` (vllm.py:255 and :277) share a
    fingerprint: each is reported as not fixed, with its own line."""
    call = "    async for output in engine.generate(inputs=prompt, sampling_params=params, request_id='a'):\n        return output\n"
    text = ("# vllm 0.33.0\nfrom vllm.v1.engine.async_llm import AsyncLLM\n\n\n"
            f"async def one(engine: AsyncLLM, prompt, params):\n{call}\n\nasync def two(engine: AsyncLLM, prompt, params):\n{call}")
    plan, new = _plan(tmp_path, CASES_DIR / "DC003/drop-keyword/noop.py", ["DC003", "drop-keyword"], text)
    assert new == text
    assert sorted(f.client.line for f, _why in plan.skipped if f.rule == "DC003") == [6, 11], plan.skipped


def test_the_summary_says_why_each_error_is_left_and_which_guarded_lines_it_left_alone(tmp_path):
    """skyrl-train 0.3.1 @ 0.33.0, reduced: `serving_chat` has no module of that name in 0.33 (nothing to rewrite it
    with), `AsyncLLM.get_vllm_config` has no codemod (DC006), and a try/except ImportError import is left alone."""
    from conftest import run_cli

    folder = tmp_path / "client"
    folder.mkdir()
    (folder / "engine.py").write_text(
        "from vllm.entrypoints.openai.serving_chat import OpenAIServingChat\n"
        "from vllm.v1.engine.async_llm import AsyncLLM\n\n"
        "try:\n    from vllm.entrypoints.openai.protocol import ErrorResponse\nexcept ImportError:\n    ErrorResponse = None\n\n\n"
        "def config(engine: AsyncLLM):\n    return engine.get_vllm_config(), OpenAIServingChat\n")
    proc = run_cli("fix", "--vllm", "0.33.0", "--client", str(folder), "--client-vllm", "0.11.0", "-q")
    err = proc.stderr
    assert "engine.py:1 " in err and "[move-import: the scan found no replacement in this vLLM to rewrite it with]" in err, err
    assert "[no codemod repairs DC006]" in err, err
    assert "left alone: 1 guarded finding(s)" in err and "DC001 engine.py:5" in err, err
    assert proc.stdout == ""  # nothing rewritten


def test_the_override_a_call_is_in_is_not_the_clients_own_callee(tmp_path):
    """vllm-ascend 0.23.0 (worker/v2/aclgraph_utils.py:103-131), reduced: an override that takes lora_capture_hook
    calls super().capture(..., lora_capture_hook=...): that call reaches vLLM's capture, which has no such
    parameter in 0.23.0, so the keyword is dropped."""
    text = ("# vllm 0.23.0\nfrom vllm.v1.worker.gpu.cudagraph_utils import ModelCudaGraphManager\n\n\n"
            "class NPUGraphManager(ModelCudaGraphManager):\n"
            "    def capture(self, model, model_state, input_buffers, intermediate_tensors, block_tables, attn_groups,\n"
            "                kv_cache_config, has_lora=False, lora_capture_hook=None):\n"
            "        return super().capture(model, model_state, input_buffers, intermediate_tensors, block_tables,\n"
            "                               attn_groups, kv_cache_config, has_lora=has_lora,\n"
            "                               lora_capture_hook=lora_capture_hook)\n")
    plan, new = _plan(tmp_path, CASES_DIR / "DC003/drop-keyword/noop.py", ["DC003", "drop-keyword"], text)
    assert "lora_capture_hook=lora_capture_hook" not in new and "has_lora=has_lora)" in new, (new, plan.skipped)


def test_guard_does_not_pass_a_value_the_target_wants_elsewhere_only_where_the_old_signature_takes_it(tmp_path):
    """--guard passes a keyword only where the callee still takes it: on the new vLLM the rope would run with base
    10000 all the same (hcx), and greedy sampling instead of beam search (Megrez). Both are left under --guard too."""
    for case, line in (("DC003/drop-keyword/hcx_shaped.before.py", 14), ("DC003/drop-keyword/megrez_shaped.before.py", 7)):
        text = (CASES_DIR / case).read_text()
        folder = tmp_path / "guarded"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / "client.py").write_text(text)
        version = text.split("\n", 1)[0].removeprefix("# vllm ").strip()
        plan = plan_fixes(resolve_vllm(version, CACHE_DIR), resolve_client(str(folder), CACHE_DIR),
                          ScanOptions(cache_dir=CACHE_DIR, client_vllm="0.11.0"), FixOptions(only=["DC003"], guard=True))
        new = {c.rel: c.new for c in plan.changes}.get("client.py", text)
        kept = text.splitlines()[line - 1]
        assert kept in new.splitlines(), (case, new)
        assert _why(plan, line), plan.skipped
