"""DC008 removed-name: a name used on an untyped vLLM object (a function bound with
types.MethodType) that the matching classes of the client's baseline vLLM had and the target lost."""

from __future__ import annotations

from scan.helpers import MINIVLLM, MINIVLLM_OLD, line_of, scan_client, vline

PATCH = """
    import types

    import vllm


    def _patched_forward(self, input_ids, positions):
        hidden = self.{embed}(input_ids)
        for layer in self.layers[self.start_layer:self.end_layer]:
            hidden = layer(hidden)
        return self.norm(hidden)


    def install(model):
        model.forward = types.MethodType(_patched_forward, model)
"""


def test_present_with_the_rename(tmp_path):
    client = {"w.py": PATCH.format(embed="get_input_embeddings")}
    result = scan_client(tmp_path, client, only=["DC008"], client_vllm=str(MINIVLLM_OLD))
    [f] = result.findings
    text = (tmp_path / "client/w.py").read_text()
    assert (f.client.line, f.severity, f.when) == (line_of(text, "self.get_input_embeddings("), "error", "call")
    assert f.details["renamed_to"] == "embed_input_ids" and f.fix == "rename-method"
    assert f.details["classes_total"] == 2
    # the vLLM side is the new method in the target; the baseline side the old one in 0.98.0
    rel = f.vllm.path
    assert rel.startswith("vllm/model_executor/models/")
    assert f.vllm.line == vline(rel, "def embed_input_ids")
    assert f.details["baseline"]["line"] == vline(rel, "def get_input_embeddings", root=MINIVLLM_OLD)
    assert f.details["baseline"]["version"] == "0.98.0"
    assert result.baselines == {"client": "0.98.0"}


def test_absent_when_the_names_still_exist(tmp_path):
    client = {"w.py": PATCH.format(embed="embed_input_ids")}
    result = scan_client(tmp_path, client, only=["DC008"], client_vllm=str(MINIVLLM_OLD))
    assert result.findings == [] and result.unknown == []


def test_absent_when_baseline_is_the_target(tmp_path):
    client = {"w.py": PATCH.format(embed="get_input_embeddings")}
    result = scan_client(tmp_path, client, only=["DC008"], client_vllm=str(MINIVLLM), vllm_root=MINIVLLM)
    assert result.findings == []


def test_unknown_without_a_baseline(tmp_path):
    # the client declares no vLLM requirement and none is given: say so, do not pass silently
    client = {"w.py": PATCH.format(embed="get_input_embeddings")}
    result = scan_client(tmp_path, client, only=["DC008"])
    assert result.findings == []
    [u] = result.unknown
    assert u.rule == "DC008" and "--client-vllm" in u.message and u.client.line == line_of(
        (tmp_path / "client/w.py").read_text(), "def _patched_forward")
