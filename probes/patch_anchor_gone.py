"""DC120 patch-anchor-gone: a client's patch script looks for text in a vLLM file that the target's file lacks, and raises.

Clients that patch vLLM where it is installed often do it with a Python script their image build or setup runs: read
`.../vllm/platforms/cuda.py`, check that the line to replace is there (`if old not in source: raise RuntimeError(...)`),
replace it and write the file back. On a release whose file changed, the check fails and the script raises, so the
build or the setup stops there (DS4_SM120_Flash_VLLM_Experiment's `docker/patch_vllm_deepseekv4.py` on vLLM 0.33.0:
`platforms/cuda.py` has neither the anchor nor the patched line; batch 19a). No other rule sees it: the script imports
no vLLM, and the text it looks for is no name.

How driftcheck decides (`client_model/patch_anchors.py`): per function the script runs from its top level, a path that
spells a file of the release, its `read_text()`, and `if` tests made only of `LIT in SRC` / `LIT not in SRC` (`and`,
`or`, `not`), each decided on the target's text; the finding is a `raise` reached with nothing undecided on the way
(an early `return` when the patched text is already there counts: DS4_SM120's `if "...(120)" in source: return`).
Anything else stops the reading of that function, so no finding is a guess.

No fix: the script's anchors are the client's to update for the new file (the finding names the file and the test).
"""

from __future__ import annotations

from driftcheck.client_model.patch_anchors import anchor_raises
from driftcheck.client_model.uses import Loc
from driftcheck.errors import SourceError
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule

RULE = Rule("DC120", "patch-anchor-gone", "A client's patch script looks for text the target's vLLM file lacks, and raises",
            "error", whole_client=True, kind="behaviour", raises=("RuntimeError", "AssertionError", "ValueError"))


def check(ctx: ScanContext):
    def read(path: str) -> str | None:
        if not ctx.api.tree.is_file(path):
            return None
        try:
            return ctx.api.tree.read_text(path)
        except SourceError:
            return None

    for found in anchor_raises(ctx.client, ctx.api.package, read):
        shown = ", ".join(f"`{a.strip()[:60]}`" for a in found.anchors[:2]) or "its anchor"
        yield ctx.finding(
            RULE, f"the patch script looks for {shown} in {found.vllm_path} (the test at line {found.test_line}), which "
                  f"{ctx.version_label()}'s file does not let through: the script raises here, and the build or setup "
                  "step that runs it stops",
            Loc(found.rel, found.line, 1, found.code), ctx.vllm_location(found.vllm_path, 1), found.vllm_path,
            when="call", fix=False, test_line=found.test_line)
