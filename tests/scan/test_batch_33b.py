"""Batch 33b (out-of-tree models and spec-decode heads, DC117 at newer releases,
docs/triage/2026-12-05-model-overrides-33b.md).

No false error was found, so no fix and no new plugin shape. These tests pin the real DC117 case the batch read, as
fake trees: the index-tts-vLLM LEON fork (928886540/index-tts-vLLM 3e97f0d, vLLM 0.10.2) overrides
`SupportsMultiModal.get_multimodal_embeddings` in its `GPT2TTSModel`.
- 0.11.0's runner calls the method.
- 0.12.0 renamed the hook `embed_multimodal` but kept a shim:
  `if hasattr(self, "get_multimodal_embeddings"): return self.get_multimodal_embeddings(**kwargs)`.
  No DC117 there, rightly.
- 0.13.0 dropped the shim, and the name occurs nowhere in vLLM. The override never runs, so DC117 warns, and a
  member read in its body that the target lacks is a warning too, not an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees, vllm_tree, write_tree

BASELINE = {
    "vllm/interfaces.py": """\
        class SupportsMultiModal:
            def get_multimodal_embeddings(self, **kwargs):
                ...
        """,
    "vllm/runner.py": """\
        from vllm.interfaces import SupportsMultiModal


        class Runner:
            def __init__(self, model: SupportsMultiModal):
                self.model = model

            def encode(self, **kwargs):
                return self.model.get_multimodal_embeddings(**kwargs)
        """,
}

SHIM = """\
        class SupportsMultiModal:
            def embed_multimodal(self, **kwargs):
                if hasattr(self, "get_multimodal_embeddings"):
                    return self.get_multimodal_embeddings(**kwargs)
        """

NO_SHIM = """\
        class SupportsMultiModal:
            def embed_multimodal(self, **kwargs):
                ...
        """

RUNNER = """\
        from vllm.interfaces import SupportsMultiModal


        class Runner:
            def __init__(self, model: SupportsMultiModal):
                self.model = model

            def encode(self, **kwargs):
                return self.model.embed_multimodal(**kwargs)
        """

CLIENT = {
    "tts/__init__.py": "",
    "tts/model.py": """\
        from vllm.interfaces import SupportsMultiModal


        class TTSModel(SupportsMultiModal):
            def __init__(self):
                self.scale = 2

            def get_multimodal_embeddings(self, **kwargs):
                self.audio_tower_dtype = self.embed_multimodal_dtype
                return [self.scale * v for v in kwargs.values()]
        """,
}


def _scan(tmp_path, interfaces: str):
    base = vllm_tree(tmp_path / "baseline", BASELINE)
    write_tree(base, {"vllm/_version.py": '__version__ = "0.98.0"\n'})
    target = {"vllm/interfaces.py": interfaces, "vllm/runner.py": RUNNER}
    result = scan_trees(tmp_path, target, CLIENT, only=["DC006", "DC117"], client_vllm=str(base))
    assert result.internal_errors == []
    return [(f.rule, f.severity, f.client.line) for f in result.findings], result


def test_dc117_index_tts_override_of_a_hook_renamed_without_a_shim(tmp_path):
    found, result = _scan(tmp_path, NO_SHIM)
    assert found == [("DC117", "warning", 8), ("DC006", "warning", 9)]
    dc117 = next(f for f in result.findings if f.rule == "DC117")
    assert ("`TTSModel.get_multimodal_embeddings` overrides `SupportsMultiModal.get_multimodal_embeddings`, "
            "a method of vLLM 0.98.0") in dc117.message


def test_dc117_index_tts_twin_the_release_with_the_hasattr_shim_still_calls_it(tmp_path):
    # 0.12.0: `embed_multimodal` calls the old name when the model has it; the override runs, and the member the
    # target lacks in its body is an error again
    found, _ = _scan(tmp_path, SHIM)
    assert found == [("DC006", "error", 9)]
