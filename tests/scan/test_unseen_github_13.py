"""Causes found in batch 13 (unseen GitHub clients, docs/triage/2026-12-06-unseen-github-13.md): the shape that runs
(unknown, no error) and its twin where the code really fails (still an error). The runnable case is
tests/fixtures/plugin_shapes/MA1_module_a_shipped_source_patch_creates."""

from __future__ import annotations

from scan.helpers import scan_trees

# ----------------------------------------------------------------------------------------- MA1
# vLLM-Moet ships `patch/vllm-moet-v0.24.0.patch`, a `git diff` of its vLLM fork against the v0.24.0 tag that its
# Dockerfile applies with `git apply`: it changes vLLM files, creates modules under vllm/, and creates tests, tools and
# CUDA sources outside the package, which a wheel does not ship. Its tools import the modules the diff creates.
_VLLM = {
    "vllm/__init__.py": "",
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/utils/__init__.py": '"""helpers"""\n',
    "vllm/model_executor/utils/fp8_utils.py": "def block_size():\n    return 128\n",
}


def _created(path: str, body: str) -> str:
    lines = body.splitlines()
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))


_DELTA = _created("vllm/model_executor/utils/moe_w2_delta.py", "class DeltaTier:\n    def promote(self):\n        return 1")
_OUTSIDE = _created("tools/test_delta.py", "import vllm") + _created("csrc/delta.cu", "__global__ void d() {}")
_CLIENT = {
    "tools/__init__.py": "",
    "tools/tiers.py": """
        from vllm.model_executor.utils import moe_w2_delta
        from vllm.model_executor.utils.moe_w2_delta import DeltaTier


        def tier():
            return DeltaTier(), moe_w2_delta
    """,
}


def _found(result) -> list[tuple[str, str, int]]:
    out = [(f.severity, f.rule, f.client.line) for f in result.findings if f.rule in ("DC001", "DC002")]
    return sorted(out + [("unknown", u.rule, u.client.line) for u in result.unknown if u.rule in ("DC001", "DC002")])


def test_ma1_a_module_the_clients_diff_creates_is_unknown(tmp_path):
    result = scan_trees(tmp_path, _VLLM, {**_CLIENT, "patch/moet.patch": _DELTA + _OUTSIDE}, only=["DC001", "DC002"])
    assert _found(result) == [("unknown", "DC001", 2), ("unknown", "DC002", 1)]
    assert all("patch/moet.patch" in u.message and "creates it" in u.message for u in result.unknown)


def test_ma1_twins_no_diff_or_a_diff_that_cannot_apply_stays_an_error(tmp_path):
    errors = [("error", "DC001", 2), ("error", "DC002", 1)]
    assert _found(scan_trees(tmp_path / "none", _VLLM, _CLIENT, only=["DC001", "DC002"])) == errors
    # the release has the file already: `git apply` refuses to create it, so nothing of that diff is there
    exists = {**_VLLM, "vllm/model_executor/utils/moe_w2_delta.py": "X = 1\n"}
    clashing = _created("vllm/model_executor/utils/fp8_utils.py", "def other():\n    pass") + _DELTA
    found = _found(scan_trees(tmp_path / "exists", exists | {"vllm/model_executor/utils/moe_w2_delta.py": ""},
                              {**_CLIENT, "patch/moet.patch": clashing}, only=["DC001", "DC002"]))
    assert ("unknown", "DC001", 2) not in found and ("unknown", "DC002", 1) not in found
    # a diff that changes a vLLM file the release lacks applies nowhere, whatever else it holds
    gone = _DELTA + ("diff --git a/vllm/gone.py b/vllm/gone.py\n--- a/vllm/gone.py\n+++ b/vllm/gone.py\n"
                     "@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n")
    assert _found(scan_trees(tmp_path / "gone", _VLLM, {**_CLIENT, "patch/moet.patch": gone},
                             only=["DC001", "DC002"])) == errors


def test_ma1_a_name_the_diff_adds_to_a_file_beside_files_outside_the_package(tmp_path):
    # the diff also creates tests/ and csrc/ files (not in a wheel): its change to fp8_utils.py still counts
    changed = ("diff --git a/vllm/model_executor/utils/fp8_utils.py b/vllm/model_executor/utils/fp8_utils.py\n"
               "--- a/vllm/model_executor/utils/fp8_utils.py\n+++ b/vllm/model_executor/utils/fp8_utils.py\n"
               "@@ -1,2 +1,5 @@\n def block_size():\n     return 128\n+\n+def delta_block_size():\n+    return 64\n")
    client = {"tools/__init__.py": "", "tools/sizes.py": "from vllm.model_executor.utils.fp8_utils import delta_block_size\n"}
    result = scan_trees(tmp_path, _VLLM, {**client, "patch/moet.patch": _OUTSIDE + changed}, only=["DC002"])
    assert [(u.rule, u.client.line) for u in result.unknown] == [("DC002", 1)] and result.findings == []


# ----------------------------------------------------------------------------------------- MA2
# vLLM-Moet's tools/test_three_tier_stress.py: `moe_w2_delta.DeltaTier.force_promote = _fp_traced` through the module
# the file imports from vLLM. Where the module is gone the import fails first (DC002); DC008 asked whether vLLM still
# has the names `_fp_traced` reads on `self` and said unknown for want of a baseline: a question no answer changes.
_PATCHING = {
    "pkg/__init__.py": "",
    "pkg/stress.py": """
        from vllm.model_executor.utils import moe_w2_delta


        def _traced(self, x):
            self._n_promoted += 1
            return self.old(x)


        def main():
            moe_w2_delta.DeltaTier.force_promote = _traced
    """,
}


def test_ma2_a_function_stored_on_a_class_through_a_vllm_module_has_a_typed_self(tmp_path):
    result = scan_trees(tmp_path, _VLLM, _PATCHING, only=["DC002", "DC008"])
    assert [(f.rule, f.severity) for f in result.findings] == [("DC002", "error")]
    assert [u.rule for u in result.unknown] == []


def test_ma2_twin_an_object_of_no_vllm_module_stays_a_question(tmp_path):
    # the same store through an object of the client's own: `self` is a vLLM object driftcheck cannot type
    own = {**_PATCHING, "pkg/stress.py": _PATCHING["pkg/stress.py"].replace(
        "from vllm.model_executor.utils import moe_w2_delta",
        "import vllm\n        from pkg import registry as moe_w2_delta")}
    own["pkg/registry.py"] = "DeltaTier = None\n"
    result = scan_trees(tmp_path, _VLLM, own, only=["DC008"])
    assert [u.rule for u in result.unknown] == ["DC008"]
