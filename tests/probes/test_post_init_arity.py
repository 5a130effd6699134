"""DC122 post-init-arity: a client `__post_init__` no longer takes the InitVars its vLLM dataclass base declares.

Shapes from real clients (batch 21b's M3, seventeenth session):
- vllm-omni 0.14.0's `@config @pydantic.dataclasses.dataclass class OmniModelConfig(ModelConfig)` whose
  `__post_init__` takes 0.14.0's 12 InitVars; 0.15.0 added `mm_encoder_only` (vllm-omni issue 1134: "takes 13
  positional arguments but 14 were given");
- vllm-omni 0.30.0's `OmniStageSchedulerConfig(SchedulerConfig)` declares `max_model_len: int | None` over the base's
  `max_model_len: InitVar[int]` and keeps `is_encoder_decoder: InitVar[bool]`: one InitVar, and its `__post_init__`
  takes one (no finding).
"""

from __future__ import annotations

from conftest import run_cli
from scan.helpers import scan_trees, vllm_tree, write_tree


def _release(initvars: list[str]) -> dict[str, str]:
    fields = "".join(f"    {n}: InitVar[int | None] = None\n" for n in initvars)
    return {"vllm/__init__.py": "", "vllm/config/__init__.py": "from vllm.config.model import ModelConfig, config\n",
            "vllm/config/model.py": "from dataclasses import InitVar, dataclass\n\n\n"
                                    "def config(cls):\n    \"\"\"Checks the fields.\"\"\"\n    return cls\n\n\n"
                                    f"@config\n@dataclass\nclass ModelConfig:\n    model: str = 'm'\n{fields}\n"
                                    f"    def __post_init__(self, {', '.join(initvars)}):\n        self.ready = True\n"}


_OLD = _release(["limit_mm_per_prompt", "enable_mm_embeds"])
_NEW = _release(["limit_mm_per_prompt", "enable_mm_embeds", "mm_encoder_only"])


def _client(post_init_params: str = "limit_mm_per_prompt, enable_mm_embeds", decorators: str = "@config\n@dataclass\n",
            body: str = "", builds: bool = True) -> dict[str, str]:
    make = "\n\ndef make():\n    return OmniModelConfig(model='x')\n" if builds else ""
    return {"omni/__init__.py": "", "omni/config/__init__.py": "from omni.config.model import OmniModelConfig\n",
            "omni/config/model.py": "from pydantic.dataclasses import dataclass\nfrom vllm.config import ModelConfig, config\n\n\n"
                                    f"{decorators}class OmniModelConfig(ModelConfig):\n    stage_id: int = 0\n{body}\n"
                                    f"    def __post_init__(self, {post_init_params}) -> None:\n        self.stage_id = 1\n",
            "omni/engine.py": "from omni.config import OmniModelConfig\n" + make}


def _scan(tmp_path, client: dict[str, str], old=_OLD, new=_NEW, with_own: bool = True):
    own = vllm_tree(tmp_path / "own", old)
    write_tree(own, {"vllm/_version.py": '__version__ = "0.14.0"\n'})
    result = scan_trees(tmp_path, new, client, only=["DC122"], client_vllm=str(own) if with_own else None,
                        version="0.15.0")
    assert not result.internal_errors
    return [(f.client.path, f.client.line, f.severity, f.message) for f in result.findings]


def test_a_new_initvar_breaks_the_clients_post_init(tmp_path):
    [(path, line, severity, message)] = _scan(tmp_path, _client())
    assert (path, line, severity) == ("omni/config/model.py", 10, "error")
    assert "takes 2 argument(s) after `self`, but its InitVar fields in vLLM 0.15.0 (through `ModelConfig`) are 3 " \
           "(2 in vLLM 0.14.0; new: mm_encoder_only)" in message
    assert "Take them in field order: limit_mm_per_prompt, enable_mm_embeds, mm_encoder_only." in message


def test_without_the_clients_vllm_a_class_the_client_builds_is_an_error(tmp_path):
    # built in omni/engine.py through the package that re-exports it (`from omni.config import OmniModelConfig`)
    [(_p, _l, severity, message)] = _scan(tmp_path, _client(), with_own=False)
    assert severity == "error" and "(2 in vLLM" not in message


def test_without_the_clients_vllm_a_class_nothing_builds_is_a_warning(tmp_path):
    [(_p, _l, severity, message)] = _scan(tmp_path, _client(builds=False), with_own=False)
    assert severity == "warning" and "if vLLM builds the class from a configured name" in message


def test_twin_a_post_init_that_takes_them_all(tmp_path):
    assert _scan(tmp_path, _client("limit_mm_per_prompt, enable_mm_embeds, mm_encoder_only")) == []
    assert _scan(tmp_path, _client("*initvars")) == []
    assert _scan(tmp_path, _client("limit_mm_per_prompt, enable_mm_embeds, mm_encoder_only=None")) == []


def test_twin_a_field_declared_again_as_a_plain_field_is_no_initvar(tmp_path):
    # vllm-omni 0.30.0's OmniStageSchedulerConfig: `max_model_len: int | None` over the base's InitVar
    body = "    mm_encoder_only: bool | None = None\n"
    assert _scan(tmp_path, _client(body=body)) == []


def test_twin_a_client_decorator_driftcheck_cannot_read_says_nothing(tmp_path):
    client = _client(decorators="@config\n@dataclass\n@own_init\n")
    client["omni/config/model.py"] = "from omni.decorators import own_init\n" + client["omni/config/model.py"]
    client["omni/decorators.py"] = "def own_init(cls):\n    cls.__init__ = lambda self, **kw: None\n    return cls\n"
    assert _scan(tmp_path, client) == []


def test_twin_a_post_init_the_clients_own_vllm_did_not_fit_either(tmp_path):
    assert _scan(tmp_path, _client("limit_mm_per_prompt")) == []


def test_the_rule_is_listed_and_documented():
    proc = run_cli("rules", "DC122")
    assert proc.returncode == 0 and "post-init-arity" in proc.stdout and "mm_encoder_only" in proc.stdout


def test_explain_matches_the_traceback(tmp_path):
    tb = tmp_path / "tb.txt"
    tb.write_text('Traceback (most recent call last):\n  File "/srv/omni/engine.py", line 4, in make\n'
                  "    return OmniModelConfig(model='x')\n  File \"<string>\", line 9, in __init__\n"
                  "TypeError: OmniModelConfig.__post_init__() takes 13 positional arguments but 14 were given\n")
    proc = run_cli("explain", str(tb), "--vllm", "0.15.0")
    assert "DC122" in proc.stdout, proc.stdout + proc.stderr


def test_on_real_releases(tmp_path):
    """vllm-omni 0.14.0's shape at vLLM 0.15.0 (13 InitVars) against its 0.14.0 (12): the error; at 0.14.0: nothing."""
    from conftest import CACHE_DIR
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    names = ["limit_mm_per_prompt", "enable_mm_embeds", "media_io_kwargs", "mm_processor_kwargs",
             "mm_processor_cache_gb", "mm_processor_cache_type", "mm_shm_cache_max_object_size_mb", "mm_encoder_tp_mode",
             "mm_encoder_attn_backend", "interleave_mm_strings", "skip_mm_profiling", "video_pruning_rate"]
    root = tmp_path / "client" / "omni"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text(
        "from pydantic import ConfigDict\nfrom pydantic.dataclasses import dataclass\nfrom vllm.config import ModelConfig, config\n\n\n"
        "@config\n@dataclass(config=ConfigDict(arbitrary_types_allowed=True))\nclass OmniModelConfig(ModelConfig):\n"
        f"    stage_id: int = 0\n\n    def __post_init__(self, {', '.join(names)}) -> None:\n        pass\n")

    def found(version):
        result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                      ScanOptions(cache_dir=CACHE_DIR, only=["DC122"], client_vllm="0.14.0"))
        assert not result.internal_errors
        return [(f.client.line, f.severity, f.details["initvars"], f.details["takes"]) for f in result.findings]

    assert found("0.15.0") == [(11, "error", 13, 12)]
    assert found("0.14.0") == []


def test_twin_a_client_init_of_its_own_decides_the_call(tmp_path):
    body = "    def __init__(self, model: str) -> None:\n        self.model = model\n"
    assert _scan(tmp_path, _client(decorators="", body=body)) == []
    # not a dataclass itself and no `__init__`: vLLM's generated one runs and passes the three InitVars
    assert [severity for _p, _l, severity, _m in _scan(tmp_path / "plain", _client(decorators=""))] == ["error"]


def test_a_vllm_decorator_reached_through_a_module_alias_is_read(tmp_path):
    # `import vllm.config as vc` then `@vc.config`: the same pass-through decorator as `from vllm.config import config`
    client = _client(decorators="@vc.config\n@dataclass\n")
    client["omni/config/model.py"] = "import vllm.config as vc\n" + client["omni/config/model.py"]
    assert [severity for _p, _l, severity, _m in _scan(tmp_path, client)] == ["error"]
    # twin: the alias names the client's own module, whose decorator driftcheck does not read as a pass-through
    client["omni/config/model.py"] = client["omni/config/model.py"].replace("import vllm.config as vc",
                                                                            "import omni.decorators as vc")
    client["omni/decorators.py"] = "def config(cls):\n    cls.__init__ = lambda self, **kw: None\n    return cls\n"
    assert _scan(tmp_path / "own", client) == []
