"""Batch 30c (multimodal processors and pooling models on vLLM internals, at their stored GitHub HEAD,
docs/triage/2026-12-05-multimodal-pooling-30c.md).

SC1: Comb (shijuzhao/Comb 25bb508) passes precomputed cross-attention states through a multimodal processor,
`class CombDummyProcessor(EncDecMultiModalProcessor[...])` (comb/integration/vllm/combdeepseek.py:588), that replaces
`apply` whole (no `super().apply`) and keeps 0.12.0's four-argument `_call_hf_processor(self, prompt, mm_data,
mm_kwargs, tok_kwargs)`. vLLM 0.33.0 calls `self._call_hf_processor(hf_data, hf_kwargs)` only in
`_apply_hf_processor_main`, reached only through `_apply_hf_processor` < `_cached_apply_hf_processor` <
`BaseMultiModalProcessor.apply` (and `EncDecMultiModalProcessor.apply`'s `super().apply`): none of that runs for
Comb's object. DC109 skipped a call site only when the client replaced the method the call sits in, so it reported
`_call_hf_processor` (an error once Comb's environment.yml gave it its vLLM 0.12.0). A call site in a method that vLLM
reaches, for the client's object, only from methods the client replaces without super() (every call of it
`self.m(...)` / `super().m(...)` in a class of the object's MRO, a few calls deep; no client file calling it; no
uncalled or quoted use of the name) is skipped now (`_reached_only_through`). The twins: the client's `apply` calling
super(), a vLLM call of the method on another receiver, and a client method calling it keep the finding; on real
releases (0.33.0 against the client's 0.12.0) the `apply` calls stay errors and, without the `apply` override,
`_call_hf_processor` is an error.

Conda environment files: Comb declares its vLLM only in environment.yml's `pip:` list (`- vllm==0.12.0`); driftcheck
said it "declares no vLLM requirement". `project_requires` reads the `pip:` items of environment*.yml when the
pyproject and requirements files name no vLLM.
"""

from __future__ import annotations

import textwrap

import pytest

from conftest import CACHE_DIR, vllm_sources  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.package_metadata import project_requires
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import edited, plugin_shape, scan_trees

SC1_VLLM, SC1_CLIENT = plugin_shape("SC1")
PROCESSOR = "vllm/multimodal/processor.py"
CLIENT = "plug/processor.py"


def _sc1(tmp_path, vllm_files=SC1_VLLM, client_files=SC1_CLIENT):
    found = scan_trees(tmp_path, vllm_files, client_files, only=["DC109"]).findings
    return sorted((f.severity, f.client.line, f.vllm.line, f.details["problem"]) for f in found)


def test_sc1_hf_call_below_a_replaced_apply_is_not_reported(tmp_path):
    assert _sc1(tmp_path) == []


def test_sc1_twin_apply_that_calls_super_reaches_the_hf_call(tmp_path):
    client = edited(SC1_CLIENT, CLIENT, (
        '        return {"prompt_token_ids": list(inputs["prompt"]), "mm_kwargs": mm_kwargs}\n',
        '        return super().apply(inputs, timing_ctx)\n'))
    assert _sc1(tmp_path, client_files=client) == [("warning", 13, 16, "missing-argument")]


def test_sc1_twin_a_vllm_caller_on_another_receiver_keeps_the_finding(tmp_path):
    vllm = {**SC1_VLLM, "vllm/multimodal/warmup.py": textwrap.dedent("""
        from vllm.multimodal.processor import BaseMultiModalProcessor


        def warm_up(processor: BaseMultiModalProcessor):
            return processor._apply_hf_processor_main({"image": 1}, {})
    """)}
    assert _sc1(tmp_path, vllm_files=vllm) == [("warning", 13, 16, "missing-argument")]


@pytest.mark.parametrize("side, rel, old, new", [
    ("client", CLIENT, "    def _call_hf_processor(self,",  # a client method takes vLLM's path itself
     "    def reprocess(self, inputs):\n        return self._apply_hf_processor(inputs, None)\n\n"
     "    def _call_hf_processor(self,"),
    ("vllm", PROCESSOR, "    def get_dummy_mm_inputs(self, mm_counts):\n",  # vLLM hands a step on uncalled
     "    def hooks(self):\n        return [self._cached_apply_hf_processor]\n\n"
     "    def get_dummy_mm_inputs(self, mm_counts):\n"),
], ids=["client-method-calls-the-path", "vllm-hands-a-step-on"])
def test_sc1_twin_another_way_into_the_path_keeps_the_finding(tmp_path, side, rel, old, new):
    files = {"client": SC1_CLIENT, "vllm": SC1_VLLM}
    files[side] = edited(files[side], rel, (old, new))
    assert [problem for *_, problem in _sc1(tmp_path, files["vllm"], files["client"])] == ["missing-argument"]


COMB = """
    from vllm.multimodal.processing import EncDecMultiModalProcessor


    class PassThroughProcessor(EncDecMultiModalProcessor):
        def apply(self, prompt, mm_data, hf_processor_mm_kwargs, tokenization_kwargs=None, mm_uuids=None):
            return {"prompt_token_ids": prompt}

        def _call_hf_processor(self, prompt, mm_data, mm_kwargs, tok_kwargs):
            return mm_data
"""


def _dc109(tmp_path, text: str):
    root = tmp_path / "client" / "plug"
    root.mkdir(parents=True)
    (root / "processor.py").write_text(textwrap.dedent(text))
    result = scan(resolve_vllm("0.33.0", CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC109"], client_vllm="0.12.0"))
    assert not result.internal_errors
    return sorted({(f.severity, f.client.line, f.details["problem"]) for f in result.findings if f.rule == "DC109"})


def test_sc1_on_real_releases_only_the_apply_calls_are_errors(tmp_path):
    assert _dc109(tmp_path, COMB) == [("error", 6, "missing-argument"), ("error", 6, "unknown-keyword")]


def test_sc1_twin_on_real_releases_without_the_apply_override_the_hf_call_is_an_error(tmp_path):
    text = COMB.replace("""        def apply(self, prompt, mm_data, hf_processor_mm_kwargs, tokenization_kwargs=None, mm_uuids=None):
            return {"prompt_token_ids": prompt}

""", "")
    assert _dc109(tmp_path, text) == [("error", 6, "missing-argument")]


ENVIRONMENT = """\
name: comb
channels:
  - defaults
dependencies:
  - python=3.10
  - vllm=0.11.0  # conda's match syntax, not a pip requirement
  - pip:
      - addict==2.4.0
      - vllm==0.12.0  # the engine
      - --extra-index-url https://download.pytorch.org/whl/cu128
      - "xformers==0.0.31"
prefix: /opt/conda/envs/comb
"""


def test_conda_environment_pip_list_declares_the_vllm(tmp_path):
    (tmp_path / "environment.yml").write_text(ENVIRONMENT)
    assert project_requires(tmp_path) == (["addict==2.4.0", "vllm==0.12.0", "xformers==0.0.31"], None, None)


def test_conda_environment_read_only_when_requirements_name_no_vllm(tmp_path):
    (tmp_path / "environment.yml").write_text(ENVIRONMENT)
    (tmp_path / "requirements.txt").write_text("vllm==0.16.0\n")
    assert project_requires(tmp_path) == (["vllm==0.16.0"], None, None)
    (tmp_path / "requirements.txt").write_text("torch\n")
    assert project_requires(tmp_path)[0] == ["torch", "addict==2.4.0", "vllm==0.12.0", "xformers==0.0.31"]


def test_conda_environment_twin_conda_entries_and_different_pins_declare_none(tmp_path):
    (tmp_path / "environment.yml").write_text("dependencies:\n  - python=3.10\n  - vllm=0.12.0\n  - pip\n")
    assert project_requires(tmp_path) == ([], None, None)
    (tmp_path / "environment.yml").write_text(ENVIRONMENT)
    (tmp_path / "environment-cu118.yaml").write_text("dependencies:\n  - pip:\n    - vllm==0.10.2\n")
    assert project_requires(tmp_path)[0] == ["addict==2.4.0", "xformers==0.0.31"]


def test_conda_environment_gives_a_folder_client_its_vllm(tmp_path):
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "__init__.py").write_text("import vllm\n")
    (tmp_path / "environment.yml").write_text(ENVIRONMENT)
    client = resolve_client(str(tmp_path / "plug"), tmp_path / "cache")
    assert [r for r in client.requires if "vllm" in r] == ["vllm==0.12.0"]


def test_requirements_folder_declares_the_vllm_when_top_level_files_do_not(tmp_path):
    """AngelSlim (batch 30b) keeps `vllm` only in requirements/requirements_benchmark.txt."""
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "requirements_benchmark.txt").write_text("# bench\nvllm==0.10.1\nlm-eval\n")
    (tmp_path / "requirements" / "notes.md").write_text("vllm==0.1.0\n")
    assert project_requires(tmp_path) == (["vllm==0.10.1", "lm-eval"], None, None)
    (tmp_path / "requirements.txt").write_text("torch\n")
    assert project_requires(tmp_path)[0] == ["torch", "vllm==0.10.1", "lm-eval"]
    # a top-level pin wins; the folder is not read
    (tmp_path / "requirements.txt").write_text("vllm==0.16.0\n")
    assert project_requires(tmp_path)[0] == ["vllm==0.16.0"]
    # two different pins in the folder declare none
    (tmp_path / "requirements.txt").write_text("torch\n")
    (tmp_path / "requirements" / "requirements_serve.txt").write_text("vllm==0.12.0\n")
    assert project_requires(tmp_path)[0] == ["torch", "lm-eval"]
