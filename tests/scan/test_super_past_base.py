"""`super(Base, self)` in a client class whose one base is the vLLM class `Base`: the lookup starts past `Base`, at its
own base (22b's N1: BentoVLLM's `PatchedOpenAIServingChat(OpenAIServingChat)` calls `super(OpenAIServingChat,
self).__init__(engine=..., served_model=..., lora_modules=None)`, which reaches `OpenAIServing.__init__(engine,
served_model_names, lora_modules)` on vLLM 0.4.1; the call was not read at all)."""

from __future__ import annotations

from scan.helpers import scan_trees

_VLLM = {"vllm/__init__.py": "",
         "vllm/serving.py": "class OpenAIServing:\n    def __init__(self, engine, served_model_names, lora_modules=None):\n"
                            "        self.engine = engine\n\n\n"
                            "class OpenAIServingChat(OpenAIServing):\n"
                            "    def __init__(self, engine, served_model_names, response_role, lora_modules=None):\n"
                            "        super().__init__(engine, served_model_names, lora_modules)\n"}
_CLIENT = ("from vllm.serving import OpenAIServingChat\n\n\nclass Patched(OpenAIServingChat):\n"
           "    def __init__(self, engine, served_model, response_role):\n"
           "        super(OpenAIServingChat, self).__init__(engine=engine, served_model=served_model, lora_modules=None)\n"
           "        self.response_role = response_role\n")


def _scan(tmp_path, client: str):
    result = scan_trees(tmp_path, _VLLM, {"plug/__init__.py": "", "plug/svc.py": client}, only=["DC003", "DC005"])
    assert not result.internal_errors
    return sorted((f.rule, f.client.line) for f in result.findings)


def test_super_past_the_vllm_base_checks_the_call_against_the_base_after_it(tmp_path):
    assert _scan(tmp_path, _CLIENT) == [("DC003", 6), ("DC005", 6)]


def test_twin_the_base_after_it_decides_not_the_named_one(tmp_path):
    # OpenAIServing takes no response_role: checked against OpenAIServingChat this right call would miss one argument
    fits = _CLIENT.replace("served_model=served_model, lora_modules=None", "served_model_names=[served_model]")
    assert _scan(tmp_path, fits) == []


def test_twin_a_class_with_several_bases_is_not_followed(tmp_path):
    # with a mixin the MRO after OpenAIServingChat is not the vLLM class's own: nothing certain
    mixed = _CLIENT.replace("class Patched(OpenAIServingChat):", "class Patched(OpenAIServingChat, Mixin):") \
        .replace("from vllm.serving import OpenAIServingChat\n", "from vllm.serving import OpenAIServingChat\nfrom plug.mix import Mixin\n")
    assert _scan(tmp_path, mixed) == []
