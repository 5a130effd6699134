"""Batch 31a (clients of vLLM's LoRA, sampling and decoding internals, docs/triage/2026-12-05-sampling-lora-31a.md).

TF1: genlm-backend's vLLM backend (genlm/genlm-backend, genlm/backend/llm/vllm.py, the ControlSampler version in the
file index) tries its vLLM imports (`try: from vllm.v1.sample.sampler import Sampler ... HAS_VLLM = True / except
ImportError: HAS_VLLM = False`) and defines everything that needs vLLM under the module-level `if not HAS_VLLM:
<placeholder> else: <real classes>`: a `LogitsProcessor` subclass, a `Sampler` subclass whose `forward` calls
`super().forward(..., predict_bonus_token=..., logprobs_mode_override=...)`, `self.apply_logits_processors(...)` and
`self.gather_logprobs(...)`. driftcheck visited only the functions and classes at a module's top level, so nothing in
those classes was checked: at vLLM 0.11.0, where `Sampler.forward` is `(logits, sampling_metadata)` and there is no
`apply_logits_processors`, the scan said nothing. The functions and classes a module-level `if` / `try` / `with`
defines are now the module's too (`phases.module_definitions`), unless another definition in the module binds the same
name (a version split's two `class A` keep neither) or they sit under `if TYPE_CHECKING:`; the uses in them keep the
guards of the blocks around them (a version check, a `hasattr`) as top-level code does. A nested definition named
as a module-level import (`except ImportError: class Sampler: ...`, the stand-in where vLLM is absent) is left out:
the name stays vLLM's, as before; so are the definitions in an `except` (it runs only where its try body failed).

TF2: reading those definitions also reads what sits in a try body below an import the target lacks (`try: from
vllm.v1.sample.fused import ...; class TunedSampler(Sampler): ...; DEFAULT = Sampler(..., fused=True) / except
ImportError: DEFAULT = Sampler()`): that import raises, the `except` takes over, and nothing below it in the body runs.
driftcheck reported such a line as an error already for plain statements (`DEFAULT = Sampler(..., fused=True)`, a
certain TypeError only where the import works). A use below an import of the same try body's top level that fails on
the target with an error the try catches is now guarded as code that never runs (`guards._after_failing_import`, kind
"unreachable": a warning); where the import works, or the try does not catch its error, it stays an error.

TF3: the other half of such a try. `try: from vllm.v1.sample.metadata import SamplingMetadata; HAS_METADATA = True /
except ImportError: ...; LEGACY_SAMPLER = Sampler(legacy_mode="raw")`: where the try body's imports all exist, its
`except ImportError:` never runs. Its imports were already `unreached` (never reported); its other uses were errors.
They are not visited now when the try body holds only imports, constant assignments and `pass`, and the handler
catches only ImportError / ModuleNotFoundError (`FileAnalyzer.unreached_handlers`). Where the import fails, or the
body does something else, or the handler catches more, they are read as before.
"""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR, vllm_sources  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import edited, plugin_shape, scan_trees

TF1_VLLM, TF1_CLIENT = plugin_shape("TF1")
TF2_VLLM, TF2_CLIENT = plugin_shape("TF2")
TF3_VLLM, TF3_CLIENT = plugin_shape("TF3")
SAMPLER = "vllm/v1/sample/sampler.py"
BACKEND = "plug/backend.py"
SAMPLERS = "plug/samplers.py"
COMPAT = "plug/compat.py"


def _found(tmp_path, vllm_files=TF1_VLLM, client_files=TF1_CLIENT):
    result = scan_trees(tmp_path, vllm_files, client_files)
    assert not result.internal_errors
    return sorted((f.severity, f.rule, f.client.line) for f in result.findings if f.client.path == BACKEND)


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_tf1_definitions_under_module_level_ifs_that_fit_give_nothing(tmp_path):
    assert _found(tmp_path) == []


def test_tf1_twin_a_keyword_the_base_method_lost_is_an_error_in_a_class_under_else(tmp_path):
    vllm = edited(TF1_VLLM, SAMPLER, (
        "    def forward(self, logits, sampling_metadata, predict_bonus_token: bool = False,\n"
        "                logprobs_mode_override: str | None = None):\n",
        "    def forward(self, logits, sampling_metadata, predict_bonus_token: bool = False):\n"))
    line = _line(TF1_CLIENT[BACKEND], "return super().forward(")
    assert _found(tmp_path, vllm_files=vllm) == [("error", "DC003", line)]


def test_tf1_twin_a_member_the_base_lost_is_an_error_on_self_in_a_class_under_else(tmp_path):
    vllm = edited(TF1_VLLM, SAMPLER, ("    def apply_logits_processors(", "    def _apply_logits_processors("),
                  ("logits = self.apply_logits_processors(", "logits = self._apply_logits_processors("))
    line = _line(TF1_CLIENT[BACKEND], "logits = self.apply_logits_processors(")
    assert _found(tmp_path, vllm_files=vllm) == [("error", "DC006", line)]


def test_tf1_twin_a_function_under_a_try_body_is_checked(tmp_path):
    client = edited(TF1_CLIENT, BACKEND, ("    HAS_VLLM = True\n", (
        "    HAS_VLLM = True\n\n"
        "    def plain_sampler():\n"
        "        return Sampler(mode=\"raw_logprobs\")\n")))
    line = _line(client[BACKEND], 'return Sampler(mode="raw_logprobs")')
    assert _found(tmp_path, client_files=client) == [("error", "DC003", line)]


SPLIT = """

if os.environ.get("PLAIN_SAMPLER") == "new":

    def plain_sampler():
        return Sampler(mode="raw_logprobs")

else:

    def plain_sampler():
        return Sampler()
"""


def test_tf1_twin_a_name_both_branches_of_a_split_define_is_not_read(tmp_path):
    """Which `plain_sampler` exists is the split's choice at import: neither definition is read."""
    assert _found(tmp_path, client_files={**TF1_CLIENT, BACKEND: TF1_CLIENT[BACKEND] + SPLIT}) == []


def test_tf1_twin_the_same_definition_alone_is_read(tmp_path):
    alone = SPLIT[:SPLIT.index("else:")]
    client = {**TF1_CLIENT, BACKEND: TF1_CLIENT[BACKEND] + alone}
    line = _line(client[BACKEND], 'return Sampler(mode="raw_logprobs")')
    assert _found(tmp_path, client_files=client) == [("error", "DC003", line)]


def test_tf1_twin_a_class_for_type_checkers_only_is_not_read(tmp_path):
    client = edited(TF1_CLIENT, BACKEND, ("if TYPE_CHECKING:\n", "if not TYPE_CHECKING:\n"))
    line = _line(client[BACKEND], "return self.typed_only_member()")
    assert _found(tmp_path, client_files=client) == [("error", "DC006", line)]


def test_tf1_twin_a_definition_under_a_hasattr_test_is_a_warning(tmp_path):
    client = {**TF1_CLIENT, BACKEND: TF1_CLIENT[BACKEND] + textwrap.dedent("""

        if HAS_VLLM and hasattr(Sampler, "warm_up"):

            def warm():
                return Sampler().warm_up(steps=2)
        """)}
    line = _line(client[BACKEND], "return Sampler().warm_up(steps=2)")
    assert _found(tmp_path, client_files=client) == [("warning", "DC006", line)]


FALLBACK = """\
try:
    from vllm.v1.sample.sampler import Sampler
except ImportError:

    class Sampler:
        def forward(self, *args, **kwargs):
            return None


def run(logits, metadata):
    return Sampler().forward(logits, metadata, temperature=0.5)
"""


def test_tf1_twin_a_fallback_definition_named_as_an_import_leaves_the_name_vllms(tmp_path):
    """`except ImportError: class Sampler` is the stand-in where vLLM is absent: `Sampler` stays vLLM's class."""
    client = {"plug/__init__.py": "", BACKEND: FALLBACK}
    assert _found(tmp_path, client_files=client) == [("error", "DC003", _line(FALLBACK, "return Sampler()"))]


def _real(tmp_path, release: str):
    """The shape's client (its imports are vLLM's real paths) against a real release."""
    root = tmp_path / "client" / "plug"
    root.mkdir(parents=True)
    for rel, text in TF1_CLIENT.items():
        if rel.startswith("plug/"):
            (root.parent / rel).write_text(text)
    result = scan(resolve_vllm(release, CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC003", "DC006"]))
    assert not result.internal_errors
    return sorted((f.severity, f.rule, f.client.line, f.symbol) for f in result.findings)


def test_tf1_on_real_releases_the_sampler_subclass_is_checked(tmp_path):
    """vLLM 0.11.0's `Sampler.forward` is `(logits, sampling_metadata)` and it has no `apply_logits_processors`."""
    text = TF1_CLIENT[BACKEND]
    forward, apply = _line(text, "return super().forward("), _line(text, "logits = self.apply_logits_processors(")
    assert _real(tmp_path, "0.11.0") == [
        ("error", "DC003", forward, "vllm.v1.sample.sampler.Sampler.forward(logprobs_mode_override=)"),
        ("error", "DC003", forward, "vllm.v1.sample.sampler.Sampler.forward(predict_bonus_token=)"),
        ("error", "DC006", apply, "vllm.v1.sample.sampler.Sampler.apply_logits_processors"),
    ]


def test_tf1_twin_on_real_releases_a_release_that_fits_gives_nothing(tmp_path):
    assert _real(tmp_path, "0.20.0") == []


def _tf2(tmp_path, vllm_files=TF2_VLLM, client_files=TF2_CLIENT):
    result = scan_trees(tmp_path, vllm_files, client_files)  # every rule: the guard reads DC001's certain failure
    assert not result.internal_errors
    return sorted((f.severity, f.client.line) for f in result.findings if f.client.path == SAMPLERS and f.rule == "DC003")


def test_tf2_uses_below_an_import_the_release_lacks_never_run(tmp_path):
    text = TF2_CLIENT[SAMPLERS]
    assert _tf2(tmp_path) == [("warning", _line(text, "return super().forward(")),
                              ("warning", _line(text, 'DEFAULT = Sampler(logprobs_mode="processed_logprobs"'))]


def test_tf2_twin_where_the_import_works_the_body_runs(tmp_path):
    vllm = {**TF2_VLLM, "vllm/v1/sample/fused.py": "def apply_fused_penalties(logits):\n    return logits\n"}
    text = TF2_CLIENT[SAMPLERS]
    assert _tf2(tmp_path, vllm_files=vllm) == [("error", _line(text, "return super().forward(")),
                                               ("error", _line(text, 'DEFAULT = Sampler(logprobs_mode="processed_logprobs"'))]


def test_tf2_twin_a_use_above_the_failing_import_runs(tmp_path):
    client = edited(TF2_CLIENT, SAMPLERS, ("try:\n", "try:\n    EARLY = Sampler(fused=False)\n"))
    assert ("error", _line(client[SAMPLERS], "EARLY = Sampler(fused=False)")) in _tf2(tmp_path, client_files=client)


def test_tf2_twin_a_try_that_does_not_catch_the_import_error_guards_nothing(tmp_path):
    client = edited(TF2_CLIENT, SAMPLERS, ("except ImportError:\n", "except KeyError:\n"))
    text = client[SAMPLERS]
    assert _tf2(tmp_path, client_files=client) == [
        ("error", _line(text, "return super().forward(")),
        ("error", _line(text, 'DEFAULT = Sampler(logprobs_mode="processed_logprobs"'))]


def _tf3(tmp_path, vllm_files=TF3_VLLM, client_files=TF3_CLIENT):
    result = scan_trees(tmp_path, vllm_files, client_files)
    assert not result.internal_errors
    return sorted((f.severity, f.rule, f.client.line) for f in result.findings if f.client.path == COMPAT)


LEGACY = 'LEGACY_SAMPLER = Sampler(legacy_mode="raw")'


def test_tf3_a_fallback_the_release_never_takes_says_nothing(tmp_path):
    assert _tf3(tmp_path) == []


def test_tf3_twin_where_the_import_fails_the_fallback_runs(tmp_path):
    vllm = {k: v for k, v in TF3_VLLM.items() if k != "vllm/v1/sample/metadata.py"}
    found = _tf3(tmp_path, vllm_files=vllm)
    assert ("error", "DC003", _line(TF3_CLIENT[COMPAT], LEGACY)) in found


def test_tf3_twin_a_try_body_that_does_more_than_import_keeps_the_fallback_read(tmp_path):
    client = edited(TF3_CLIENT, COMPAT, ("    HAS_METADATA = True\n", "    HAS_METADATA = SamplingMetadata() is not None\n"))
    # read, not skipped; a warning since HI2: an `except ImportError:` fallback runs only where its try fails
    assert _tf3(tmp_path, client_files=client) == [("warning", "DC003", _line(client[COMPAT], LEGACY))]


def test_tf3_twin_a_broader_handler_keeps_the_fallback_read(tmp_path):
    client = edited(TF3_CLIENT, COMPAT, ("except ImportError:", "except (ImportError, AttributeError):"))
    # read, not skipped; a warning since HI2 (a handler catching ImportError guards its whole fallback)
    assert _tf3(tmp_path, client_files=client) == [("warning", "DC003", _line(client[COMPAT], LEGACY))]
