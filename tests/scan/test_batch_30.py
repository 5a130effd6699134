"""Twenty-fifth session: batch 30's findings and the leftovers of batch 29, on the real releases they came from.

Each case is reduced from a real client's line; the expected lines and conditions are read from the release's own
sources (`source_line`), never written in.
"""

from __future__ import annotations

from conftest import source_line, vllm_sources
from scan.helpers import scan_at_release, scan_trees


# 30b U2 (vLLM 0.28.0's self-scan): `vllm/utils/humming.py`'s `__getattr__` starts `spec = _EXPORTS.get(name)` then
# `if spec is None: raise AttributeError(...)`; the 50 names it lazily loads were "cannot tell", and so was a name
# not in the table, which certainly fails.
_FACADE = '''\
_EXPORTS: dict[str, str] = {"Schema": "other_pkg.schema:Schema", "tune": "other_pkg.tune"}


def __getattr__(name: str):
    spec = _EXPORTS.get(name)
    if spec is None:
        raise AttributeError(f"module has no attribute {name!r}")
    return _load(spec)
'''


def _facade_findings(tmp_path, getattr_module: str) -> list[tuple[int, str]]:
    vllm = {"vllm/__init__.py": "", "vllm/lazy.py": getattr_module}
    client = {"plug/__init__.py": "", "plug/use.py": "from vllm.lazy import Schema\nfrom vllm.lazy import Gone\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC002"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings] + [(u.client.line, "unknown") for u in result.unknown]


def test_30b_u2_a_getattr_that_looks_names_up_in_a_table_serves_only_its_keys(tmp_path):
    assert _facade_findings(tmp_path, _FACADE) == [(2, "error")]


def test_30b_u2_twin_a_table_lookup_that_does_not_refuse_the_rest_may_serve_any_name(tmp_path):
    opened = _FACADE.replace("    if spec is None:\n        raise AttributeError(f\"module has no attribute {name!r}\")\n",
                             "    if spec is None:\n        return _fallback(name)\n")
    assert _facade_findings(tmp_path, opened) == [(2, "unknown")]


def test_30b_u2_on_the_release_a_name_humming_lists_is_served_and_one_it_lacks_fails(tmp_path):
    listed = source_line(vllm_sources("0.28.0"), "vllm/utils/humming.py", '"HummingInputSchema":')
    assert listed > 0
    result = scan_at_release(tmp_path, {"use.py": "from vllm.utils.humming import HummingInputSchema\n"
                                                  "from vllm.utils.humming import NoSuchSchema\n"}, "0.28.0", ["DC002"])
    assert not result.internal_errors and result.unknown == []
    assert [(f.client.line, f.severity, f.symbol) for f in result.findings] == [
        (2, "error", "vllm.utils.humming.NoSuchSchema")]


# 30c F1 (swallow-evaluation-instruct, lighteval/models/vllm/reasoning_parser/): `MarkupReasoningParser(ReasoningParser)`
# takes `(think_start_expr, response_start_expr)` and is never registered; its registered subclasses take the tokenizer
# and call `super().__init__(...)` with the markup. vLLM 0.34.0 builds `parser_cls(tokenizer)` of registered classes
# only, so the base's `__init__` is never called with vLLM's arguments.
_MARKUP_BASE = """\
    from vllm.reasoning import ReasoningParser


    class MarkupReasoningParser(ReasoningParser):
        def __init__(self, think_start_expr: str, response_start_expr: str):
            super().__init__(tokenizer=None)
            self.think_start_expr = think_start_expr

        def extract_reasoning(self, model_output, request):
            return None, model_output
"""
_MARKUP_SUB = """\
    from vllm.reasoning import ReasoningParserManager

    from .base import MarkupReasoningParser


    @ReasoningParserManager.register_module("r1_markup")
    class R1MarkupParser(MarkupReasoningParser):
        def __init__(self, tokenizer=None):
            super().__init__(think_start_expr="<think>", response_start_expr="</think>")
"""


def _markup(tmp_path, sub: str = _MARKUP_SUB, extra: dict | None = None):
    files = {"rp/__init__.py": "", "rp/base.py": _MARKUP_BASE, "rp/r1.py": sub, **(extra or {})}
    result = scan_at_release(tmp_path, files, "0.34.0", ["DC109"], client_vllm="0.11.0")
    assert not result.internal_errors
    return [(f.client.path, f.client.line, f.severity) for f in result.findings]


def test_30c_f1_a_base_only_the_clients_own_subclasses_build_is_not_built_by_vllm(tmp_path):
    assert _markup(tmp_path) == []


def test_30c_f1_twin_a_subclass_that_inherits_the_bases_init_is_built_with_vllms_arguments(tmp_path):
    inherits = _MARKUP_SUB.split("        def __init__")[0] + "        pass\n"
    assert _markup(tmp_path, inherits) == [("rp/base.py", 5, "error")]


def test_30c_f1_twin_a_base_the_client_hands_out_may_be_built(tmp_path):
    # registered itself, or named by a string or an entry point: vLLM may build it with its own arguments
    registered = _MARKUP_BASE.replace("    class MarkupReasoningParser", "    @ReasoningParserManager.register_module(\"m\")\n"
                                      "    class MarkupReasoningParser").replace(
        "import ReasoningParser\n", "import ReasoningParser, ReasoningParserManager\n")
    assert _markup(tmp_path / "a", extra={"rp/base.py": registered}) == [("rp/base.py", 6, "error")]
    named = {"pyproject.toml": '[project.entry-points."vllm.general_plugins"]\nmarkup = "rp.base:MarkupReasoningParser"\n'}
    assert _markup(tmp_path / "b", extra=named) == [("rp/base.py", 5, "error")]


# 30c M2 (swallow-evaluation-instruct, lighteval/metrics/llm_as_judge.py): `match self.backend:` / `case "vllm" if
# is_vllm_available():` imports `vllm.transformers_utils.tokenizer`, which 0.34.0 no longer has; the imports of a `case`
# body (and of a loop's `else:`) were never read.
_JUDGE = {"judge.py": """\
    class Judge:
        def load(self, backend):
            match backend:
                case "vllm":
                    from vllm.transformers_utils.tokenizer import get_tokenizer

                    return get_tokenizer("m")
                case _:
                    return None

        def fallback(self, names):
            for name in names:
                pass
            else:
                from vllm.transformers_utils.tokenizer import get_tokenizer
                return get_tokenizer
"""}


def test_30c_m2_the_imports_of_a_case_body_and_a_loops_else_are_checked(tmp_path):
    import zipfile

    with zipfile.ZipFile(vllm_sources("0.34.0")) as z:
        assert not {"vllm/transformers_utils/tokenizer.py", "vllm/transformers_utils/tokenizer/__init__.py"} & set(z.namelist())
    result = scan_at_release(tmp_path, _JUDGE, "0.34.0", ["DC001"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity, f.rule) for f in result.findings] == [(5, "error", "DC001"), (15, "error", "DC001")]


# 30a R1 (Qihoo360/360zhinao's model files, three fix commits): `self.attn(q, k, v, kv_cache, attn_metadata)` on a vLLM
# `Attention`, a `torch.nn.Module`: `nn.Module.__call__` hands `forward` the arguments as they are, and from the V1
# releases `forward(query, key, value, output_shape=None)` takes four. The same call written `.forward(...)` was an
# error; through the object it got nothing.
_V0_ATTENTION = {"zhinao.py": """\
    from torch import nn
    from vllm.model_executor.layers.attention import Attention


    class ZhinaoAttention(nn.Module):
        def __init__(self, num_heads, head_dim, scaling):
            super().__init__()
            self.attn = Attention(num_heads, head_dim, scaling)

        def forward(self, q, k, v, kv_cache, attn_metadata):
            out = self.attn(q, k, v, kv_cache, attn_metadata)
            return self.attn(q, k, v), out
"""}


def test_30a_r1_a_call_of_a_vllm_module_object_is_checked_against_its_forward(tmp_path):
    line = source_line(vllm_sources("0.16.0"), "vllm/model_executor/layers/attention/attention.py", "    def forward(")
    result = scan_at_release(tmp_path, _V0_ATTENTION, "0.16.0", ["DC004"])
    assert not result.internal_errors
    [f] = result.findings
    assert (f.client.line, f.severity, f.rule) == (11, "error", "DC004")
    assert f.vllm.line == line and "Attention.forward() takes 4 positional argument(s) but 5 were given" in f.message


_MODULES = {
    "vllm/__init__.py": "",
    "vllm/layers.py": """\
        import torch.nn as nn


        class Plain(nn.Module):
            def forward(self, x):
                return x


        class Called(nn.Module):
            def __call__(self, x, y, z):
                return x

            def forward(self, x):
                return x


        class NotAModule:
            def forward(self, x):
                return x


        class Wide(Plain):
            def forward(self, x, y):
                return x


        class Dispatched(nn.Module):
            def __new__(cls, *args, **kwargs):
                return super().__new__(cls)

            def forward(self, x):
                return x


        class WideDispatched(Dispatched):
            def forward(self, x, y):
                return x
    """,
}


def test_30a_r1_twin_only_a_module_without_its_own_call_runs_forward(tmp_path):
    client = {"c.py": """\
        from vllm.layers import Called, NotAModule, Plain


        def f(x):
            Plain()(x, x)
            Called()(x, x, x)
            NotAModule()(x, x)
            Plain()(x)
    """}
    result = scan_trees(tmp_path, _MODULES, client, only=["DC004"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity) for f in result.findings] == [(5, "error")]


def test_30a_r1_an_object_the_client_built_is_its_class_not_a_subclass(tmp_path):
    # built by `Plain(...)`: no subclass's wider `forward` runs (an error); annotated as `Plain`, or built through a
    # `__new__` that may hand back another class (vLLM's `CustomOp`), it may be one (a warning)
    client = {"c.py": """\
        from vllm.layers import Dispatched, Plain


        def f(x, m: Plain):
            layer = Plain()
            layer(x, x)
            layer.forward(x, x)
            m(x, x)
            Dispatched()(x, x)
    """}
    result = scan_trees(tmp_path, _MODULES, client, only=["DC004"])
    assert not result.internal_errors
    assert [(f.client.line, f.severity) for f in result.findings] == [(6, "error"), (7, "error"), (8, "warning"),
                                                                      (9, "warning")]


# 30d MSG-2 (VITA's model files, written for 0.5.5, at 0.11.0): `from vllm.model_executor.sampling_metadata import
# SamplingMetadata`, a module the V1 releases removed, was told "defined now: `SamplingMetadata` in
# `vllm.v1.sample.metadata`", a class sharing none of V0's members (DC002 already declined such a home).
_OWN_META = {"vllm/__init__.py": "", "vllm/sampling_metadata.py": "class SamplingMetadata:\n"
             "    def __init__(self, seq_groups):\n        self.seq_groups = seq_groups\n"}


def _meta_home(tmp_path, new_members: str) -> str:
    from scan.helpers import scan_against_own

    target = {"vllm/__init__.py": "", "vllm/v1/__init__.py": "", "vllm/v1/sample/__init__.py": "",
              "vllm/v1/sample/metadata.py": "class SamplingMetadata:\n    def __init__(self):\n" + new_members,
              "vllm/v1/runner.py": "from vllm.v1.sample.metadata import SamplingMetadata\n"}
    client = {"m.py": "from vllm.sampling_metadata import SamplingMetadata\n"}
    result = scan_against_own(tmp_path, _OWN_META, "0.5.5", target, client, ["DC001"], "0.11.0")
    [f] = result.findings
    return f.message


def test_30d_msg2_a_missing_modules_name_is_not_sent_to_another_object_of_that_name(tmp_path):
    message = _meta_home(tmp_path, "        self.temperature = None\n")
    assert "`vllm.v1.sample.metadata` defines a `SamplingMetadata`, but another one (a class with none of the members " \
           "vLLM 0.5.5's had), so no new home is named." in message and "defined now" not in message


def test_30d_msg2_twin_a_class_that_kept_its_members_is_its_new_home(tmp_path):
    message = _meta_home(tmp_path, "        self.seq_groups = []\n")
    assert "Where what the client takes from it is defined now: `SamplingMetadata` in `vllm.v1.sample.metadata`." in message


# 30d (VITA at 0.10.0): `AsyncEngineArgs.load_format` defaults to `LoadConfig.load_format`, whose own default is
# `LoadFormat.AUTO.value`, still "auto"; DC107 said the default "changed from 'auto' to LoadConfig.load_format".
_OWN_ARGS = {"vllm/__init__.py": "from vllm.engine.arg_utils import EngineArgs\n", "vllm/engine/__init__.py": "",
             "vllm/engine/arg_utils.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass EngineArgs:\n"
                                         "    model: str\n    load_format: str = \"auto\"\n"}


def _load_format_infos(tmp_path, auto: str) -> list[str]:
    from scan.helpers import scan_against_own

    target = {"vllm/__init__.py": "from vllm.engine.arg_utils import EngineArgs\n", "vllm/engine/__init__.py": "",
              "vllm/config.py": f"import enum\nfrom dataclasses import dataclass\n\n\nclass LoadFormat(str, enum.Enum):\n"
                                f"    AUTO = \"{auto}\"\n\n\n@dataclass\nclass LoadConfig:\n"
                                f"    load_format: str = LoadFormat.AUTO.value\n",
              "vllm/engine/arg_utils.py": "from dataclasses import dataclass\n\nfrom vllm.config import LoadConfig\n\n\n"
                                          "@dataclass\nclass EngineArgs:\n    model: str\n"
                                          "    load_format: str = LoadConfig.load_format\n"}
    client = {"serve.py": "from vllm import EngineArgs\n\nargs = EngineArgs(model=\"m\")\n"}
    result = scan_against_own(tmp_path, _OWN_ARGS, "0.5.5", target, client, ["DC107"], "0.10.0")
    return [f.message for f in result.findings if "load_format" in f.message]


def test_30d_an_enum_members_value_is_the_literal_it_assigns(tmp_path):
    assert _load_format_infos(tmp_path, "auto") == []


def test_30d_twin_an_enum_value_that_did_change_is_told(tmp_path):
    [message] = _load_format_infos(tmp_path, "safetensors")
    assert "changed from 'auto' in vLLM 0.5.5 to 'safetensors' (LoadConfig.load_format) in vLLM 0.10.0" in message


# 30c M1 (union 0.1.204, _model_loader/shim/vllm.py): `@register_model_loader("union-streaming") class
# UnionModelLoader(DefaultModelLoader)` with `def load_model(self, vllm_config, model_config)`. vLLM's `get_model` does
# `loader = get_model_loader(...)` (annotated `-> BaseModelLoader`) and, from the releases after 0.11.0,
# `loader.load_model(..., prefix=prefix)`: a call on a local typed by the function that built it was never read.
_LOADER = {"shim.py": """\
    from vllm.model_executor.model_loader import register_model_loader
    from vllm.model_executor.model_loader.default_loader import DefaultModelLoader


    @register_model_loader("my-streaming")
    class MyLoader(DefaultModelLoader):
        def load_model(self, vllm_config, model_config):
            return super().load_model(vllm_config, model_config)
"""}


def test_30c_m1_a_vllm_call_on_a_local_typed_by_its_builders_annotation_reaches_the_override(tmp_path):
    sources = vllm_sources("0.34.0")
    line = source_line(sources, "vllm/model_executor/model_loader/__init__.py", "return loader.load_model(")
    assert source_line(sources, "vllm/model_executor/model_loader/__init__.py", "loader = get_model_loader(") < line
    result = scan_at_release(tmp_path, _LOADER, "0.34.0", ["DC109"], client_vllm="0.11.0")
    assert not result.internal_errors
    [f] = result.findings
    assert (f.client.line, f.severity, f.vllm.line) == (7, "error", line) and "'prefix='" in f.message


def test_30c_m1_twin_a_local_bound_twice_or_by_an_unannotated_call_is_not_typed(tmp_path):
    vllm = {"vllm/__init__.py": "", "vllm/loaders.py": """\
        class Base:
            def load(self, config, prefix=""):
                return config


        def make() -> Base:
            return Base()


        def made():
            return Base()


        def once(config):
            loader = make()
            return loader.load(config, prefix="p")


        def twice(config, other):
            loader = make()
            loader = other
            return loader.load(config, prefix="p")


        def unannotated(config):
            loader = made()
            return loader.load(config, prefix="p")
    """}
    client = {"mine.py": """\
        from vllm.loaders import Base


        class Mine(Base):
            def load(self, config):
                return config
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC109"])
    assert not result.internal_errors
    assert [(f.client.line, f.vllm.line) for f in result.findings] == [(5, 16)]


# 30a R2 (bentoml/openllm-models before f0027d6b, on 0.8.5): `init_app_state(engine, model_config, state, args)`; 0.8.5
# renamed the 2nd parameter in place to `vllm_config: VllmConfig` and reads `vllm_config.model_config` from it.
_OWN_SERVER = {"vllm/__init__.py": "", "vllm/config.py": "class ModelConfig:\n    pass\n\n\nclass VllmConfig:\n"
               "    pass\n\n\nclass SpecialModelConfig(ModelConfig):\n    pass\n",
               "vllm/server.py": "from vllm.config import ModelConfig\n\n\n"
                                 "async def init_app_state(engine_client, model_config: ModelConfig, state, args):\n"
                                 "    return model_config\n"}
_CLIENT_SERVER = {"serve.py": "from vllm import server\n\n\nasync def init(engine, model_config, state, args):\n"
                              "    await server.init_app_state(engine, model_config, state, args)\n"}


def _retyped(tmp_path, parameter: str) -> list[tuple[int, str, str]]:
    from scan.helpers import scan_against_own

    target = {**_OWN_SERVER, "vllm/server.py": "from vllm.config import ModelConfig, SpecialModelConfig, VllmConfig\n\n\n"
              f"async def init_app_state(engine_client, {parameter}, state, args):\n    return state\n"}
    result = scan_against_own(tmp_path, _OWN_SERVER, "0.8.4", target, _CLIENT_SERVER, ["DC121"], "0.8.5")
    return [(f.client.line, f.severity, f.message) for f in result.findings]


def test_30a_r2_a_parameter_renamed_in_place_that_takes_another_class_is_told(tmp_path):
    [(line, severity, message)] = _retyped(tmp_path, "vllm_config: VllmConfig")
    assert (line, severity) == (5, "warning")
    assert "2nd positional argument bound `model_config: ModelConfig` in vLLM 0.8.4 and binds `vllm_config: VllmConfig`" \
        in message


def test_30a_r2_twin_a_rename_that_keeps_the_class_or_takes_a_subclass_is_no_finding(tmp_path):
    assert _retyped(tmp_path / "a", "config: ModelConfig") == []
    assert _retyped(tmp_path / "b", "special: SpecialModelConfig") == []
    assert _retyped(tmp_path / "c", "untyped") == []


# 29h O1: 0.34.0's `SupportsMultiModal._mark_tower_model` does `from vllm.model_executor.offloader import get_offloader`
# in its body, `offloader = get_offloader()` (annotated `-> BaseOffloader`), then `offloader.wrap_modules(modules,
# prefix=name)`: a file that never names the class, reaching it through a factory of the class's own module.
_OFFLOADERS = {"offload.py": """\
    from vllm.model_executor.offloader.uva import UVAOffloader


    class FirstUVA(UVAOffloader):
        def wrap_modules(self, modules_generator):
            return list(modules_generator)
"""}


def test_29h_o1_a_call_through_a_locally_imported_factory_reaches_the_override(tmp_path):
    line = source_line(vllm_sources("0.34.0"), "vllm/model_executor/models/interfaces.py",
                       "offloader.wrap_modules(modules, prefix=name)")
    result = scan_at_release(tmp_path, _OFFLOADERS, "0.34.0", ["DC109"])
    assert not result.internal_errors
    assert [(f.client.line, f.vllm.path, f.vllm.line) for f in result.findings] == [
        (5, "vllm/model_executor/models/interfaces.py", line)]


# 31c M0 (NeMo's exporter tree without its `__init__.py` files): `pkg/vllm/` (the client's sub-package, with an
# `__init__.py` where vLLM has one) in a namespace folder, which `pkg/app.py` imports as `pkg.vllm.engine`, was taken
# for an overlay of vLLM's package: every `from vllm import ...` of its siblings went silent, with no unknown.
_OVERLAID = {"vllm/__init__.py": "class LLMEngine:\n    def __init__(self, model_config):\n        pass\n"}


def _namespace_sibling(tmp_path, app: str) -> list[tuple[int, str]]:
    client = {"pkg/vllm/__init__.py": "", "pkg/vllm/engine.py": "class MyEngine:\n    pass\n", "pkg/app.py": app}
    result = scan_trees(tmp_path, _OVERLAID, client, only=["DC003"])
    assert not result.internal_errors
    return [(f.client.line, f.severity) for f in result.findings] + [(u.client.line, "unknown") for u in result.unknown]


def test_31c_m0_a_folder_the_client_imports_by_its_path_is_its_own_module_not_an_overlay(tmp_path):
    app = ("from vllm import LLMEngine\n\nfrom pkg.vllm.engine import MyEngine\n\n\n"
           "def build(config):\n    return LLMEngine(config, vision_language_config=None), MyEngine()\n")
    assert _namespace_sibling(tmp_path, app) == [(7, "error")]


def test_31c_m0_twin_a_folder_nothing_imports_by_another_name_stays_an_overlay(tmp_path):
    app = "from vllm import LLMEngine\n\n\ndef build(config):\n    return LLMEngine(config, vision_language_config=None)\n"
    assert (5, "error") not in _namespace_sibling(tmp_path, app)


def test_31a_r1_r2_a_forward_the_client_sets_itself_is_the_one_a_call_runs(tmp_path):
    # `LogitsProcessor.forward = _forward_with_scale` on the class, or `layer.forward = self._hook` on one object (the
    # steering / KV-compression hook idiom): `nn.Module.__call__` runs the client's function, not vLLM's `forward`
    on_class = {"c.py": """\
        from vllm.layers import Plain


        def wide(self, x, y):
            return x


        Plain.forward = wide


        def f(x):
            return Plain()(x, x)
    """}
    on_object = {"c.py": """\
        from vllm.layers import Plain


        class Model:
            def __init__(self):
                self.layer = Plain()
                self.layer.forward = self.hook

            def hook(self, x, y):
                return x

            def run(self, x):
                return self.layer(x, x)
    """}
    for n, client in enumerate((on_class, on_object)):
        result = scan_trees(tmp_path / str(n), _MODULES, client, only=["DC004"])
        assert result.findings == [] and not result.internal_errors


# 31c M2 (NeMo's exporter before 3578f75ec4): `NemoTokenizerGroup(BaseTokenizerGroup)`, which the client builds itself,
# lacked `from_config`, an `@classmethod @abstractmethod` 0.5.3 added: "Can't instantiate abstract class". DC114 left
# out every class whose missing names are class or static methods (an interface of classes, never built).
_GROUP = ("from abc import ABC, abstractmethod\n\n\nclass BaseTokenizerGroup(ABC):\n    @abstractmethod\n"
          "    def ping(self):\n        raise NotImplementedError\n")
_GROUP_NOW = _GROUP + ("\n    @classmethod\n    @abstractmethod\n    def from_config(cls, config):\n"
                       "        raise NotImplementedError\n")


def _tokenizer_group(tmp_path, builds: bool) -> list[tuple[int, str]]:
    from scan.helpers import scan_against_own

    tree = {"vllm/__init__.py": "", "vllm/group.py": _GROUP}
    client = {"mine.py": "from vllm.group import BaseTokenizerGroup\n\n\nclass Mine(BaseTokenizerGroup):\n"
                         "    def ping(self):\n        return True\n" + ("\n\ndef make():\n    return Mine()\n" if builds else "")}
    result = scan_against_own(tmp_path, tree, "0.5.1", {**tree, "vllm/group.py": _GROUP_NOW}, client, ["DC114"], "0.5.3")
    return [(f.client.line, f.severity) for f in result.findings]


def test_31c_m2_a_class_the_client_builds_lacks_an_abstract_classmethod(tmp_path):
    assert _tokenizer_group(tmp_path, builds=True) == [(4, "error")]


def test_31c_m2_twin_a_class_the_client_never_builds_is_a_class_of_classes(tmp_path):
    assert _tokenizer_group(tmp_path, builds=False) == []


# 31c M4 (NeMo before 1e5214246f, on 0.7.2): `InputPreprocessor._tokenize_prompt` does `tokenizer =
# self.get_tokenizer_group()` (`-> BaseTokenizerGroup`) then `tokenizer.encode(..., add_special_tokens=...)`, which the
# client's `encode(self, prompt, request_id=None, lora_request=None)` rejects.
def test_31c_m4_a_local_bound_to_a_method_of_self_holds_its_annotated_class(tmp_path):
    vllm = {"vllm/__init__.py": "", "vllm/tok.py": """\
        class BaseTokenizerGroup:
            def encode(self, prompt, add_special_tokens=None):
                return []


        class InputPreprocessor:
            def get_tokenizer_group(self) -> BaseTokenizerGroup:
                return self.group

            def tokenize(self, prompt):
                tokenizer = self.get_tokenizer_group()
                return tokenizer.encode(prompt, add_special_tokens=True)

            @staticmethod
            def unbound(self, prompt):
                tokenizer = self.get_tokenizer_group()
                return tokenizer.encode(prompt, add_special_tokens=True)
    """}
    client = {"mine.py": """\
        from vllm.tok import BaseTokenizerGroup


        class MyTokenizerGroup(BaseTokenizerGroup):
            def encode(self, prompt):
                return []
    """}
    result = scan_trees(tmp_path, vllm, client, only=["DC109"])
    assert not result.internal_errors
    assert [(f.client.line, f.vllm.line) for f in result.findings] == [(5, 12)]
