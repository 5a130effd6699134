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
