"""Batch HF (clients that plug parsers and sampling hooks into vLLM: tool and reasoning parsers, V1 logits processors,
`vllm.general_plugins` entry points; docs/triage/2026-12-06-parsers-sampling-hooks-HF.md).

HF1, a missed error: shaltielshmid/vllm-repetition-collapse-guard-plugin (9b2bd8e, `vllm>=0.9.1` in setup.py) is a
`vllm.general_plugins` entry point whose installing function imports `OutputProcessor`, defines
`process_outputs_with_repguard(self, engine_core_outputs, engine_core_timestamp=None, iteration_stats=None)` in its own
body (a closure over the original method) and sets it with `OutputProcessor.process_outputs = ...`. From vLLM 0.32.0
`LLMEngine.step` and `AsyncLLM`'s output handler call `process_outputs(..., weight_version=...)`: TypeError in every
engine step. DC109 read only module-level functions set on a vLLM class, so it said nothing. A function the
innermost function around the store defines in its own body, before the store, and binds no other way there, is now
the function set. The shape runs; its twins: vLLM passing a new keyword is a DC109 finding on the nested def (a warning
without a vLLM of the client's own, an error with one; the plugin's own `try: import ... except: return` probe before
it makes it a warning, as every use after such a probe is), a wrapper that takes `**kwargs` is quiet, and a name the
installing function binds another way (a parameter) stays unread; a store in a helper nested deeper sees the
installing function's def, as its closure does.
"""

from __future__ import annotations

import textwrap

from conftest import CACHE_DIR  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import edited, line_of, plugin_shape, scan_trees, vllm_tree, write_tree

HF1_VLLM, HF1_CLIENT = plugin_shape("HF1")
PLUG = "plug/__init__.py"
OUTPUT_PROCESSOR = "vllm/v1/engine/output_processor.py"
ENGINE = "vllm/v1/engine/llm_engine.py"


def _with_weight_version():
    """vLLM 0.32.0's change: the engine hands each step's weight version to the output processor."""
    files = edited(HF1_VLLM, OUTPUT_PROCESSOR, ("iteration_stats=None):", "iteration_stats=None, weight_version=None):"))
    return edited(files, ENGINE, ("            iteration_stats=None,\n",
                                  "            iteration_stats=None,\n            weight_version=None,\n"))


def _hf1(tmp_path, vllm_files, client_files, client_vllm=None):
    result = scan_trees(tmp_path, vllm_files, client_files, only=["DC109"], client_vllm=client_vllm)
    assert not result.internal_errors
    return [(f.severity, f.client.path, f.client.line, f.details.get("argument"), f.vllm.path, f.message)
            for f in result.findings]


def test_hf1_the_shape_runs_and_has_no_finding(tmp_path):
    assert _hf1(tmp_path, HF1_VLLM, HF1_CLIENT) == []


def test_hf1_twin_a_new_keyword_vllm_passes_to_the_nested_wrapper_is_found(tmp_path):
    [(severity, path, line, argument, vpath, message)] = _hf1(tmp_path, _with_weight_version(), HF1_CLIENT)
    assert (severity, path, argument, vpath) == ("warning", PLUG, "weight_version", ENGINE)
    assert line == line_of(HF1_CLIENT[PLUG], "def process_outputs_with_guard(")
    assert "no vLLM of the client's own" in message


def test_hf1_twin_with_the_clients_own_vllm_it_is_new_and_an_error_where_the_import_probe_passes(tmp_path):
    # the probe imports `OutputProcessor`, which the target has: the wrapper is installed and vLLM's call fails
    # (batch 19d's PB1 reading, sixteenth session: such a probe guards only the uses of what it imported)
    own = vllm_tree(tmp_path / "own", HF1_VLLM)
    write_tree(own, {"vllm/_version.py": '__version__ = "0.98.0"\n'})
    [(severity, _path, _line, argument, _vpath, message)] = _hf1(tmp_path, _with_weight_version(), HF1_CLIENT,
                                                                 client_vllm=str(own))
    assert (severity, argument) == ("error", "weight_version")
    assert "new since vLLM" in message and "after the import probe" not in message


def test_hf1_twin_without_the_probe_it_is_an_error(tmp_path):
    own = vllm_tree(tmp_path / "own", HF1_VLLM)
    write_tree(own, {"vllm/_version.py": '__version__ = "0.98.0"\n'})
    client = edited(HF1_CLIENT, PLUG, (
        "    try:\n        from vllm.v1.engine.output_processor import OutputProcessor\n"
        "    except Exception:\n        log.info(\"no V1 OutputProcessor: skipping\")\n        return\n",
        "    from vllm.v1.engine.output_processor import OutputProcessor\n"))
    [(severity, path, line, argument, _vpath, _message)] = _hf1(tmp_path, _with_weight_version(), client,
                                                                client_vllm=str(own))
    assert (severity, path, argument) == ("error", PLUG, "weight_version")
    assert line == line_of(client[PLUG], "def process_outputs_with_guard(")


def test_hf1_twin_a_store_in_a_helper_nested_deeper_sees_the_enclosing_def(tmp_path):
    # the store sits in a helper the installing function defines: the name is a closure over its def (the class is
    # imported at the top here: a class a function imports itself is not followed into its nested functions)
    client = edited(HF1_CLIENT, PLUG, (
        "    try:\n        from vllm.v1.engine.output_processor import OutputProcessor\n"
        "    except Exception:\n        log.info(\"no V1 OutputProcessor: skipping\")\n        return\n", ""),
        ("import logging\n", "import logging\n\nfrom vllm.v1.engine.output_processor import OutputProcessor\n"),
        ("    OutputProcessor.process_outputs = process_outputs_with_guard\n",
         "    def _apply():\n        OutputProcessor.process_outputs = process_outputs_with_guard\n\n    _apply()\n"))
    [(severity, path, line, argument, _vpath, _message)] = _hf1(tmp_path, _with_weight_version(), client)
    assert (severity, path, argument) == ("warning", PLUG, "weight_version")
    assert line == line_of(client[PLUG], "def process_outputs_with_guard(")


def test_hf1_twin_a_wrapper_that_takes_kwargs_is_quiet(tmp_path):
    client = edited(HF1_CLIENT, PLUG, ("        iteration_stats=None,\n    ):", "        iteration_stats=None,\n        **kwargs,\n    ):"))
    assert _hf1(tmp_path, _with_weight_version(), client) == []


def test_hf1_twin_a_name_the_installing_function_binds_otherwise_is_not_read(tmp_path):
    # the function set is the parameter, whatever the caller hands in; the nested def of that name is shadowed
    client = edited(HF1_CLIENT, PLUG, ("def _install_hook():", "def _install_hook(process_outputs_with_guard=None):"))
    assert _hf1(tmp_path, _with_weight_version(), client) == []


REPGUARD = """
    import logging

    log = logging.getLogger(__name__)


    def _install_v1_output_processor_hook():
        {import_}
        original = OutputProcessor.process_outputs

        def process_outputs_with_repguard(self, engine_core_outputs, engine_core_timestamp=None, iteration_stats=None):
            return original(self, engine_core_outputs, engine_core_timestamp, iteration_stats)

        OutputProcessor.process_outputs = process_outputs_with_repguard


    def register_repguard():
        _install_v1_output_processor_hook()
"""
PROBE = ("try:\n        from vllm.v1.engine.output_processor import OutputProcessor\n"
         "    except Exception:\n        return")
PLAIN = "from vllm.v1.engine.output_processor import OutputProcessor"


def _real(tmp_path, version, client_vllm, import_):
    root = tmp_path / "client"
    (root / "repguard").mkdir(parents=True)
    (root / "repguard" / "__init__.py").write_text(textwrap.dedent(REPGUARD).replace("{import_}", import_))
    result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC109"], client_vllm=client_vllm))
    assert not result.internal_errors
    return sorted((f.severity, f.vllm.path, f.details["argument"]) for f in result.findings)


def test_hf1_on_real_releases(tmp_path):
    # 0.28.0 calls process_outputs without weight_version: quiet; 0.32.0 passes it (llm_engine.py, async_llm.py)
    assert _real(tmp_path / "a", "0.28.0", "0.9.1", PLAIN) == []
    found = _real(tmp_path / "b", "0.32.0", "0.9.1", PLAIN)
    assert found and {(s, a) for s, _p, a in found} == {("error", "weight_version")}
    assert {p for _s, p, _a in found} <= {"vllm/v1/engine/llm_engine.py", "vllm/v1/engine/async_llm.py"}
    # 0.32.0 has `OutputProcessor`: the probe passes, the wrapper is installed, the call fails as without it
    assert {s for s, _p, _a in _real(tmp_path / "c", "0.32.0", "0.9.1", PROBE)} == {"error"}
