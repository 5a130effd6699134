"""DC114 abstract-method-missing (probes/abstract_method_missing.py): a client class on a vLLM abstract base lacks a
method the target makes abstract.

Real releases: 0.16.0's `MLAAttentionImpl` declares `forward_mha` and `forward_mqa` where 0.11.0's declared `forward`
(vllm/attention/backends/abstract.py then, vllm/v1/attention/backend.py now); an MLA impl written for 0.11.0 cannot be
built on 0.16.0. Fake trees: the plugin shapes ND1-ND3 (code that runs: the methods defined by a client base in
another file, by a vLLM intermediate class, an @abstractmethod without ABCMeta) and their twins, compared with an
older fake vLLM where the client's class could be built.
"""

from __future__ import annotations

from behaviour import scan_files
from scan.helpers import edited, plugin_shape, scan_trees, vllm_tree

MLA_IMPL = """
    try:
        from vllm.v1.attention.backend import MLAAttentionImpl
    except ImportError:
        from vllm.attention.backends.abstract import MLAAttentionImpl


    class MyMLAImpl(MLAAttentionImpl):
        def __init__(self, *args, **kwargs):
            pass

        def forward(self, layer, q, kv, kv_cache, attn_metadata, output=None):
            return output
"""


def _dc114(result) -> list[tuple[str, int]]:
    return [(f.severity, f.client.line) for f in result.findings if f.rule == "DC114"]


def test_dc114_an_mla_impl_written_for_0_11_cannot_be_built_on_0_16(tmp_path):
    result = scan_files(tmp_path, {"mla.py": MLA_IMPL}, vllm="0.16.0", only=["DC114"], client_vllm="0.11.0")
    assert _dc114(result) == [("error", 7)]
    [f] = result.findings
    assert "Can't instantiate abstract class MyMLAImpl with abstract methods forward_mha, forward_mqa" in f.message
    assert "On vLLM 0.11.0, which the client declares, it had every abstract method defined" in f.message
    assert (f.vllm.path, f.vllm.code) == ("vllm/v1/attention/backend.py", "def forward_mha(")
    assert f.details["missing"] == ["forward_mha", "forward_mqa"] and f.fix is None


def test_dc114_nothing_on_the_release_it_was_written_for(tmp_path):
    assert _dc114(scan_files(tmp_path, {"mla.py": MLA_IMPL}, vllm="0.11.0", only=["DC114"], client_vllm="0.11.0")) == []


def test_dc114_without_a_vllm_to_compare_with_only_a_class_the_client_builds_is_a_warning(tmp_path):
    # nothing says the class is built (vLLM may build a registered plugin class, or no one): no word
    assert _dc114(scan_files(tmp_path, {"mla.py": MLA_IMPL}, vllm="0.16.0", only=["DC114"])) == []
    built = MLA_IMPL + "\n\n    def make():\n        return MyMLAImpl(8)\n"
    result = scan_files(tmp_path / "built", {"mla.py": built}, vllm="0.16.0", only=["DC114"])
    assert _dc114(result) == [("warning", 7)]
    assert "the client declares no vLLM" in result.findings[0].message


def _scan(tmp_path, prefix: str, vllm_edits=(), client_edits=(), old_edits=()) -> list:
    """The shape's DC114 findings with edits ({rel: [(old, new)]}) to its vLLM and client files, compared with the
    vLLM the client declares: the shape's own vLLM with `old_edits`."""
    vllm, client = plugin_shape(prefix)
    old = vllm
    for rel, edits in dict(old_edits).items():
        old = edited(old, rel, *edits)
    baseline = vllm_tree(tmp_path / "old-vllm", {**old, "vllm/_version.py": '__version__ = "0.98.0"\n'})
    for rel, edits in dict(vllm_edits).items():
        vllm = edited(vllm, rel, *edits)
    for rel, edits in dict(client_edits).items():
        client = edited(client, rel, *edits)
    return _dc114(scan_trees(tmp_path, vllm, client, only=["DC114"], client_vllm=str(baseline)))


# the vLLM the client declares did not require forward_mqa (ND1) / get_device_name (ND3) / get_kv_cache_shape (ND4)
MQA_OPTIONAL = {"vllm/backend.py": [("    @abstractmethod\n    def forward_mqa(self, q):", "    def forward_mqa(self, q):")]}
NOT_ABSTRACT = {"vllm/platform.py": [("    @abstractmethod\n", "")]}
SHAPE_OPTIONAL = {"vllm/attention.py": [("    @abstractmethod\n    def get_kv_cache_shape", "    def get_kv_cache_shape")]}


def test_dc114_nd1_a_client_base_in_another_file_defines_them(tmp_path):
    assert _scan(tmp_path, "ND1") == []


def test_dc114_nd1_twin_the_base_lacks_one_is_an_error(tmp_path):
    # the client's vLLM required `forward_mha` only; this one requires `forward_mqa` too, which the client's base lost
    lost = {"plug/common.py": [("def forward_mqa(self, q)", "def forward_decode(self, q)")]}
    assert _scan(tmp_path, "ND1", client_edits=lost, old_edits=MQA_OPTIONAL) == [("error", 6)]


def test_dc114_nd1_twin_a_missing_method_the_old_vllm_also_required_is_not_drift(tmp_path):
    lost = {"plug/common.py": [("def forward_mqa(self, q)", "def forward_decode(self, q)")]}
    assert _scan(tmp_path, "ND1", client_edits=lost) == []


def test_dc114_nd1_the_client_base_is_never_reported(tmp_path):
    # CommonMLAImpl (line 4 of common.py) has a subclass: a base, whatever it lacks; the leaf (impl.py:6) is reported
    lost = {"plug/common.py": [("def forward_mqa(self, q)", "def forward_decode(self, q)")]}
    vllm, client = plugin_shape("ND1")
    old = vllm_tree(tmp_path / "old", {**edited(vllm, *[(k, *v) for k, v in MQA_OPTIONAL.items()][0]),
                                       "vllm/_version.py": '__version__ = "0.98.0"\n'})
    result = scan_trees(tmp_path, vllm, edited(client, "plug/common.py", *lost["plug/common.py"]), only=["DC114"],
                        client_vllm=str(old))
    assert [(f.client.path, f.client.line) for f in result.findings] == [("plug/impl.py", 6)]


def test_dc114_nd2_a_vllm_intermediate_class_defines_it(tmp_path):
    assert _scan(tmp_path, "ND2") == []


def test_dc114_nd2_twin_the_intermediate_class_stops_defining_it(tmp_path):
    gone = {"vllm/connector.py": [("    def request_finished(self, request) -> bool:\n        return False",
                                   "    def request_done(self, request) -> bool:\n        return False")]}
    assert _scan(tmp_path, "ND2", vllm_edits=gone) == [("error", 4)]


def test_dc114_nd3_no_abcmeta_no_error(tmp_path):
    assert _scan(tmp_path, "ND3", old_edits=NOT_ABSTRACT) == []


def test_dc114_nd3_twin_with_abc_is_an_error(tmp_path):
    abc = {"vllm/platform.py": [("from abc import abstractmethod", "from abc import ABC, abstractmethod"),
                                ("class Platform:", "class Platform(ABC):")]}
    assert _scan(tmp_path, "ND3", vllm_edits=abc, old_edits=NOT_ABSTRACT) == [("error", 4)]


def test_dc114_nd4_an_interface_of_static_methods_is_used_as_a_class(tmp_path):
    assert _scan(tmp_path, "ND4", old_edits=SHAPE_OPTIONAL) == []


def test_dc114_nd4_twin_an_instance_method_is_built_with_the_instance(tmp_path):
    def instance_method(abstract: str) -> dict:
        return {"vllm/attention.py": [(f"    @staticmethod\n{abstract}    def get_kv_cache_shape(num_blocks: int)",
                                       f"{abstract}    def get_kv_cache_shape(self, num_blocks: int)")]}

    old = {"vllm/attention.py": SHAPE_OPTIONAL["vllm/attention.py"] + instance_method("")["vllm/attention.py"]}
    assert _scan(tmp_path, "ND4", vllm_edits=instance_method("    @abstractmethod\n"), old_edits=old) == [("error", 14)]


def test_dc114_explain_names_the_abstract_method():
    from driftcheck.report.explain import explain_text

    [d] = explain_text('Traceback (most recent call last):\n  File "/srv/plug/attn.py", line 40, in get_impl\n'
                       '    impl = MyMLAImpl(num_heads)\nTypeError: Can\'t instantiate abstract class MyMLAImpl with '
                       'abstract methods forward_mha, forward_mqa\n')
    assert d["rule"] == "DC114" and "forward_mha" in d["vllm_change"]


def test_dc114_a_patch_source_class_is_never_built(tmp_path):
    # a partial copy whose method another file copies onto vLLM's class (uc-manager's patches): not built, no word
    new = {"vllm/attn.py": "from abc import ABC, abstractmethod\n\n\nclass Impl(ABC):\n    @abstractmethod\n"
                           "    def __init__(self): ...\n\n    @abstractmethod\n    def forward(self, x): ...\n\n\n"
                           "class CudaImpl(Impl):\n    def __init__(self):\n        pass\n\n    def forward(self, x):\n"
                           "        return x\n"}
    old = vllm_tree(tmp_path / "old", {"vllm/attn.py": new["vllm/attn.py"].replace(
        "    @abstractmethod\n    def __init__", "    def __init__"), "vllm/_version.py": '__version__ = "0.98.0"\n'})
    source = "from vllm.attn import Impl\n\n\nclass FastImpl(Impl):\n    def forward(self, x):\n        return x * 2\n"
    patch = "from vllm.attn import CudaImpl\n\nfrom plug.fast import FastImpl\n\nCudaImpl.forward = FastImpl.forward\n"
    client = {"plug/__init__.py": "", "plug/fast.py": source, "plug/patch.py": patch}
    assert _dc114(scan_trees(tmp_path, new, client, only=["DC114"], client_vllm=str(old))) == []
    unpatched = {**client, "plug/patch.py": patch.replace("CudaImpl.forward = FastImpl.forward", "")}
    assert _dc114(scan_trees(tmp_path / "twin", new, unpatched, only=["DC114"], client_vllm=str(old))) == [("error", 4)]


def test_dc114_a_base_from_an_unread_package_may_define_it(tmp_path):
    lost = {"plug/common.py": [("def forward_mqa(self, q)", "def forward_decode(self, q)"),
                               ("class CommonMLAImpl(MLAAttentionImpl):", "class CommonMLAImpl(MLAAttentionImpl, QueryMixin):"),
                               ("from vllm.backend import MLAAttentionImpl", "from vllm.backend import MLAAttentionImpl\nfrom kernels_lib import QueryMixin")]}
    assert _scan(tmp_path, "ND1", client_edits=lost, old_edits=MQA_OPTIONAL) == []


def test_dc114_a_base_the_client_also_builds_is_reported(tmp_path):
    # llm-d's SharedStorageOffloadingManager is both a base (of its Nixl manager) and built by its spec
    lost = {"plug/common.py": [("def forward_mqa(self, q)", "def forward_decode(self, q)")],
            "plug/impl.py": [("    return DeviceMLAImpl(num_heads)", "    return DeviceMLAImpl(num_heads) if num_heads else CommonMLAImpl(1)")]}
    vllm, client = plugin_shape("ND1")
    old = vllm_tree(tmp_path / "old", {**edited(vllm, *[(k, *v) for k, v in MQA_OPTIONAL.items()][0]),
                                       "vllm/_version.py": '__version__ = "0.98.0"\n'})
    for rel, edits in lost.items():
        client = edited(client, rel, *edits)
    result = scan_trees(tmp_path, vllm, client, only=["DC114"], client_vllm=str(old))
    assert sorted((f.client.path, f.client.line) for f in result.findings) == [("plug/common.py", 4), ("plug/impl.py", 6)]
