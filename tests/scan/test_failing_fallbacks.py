"""An `except ImportError` fallback is a guard only while its try body may work: when the body certainly fails on the
target, the fallback runs, and what fails in it fails for certain (triage batch 8: vllm-spyre 1.8.0's
`try: from vllm.utils import init_cached_hf_modules / except ImportError: from vllm.utils.import_utils import
init_cached_hf_modules`, where vLLM 0.15.1 has the function in neither module, was a warning)."""

from __future__ import annotations

from scan.helpers import scan_trees

CLIENT = {"pkg/__init__.py": "", "pkg/worker.py": """
    def load():
        try:
            from vllm.utils import init_cached_hf_modules
        except ImportError:
            from vllm.utils.import_utils import init_cached_hf_modules
        init_cached_hf_modules()


    def load_module():
        try:
            import vllm.old_place as where
        except ImportError:
            import vllm.new_place as where
        return where
"""}


def _vllm(in_utils: bool, in_import_utils: bool, new_place: bool) -> dict[str, str]:
    fn = "def init_cached_hf_modules():\n    pass\n"
    files = {"vllm/utils/__init__.py": fn if in_utils else "X = 1\n",
             "vllm/utils/import_utils.py": fn if in_import_utils else "Y = 1\n"}
    if new_place:
        files["vllm/new_place.py"] = "Z = 1\n"
    return files


def _found(result) -> list[tuple[int, str]]:
    return sorted((f.client.line, f.severity) for f in result.findings if f.rule in ("DC001", "DC002"))


def test_a_fallback_whose_try_body_fails_is_checked_as_code_that_runs(tmp_path):
    result = scan_trees(tmp_path, _vllm(False, False, False), CLIENT)
    assert _found(result) == [(3, "warning"), (5, "error"), (11, "warning"), (13, "error")]
    message = next(f.message for f in result.findings if f.client.line == 5)
    assert "whose body fails on this vLLM too (line 3), so the fallback runs" in message


def test_a_fallback_that_works_or_never_runs_stays_a_guard(tmp_path):
    # the fallback works: only the try body's failure, handled (a warning)
    assert _found(scan_trees(tmp_path / "a", _vllm(False, True, True), CLIENT)) == [(3, "warning"), (11, "warning")]
    # the try body works: the fallback never runs (nothing reported for it)
    assert _found(scan_trees(tmp_path / "b", _vllm(True, False, False), CLIENT)) == [(11, "warning"), (13, "error")]
