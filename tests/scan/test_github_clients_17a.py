"""Root causes of false errors from batch 17a (real vLLM clients taken from GitHub,
docs/triage/2026-12-04-github-clients-17a.md): the shape that runs (no error), and the same shape where the code
really fails on the target, which must stay an error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scan.helpers import line_of, scan_trees

SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes"


def _tree(case: str, part: str) -> dict[str, str]:
    root = SHAPES / case / part
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}


def _findings(result, rule: str) -> list[tuple[str, int, str]]:
    return sorted((f.client.path, f.client.line, f.severity) for f in result.findings if f.rule == rule)


# ----------------------------------------------------------------------------------------- KA
# llumnix (AlibabaPAI/llumnix @ 39def8d, requirements/requirements_vllm.txt `vllm == 0.6.3.post1`):
# llumnix/backends/vllm/scheduler.py:181 `seq_group.reset_status()` on a parameter typed as vLLM's SequenceGroup;
# the objects are SequenceGroupLlumnix(SequenceGroup, LlumnixRequest) (backends/vllm/sequence.py:19), whose mixin
# LlumnixRequest (llumlet/request.py:53, a file that imports no vLLM) defines reset_status (:91). A subclass's members
# were taken from its own body and the client ancestors of files that import vLLM only.
KA = "KA_subclass_member_from_a_mixin_in_a_file_without_vllm"


def test_ka_a_mixin_in_a_file_without_vllm_lends_its_members_to_the_subclass(tmp_path):
    client = _tree(KA, "client")
    result = scan_trees(tmp_path, _tree(KA, "vllm_src"), client)
    line = line_of(client["pkg/scheduler.py"], "seq_group.reset_status()")
    assert _findings(result, "DC006") == [("pkg/scheduler.py", line, "warning")]


def test_ka_a_member_no_ancestor_defines_is_still_an_error(tmp_path):
    # the mixin defines `reset_state`, not `reset_status`: no class of the hierarchy has the member
    client = _tree(KA, "client")
    client["pkg/request.py"] = client["pkg/request.py"].replace("def reset_status", "def reset_state")
    result = scan_trees(tmp_path, _tree(KA, "vllm_src"), client)
    line = line_of(client["pkg/scheduler.py"], "seq_group.reset_status()")
    assert _findings(result, "DC006") == [("pkg/scheduler.py", line, "error")]


# ----------------------------------------------------------------------------------------- KB
# llumnix (AlibabaPAI/llumnix @ 39def8d, `vllm == 0.6.3.post1`): BackendVLLM.__init__ binds
# `self.engine: LLMEngineLlumnix = LLMEngineLlumnix.from_engine_args(...)` and stores
# `self.engine._output_proc_done_event_queue = ...` (llumnix/backends/vllm/llm_engine.py:344, :385); the engine's
# own `_process_model_outputs` reads `self._output_proc_done_event_queue` (:207-208). A store through `self.x` counted
# for the class only when `self.x` was bound from an annotated parameter, not when the binding carried the annotation.
KB = "KB_store_through_an_attribute_annotated_at_its_binding"


def test_kb_a_store_through_an_attribute_annotated_at_its_binding_is_the_class_own(tmp_path):
    assert _findings(scan_trees(tmp_path, _tree(KB, "vllm_src"), _tree(KB, "client")), "DC006") == []


def test_kb_a_store_on_an_attribute_bound_to_another_class_still_fails(tmp_path):
    # `self.engine: Other = Other()`: the queue goes onto another object; the engine's read fails
    client = _tree(KB, "client")
    text = client["pkg/llm_engine.py"]
    text = text.replace("class BackendVLLM:", "class Other:\n    pass\n\n\nclass BackendVLLM:")
    text = text.replace("self.engine: LLMEngineLlumnix = LLMEngineLlumnix.from_engine_args()",
                        "self.engine: Other = Other()")
    client["pkg/llm_engine.py"] = text
    lines = [line_of(text, "while self._output_proc_done_event_queue"), line_of(text, "self._output_proc_done_event_queue.get()")]
    assert _findings(scan_trees(tmp_path, _tree(KB, "vllm_src"), client), "DC006") == \
        [("pkg/llm_engine.py", n, "error") for n in lines]


def test_kb_an_annotation_the_constructed_class_contradicts_does_not_count(tmp_path):
    # `self.engine: LLMEngineLlumnix = Other()` holds an Other, whatever the annotation says
    client = _tree(KB, "client")
    text = client["pkg/llm_engine.py"]
    text = text.replace("class BackendVLLM:", "class Other:\n    pass\n\n\nclass BackendVLLM:")
    text = text.replace("LLMEngineLlumnix.from_engine_args()\n", "Other()\n")
    client["pkg/llm_engine.py"] = text
    assert [s for _p, _n, s in _findings(scan_trees(tmp_path, _tree(KB, "vllm_src"), client), "DC006")] == ["error"] * 2


# ----------------------------------------------------------------------------------------- KC
# kvcached (ovg-project/kvcached @ v0.1.2, v0.1.4, v0.1.5; docker/Dockerfile.vllm `FROM vllm/vllm-openai:v0.11.0`,
# v0.16.0, v0.19.0): kvcached/integration/vllm/patches.py `@version_range(VLLM_V8_RANGE) def
# patch_initialize_kv_cache` (VLLM_V8_RANGE = ">=0.8.4,<0.9.0", :80) imports `bind_kv_cache` from `vllm.v1.utils`, where
# vLLM 0.8 had it (:474 / :498 / :793); VersionAwarePatch.apply (version_utils.py:160-171, patches.py:688-708) calls
# only the methods whose range holds the detected vLLM. A decorator given a version specifier was no version check.
KC = "KC_method_decorated_with_a_version_range_it_runs_only_in"


def test_kc_a_method_decorated_with_a_version_range_is_under_a_version_check(tmp_path):
    client = _tree(KC, "client")
    line = line_of(client["pkg/patches.py"], "from vllm.v1.utils import bind_kv_cache")
    result = scan_trees(tmp_path, _tree(KC, "vllm_src"), client)
    assert _findings(result, "DC002") == [("pkg/patches.py", line, "warning")]


def test_kc_the_specifier_written_out_guards_too(tmp_path):
    client = _tree(KC, "client")
    client["pkg/patches.py"] = client["pkg/patches.py"].replace("@version_range(VLLM_V8_RANGE)", '@version_range("<0.9.0")')
    assert [s for *_, s in _findings(scan_trees(tmp_path, _tree(KC, "vllm_src"), client), "DC002")] == ["warning"]


@pytest.mark.parametrize("decorator", [
    '    @version_range("kv-cache")\n',  # a decorator given no release range
    "",  # the method undecorated
], ids=["no-range", "undecorated"])
def test_kc_without_a_version_range_the_import_still_fails(tmp_path, decorator):
    client = _tree(KC, "client")
    text = client["pkg/patches.py"].replace("    @version_range(VLLM_V8_RANGE)\n", decorator)
    client["pkg/patches.py"] = text
    line = line_of(text, "from vllm.v1.utils import bind_kv_cache")
    assert _findings(scan_trees(tmp_path, _tree(KC, "vllm_src"), client), "DC002") == [("pkg/patches.py", line, "error")]


# ----------------------------------------------------------------------------------------- KD
# LMCache-Ascend (LMCache/LMCache-Ascend @ v0.4.3, CI image vllm-ascend v0.18.0rc1, vLLM 0.18.0):
# lmcache_ascend/integration/vllm/vllm_v1_adapter.py:181 `_may_register_store_after_wait_for_save(self, request:
# "Request")` (vLLM's Request, imported under TYPE_CHECKING) reads request.save_spec and request.token_ids; its only
# caller (:216-221) passes the elements of `connector_metadata.requests` after `assert isinstance(connector_metadata,
# LMCacheConnectorMetadata)`, LMCache's own class (`requests: list[ReqMeta]`; ReqMeta has both). A loop variable over a
# container of a third party's object was no evidence against the annotation.
KD = "KD_annotation_of_an_element_of_a_third_party_container"


def test_kd_an_element_of_a_third_party_container_doubts_the_annotation(tmp_path):
    result = scan_trees(tmp_path, _tree(KD, "vllm_src"), _tree(KD, "client"))
    assert [s for *_, s in _findings(result, "DC006")] == ["warning", "warning"]
    assert all("passes an element of `CacheConnectorMetadata.requests`" in f.message for f in result.findings)


@pytest.mark.parametrize("narrowing", [
    ("from extcache import CacheConnectorMetadata", "from vllm.kv_connector.base import KVConnectorMetadata",
     "isinstance(connector_metadata, CacheConnectorMetadata)", "isinstance(connector_metadata, KVConnectorMetadata)"),
    ("        assert isinstance(connector_metadata, CacheConnectorMetadata)\n", "", "", ""),
], ids=["narrowed-to-a-vllm-class", "not-narrowed"])
def test_kd_without_a_third_party_container_the_annotation_holds(tmp_path, narrowing):
    # narrowed to vLLM's own class, or not narrowed at all: nothing says the elements are not vLLM Requests
    client = _tree(KD, "client")
    text = client["pkg/adapter.py"]
    for old, new in zip(narrowing[::2], narrowing[1::2]):
        text = text.replace(old, new) if old else text
    client["pkg/adapter.py"] = text
    assert [s for *_, s in _findings(scan_trees(tmp_path, _tree(KD, "vllm_src"), client), "DC006")] == ["error", "error"]


def test_kd_a_class_of_the_client_itself_is_no_third_party(tmp_path):
    # the client's own metadata class (in a file without vLLM): its containers are the client's, read as before
    client = _tree(KD, "client")
    client["pkg/meta.py"] = "class OwnMetadata:\n    def __init__(self):\n        self.requests = []\n"
    text = client["pkg/adapter.py"].replace("from extcache import CacheConnectorMetadata", "from pkg.meta import OwnMetadata")
    client["pkg/adapter.py"] = text.replace("isinstance(connector_metadata, CacheConnectorMetadata)",
                                            "isinstance(connector_metadata, OwnMetadata)")
    assert [s for *_, s in _findings(scan_trees(tmp_path, _tree(KD, "vllm_src"), client), "DC006")] == ["error", "error"]


@pytest.mark.parametrize("given", ['">=0.8.4"', '">=0.8.4, <1.0"', 'VLLM_V9_PLUS_RANGE'])
def test_kc_a_range_that_holds_the_target_runs_there_so_the_import_is_an_error(tmp_path, given):
    """The dispatcher calls the method on every release its range holds: on the target, too, when the range holds it;
    then the failing import is not guarded (the fake vLLM is 0.11.0 or the helper's 0.99.0, above every range)."""
    client = _tree(KC, "client")
    text = client["pkg/patches.py"].replace("@version_range(VLLM_V8_RANGE)", f"@version_range({given})")
    client["pkg/patches.py"] = text
    line = line_of(text, "from vllm.v1.utils import bind_kv_cache")
    assert _findings(scan_trees(tmp_path, _tree(KC, "vllm_src"), client), "DC002") == [("pkg/patches.py", line, "error")]
