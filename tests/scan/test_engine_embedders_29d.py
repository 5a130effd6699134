"""Batch 29d (libraries that embed vLLM as an engine, at their stored GitHub HEAD or newest PyPI release,
docs/triage/2026-12-05-engine-embedders-29d.md).

QD1: bespokelabs-curator (bespokelabsai/curator 8f26600), an offline data-generation pipeline, formats prompts with
`tokenizer = self.model_class.get_tokenizer()` and `tokenizer.apply_chat_template(conversation=prompt, tokenize=False,
add_generation_prompt=True)` (src/bespokelabs/curator/request_processor/offline/vllm_offline_request_processor.py:61-63).
vLLM 0.13.0 annotates `LLM.get_tokenizer() -> TokenizerLike`, a `typing.Protocol` whose `apply_chat_template` takes
`messages`; the object is a Hugging Face tokenizer (which takes `conversation`) and does not derive from it. The call
was a DC005 error. A method called on a value whose annotated class lists `Protocol` among its own bases now binds
against nothing certain: a warning that says so (rules/callcheck.py `_structural_receiver`, vllm_model/classes.py
`is_protocol`). Twins that stay errors: the same class without `Protocol` (a concrete class the value really is), a
concrete subclass of the Protocol that inherits the method, and the Protocol's method called through `super()` or on
the class itself.

DC111 on vLLM 0.8.5-0.9.1: their `ServeSubcommand` names itself in `__init__` (`self.name = "serve"`), not in its
class body, and the serve parser was never found: every `vllm serve` script at those releases was an unknown ("cannot
find how vLLM 0.8.5 builds the `vllm serve` argument parser", curator's examples/vllm-online/start_vllm_server.sh).
Now read (vllm_model/serve_parser.py `_subcommand_name`): its flags are checked; another subcommand's name is not it.

QD2 (kaito presets/workspace/inference/vllm/tests/test_kv_transfer_config.py): a test hands its `"kv_connector"` dict as
`kv_transfer_config=` to its own `_make_args(**kwargs)`, which only builds an `argparse.Namespace`. It was a DC111 error
(an unregistered connector); such a helper is now read as a stand-in (client_model/launches.py `_stand_in_builders`):
a warning. Twins that stay errors: the helper hands its keywords to vLLM's config, or calls another function.
"""

from __future__ import annotations

import pytest

from scan.helpers import edited, plugin_shape, scan_trees

PROTOCOL = "vllm/tokenizers/protocol.py"
LLM = "vllm/entrypoints/llm.py"
OFFLINE = "curate/offline.py"


def _calls(tmp_path, vllm, client) -> list[tuple[str, str, str, int]]:
    found = scan_trees(tmp_path, vllm, client, only=["DC003", "DC004", "DC005"]).findings
    return [(f.severity, f.rule, f.client.path, f.client.line) for f in found]


def test_qd1_call_on_a_protocol_typed_value_is_a_warning(tmp_path):
    vllm, client = plugin_shape("QD1")
    found = scan_trees(tmp_path, vllm, client, only=["DC003", "DC004", "DC005"]).findings
    assert [(f.severity, f.rule, f.client.path, f.client.line) for f in found] == [("warning", "DC005", OFFLINE, 16)]
    assert "`TokenizerLike` is a Protocol" in found[0].message
    assert found[0].fix is None
    assert found[0].details["structural"] == "vllm.tokenizers.protocol.TokenizerLike"


def test_qd1_unexpected_keyword_on_a_protocol_typed_value_is_a_warning(tmp_path):
    vllm, client = plugin_shape("QD1")
    vllm = edited(vllm, PROTOCOL, ("tools: list[dict[str, Any]] | None = None, **kwargs", "tools=None"))
    client = edited(client, OFFLINE, ("conversation=p, tokenize=False, add_generation_prompt=True", "p, add_generation_prompt=True"))
    assert _calls(tmp_path, vllm, client) == [("warning", "DC003", OFFLINE, 16)]


CONCRETE = (("class TokenizerLike(Protocol):", "class TokenizerLike:"),)
BUILT = (("self.tokenizer = get_tokenizer(model)", "self.tokenizer = TokenizerLike()"),)
SUBCLASS = (
    ("from vllm.tokenizers.protocol import TokenizerLike\n",
     "from vllm.tokenizers.protocol import TokenizerLike\n\n\nclass HfTokenizer(TokenizerLike):\n    pass\n"),
    ("-> TokenizerLike:", "-> HfTokenizer:"),
    ("self.tokenizer = get_tokenizer(model)", "self.tokenizer = HfTokenizer()"),
)
SUPER_CLIENT = '''from vllm.tokenizers import TokenizerLike


class ChatTokenizer(TokenizerLike):
    def apply_chat_template(self, conversation, **kwargs):
        return super().apply_chat_template(conversation=conversation)
'''
ON_CLASS_CLIENT = '''from vllm.tokenizers import TokenizerLike


def fmt(tok, p):
    return TokenizerLike.apply_chat_template(tok, conversation=p)
'''


@pytest.mark.parametrize("twin", ["concrete_class_the_value_is", "concrete_subclass_of_the_protocol"])
def test_qd1_twins_on_a_concrete_class_stay_errors(tmp_path, twin):
    vllm, client = plugin_shape("QD1")
    if twin == "concrete_class_the_value_is":
        vllm = edited(edited(vllm, PROTOCOL, *CONCRETE), LLM, *BUILT)
    else:
        vllm = edited(vllm, LLM, *SUBCLASS)
    assert _calls(tmp_path, vllm, client) == [("error", "DC005", OFFLINE, 16)]


@pytest.mark.parametrize("twin", ["super_call", "call_on_the_protocol_class"])
def test_qd1_twins_through_the_protocol_itself_stay_errors(tmp_path, twin):
    vllm, client = plugin_shape("QD1")
    rel = "curate/tok.py"
    client = {**client, rel: SUPER_CLIENT if twin == "super_call" else ON_CLASS_CLIENT}
    assert _calls(tmp_path, vllm, client) == [("warning", "DC005", OFFLINE, 16), ("error", "DC005", rel, 6 if twin == "super_call" else 5)]


# The serve parser of vLLM 0.8.5-0.9.1, whose `ServeSubcommand` names itself in `__init__` (`self.name = "serve"`):
# bespokelabs-curator's examples/vllm-online/start_vllm_server.sh at 0.8.5 was DC111 unknown ("cannot find how vLLM
# 0.8.5 builds the `vllm serve` argument parser"), so no script's flags were checked on those releases.
CLASS_NAME = '    name = "serve"\n'
INIT_NAME = '    def __init__(self):\n        self.name = "serve"\n'
SERVE = "vllm/entrypoints/cli/serve.py"


def _dc111(tmp_path, vllm, flags: str) -> list[tuple[str | None, str, int]]:
    client = {"serve.sh": f"#!/bin/bash\nvllm serve facebook/opt-125m {flags}\n", "gen.py": "import vllm\n"}
    result = scan_trees(tmp_path, vllm, client, only=["DC111"])
    return [(f.severity, f.client.path, f.client.line) for f in [*result.findings, *result.unknown]]


@pytest.mark.parametrize("spelling", ["init", "class"])
def test_serve_subcommand_named_in_init_has_its_flags_checked(tmp_path, spelling):
    vllm, _ = plugin_shape("CA")
    if spelling == "init":
        vllm = edited(vllm, SERVE, (CLASS_NAME, INIT_NAME))
    assert _dc111(tmp_path / "ok", vllm, "--port 8000") == []
    assert _dc111(tmp_path / "bad", vllm, "--port 8000 --no-such-flag") == [("error", "serve.sh", 2)]


def test_subcommand_of_another_name_in_init_is_no_serve_parser(tmp_path):
    vllm, _ = plugin_shape("CA")
    vllm = edited(vllm, SERVE, (CLASS_NAME, INIT_NAME.replace('"serve"', '"chat"')))
    found = scan_trees(tmp_path, vllm, {"serve.sh": "#!/bin/bash\nvllm serve m --no-such-flag\n", "gen.py": "import vllm\n"},
                       only=["DC111"])
    assert [f.severity for f in found.findings] == []
    assert [u.message.split(" builds")[0] for u in found.unknown] == ["cannot find how vLLM 0.99.0"]


QD2_TEST = "tests/test_kv_transfer_config.py"


def _qd2_dc111(tmp_path, client) -> list[tuple[str, str, int]]:
    vllm, _ = plugin_shape("QD2")
    return [(f.severity, f.client.path, f.client.line) for f in scan_trees(tmp_path, vllm, client, only=["DC111"]).findings]


def test_qd2_dict_handed_to_a_helper_that_builds_a_namespace_is_a_warning(tmp_path):
    _, client = plugin_shape("QD2")
    assert _qd2_dc111(tmp_path, client) == [("warning", QD2_TEST, 21)]


@pytest.mark.parametrize("edit", [
    # the helper hands what it is given to vLLM's config: the dict reaches vLLM
    (("import argparse\n", "import argparse; from vllm.config import KVTransferConfig\n"),
     ("return argparse.Namespace(**defaults)", "return KVTransferConfig(**defaults)")),
    # the helper calls a function driftcheck does not follow: it may hand the dict on
    (("return argparse.Namespace(**defaults)", "return start_server(**defaults)"),),
], ids=["vllm-config", "other-call"])
def test_qd2_twins_stay_errors(tmp_path, edit):
    _, client = plugin_shape("QD2")
    client = edited(client, QD2_TEST, *edit)
    assert _qd2_dc111(tmp_path, client) == [("error", QD2_TEST, 21)]
