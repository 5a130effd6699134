"""Batch 29c (research prototypes built on vLLM internals, at their stored GitHub HEAD,
docs/triage/2026-12-05-research-prototypes-29c.md).

QC1: TriAttention (WeianMao/triattention c3744ee) replaces the scheduler's step: `class TriAttentionScheduler(Scheduler)`
with `def schedule(self)` (triattention/vllm/runtime/scheduler.py:290) and `Scheduler.schedule =
_patched_scheduler_schedule`, `def _patched_scheduler_schedule(self)` (integration_monkeypatch.py:136). From vLLM 0.24.0
`EngineCore.step` calls `self.scheduler.schedule(self._should_throttle_prefills())` (core.py:490), one positional
argument those defs reject. DC109 reported it as a warning "vLLM checks the signature or catches TypeError around it",
which `step` does not: for positional overflow the check for a keyword named as a string looked for `""`, and every
docstring `ast.unparse` writes holds `\"\"\"`. A keyword with no name is no longer looked for. The shape: the override
that vLLM reaches only through a caller that reads its signature (and has a docstring) runs and stays a warning. The
twins: the same caller without the signature check is a warning for the other reason (no vLLM of the client's own),
and on real releases, with the client's own vLLM 0.19.0 (which called `schedule()`), 0.24.0's call is an error.

QC2: with that fixed and TriAttention's vLLM (0.19.0) to compare with, its `TriAttentionScheduler.schedule(self)` became
a DC109 error at 0.24.0, yet no `TriAttentionScheduler` is ever built: the client only copies its helpers onto vLLM's
`Scheduler` (`Scheduler._resolve_prefill_len = TriAttentionScheduler._resolve_prefill_len`, integration_monkeypatch.py:434)
and replaces `Scheduler.schedule` with a function of its own (reported on its own). An override in a class that another
client file uses as a source of methods for vLLM classes, and that the client never builds, is now a warning that says
so (DC114 already passed over such classes; the two tests share `grafted_class` and `built_by_the_client`). The twins,
on real releases: the same class built by the client, and a subclass whose methods are not copied, stay errors.
"""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR, vllm_sources  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import edited, plugin_shape, scan_trees

QC1_VLLM, QC1_CLIENT = plugin_shape("QC1")
CORE = "vllm/engine/core.py"
GUARD = ('        if "throttle_prefills" in signature(self.scheduler.schedule).parameters:\n'
         '            return self.scheduler.schedule(self._should_throttle_prefills())\n'
         '        return self.scheduler.schedule()\n')
UNGUARDED = '        return self.scheduler.schedule(self._should_throttle_prefills())\n'


def _qc1(tmp_path, vllm_files=QC1_VLLM):
    found = scan_trees(tmp_path, vllm_files, QC1_CLIENT, only=["DC109"]).findings
    return [(f.severity, f.client.path, f.client.line, f.message) for f in found]


def test_qc1_override_reached_through_a_signature_check_is_a_warning_that_says_so(tmp_path):
    [(severity, path, line, message)] = _qc1(tmp_path)
    assert (severity, path, line) == ("warning", "plug/scheduler.py", 5)
    assert "vLLM checks the signature" in message


def test_qc1_twin_a_docstring_is_no_signature_check(tmp_path):
    [(severity, path, line, message)] = _qc1(tmp_path, edited(QC1_VLLM, CORE, (GUARD, UNGUARDED)))
    assert (severity, path, line) == ("warning", "plug/scheduler.py", 5)
    assert "vLLM checks the signature" not in message and "no vLLM of the client's own" in message


SCHEDULER = """
    from vllm.v1.core.sched.scheduler import Scheduler


    class CompressingScheduler(Scheduler):
        def schedule(self):
            return super().schedule()


    def patched_schedule(self):
        return None


    Scheduler.schedule = patched_schedule
"""


def _dc109(tmp_path, text: str, version: str = "0.24.0", client_vllm: str = "0.19.0"):
    root = tmp_path / "client" / "plug"
    root.mkdir(parents=True)
    (root / "sched.py").write_text(textwrap.dedent(text))
    result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC109"], client_vllm=client_vllm))
    assert not result.internal_errors
    return sorted((f.severity, f.client.line, f.vllm.path, f.details["problem"]) for f in result.findings if f.rule == "DC109")


def test_qc1_twin_new_positional_argument_on_real_releases_is_an_error(tmp_path):
    found = _dc109(tmp_path, SCHEDULER)
    assert {(line, path, problem) for _, line, path, problem in found} == {
        (6, "vllm/v1/engine/core.py", "too-many-positional"), (10, "vllm/v1/engine/core.py", "too-many-positional")}
    assert {severity for severity, *_ in found} == {"error"}


def test_qc1_twin_a_def_that_takes_the_argument_is_quiet(tmp_path):
    text = SCHEDULER.replace("def schedule(self):", "def schedule(self, throttle_prefills=False):").replace(
        "def patched_schedule(self):", "def patched_schedule(self, *args):")
    assert _dc109(tmp_path, text) == []


QC2_VLLM, QC2_CLIENT = plugin_shape("QC2")

GRAFTED = {
    "plug/__init__.py": "",
    "plug/sched.py": textwrap.dedent("""
        from vllm.v1.core.sched.scheduler import Scheduler


        class CompressingScheduler(Scheduler):
            def schedule(self):
                return super().schedule()

            def _compressed(self, batch):
                return batch
    """),
    "plug/patch.py": textwrap.dedent("""
        from vllm.v1.core.sched.scheduler import Scheduler

        from .sched import CompressingScheduler


        def install():
            Scheduler._compressed = CompressingScheduler._compressed
    """),
}


def _dc109_files(tmp_path, files: dict[str, str]):
    root = tmp_path / "client"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    result = scan(resolve_vllm("0.24.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC109"], client_vllm="0.19.0"))
    assert not result.internal_errors
    return sorted((f.severity, f.client.path, f.client.line) for f in result.findings if f.rule == "DC109")


def test_qc2_shape_override_in_a_class_only_copied_from_is_no_error(tmp_path):
    found = scan_trees(tmp_path, QC2_VLLM, QC2_CLIENT, only=["DC109"]).findings
    assert [(f.severity, f.client.path) for f in found] == [("warning", "plug/scheduler.py")]


def test_qc2_override_in_a_class_only_copied_from_is_a_warning_on_real_releases(tmp_path):
    assert _dc109_files(tmp_path, GRAFTED) == [("warning", "plug/sched.py", 6)]


def test_qc2_twin_the_class_the_client_also_builds_stays_error(tmp_path):
    files = {**GRAFTED, "plug/patch.py": GRAFTED["plug/patch.py"] + "\n\nSCHEDULER = CompressingScheduler()\n"}
    assert _dc109_files(tmp_path, files) == [("error", "plug/sched.py", 6)]


def test_qc2_twin_a_subclass_nothing_copies_from_stays_error(tmp_path):
    files = {**GRAFTED, "plug/patch.py": GRAFTED["plug/patch.py"].replace(
        "Scheduler._compressed = CompressingScheduler._compressed", "Scheduler._compressed = lambda self, batch: batch")}
    assert _dc109_files(tmp_path, files) == [("error", "plug/sched.py", 6)]


ISINSTANCE_VLLM = {
    "vllm/__init__.py": "",
    "vllm/spec.py": "class ChunkedLocalAttention:\n    pass\n\n\nclass ChunkedLocalAttentionSpec:\n"
                    "    def __init__(self, block_size):\n        self.block_size = block_size\n",
}
ISINSTANCE_CLIENT = {"plug/__init__.py": "", "plug/runner.py": textwrap.dedent("""
    from vllm.spec import ChunkedLocalAttention, ChunkedLocalAttentionSpec


    def spec_for(attn_module, use_mla):
        if isinstance(attn_module, ChunkedLocalAttention):
            return ChunkedLocalAttentionSpec(block_size=16, use_mla=use_mla)
        return None
""")}


def test_an_isinstance_branch_is_not_said_to_handle_the_drift(tmp_path):
    """29c's open message: vllm_prefix_ind_rag's `ChunkedLocalAttentionSpec(..., use_mla=)` under `if
    isinstance(attn_module, ChunkedLocalAttention):` was a warning "so the client handles it"; the test only picks
    which objects reach the call. Still a warning (which objects reach it is not known), with a reason that says so."""
    found = [f for f in scan_trees(tmp_path, ISINSTANCE_VLLM, ISINSTANCE_CLIENT, only=["DC003"]).findings]
    [finding] = found
    assert (finding.severity, finding.client.path, finding.client.line) == ("warning", "plug/runner.py", 6)
    assert "under an isinstance check (line 5)" in finding.message
    assert "depends on the class of the object tested there" in finding.message
    assert "handles it" not in finding.message
