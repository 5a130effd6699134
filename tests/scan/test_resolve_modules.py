"""Name resolution through modules: re-exports, star imports, submodules, TYPE_CHECKING names.

Each test builds the smallest vLLM tree that exercises one rule and checks both the verdict
(Resolved / Missing / Unknown) and where the definition was found.
"""

from __future__ import annotations

from driftcheck.vllm_model.resolved import External, Missing, Resolved, Unknown

from scan.helpers import file_line, index


def test_package_init_reexport_resolves_to_the_defining_module(tmp_path):
    api = index(tmp_path, {
        "vllm/__init__.py": "from vllm.engine.llm import LLM as LLM\nfrom .sampling import SamplingParams\n",
        "vllm/engine/llm.py": "class LLM:\n    def generate(self, prompts):\n        ...\n",
        "vllm/sampling.py": "import enum\n\n\nclass SamplingParams:\n    pass\n",
    })
    llm = api.resolve("vllm.LLM")
    assert isinstance(llm, Resolved) and llm.kind == "class"
    assert (llm.path, llm.line) == ("vllm/engine/llm.py", 1)
    sp = api.resolve("vllm.SamplingParams")  # relative re-export
    assert isinstance(sp, Resolved) and sp.path == "vllm/sampling.py"
    assert sp.line == file_line(tmp_path / "vllm-src", "vllm/sampling.py", "class SamplingParams")
    assert isinstance(api.resolve("vllm.Nope"), Missing)


def test_reexport_of_a_name_the_source_module_lost_is_missing(tmp_path):
    # vllm/__init__ still re-exports `Old`, but the module no longer defines it: the import chain breaks.
    api = index(tmp_path, {
        "vllm/__init__.py": "from vllm.core import New\n",
        "vllm/core.py": "class New:\n    pass\n",
    })
    assert isinstance(api.resolve("vllm.New"), Resolved)
    assert isinstance(api.resolve("vllm.Old"), Missing)


def test_star_import_honours_all(tmp_path):
    api = index(tmp_path, {
        "vllm/pkg/__init__.py": "from .impl import *\n",
        "vllm/pkg/impl.py": """
            __all__ = ["Exported"]

            class Exported:
                pass

            class NotExported:
                pass
        """,
    })
    found = api.resolve("vllm.pkg.Exported")
    assert isinstance(found, Resolved) and found.path == "vllm/pkg/impl.py"
    assert isinstance(api.resolve("vllm.pkg.NotExported"), Missing)


def test_star_import_without_all_exports_public_names_only(tmp_path):
    api = index(tmp_path, {
        "vllm/pkg/__init__.py": "from vllm.pkg.impl import *\n",
        "vllm/pkg/impl.py": """
            from vllm.other import Helper

            def public():
                pass

            def _private():
                pass
        """,
        "vllm/other.py": "class Helper:\n    pass\n",
    })
    assert isinstance(api.resolve("vllm.pkg.public"), Resolved)
    # names the star-imported module itself imported are public too, and resolve to their source
    helper = api.resolve("vllm.pkg.Helper")
    assert isinstance(helper, Resolved) and helper.path == "vllm/other.py"
    assert isinstance(api.resolve("vllm.pkg._private"), Missing)


def test_all_built_with_plus_equals_is_read(tmp_path):
    api = index(tmp_path, {
        "vllm/pkg/__init__.py": "from .impl import *\n",
        "vllm/pkg/impl.py": '__all__ = ["a"]\n__all__ += ["b"]\na = 1\nb = 2\nc = 3\n',
    })
    assert isinstance(api.resolve("vllm.pkg.b"), Resolved)
    assert isinstance(api.resolve("vllm.pkg.c"), Missing)


def test_submodule_not_imported_by_its_package_still_resolves(tmp_path):
    # `from vllm.pkg import sub` imports the submodule even when pkg/__init__.py never mentions it
    api = index(tmp_path, {
        "vllm/pkg/__init__.py": "",
        "vllm/pkg/sub.py": "def helper(x):\n    return x\n",
        "vllm/pkg/subpkg/__init__.py": "",
    })
    sub = api.resolve("vllm.pkg.sub")
    assert isinstance(sub, Resolved) and sub.kind == "module" and sub.path == "vllm/pkg/sub.py"
    assert isinstance(api.resolve("vllm.pkg.subpkg"), Resolved)
    assert isinstance(api.resolve("vllm.pkg.sub.helper"), Resolved)
    assert isinstance(api.resolve("vllm.pkg.nosuch"), Missing)


def test_type_checking_names_are_marked_type_only(tmp_path):
    api = index(tmp_path, {
        "vllm/mod.py": """
            from typing import TYPE_CHECKING

            if TYPE_CHECKING:
                from vllm.heavy import Heavy
            else:
                Heavy = None

            if TYPE_CHECKING:
                from vllm.heavy import OnlyTyped
        """,
        "vllm/heavy.py": "class Heavy:\n    pass\n\n\nclass OnlyTyped:\n    pass\n",
    })
    only = api.resolve("vllm.mod.OnlyTyped")
    assert isinstance(only, Resolved) and only.type_only and only.path == "vllm/heavy.py"
    # the runtime binding (the else branch) wins over the type-checker one
    heavy = api.resolve("vllm.mod.Heavy")
    assert isinstance(heavy, Resolved) and not heavy.type_only


def test_names_from_other_packages_are_external(tmp_path):
    api = index(tmp_path, {"vllm/mod.py": "import torch\nfrom transformers import PretrainedConfig\n"})
    assert isinstance(api.resolve("vllm.mod.PretrainedConfig"), External)
    assert isinstance(api.resolve("vllm.mod.torch"), External)
    assert isinstance(api.resolve("torch.nn"), External)


def test_a_module_that_does_not_parse_is_unknown_not_missing(tmp_path):
    api = index(tmp_path, {"vllm/broken.py": "def f(:\n"})
    assert isinstance(api.resolve("vllm.broken.f"), Unknown)


def test_namespace_package_without_init(tmp_path):
    api = index(tmp_path, {"vllm/ns/leaf.py": "X = 1\n"})
    (tmp_path / "vllm-src/vllm/ns/__init__.py").unlink()
    assert isinstance(api.resolve("vllm.ns.leaf.X"), Resolved)
