"""Root causes of false errors from batch 16b (PyPI clients at the vLLM each declares,
docs/triage/2026-12-04-unseen-plugins-16b.md): the shape that runs (no error), and the same shape where the code
really reaches vLLM, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- IA
# xinference 4.1.0 (`vllm>=0.2.6` extra, files 2026-10-25, scanned at 0.32.0): model/llm/trt_llm/core.py, the
# TensorRT-LLM backend, sets `config["speculative_config"] = {"decoding_type": "DraftTarget", "speculative_model":
# draft, "max_draft_len": ...}` and hands `config` to TensorRT-LLM's `LLM`; the file never names vLLM. DC111 read the
# dict as vLLM's SpeculativeConfig (3 errors).
VLLM = {
    "vllm/__init__.py": "__version__ = '0.99.0'\n",
    "vllm/config/__init__.py": "from vllm.config.speculative import SpeculativeConfig\n",
    "vllm/config/speculative.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass SpeculativeConfig:\n"
                                  "    num_speculative_tokens: int | None = None\n    method: str | None = None\n",
}
BACKEND = '''{head}
from pkg.engine import Engine


def launch(model, config, draft=None):
    if draft:
        config["speculative_config"] = {{"decoding_type": "DraftTarget", "speculative_model": draft, "max_draft_len": 3}}
    return Engine(model, **config)
'''


def _client(head: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/engine.py": "class Engine:\n    def __init__(self, model, **kw):\n        pass\n",
            "pkg/backend.py": BACKEND.format(head=head), "main.py": "import vllm\nfrom pkg.backend import launch\n"}


def test_ia_a_config_dict_in_a_file_that_never_names_vllm_is_not_vllms(tmp_path):
    result = scan_trees(tmp_path, VLLM, _client("# the TensorRT-LLM backend"))
    assert [f for f in result.findings if f.rule == "DC111"] == []


def test_ia_the_same_dict_in_a_file_that_names_vllm_stays_an_error(tmp_path):
    # the file hands the dict to vLLM (`LLM(..., speculative_config=...)` elsewhere): each unknown key is refused
    result = scan_trees(tmp_path, VLLM, _client("# the vLLM backend"))
    found = [f for f in result.findings if f.rule == "DC111"]
    assert len(found) == 3 and {f.severity for f in found} == {"error"}


def test_ia_an_import_of_vllm_also_names_it(tmp_path):
    result = scan_trees(tmp_path, VLLM, _client("import vllm  # noqa: F401"))
    assert {f.severity for f in result.findings if f.rule == "DC111"} == {"error"}

