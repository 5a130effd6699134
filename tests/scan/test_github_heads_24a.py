"""Batch 24a (vllm-project plugins and tools at their repositories' HEAD, docs/triage/2026-12-05-vllm-project-heads-24a.md).

LA1: a KV connector name the client registers itself. vllm-ascend (182b75e) at vLLM 0.27.1 registers
`MooncakeConnectorV1`, `AscendStoreConnector`, `MooncakeLayerwiseConnector`, ... on vLLM's `KVConnectorFactory` in
`vllm_ascend/distributed/kv_transfer/__init__.py`, called from its `vllm.general_plugins` entry point
(`ascend_kv_connector = vllm_ascend:register_connector`, setup.py:521); its tests and nightly YAML configs name those
connectors in `--kv-transfer-config` / `"kv_connector"` dicts. DC111 checked the names against the release's own
registrations only and said "the engine fails to start with `ValueError: Unsupported connector type`" (36 errors).
Now a name the client registers on the release's factory (a call that resolves to its `register_connector`, from any
client file) is the client's own; a registration under a computed name makes every other unregistered name unknown.
Twins: a name nobody registers stays an error, also when the client registers other names.

LA2: methods defined under an `if` of the class body. vllm-ascend's `ModelAclGraphManager(ModelCudaGraphManager)`
(`vllm_ascend/worker/v2/aclgraph_utils.py:69-156`) defines `__init__` twice, under `if vllm_version_is("0.27.1"):` and
its `else:`, and each sets `self.model_runner` and `self.update_stream`; `run_fullgraph` reads them. The client side
collected a class's `self.x` stores only from the methods directly in the class body, so DC006 said
"`ModelCudaGraphManager` has no attribute 'update_stream'" (7 errors). Now the methods an `if` / `try` / `with` of the
body defines are the class's methods everywhere the client model reads them (stores, visits, overrides, worker
extensions), as vLLM's own classes were read already. Twin: a member neither branch sets stays an error.

LA3: the rest of a block after an unconditional call that never returns. aibrix's kvcache tests
(`python/aibrix_kvcache/tests/test_cache_ops.py`, aibrix e3e10f9) call `pytest.skip(allow_module_level=True)` as a
top-level statement, then `from vllm.utils import get_kv_cache_torch_dtype`, a name 0.21.0 moved to
`vllm.utils.torch_utils`: DC002 said "ImportError at import time", but the import never runs (pytest collects the
module as skipped). The statements after such a call in the same block (`pytest.skip/fail/exit/xfail`, `sys.exit`,
`os._exit`, `exit`, `quit`; the set refusals.py already used for branches that leave) are guarded as code that never
runs (Guard kind "unreachable"): a warning. Twins: the skip under an `if`, or after the import, leaves the error.

LA4: a member stored on the value of a client factory. vllm-ascend's v2 `NPUModelRunner.__init__`
(`vllm_ascend/worker/v2/model_runner.py:117-122`) binds `self.speculator: AscendEagleSpeculator | None = None`, then
`self.speculator = init_speculator(...)` (the client's factory, returning the DSpark, DFlash, MTP or Eagle speculator)
and `self.speculator.update_stream = self.update_stream`; the speculators' `init_cudagraph_manager` read
`self.update_stream` (4 DC006 errors: "`AutoRegressiveSpeculator` / `DFlashSpeculator` / `DSparkSpeculator` has no
attribute 'update_stream'"). The store's receiver had no type (a union annotation), so nothing was credited. Now a
store through `self.x`, where the storing class binds `self.x = f(...)` with a client function whose `return Cls(...)`
statements build the reading class or a client subclass of it, is a store on that class. Twin: a factory that never
builds the reading class leaves the error.

LA5: a `vllm serve` line in a manifest whose container image names another vLLM release. aibrix_kvcache's
`tests/pd_reuse/vllm-{pd-reuse,pd,vanilla}.yaml` run `vllm serve ... --disable-log-requests --swap-space "0"` in
`image: .../aibrix/vllm-openai:v0.10.2-aibrix-v0.5.0...` (vLLM 0.10.2, which has both flags); scanned at the 0.21.0
of `build/container/Dockerfile.vllm`, DC111 said the parser exits at once (10 errors). A flag the target's parser
lacks, in a launch whose nearest `image:` (in its YAML document) or `FROM` names a vLLM image tagged with another
release, is now unknown, naming the image. Twins: the image tag names the target's release, or no release
(`latest`), or the image is not vLLM's: the error stays. Checked against the real 0.32.0 sources.
"""

from __future__ import annotations

from pathlib import Path

from conftest import CACHE_DIR
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm
from scan.helpers import scan_trees

LA1 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "LA1_kv_connector_name_the_plugin_registers_itself"


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}


VLLM = _tree(LA1 / "vllm_src")
CLIENT = _tree(LA1 / "client")
REGISTER = CLIENT["pkg/kv_transfer.py"]
CONFIG = CLIENT["pkg/test_config.py"]


def _dc111(tmp_path: Path, client: dict[str, str]) -> list:
    result = scan_trees(tmp_path, VLLM, client, only=["DC111"])
    return [(f.severity, f.symbol, f.client.path) for f in result.findings] + \
        [("unknown", u.symbol, u.client.path) for u in result.unknown]


def test_la1_a_connector_the_plugin_registers_is_no_error(tmp_path):
    assert _dc111(tmp_path, CLIENT) == []


def test_la1_registered_in_a_helper_of_the_same_file_or_with_keywords(tmp_path):
    register = REGISTER.replace('register_connector("MooncakeConnectorV1", "pkg.mooncake_connector", "MooncakeConnector")',
                                'register_connector(name="MooncakeConnectorV1", module_path="pkg.mooncake_connector", '
                                'class_name="MooncakeConnector")')
    assert register != REGISTER
    assert _dc111(tmp_path, {**CLIENT, "pkg/kv_transfer.py": register}) == []


def test_la1_twin_a_name_nobody_registers_stays_an_error(tmp_path):
    config = CONFIG.replace('"kv_connector": "MooncakeConnectorV1"', '"kv_connector": "MooncakeConnectorV2"')
    assert config != CONFIG
    assert _dc111(tmp_path, {**CLIENT, "pkg/test_config.py": config}) == [
        ("error", "kv_connector=MooncakeConnectorV2", "pkg/test_config.py")]


def test_la1_twin_without_the_registration_stays_an_error(tmp_path):
    client = {k: v for k, v in CLIENT.items() if k != "pkg/kv_transfer.py"}
    client["pkg/__init__.py"] = "def register_connector():\n    pass\n"
    assert _dc111(tmp_path, client) == [("error", "kv_connector=MooncakeConnectorV1", "pkg/test_config.py")]


def test_la1_twin_a_name_registered_on_another_registry_stays_an_error(tmp_path):
    register = REGISTER.replace("from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory\n",
                                "class KVConnectorFactory:\n    @classmethod\n    def register_connector(cls, *a):\n"
                                "        pass\n")
    assert register != REGISTER
    assert _dc111(tmp_path, {**CLIENT, "pkg/kv_transfer.py": register}) == [
        ("error", "kv_connector=MooncakeConnectorV1", "pkg/test_config.py")]


def test_la1_a_registration_under_a_computed_name_makes_other_names_unknown(tmp_path):
    register = REGISTER + "\n\ndef register_all(names):\n    for n in names:\n" \
                          "        KVConnectorFactory.register_connector(n, 'pkg.mooncake_connector', 'MooncakeConnector')\n"
    config = CONFIG.replace('"kv_connector": "MooncakeConnectorV1"', '"kv_connector": "SomeOtherConnector"')
    [(severity, symbol, path)] = _dc111(tmp_path, {**CLIENT, "pkg/kv_transfer.py": register, "pkg/test_config.py": config})
    assert (severity, symbol, path) == ("unknown", "kv_connector=SomeOtherConnector", "pkg/test_config.py")


LA2 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "LA2_methods_a_release_test_in_the_class_body_defines"
VLLM2 = _tree(LA2 / "vllm_src")
CLIENT2 = _tree(LA2 / "client")
GRAPH = CLIENT2["pkg/graph.py"]


def _dc006(tmp_path: Path, client: dict[str, str]) -> list:
    result = scan_trees(tmp_path, VLLM2, client, only=["DC006"])
    return sorted((f.severity, f.symbol, f.client.line) for f in result.findings)


def test_la2_members_set_by_an_init_an_if_of_the_class_body_defines(tmp_path):
    assert _dc006(tmp_path, CLIENT2) == []


def test_la2_twin_a_member_neither_branch_sets_stays_an_error(tmp_path):
    graph = GRAPH.replace("            self.update_stream = model_runner.update_stream\n", "")
    assert graph.count("update_stream") == 1
    assert _dc006(tmp_path, {**CLIENT2, "pkg/graph.py": graph}) == [
        ("error", "vllm.graph.ModelCudaGraphManager.update_stream", 21)]


def test_la2_a_method_under_an_if_of_the_body_is_visited(tmp_path):
    """What the method itself reads is checked as a method of the class (it was not visited at all): a warning, as the
    method is defined under a version check."""
    graph = GRAPH.replace("        def __init__(self, device, model_runner, varlen=False):\n            super().__init__(device)\n",
                          "        def __init__(self, device, model_runner, varlen=False):\n            super().__init__(device)\n"
                          "            self.devise.x = 1\n")
    assert graph != GRAPH
    found = [(sev, sym) for sev, sym, _ in _dc006(tmp_path, {**CLIENT2, "pkg/graph.py": graph})]
    assert found == [("warning", "vllm.graph.ModelCudaGraphManager.devise")]


LA3 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / "LA3_test_module_skipped_at_import_before_its_imports"
VLLM3 = _tree(LA3 / "vllm_src")
OPS = (LA3 / "client" / "tests" / "test_cache_ops.py").read_text()


def _dc002(tmp_path: Path, ops: str) -> list:
    result = scan_trees(tmp_path, VLLM3, {"tests/__init__.py": "", "tests/test_cache_ops.py": ops}, only=["DC002"])
    return [(f.severity, f.symbol, f.details.get("guarded", "")) for f in result.findings]


def test_la3_an_import_after_a_module_level_skip_never_runs(tmp_path):
    [(severity, symbol, guarded)] = _dc002(tmp_path, OPS)
    assert (severity, symbol) == ("warning", "vllm.utils.get_kv_cache_torch_dtype")
    assert "pytest.skip(...)" in guarded and "never runs" in guarded


def test_la3_after_sys_exit_in_a_function(tmp_path):
    ops = OPS.replace("pytest.skip(allow_module_level=True)\n", "").replace(
        "def test_dtype():\n", "def test_dtype():\n    import sys\n    sys.exit(0)\n    from vllm.utils import get_kv_cache_torch_dtype as g\n")
    severities = sorted(sev for sev, _, _ in _dc002(tmp_path, ops))
    assert severities == ["error", "warning"]  # the module-level import runs; the one after sys.exit does not


def test_la3_twin_a_skip_under_an_if_leaves_the_error(tmp_path):
    ops = OPS.replace("pytest.skip(allow_module_level=True)\n", "if not hasattr(pytest, 'x'):\n    pass\nelse:\n"
                                                                "    pytest.skip(allow_module_level=True)\n")
    assert ops != OPS
    assert [sev for sev, _, _ in _dc002(tmp_path, ops)] == ["error"]


def test_la3_twin_a_skip_after_the_import_leaves_the_error(tmp_path):
    ops = OPS.replace("pytest.skip(allow_module_level=True)\n\n", "").replace(
        "from vllm.utils import get_kv_cache_torch_dtype  # noqa: E402\n",
        "from vllm.utils import get_kv_cache_torch_dtype  # noqa: E402\n\npytest.skip(allow_module_level=True)\n")
    assert ops.index("get_kv_cache_torch_dtype") < ops.index("pytest.skip")
    assert [sev for sev, _, _ in _dc002(tmp_path, ops)] == ["error"]


LA4 = Path(__file__).resolve().parent.parent / "fixtures" / "plugin_shapes" / \
    "LA4_member_stored_through_an_annotation_narrower_than_the_factory_value"
VLLM4 = _tree(LA4 / "vllm_src")
CLIENT4 = _tree(LA4 / "client")
SPECS = CLIENT4["pkg/speculators.py"]


def _dc006_4(tmp_path: Path, client: dict[str, str]) -> list:
    result = scan_trees(tmp_path, VLLM4, client, only=["DC006"])
    return sorted((f.severity, f.symbol) for f in result.findings)


def test_la4_a_member_stored_on_what_a_client_factory_builds(tmp_path):
    assert _dc006_4(tmp_path, CLIENT4) == []


def test_la4_twin_a_factory_that_never_builds_the_class(tmp_path):
    specs = SPECS.replace('    if config == "dflash":\n        return AscendDFlashSpeculator(config)\n', "")
    assert specs != SPECS
    assert _dc006_4(tmp_path, {**CLIENT4, "pkg/speculators.py": specs}) == [
        ("error", "vllm.spec.DFlashSpeculator.update_stream")]



MANIFEST = """apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: registry.example.com/aibrix/vllm-openai:{tag}
          command: ["sh", "-c"]
          args:
            - |
              vllm serve /models/m \\
                --port 8000 \\
                --disable-log-requests \\
                --swap-space "0"
"""


def _dc111_real(tmp_path: Path, files: dict[str, str]) -> list:
    root = tmp_path / "client"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    result = scan(resolve_vllm("0.32.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC111"]))
    return sorted([(f.severity, f.symbol, f.client.line) for f in result.findings if f.rule == "DC111"] +
                  [("unknown", u.symbol, u.client.line) for u in result.unknown if u.rule == "DC111"])


def test_la5_flags_of_a_launch_in_an_image_of_another_release_are_unknown(tmp_path):
    found = _dc111_real(tmp_path, {"deploy/vllm-pd.yaml": MANIFEST.format(tag="v0.10.2-aibrix-v0.5.0-nixl-0.7.1")})
    assert found == [("unknown", "vllm serve --disable-log-requests", 14), ("unknown", "vllm serve --swap-space", 15)]


def test_la5_a_dockerfile_from_an_image_of_another_release(tmp_path):
    docker = 'FROM vllm/vllm-openai:v0.10.2\nCMD vllm serve /models/m --swap-space 0\n'
    assert _dc111_real(tmp_path, {"Dockerfile": docker}) == [("unknown", "vllm serve --swap-space", 2)]


def test_la5_twin_the_image_names_the_target_or_no_release_or_is_not_vllm(tmp_path):
    files = {"a/vllm.yaml": MANIFEST.format(tag="v0.32.0"), "b/vllm.yaml": MANIFEST.format(tag="latest"),
             "c/vllm.yaml": MANIFEST.replace("aibrix/vllm-openai:{tag}", "tools/busybox:1.36.1")}
    found = _dc111_real(tmp_path, files)
    assert [sev for sev, _, _ in found] == ["error"] * 6


def test_la5_twin_an_image_in_an_earlier_yaml_document_does_not_count(tmp_path):
    manifest = "image: vllm/vllm-openai:v0.10.2\n---\n" + MANIFEST.format(tag="${VLLM_TAG}")
    assert [sev for sev, _, _ in _dc111_real(tmp_path, {"vllm.yaml": manifest})] == ["error", "error"]
