"""Module-level `__getattr__`: lazy-import maps, deprecated aliases, `if name == ...` imports, and
whether the function refuses every other name (closed) or might serve anything (open)."""

from __future__ import annotations

from driftcheck.vllm_model.resolved import Missing, Resolved, Unknown

from scan.helpers import by_rule, file_line, index, scan_trees

LAZY_MAP = {
    # the shape of vllm/__init__.py since 0.10: name -> "module:attr", imported on first access
    "vllm/__init__.py": """
        import typing

        MODULE_ATTRS = {
            "LLM": ".entrypoints.llm:LLM",
            "SamplingParams": "vllm.sampling_params:SamplingParams",
        }

        if typing.TYPE_CHECKING:
            from vllm.entrypoints.llm import LLM


        def __getattr__(name: str) -> typing.Any:
            from importlib import import_module

            if name in MODULE_ATTRS:
                module_name, attr_name = MODULE_ATTRS[name].split(":")
                module = import_module(module_name, __package__)
                return getattr(module, attr_name)
            else:
                raise AttributeError(f"module {__package__} has no attribute {name}")
    """,
    "vllm/entrypoints/llm.py": "class LLM:\n    pass\n",
    "vllm/sampling_params.py": "class SamplingParams:\n    pass\n",
}


def test_lazy_map_with_module_colon_attr_values(tmp_path):
    api = index(tmp_path, LAZY_MAP)
    sp = api.resolve("vllm.SamplingParams")  # absolute "module:attr"
    assert isinstance(sp, Resolved) and sp.kind == "class" and sp.path == "vllm/sampling_params.py"
    assert not sp.deprecated
    llm = api.resolve("vllm.LLM")  # relative ".module:attr" (also bound under TYPE_CHECKING)
    assert isinstance(llm, Resolved) and llm.path == "vllm/entrypoints/llm.py"


def test_closed_getattr_makes_other_names_missing(tmp_path):
    api = index(tmp_path, LAZY_MAP)
    assert isinstance(api.resolve("vllm.NotThere"), Missing)


def test_open_getattr_makes_other_names_unknown(tmp_path):
    # the function falls through to something we cannot evaluate: any name might exist
    api = index(tmp_path, {
        "vllm/plugins.py": """
            _REGISTRY = {}

            def __getattr__(name):
                if name == "known":
                    return 1
                return _REGISTRY[name]
        """,
    })
    assert isinstance(api.resolve("vllm.plugins.known"), Resolved)
    assert isinstance(api.resolve("vllm.plugins.anything"), Unknown)


def test_if_name_equals_import_form(tmp_path):
    api = index(tmp_path, {
        "vllm/utils/__init__.py": """
            def __getattr__(name):
                if name == "get_open_port":
                    from vllm.utils.network_utils import get_open_port

                    return get_open_port
                raise AttributeError(name)
        """,
        "vllm/utils/network_utils.py": "def get_open_port() -> int:\n    return 0\n",
    })
    port = api.resolve("vllm.utils.get_open_port")
    assert isinstance(port, Resolved) and port.kind == "function"
    assert (port.path, port.line) == ("vllm/utils/network_utils.py", 1)
    assert not port.deprecated
    assert isinstance(api.resolve("vllm.utils.get_closed_port"), Missing)


DEPRECATED = {
    # vllm/utils/__init__.py in 0.12-0.16: moved helpers stay importable, with a DeprecationWarning
    "vllm/utils/__init__.py": """
        import warnings

        _DEPRECATED_MAPPINGS = {
            "get_open_port": "network_utils",
            "cdiv": "math_utils",
        }


        def __getattr__(name: str):
            if name in _DEPRECATED_MAPPINGS:
                submodule_name = _DEPRECATED_MAPPINGS[name]
                warnings.warn(
                    f"vllm.utils.{name} is deprecated; import from vllm.utils.{submodule_name}",
                    DeprecationWarning,
                    stacklevel=2,
                )
                module = __import__(f"vllm.utils.{submodule_name}", fromlist=[submodule_name])
                return getattr(module, name)
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


        def still_here():
            pass
    """,
    "vllm/utils/network_utils.py": "def get_open_port() -> int:\n    return 0\n",
    "vllm/utils/math_utils.py": "def cdiv(a: int, b: int) -> int:\n    return -(a // -b)\n",
}


def test_deprecated_alias_map_resolves_to_new_home_and_is_marked(tmp_path):
    api = index(tmp_path, DEPRECATED)
    port = api.resolve("vllm.utils.get_open_port")
    assert isinstance(port, Resolved) and port.deprecated
    assert port.path == "vllm/utils/network_utils.py"
    assert isinstance(api.resolve("vllm.utils.cdiv"), Resolved)
    # an ordinary definition in the same module is not deprecated
    here = api.resolve("vllm.utils.still_here")
    assert isinstance(here, Resolved) and not here.deprecated


def test_deprecated_alias_is_reported_by_dc009_not_dc002(tmp_path):
    client = {"gen.py": "from vllm.utils import get_open_port\nfrom vllm.utils.math_utils import cdiv\n"}
    result = scan_trees(tmp_path, DEPRECATED, client)
    dc009 = by_rule(result, "DC009")
    assert [(f.client.path, f.client.line, f.severity) for f in dc009] == [("gen.py", 1, "warning")]
    # the vLLM side of the finding is the name's new definition
    root = tmp_path / "vllm-src"
    assert (dc009[0].vllm.path, dc009[0].vllm.line) == (
        "vllm/utils/network_utils.py", file_line(root, "vllm/utils/network_utils.py", "def get_open_port"))
    assert dc009[0].details["moved_to"] == "vllm.utils.network_utils"
    assert not by_rule(result, "DC002")


def test_getattr_without_warning_is_not_deprecated(tmp_path):
    api = index(tmp_path, {
        "vllm/lazy.py": """
            _LAZY = {"Thing": ("vllm.impl", "Thing")}

            def __getattr__(name):
                if name in _LAZY:
                    mod, attr = _LAZY[name]
                    import importlib
                    return getattr(importlib.import_module(mod), attr)
                raise AttributeError(name)
        """,
        "vllm/impl.py": "class Thing:\n    pass\n",
    })
    thing = api.resolve("vllm.lazy.Thing")  # tuple values ("module", "attr")
    assert isinstance(thing, Resolved) and thing.path == "vllm/impl.py" and not thing.deprecated
