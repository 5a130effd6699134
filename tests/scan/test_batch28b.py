"""Batch 28b (libraries that patch or wrap vLLM's engine and worker internals at their stored GitHub HEAD,
docs/triage/2026-12-05-patch-libs-28b.md).

PB1: unified-cache-management (ModelEngine-Group/unified-cache-management cdd4406,
ucm/integration/vllm/ucm_connector.py:870-900): `UCMCPConnector.__init__` opens with `try: from vllm.distributed
import get_dcp_group, get_pcp_group` whose `except ImportError as e:` raises its own ImportError ("Please check if the
current vLLM version supports DCP and PCP features"), then reads `parallel_config.prefill_context_parallel_size`. At
vLLM 0.11.0 (no `get_pcp_group`, no `prefill_context_parallel_size`) DC006 called that read an error, though it never
runs there: the function has already raised. The rest of a block after a try of nothing but vLLM imports whose every
handler exits is now the inline form of a precondition check (`preconditions.try_check`, Guard kind "precondition"):
its drift other than imports is guarded as the body of `if hasattr(vllm.distributed, "get_pcp_group"):` is (a
warning); an import there is guarded when it names what the probe imported, or when the probe's own import certainly
fails on this vLLM. The twins: a handler that falls through (logs and goes on), a try that also does other work, the
same read with no probe before it, and an import of something else after a probe that passes stay errors.
(tests/scan/test_unseen_plugins_9b.py's BQ fixture nested its class inside the check function by its indentation,
unlike the plugin it cites; it is indented as module-level code now.)

PB2: MoLink (oldcpple/MoLink f6f77e2, molink/engine/molink_engine.py:285 and 326) profiles with
`self.model_executor.driver_worker.model_runner.execute_model(model_input, kv_caches)`, where its V0 worker stores its
own runner (`self.model_runner: GPUModelRunnerBase = MolinkGPUModelRunner(...)`, molink/worker/worker.py:49) behind a
worker wrapper whose attributes driftcheck cannot follow. At vLLM 0.11.2 (its pin), where vLLM has no runner that runs
execute_model without the state check, DC103 called the call an error: "the next execute_model() raises RuntimeError:
State error". The object is the client's runner, which derives from no vLLM class with sample_tokens. A receiver of
unknown class read through an attribute where the client stores a runner of its own class of that kind is now a
warning, as one that may be vLLM's V2 runner already was. The twins: the client's runner that derives from vLLM's
two-phase runner, and a store under another attribute name, stay errors.
PB3: llumnix-project/llumnix (8a693b4) ships `patches/vllm/vllm_v0.12.0.patch` and `vllm_v0.18.0.patch`, `git
format-patch` output of a vLLM checkout that its container applies with `patch -p1` (container/Dockerfile.vllm). Each
also changes `.gitignore`, so the whole diff was passed over (only diffs of nothing but `.py` files were read), and
what it adds stayed errors: `envs.VLLM_PD_CONNMANAGER_CAP` (DC002, migration_frontend/vllm_v1/kvt_migration_frontend.py:130)
and the store `request.queue_server_address = ...` on the msgspec struct `EngineCoreRequest` (DC006,
entrypoints/vllm_v1/client.py:199, 239, 274, 316). Now a diff's Python sections are read (checked against the release
as before) and the rest ignored; and a store on a struct without `__dict__` asks first whether a shipped diff adds the
field (an unknown, as a read already was). The twins: the same patch whose Python context is not the release's, and a
store of a field the patch does not add, stay errors.
"""

from __future__ import annotations

from pathlib import Path

from scan.helpers import edited, plugin_shape, scan_trees

PB1_VLLM, PB1_CLIENT = plugin_shape("PB1")
CONN = "plug/connector.py"
RAISE = '            raise ImportError("this vLLM does not support DCP and PCP") from e\n'


def _pb1(tmp_path: Path, *edits: tuple[str, str]) -> list[tuple[str, str, int]]:
    """DC006's findings on the PB1 client with `edits` made to its connector."""
    found = scan_trees(tmp_path, PB1_VLLM, edited(PB1_CLIENT, CONN, *edits) if edits else PB1_CLIENT, only=["DC006"])
    return sorted((f.severity, f.client.path, f.client.line) for f in found.findings)


def test_pb1_read_after_an_import_probe_that_raises_is_no_error(tmp_path):
    assert _pb1(tmp_path) == [("warning", CONN, 14)]


def test_pb1_probe_whose_except_returns_is_no_error(tmp_path):
    assert _pb1(tmp_path, (RAISE, "            return\n")) == [("warning", CONN, 14)]


def test_pb1_twin_handler_that_falls_through_stays_error(tmp_path):
    assert _pb1(tmp_path, (RAISE, "            get_pcp_group = get_dcp_group\n")) == [("error", CONN, 14)]


def test_pb1_twin_try_that_also_does_other_work_stays_error(tmp_path):
    assert _pb1(tmp_path, ("get_dcp_group, get_pcp_group\n",
                           "get_dcp_group, get_pcp_group\n            size = config.prefill_context_parallel_size\n")) == [("error", CONN, 10), ("error", CONN, 15)]


def test_pb1_twin_no_probe_before_the_read_stays_error(tmp_path):
    assert ("error", CONN, 12) in _pb1(tmp_path, ("        try:\n            from vllm.distributed import get_dcp_group, get_pcp_group\n"
                                       "        except ImportError as e:\n" + RAISE,
                                       "        from vllm.distributed import get_dcp_group\n        get_pcp_group = get_dcp_group\n"))


PB2_VLLM, PB2_CLIENT = plugin_shape("PB2")
WORKER = "plug/worker.py"


def _pb2(tmp_path: Path, *edits: tuple[str, str]) -> list[tuple[str, str, int]]:
    """DC103's findings on the PB2 client with `edits` made to its worker module."""
    found = scan_trees(tmp_path, PB2_VLLM, edited(PB2_CLIENT, WORKER, *edits) if edits else PB2_CLIENT, only=["DC103"])
    return sorted((f.severity, f.client.path, f.client.line) for f in found.findings)


def test_pb2_runner_call_where_the_client_stores_its_own_runner_is_a_warning(tmp_path):
    assert _pb2(tmp_path) == [("warning", "plug/engine.py", 20)]


def test_pb2_twin_client_runner_deriving_from_the_two_phase_runner_stays_error(tmp_path):
    assert _pb2(tmp_path, ("class LegacyRunner:", "class LegacyRunner(GPUModelRunner):\n    pass\n\n\nclass OldRunner:")) == \
        [("error", "plug/engine.py", 20)]


def test_pb2_twin_store_under_another_attribute_stays_error(tmp_path):
    assert _pb2(tmp_path, ("self.model_runner = ", "self.runner = ")) == [("error", "plug/engine.py", 20)]


PB3_VLLM, PB3_CLIENT = plugin_shape("PB3")
PATCH = "patches/vllm/vllm_v0.99.0.patch"


def _pb3(tmp_path: Path, *edits: tuple[str, str], rel: str = PATCH) -> list[tuple[str, str, str, int]]:
    """DC002 and DC006's findings and unknowns on the PB3 client with `edits` made to `rel`."""
    found = scan_trees(tmp_path, PB3_VLLM, edited(PB3_CLIENT, rel, *edits) if edits else PB3_CLIENT,
                       only=["DC002", "DC006"])
    return sorted([(f.rule, f.severity, f.client.path, f.client.line) for f in found.findings] +
                  [(u.rule, "unknown", u.client.path, u.client.line) for u in found.unknown])


def test_pb3_names_a_format_patch_adds_beside_a_gitignore_change_are_unknown(tmp_path):
    assert _pb3(tmp_path) == [("DC002", "unknown", "pkg/frontend.py", 11), ("DC006", "unknown", "pkg/frontend.py", 6)]


def test_pb3_twin_patch_whose_python_context_is_not_in_the_release_stays_error(tmp_path):
    assert _pb3(tmp_path, ('     "VLLM_HOST_IP": lambda', '     "VLLM_PORT": lambda'),
                ("     client_index: int = 0\n+", "     client_slot: int = 0\n+")) == \
        [("DC002", "error", "pkg/frontend.py", 11), ("DC006", "error", "pkg/frontend.py", 6)]


def test_pb3_twin_store_of_a_field_the_patch_does_not_add_stays_error(tmp_path):
    assert ("DC006", "error", "pkg/frontend.py", 6) in _pb3(
        tmp_path, ("request.queue_server_address = ", "request.queue_server_port = "), rel="pkg/frontend.py")


def test_pb1_twin_import_after_a_probe_that_passes_stays_error(tmp_path):
    """The probe imports only what this vLLM has, so the rest runs: an import there of a name it lacks (from a module
    the probe does not import) fails."""
    client = edited(PB1_CLIENT, CONN, ("import get_dcp_group, get_pcp_group\n", "import get_dcp_group\n"),
                    (RAISE, RAISE + "        from vllm.config import CacheConfig\n"))
    found = scan_trees(tmp_path, PB1_VLLM, client, only=["DC002"])
    assert [(f.severity, f.client.line) for f in found.findings] == [("error", 12)]
