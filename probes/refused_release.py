"""DC112 refused-release: the client's own code refuses this vLLM when one of its packages is imported.

A package `__init__` that reads the installed vLLM's version and raises for the releases it does not support fails at
import on every other release, before any module under it runs: rlinf 0.3.0's rollout package (`if package_version is
None: raise ... elif package_version >= parse("0.8.5") and package_version < parse("0.9.0"): from .vllm_0_8_5 import
... else: raise ValueError(f"vllm version {package_version} not supported")`) on vLLM 0.32.0. That raise is the
failure a user meets first, so it is the finding; the drifts in the modules under the package never run on this vLLM
and are warnings at most, naming this raise (`client_model/refusals.py`, guard kind "refused").

How driftcheck decides: it evaluates the package's module-level `if` chain for the target's version. It decides
comparisons of a name bound to vLLM's version (`vllm.__version__`, `version("vllm")`, `get_version("vllm")`, parsed or
not) with a release (as versions when either side is parsed, as strings otherwise, character by character as Python
compares them), and `is None` / `is not None` (vLLM is installed). A chain with a test it cannot decide that may raise
is not judged, so there is no finding. A module-level `assert` of the `__init__` whose test is false for the release
refuses it the same way (`assert vllm.__version__ >= "0.4.2"`, a string comparison that "0.34.0" fails; 29g M2); one it
cannot decide is passed over. The finding is not guarded: it is the client's own version check failing.

No fix: the client says it does not support this vLLM. Run a release it accepts (`driftcheck range` finds the
tightest one the rest of the code fits), or port the package and widen its check.
"""

from __future__ import annotations

from driftcheck.client_model.refusals import refusals
from driftcheck.client_model.uses import Loc
from driftcheck.rules.context import ScanContext
from driftcheck.rules.findings import Rule

RULE = Rule("DC112", "refused-release", "The client's own code refuses this vLLM at import", "error", whole_client=True,
            guardable=False)


def check(ctx: ScanContext):
    for refusal in refusals(ctx.usage.files, ctx.client, ctx.api.version, ctx.api.package).values():
        outcome = "true" if refusal.taken else "false"
        message = (f"`{refusal.package}` refuses {ctx.version_label()} when it is imported: its `__init__` raises here "
                   f"(the test at line {refusal.test_line} is {outcome} for {ctx.api.version}), before any module under "
                   f"it runs.")
        yield ctx.finding(RULE, message, Loc(refusal.rel, refusal.line, refusal.col, refusal.code), None,
                          refusal.package, when="import", fix=False, test_line=refusal.test_line)
