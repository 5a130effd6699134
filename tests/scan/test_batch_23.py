"""Nineteenth session (batch 23b, breakages users reported): readings that lowered a certain failure to a warning.

R1 (NeMo-RL at vLLM 0.29.0): `from vllm.entrypoints.openai.engine.protocol import ErrorResponse` in a function, and
elsewhere `logging.getLogger("vllm.entrypoints.openai.engine.protocol").setLevel(...)`. The module's name as a string
was read as a possible registration (`sys.modules[...] = ...`), and the ModuleNotFoundError became a warning; naming a
logger registers nothing.
R4 (unsloth_zoo 2025.7.6 at 0.8.5): `if importlib.util.find_spec("vllm") is not None:` around an import of a module
0.8.5 lacks was read as a vLLM version check; it asks only whether vLLM is installed, true wherever a release is scanned.
"""

from __future__ import annotations

from scan.helpers import scan_trees

_VLLM = {"vllm/__init__.py": "", "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/openai/__init__.py": "",
         "vllm/entrypoints/openai/protocol.py": "class ErrorResponse:\n    pass\n"}


def _dc001(tmp_path, client: str):
    result = scan_trees(tmp_path, _VLLM, {"plug/__init__.py": "", "plug/server.py": client}, only=["DC001"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings]


_R1 = ("import logging\n\n\ndef setup(app):\n    from vllm.entrypoints.openai.engine.protocol import ErrorResponse\n\n"
       "    logging.getLogger('vllm.entrypoints.openai.engine.protocol').setLevel(40)\n    return ErrorResponse\n")


def test_r1_a_logger_named_after_the_module_registers_nothing(tmp_path):
    assert _dc001(tmp_path, _R1) == [(5, "error")]


def test_r1_twin_a_sys_modules_entry_may_register_it(tmp_path):
    registered = _R1.replace("logging.getLogger('vllm.entrypoints.openai.engine.protocol').setLevel(40)",
                             "import sys\n    sys.modules['vllm.entrypoints.openai.engine.protocol'] = app")
    assert _dc001(tmp_path, registered) == [(5, "warning")]


_R4 = ("import importlib.util\n\nif importlib.util.find_spec('vllm') is not None:\n"
       "    import vllm.model_executor.bitsandbytes_loader\n")


def test_r4_find_spec_of_vllm_itself_is_no_version_check(tmp_path):
    assert _dc001(tmp_path, _R4) == [(4, "error")]


def test_r4_twin_find_spec_of_a_vllm_module_is_one(tmp_path):
    probed = _R4.replace("find_spec('vllm')", "find_spec('vllm.model_executor.bitsandbytes_loader')")
    assert _dc001(tmp_path, probed) == [(4, "warning")]
