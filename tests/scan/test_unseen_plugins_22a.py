"""Batch 22a (PyPI packages a-l no triage note named, at the newest vLLM: none declares one;
docs/triage/2026-12-05-unseen-plugins-22a.md).

ZA: a client class that bears the name of a vLLM class the client imports, and does not derive from it, is a copy of
it. chattts 0.2.5 vendors an old vLLM engine (ChatTTS/model/velocity/): its configs.py defines its own `ModelConfig`,
`CacheConfig`, `ParallelConfig` and `SchedulerConfig` and builds them in `EngineArgs.create_engine_configs()`, while
llm_engine.py, model_loader.py and scheduler.py annotate their parameters with vLLM's classes of those names (`from
vllm.config import ModelConfig`) and read members only the copies have (`model_config.download_dir`,
`self.cache_config.swap_space_bytes`). The engine is built as `cls(*engine_args.create_engine_configs(), ...)`: the
objects are the copies, so no read is a certain AttributeError (10 false DC006 errors at vLLM 0.33.0). Where the client
builds the copy, its object stands in for vLLM's class (stand_ins.py): a member the copy defines is unknown, naming the
copy and where it is built. The twins: a copy never built, a member the copy lacks too, and an object built from vLLM's
class itself stay errors.
"""

from __future__ import annotations

from scan.helpers import scan_trees

VLLM = {
    "vllm/__init__.py": "",
    "vllm/logger.py": "import logging\n\n\ndef init_logger(name):\n    return logging.getLogger(name)\n",
    "vllm/config.py": ("class ModelConfig:\n"
                       "    def __init__(self, model: str, dtype: str = 'auto'):\n"
                       "        self.model = model\n"
                       "        self.dtype = dtype\n"),
}

COPY = ("from vllm.logger import init_logger\n"
        "\n"
        "\n"
        "class ModelConfig:\n"
        "    def __init__(self, model, download_dir):\n"
        "        self.model = model\n"
        "        self.download_dir = download_dir\n"
        "\n"
        "\n"
        "def create_engine_configs(model):\n"
        "    model_config = ModelConfig(model, '/tmp/w')\n"
        "    return (model_config,)\n")

ENGINE = ("from vllm.config import ModelConfig\n"
          "\n"
          "from .configs import create_engine_configs\n"
          "\n"
          "\n"
          "class LLMEngine:\n"
          "    def __init__(self, model_config: ModelConfig):\n"
          "        self.where = model_config.download_dir\n"
          "        self.pool = model_config.tokenizer_pool\n"
          "\n"
          "    @classmethod\n"
          "    def from_model(cls, model):\n"
          "        return cls(*create_engine_configs(model))\n")


def _scan(tmp_path, files: dict[str, str]):
    result = scan_trees(tmp_path, VLLM, {"plugin/__init__.py": "", **files})
    errors = sorted(f"{f.rule} {f.client.path} {f.client.line}" for f in result.findings if f.severity == "error")
    unknown = {f"{u.rule} {u.client.path} {u.client.line}": u.message for u in result.unknown}
    return errors, unknown


def test_a_member_of_the_client_copy_of_a_vllm_class_it_builds_is_unknown(tmp_path):
    errors, unknown = _scan(tmp_path, {"plugin/configs.py": COPY, "plugin/engine.py": ENGINE})
    # download_dir: the copy has it; tokenizer_pool: neither class has it, the read fails whichever the object is
    assert errors == ["DC006 plugin/engine.py 9"]
    why = unknown["DC006 plugin/engine.py 8"]
    assert "plugin.configs.ModelConfig" in why and "plugin/configs.py:11 builds it" in why, why


def test_twin_a_copy_never_built_is_no_evidence(tmp_path):
    never_built = COPY.replace("    model_config = ModelConfig(model, '/tmp/w')\n    return (model_config,)\n",
                               "    return ()\n")
    errors, unknown = _scan(tmp_path, {"plugin/configs.py": never_built, "plugin/engine.py": ENGINE})
    assert errors == ["DC006 plugin/engine.py 8", "DC006 plugin/engine.py 9"]
    assert unknown == {}


def test_twin_an_object_built_from_vllm_class_stays_an_error(tmp_path):
    built_here = ("from vllm.config import ModelConfig\n"
                  "\n"
                  "\n"
                  "def where(model):\n"
                  "    config = ModelConfig(model)\n"
                  "    return config.download_dir\n")
    errors, unknown = _scan(tmp_path, {"plugin/configs.py": COPY, "plugin/direct.py": built_here})
    assert errors == ["DC006 plugin/direct.py 6"]
    assert unknown == {}

