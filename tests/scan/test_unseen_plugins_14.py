"""Root causes of false errors from the fourteenth batch (older releases of plugins seen before, each scanned at the
vLLM it declares; docs/triage/2026-12-03-unseen-plugins-14.md): the shape that runs (a warning, no error), and the
same shape where the code really runs on the scanned release, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees

COPY = "from vllm.core import gone\n"  # a module written for other releases: imports a name this vLLM lacks


def _vllm(version: str) -> dict[str, str]:
    return {"vllm/__init__.py": f"__version__ = '{version}'\n", "vllm/core.py": "def present():\n    return 1\n"}


def _severities(result) -> dict[str, str]:
    return {f.client.path: f.severity for f in result.findings if f.rule in ("DC001", "DC002")}


# ----------------------------------------------------------------------------------------- FA
# trinity-rft 0.5.2 trinity/common/models/vllm_patch/__init__.py: `get_vllm_version()` returns
# `parse_version(vllm.__version__)` (or `parse_version("0.8.5")` when it does not parse), and `get_api_server` does
# `vllm_version = get_vllm_version()`, `if vllm_version <= parse_version("0.11.0"): from .api_patch import ...`
# `elif vllm_version == parse_version("0.12.0"): ... else: from .api_patch_v13 import ...`. Scanned at 0.19.0 (its
# `vllm<=0.19.0,>=0.17.0`), api_patch.py (for <= 0.11.0) was 7 import errors though nothing loads it there.
_SAME_FILE = {"pkg/__init__.py": "", "pkg/old.py": COPY, "pkg/new.py": "from vllm.core import present\n",
              "pkg/select.py": """
    import vllm
    from packaging.version import InvalidVersion
    from packaging.version import parse as parse_version


    def get_vllm_version():
        try:
            vllm_version = parse_version(vllm.__version__)
        except InvalidVersion:
            vllm_version = parse_version("0.8.5")
        return vllm_version


    def server():
        vllm_version = get_vllm_version()
        if vllm_version <= parse_version("0.11.0"):
            from pkg.old import gone as run
        else:
            from pkg.new import present as run
        return run
"""}


def test_fa_a_module_only_a_branch_the_release_does_not_take_loads_is_a_warning(tmp_path):
    assert _severities(scan_trees(tmp_path, _vllm("0.19.0"), _SAME_FILE, version="0.19.0")) == {"pkg/old.py": "warning"}


def test_fa_on_a_release_that_takes_the_branch_it_stays_an_error(tmp_path):
    assert _severities(scan_trees(tmp_path, _vllm("0.11.0"), _SAME_FILE, version="0.11.0")) == {"pkg/old.py": "error"}


# trinity-rft 0.4.1 trinity/common/models/vllm_model.py: `self.vllm_version = get_vllm_version()` (the helper imported
# from the client's vllm_patch package), then `if self.vllm_version <= parse_version("0.11.0"): from .api_patch ...`
# `else: from .api_patch_v12 import ...`. Scanned at 0.11.0 (its `vllm<=0.11.0,>=0.10.2`): api_patch_v12.py was 4
# errors (3 DC001, 1 DC005)
_OTHER_FILE = {"pkg/__init__.py": "", "pkg/v12.py": COPY, "pkg/old.py": "from vllm.core import present\n",
               "pkg/versions.py": """
    import vllm
    from packaging.version import parse as parse_version


    def get_vllm_version():
        return parse_version(vllm.__version__)
""", "pkg/model.py": """
    import os

    import vllm
    from packaging.version import parse as parse_version

    from pkg.versions import get_vllm_version


    class Model:
        def __init__(self):
            self.vllm_version = get_vllm_version()

        def serve(self):
            if self.vllm_version <= parse_version("0.11.0") and not os.environ.get("X"):
                from pkg.old import present as run
            else:
                from pkg.v12 import gone as run
            return run
"""}


def test_fa_a_self_attribute_bound_by_an_imported_helper_decides_the_branch(tmp_path):
    # on 0.11.0 the `and` can take either branch (the env test is not decided): v12 may load, it stays an error
    assert _severities(scan_trees(tmp_path / "a", _vllm("0.11.0"), _OTHER_FILE, version="0.11.0")) == {"pkg/v12.py": "error"}
    files = {**_OTHER_FILE, "pkg/model.py": _OTHER_FILE["pkg/model.py"].replace(' and not os.environ.get("X")', "")}
    assert _severities(scan_trees(tmp_path / "b", _vllm("0.11.0"), files, version="0.11.0")) == {"pkg/v12.py": "warning"}
    assert _severities(scan_trees(tmp_path / "c", _vllm("0.12.0"), files, version="0.12.0")) == {"pkg/v12.py": "error"}


def test_fa_a_name_bound_to_something_else_too_decides_nothing(tmp_path):
    # `vllm_version` is also bound to another value in the file: which one the test reads is not known
    select = _SAME_FILE["pkg/select.py"] + """

    def other(config):
        vllm_version = config.version
        return vllm_version
"""
    result = scan_trees(tmp_path, _vllm("0.19.0"), {**_SAME_FILE, "pkg/select.py": select}, version="0.19.0")
    assert _severities(result) == {"pkg/old.py": "error"}


def test_fa_a_module_also_loaded_outside_the_branch_stays_an_error(tmp_path):
    files = {**_SAME_FILE, "pkg/tools.py": "import vllm\nimport pkg.old\n"}
    assert _severities(scan_trees(tmp_path, _vllm("0.19.0"), files, version="0.19.0")) == {"pkg/old.py": "error"}


# ----------------------------------------------------------------------------------------- FB
# trinity-rft 0.2.1 (`vllm<=0.10.0,>=0.9.1`) @ 0.10.0 trinity/common/models/vllm_model.py:82
# `self.async_llm = vllm.AsyncLLMEngine.from_engine_args(engine_args)`, then on its V0 path (`use_v1` False, which sets
# VLLM_USE_V1=0) `self.async_llm.engine.model_executor...` (:267). vLLM 0.10.0 engine/async_llm_engine.py defines the V0
# `class AsyncLLMEngine` (:548, `self.engine = ...` :581, `from_engine_args -> "AsyncLLMEngine"` :637) and rebinds the
# name only `if envs.is_set("VLLM_USE_V1") and envs.VLLM_USE_V1:` (:1193-1196) to the V1 `AsyncLLM`, which has its own
# `from_engine_args -> "AsyncLLM"`. The classmethod was looked up on AsyncLLM alone, so its result was an AsyncLLM for
# certain, and `.engine` a DC006 error.
def _engine(conditional: bool) -> dict[str, str]:
    rebind = ("if envs.is_set(\"VLLM_USE_V1\") and envs.VLLM_USE_V1:\n"
              "            from vllm.v1.engine.async_llm import AsyncLLM\n\n"
              "            AsyncLLMEngine = AsyncLLM\n") if conditional else \
        "from vllm.v1.engine.async_llm import AsyncLLM\n\n        AsyncLLMEngine = AsyncLLM\n"
    return {
        "vllm/__init__.py": "__version__ = '0.10.0'\n",
        "vllm/envs.py": "import os\n\nVLLM_USE_V1 = os.environ.get('VLLM_USE_V1', '1') == '1'\n\n\n"
                        "def is_set(name):\n    return name in os.environ\n",
        "vllm/v1/__init__.py": "", "vllm/v1/engine/__init__.py": "", "vllm/engine/__init__.py": "",
        "vllm/v1/engine/async_llm.py": """
            class AsyncLLM:
                def __init__(self, config):
                    self.engine_core = config

                @classmethod
                def from_engine_args(cls, args) -> "AsyncLLM":
                    return cls(args)

                async def collective_rpc(self, method):
                    return method
        """,
        "vllm/engine/async_llm_engine.py": f"""
        import vllm.envs as envs


        class AsyncLLMEngine:
            def __init__(self, config):
                self.engine = config

            @classmethod
            def from_engine_args(cls, args) -> "AsyncLLMEngine":
                return cls(args)


        {rebind}""",
    }


_TRAINER = {"pkg/__init__.py": "", "pkg/model.py": """
    from vllm.engine.async_llm_engine import AsyncLLMEngine


    class Model:
        def __init__(self, args, use_v1):
            self.use_v1 = use_v1
            self.llm = AsyncLLMEngine.from_engine_args(args)

        async def rpc(self, method):
            if self.use_v1:
                return await self.llm.collective_rpc(method)
            return self.llm.engine.collective_rpc(method)      # V0's: unknown

        def gone(self):
            return self.llm.no_such_member                      # neither has it: error
"""}


def _dc006(result) -> list[tuple[str, int]]:
    return sorted([("error", f.client.line) for f in result.findings if f.rule == "DC006" and f.severity == "error"]
                  + [("unknown", u.client.line) for u in result.unknown if u.rule == "DC006"])


def test_fb_a_classmethod_reached_through_a_conditionally_rebound_name_gives_either_class(tmp_path):
    result = scan_trees(tmp_path, _engine(True), _TRAINER, only=["DC006"], version="0.10.0")
    assert _dc006(result) == [("error", 15), ("unknown", 12)]
    message = next(u.message for u in result.unknown if u.rule == "DC006")
    assert "vllm.engine.async_llm_engine.AsyncLLMEngine" in message


def test_fb_an_unconditional_rebinding_keeps_the_error(tmp_path):
    result = scan_trees(tmp_path, _engine(False), _TRAINER, only=["DC006"], version="0.10.0")
    assert _dc006(result) == [("error", 12), ("error", 15)]
