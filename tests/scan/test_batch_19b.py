"""Batch 19b (GitHub clients that change vLLM at build or install time: minimax-m3-sm120, vllm-windows-build,
vllm-experiment and three more; docs/triage/2026-12-06-build-time-patchers-19b.md): 27 false errors, one cause.

NH1 (9 errors at each of 0.25.1, 0.26.0 and 0.33.0, vllm-windows-build): its `turboquant/` folder holds copies of files
of the author's vLLM tree (a changed copy of the release's `vllm/v1/attention/ops/triton_turboquant_decode.py`, and
modules no release has) that import each other by vLLM's names: `vllm.v1.attention.ops.turboquant_kv_cache` is the
file beside the importer. Dropped into vLLM's `ops/` they run; nothing in the client says whether they are, so a module
only the folder holds is unknown (DC001), as is a name only the folder's copy of a release module defines (DC002)
(drop_ins.py). The runnable shape is tests/fixtures/plugin_shapes/NH1_; here, the twins that stay errors.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

NH1_VLLM, _SHAPE = plugin_shape("NH1")
NH1_CLIENT = {rel: text for rel, text in _SHAPE.items() if rel != "main.py"}  # the folder alone (main.py drops it in)
BACKEND = "turboquant/triton_attn_modified.py"
DECODE = "turboquant/triton_turboquant_decode.py"


def _found(tmp_path, client_files):
    result = scan_trees(tmp_path, NH1_VLLM, client_files, only=["DC001", "DC002"])
    assert not result.internal_errors
    out = [(f.severity, f.rule, f.client.path, f.client.line) for f in result.findings]
    out += [("unknown", u.rule, u.client.path, u.client.line) for u in result.unknown]
    return sorted(out), result


def test_nh1_the_folders_modules_are_unknowns_naming_the_copy_and_the_import(tmp_path):
    found, result = _found(tmp_path, NH1_CLIENT)
    assert found == [("unknown", "DC001", BACKEND, 3), ("unknown", "DC001", DECODE, 3), ("unknown", "DC002", BACKEND, 2)]
    by_rule = {u.rule: u.message for u in result.unknown}
    assert "the client's `turboquant/turboquant_kv_cache.py` is a copy of it" in by_rule["DC001"]
    assert "the client's `turboquant/triton_turboquant_decode.py` is a copy of that module, which may" in by_rule["DC002"]
    assert all("in a folder of copies of `vllm.v1.attention.ops`'s files that import each other by vLLM's names ("
               in u.message for u in result.unknown)


@pytest.mark.parametrize("client, expected", [
    # a module the folder does not hold: no copy of it anywhere
    (edited(NH1_CLIENT, BACKEND, ("ops.turboquant_kv_cache import", "ops.turboquant_metadata import")),
     [("error", "DC001", BACKEND, 3)]),
    # no file of the folder is named like a file of `vllm/v1/attention/ops/`: nothing says the folder mirrors it
    ({**{k: v for k, v in NH1_CLIENT.items() if k != DECODE}, "turboquant/my_decode.py": NH1_CLIENT[DECODE]},
     [("error", "DC001", "turboquant/my_decode.py", 3), ("error", "DC001", BACKEND, 3), ("error", "DC002", BACKEND, 2)]),
    # the imports name a package the release lacks (`attention.kernels`): not a copy of one of its packages
    ({rel: text.replace("attention.ops.", "attention.kernels.") for rel, text in NH1_CLIENT.items()},
     [("error", "DC001", BACKEND, 2), ("error", "DC001", BACKEND, 3), ("error", "DC001", DECODE, 3)]),
    # a package of the client's (`__init__.py`): a plugin's modules named like vLLM's, imported by the plugin's names
    # (vllm-ascend's `vllm_ascend/sample/rejection_sampler.py` wraps vLLM's module of that name), are not copies
    ({**NH1_CLIENT, "turboquant/__init__.py": ""},
     [("error", "DC001", BACKEND, 3), ("error", "DC001", DECODE, 3), ("error", "DC002", BACKEND, 2)]),
    # a file that imports its own namesake from vLLM (a wrapper) says nothing of the folder
    ({DECODE: "from vllm.v1.attention.ops.triton_turboquant_decode import turboquant_decode_attention_fwd\n",
      "turboquant/triton_attn_modified.py": "x = 1\n"},
     [("error", "DC002", DECODE, 1)]),
], ids=["not-a-sibling", "mirrors-nothing", "no-such-package", "a-client-package", "a-wrapper-of-its-namesake"])
def test_nh1_twins_keep_the_errors(tmp_path, client, expected):
    found, _ = _found(tmp_path, client)
    assert [x for x in found if x[0] == "error"] == expected


# ----------------------------------------------------------------------------------------- RM1 (a missed error)
# vllm-experiment (StellaLee/vllm-experiment 20d9fe0) starts its server with `$PYTHON -m vllm.entrypoints.api_server`
# (scripts/start_server.sh:9 and ten more), a module gone from vLLM 0.25.1 on: at 0.33.0 the server never starts. DC111
# read the flags of `-m vllm.entrypoints.openai.api_server` only; a `python -m` of a module the target lacks is an
# error now (a warning in test code), where the client provides no such module itself.
_SERVER_VLLM = {"vllm/__init__.py": "", "vllm/entrypoints/__init__.py": "", "vllm/entrypoints/openai/__init__.py": "",
                "vllm/entrypoints/openai/api_server.py": "def run_server(args):\n    return args\n"}
_START = '#!/bin/bash\nPYTHON=${PYTHON:-python3}\n$PYTHON -m vllm.entrypoints.api_server \\\n  --model m --port 8000\n'


def _dc111(tmp_path, client_files):
    result = scan_trees(tmp_path, _SERVER_VLLM, client_files, only=["DC111"])
    assert not result.internal_errors
    return [(f.severity, f.client.path, f.client.line, f.symbol) for f in result.findings]


def test_rm1_a_removed_module_run_with_python_m_is_an_error(tmp_path):
    found = _dc111(tmp_path / "shell", {"scripts/start_server.sh": _START})
    assert found == [("error", "scripts/start_server.sh", 3, "python -m vllm.entrypoints.api_server")]
    listed = {"launch.py": 'import subprocess, sys\nsubprocess.run([sys.executable, "-m", "vllm.entrypoints.api_server"])\n'}
    assert _dc111(tmp_path / "python", listed) == [("error", "launch.py", 2, "python -m vllm.entrypoints.api_server")]
    assert _dc111(tmp_path / "test", {"tests/test_start.sh": _START}) == [
        ("warning", "tests/test_start.sh", 3, "python -m vllm.entrypoints.api_server")]


@pytest.mark.parametrize("client", [
    {"scripts/start_server.sh": _START.replace("-m vllm.entrypoints.api_server", "-m vllm.entrypoints.openai.api_server")},
    {"scripts/start_server.sh": "#!/bin/bash\n# $PYTHON -m vllm.entrypoints.api_server --model m\n"},
    {"scripts/start_server.sh": '#!/bin/bash\necho "run: python3 -m vllm.entrypoints.api_server --model m"\n'},
    {"scripts/start_server.sh": "#!/bin/bash\ndocker run --gpus all \\\n  vllm/vllm-openai:v0.4.0 \\\n"
                                "  python3 -m vllm.entrypoints.api_server --model m\n"},
    {"scripts/start_server.sh": _START, "Dockerfile": "FROM vllm/vllm-openai:v0.4.0\n"
                                                      "COPY api_server.py /usr/lib/python3/dist-packages/vllm/entrypoints/api_server.py\n",
     "api_server.py": "print('serving')\n"},
], ids=["a-module-it-has", "a-comment", "printed", "in-a-container", "installed-by-the-client"])
def test_rm1_twins_are_quiet(tmp_path, client):
    found = _dc111(tmp_path, client)
    assert [x for x in found if x[3].startswith("python -m")] == []
