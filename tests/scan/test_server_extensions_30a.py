"""Batch 30a (extensions of vLLM's OpenAI-compatible server: tool-call and reasoning parsers, serving subclasses, API
server wrappers; each at the vLLM it declares and newer; docs/triage/2026-12-05-server-extensions-30a.md).

SA1: a module `__getattr__` branch that returns a name the module binds at top level (`from vllm.tokenizers import
TokenizerLike` ... `if name == "AnyTokenizer": warn(...); return TokenizerLike`, vLLM 0.13.0's
`vllm/transformers_utils/tokenizer.py`) serves that binding. driftcheck took such a branch for an opaque value of the
alias module itself, so DC009 told cohere-ai/melody (333ae6a) that `AnyTokenizer` "lives in
`vllm.transformers_utils.tokenizer`", the module it was imported from, and its move-import rewrote the line to itself.
Now the alias resolves to the class it returns: DC009 names `vllm.tokenizers.protocol.TokenizerLike` and, as the names
differ, offers no move (importing `AnyTokenizer` from the new module would fail); an alias of the same name moves to
the module that defines it. The twins: a `__getattr__` that refuses the name stays a DC002 error, and a branch that
returns a name bound inside the function keeps the old reading.

SA2: a module `__getattr__` whose every statement is an `if name == "x":` with no `else` and no final `raise` (vLLM
0.14.0's `vllm/transformers_utils/tokenizer.py`, which kept only `get_tokenizer`) returns None for any other name, so
`from vllm.transformers_utils.tokenizer import AnyTokenizer` binds None instead of failing; melody uses it only in
annotations. That was an unknown saying the `__getattr__` "may serve" the name; the unknown now says it returns None.
The twins: a final `raise` makes the import a DC002 error, and a test that may match other names (`startswith`) keeps
the old reason.

SA3: a plugin that adds its own variables to vLLM's `vllm.envs.environment_variables` (the table whose keys the module's
`__getattr__` serves: `if name in environment_variables: return environment_variables[name]()`) and then reads them as
`envs.APP_NAME`. MonadKai/vllm-kubernetes-plugin (3302b10) does it with `envs.environment_variables.update(extra)`,
`extra` a dict display bound in the same function; driftcheck took the table's literal keys for every name the module
has: 10 DC002 errors at 0.9.2 and 0.10.1, all false. Keys added by `.update(<dict display, a name bound to one, or
keywords>)`, `.setdefault("X", ...)` or `table["X"] = ...` on a table the module's `__getattr__` serves are now names the
client sets on the module, as `envs.X = ...` is. The twins: a key added to a table the `__getattr__` does not serve, a
key the client does not add, and an update with a non-literal mapping stay errors.
"""

from __future__ import annotations

from scan.helpers import by_rule, scan_trees

TOKENIZERS = {"vllm/tokenizers/__init__.py": "from vllm.tokenizers.protocol import TokenizerLike\n",
              "vllm/tokenizers/protocol.py": ("from typing import Protocol\n"
                                              "\n"
                                              "\n"
                                              "class TokenizerLike(Protocol):\n"
                                              "    def decode(self, ids: list[int]) -> str: ...\n")}

SERVING = ("import warnings\n"
           "\n"
           "from vllm.tokenizers import TokenizerLike as _TokenizerLike\n"
           "\n"
           "\n"
           "def __getattr__(name: str):\n"
           "    if name == \"AnyTokenizer\":\n"
           "        warnings.warn(\"moved to vllm.tokenizers.TokenizerLike\", DeprecationWarning, stacklevel=2)\n"
           "        return _TokenizerLike\n"
           "    if name == \"TokenizerLike\":\n"
           "        warnings.warn(\"moved to vllm.tokenizers.TokenizerLike\", DeprecationWarning, stacklevel=2)\n"
           "        return _TokenizerLike\n"
           "    raise AttributeError(name)\n")

CLIENT = {"plug/__init__.py": "",
          "plug/parser.py": ("from vllm.transformers_utils.tokenizer import AnyTokenizer\n"
                             "\n"
                             "\n"
                             "def text_of(tokenizer: AnyTokenizer, ids: list[int]) -> str:\n"
                             "    return tokenizer.decode(ids)\n")}


def _scan(tmp_path, tokenizer_py: str, client: dict[str, str] = CLIENT):
    return scan_trees(tmp_path, {**TOKENIZERS, "vllm/transformers_utils/tokenizer.py": tokenizer_py}, client)


def test_alias_of_another_name_names_the_class_it_returns_and_offers_no_move(tmp_path):
    result = _scan(tmp_path, SERVING)
    assert [f for f in result.findings if f.severity == "error"] == []
    (dc009,) = by_rule(result, "DC009")
    assert dc009.severity == "warning"
    assert "`vllm.tokenizers.protocol.TokenizerLike`" in dc009.message
    assert "lives in `vllm.transformers_utils.tokenizer`" not in dc009.message
    assert dc009.fix is None and "moved_to" not in dc009.details
    assert dc009.details["renamed_to"] == "vllm.tokenizers.protocol.TokenizerLike"
    assert dc009.vllm.path == "vllm/tokenizers/protocol.py"


def test_alias_of_the_same_name_moves_to_the_module_that_defines_it(tmp_path):
    client = {"plug/__init__.py": "",
              "plug/parser.py": "from vllm.transformers_utils.tokenizer import TokenizerLike\n"}
    (dc009,) = by_rule(_scan(tmp_path, SERVING, client), "DC009")
    assert dc009.details["moved_to"] == "vllm.tokenizers.protocol"
    assert dc009.fix == "move-import"


def test_the_alias_reaches_the_class_it_serves(tmp_path):
    """What the alias resolves to is checked: a member the returned class lacks is reported through the old name (a
    warning here, as the class is a Protocol)."""
    client = {"plug/__init__.py": "",
              "plug/parser.py": ("from vllm.transformers_utils.tokenizer import AnyTokenizer\n"
                                 "\n"
                                 "\n"
                                 "class Mine(AnyTokenizer):\n"
                                 "    def text_of(self, ids):\n"
                                 "        return self.detokenize(ids)\n")}
    result = _scan(tmp_path, SERVING, client)
    assert [(f.client.line, "`TokenizerLike` has no attribute 'detokenize'" in f.message)
            for f in by_rule(result, "DC006")] == [(6, True)]


def test_twin_a_getattr_that_refuses_the_name_stays_an_error(tmp_path):
    refusing = SERVING.replace("\"AnyTokenizer\"", "\"get_tokenizer\"")
    result = _scan(tmp_path, refusing)
    assert [(f.rule, f.severity, f.client.line) for f in by_rule(result, "DC002")] == [("DC002", "error", 1)]


def test_twin_a_name_bound_inside_the_function_keeps_the_old_reading(tmp_path):
    local = SERVING.replace("        return _TokenizerLike\n    if name == \"TokenizerLike\"",
                            "        _TokenizerLike = object\n        return _TokenizerLike\n    if name == \"TokenizerLike\"")
    (dc009,) = by_rule(_scan(tmp_path, local), "DC009")
    assert dc009.details.get("moved_to") == "vllm.transformers_utils.tokenizer"
    assert "renamed_to" not in dc009.details


FALLS_THROUGH = ("import warnings\n"
                 "\n"
                 "\n"
                 "def __getattr__(name: str):\n"
                 "    # Keep until lm-eval is updated\n"
                 "    if name == \"get_tokenizer\":\n"
                 "        from vllm.tokenizers import TokenizerLike as get_tokenizer\n"
                 "\n"
                 "        warnings.warn(\"moved\", DeprecationWarning, stacklevel=2)\n"
                 "        return get_tokenizer\n")


def _dc002(result) -> tuple[list, list]:
    return ([(f.severity, f.client.line) for f in by_rule(result, "DC002")],
            [u.message for u in result.unknown if u.rule == "DC002"])


def test_getattr_running_off_its_end_says_the_import_binds_none(tmp_path):
    findings, unknowns = _dc002(_scan(tmp_path, FALLS_THROUGH))
    assert findings == []
    assert len(unknowns) == 1
    assert "serves only 'get_tokenizer' and runs off its end for 'AnyTokenizer'" in unknowns[0]
    assert "importing 'AnyTokenizer' binds None" in unknowns[0]


def test_twin_a_final_raise_makes_the_import_an_error(tmp_path):
    closed = FALLS_THROUGH + "    raise AttributeError(name)\n"
    assert _dc002(_scan(tmp_path, closed)) == ([("error", 1)], [])


def test_twin_a_test_that_may_match_other_names_keeps_may_serve(tmp_path):
    loose = FALLS_THROUGH.replace("if name == \"get_tokenizer\":", "if name.startswith(\"get_\"):")
    findings, unknowns = _dc002(_scan(tmp_path, loose))
    assert findings == [] and len(unknowns) == 1
    assert "may serve 'AnyTokenizer'" in unknowns[0]


ENVS = {"vllm/envs.py": ("import os\n"
                         "\n"
                         "environment_variables = {\n"
                         "    \"VLLM_CONFIGURE_LOGGING\": lambda: int(os.getenv(\"VLLM_CONFIGURE_LOGGING\", \"1\")),\n"
                         "}\n"
                         "OTHER_TABLE = {\"A\": 1}\n"
                         "\n"
                         "\n"
                         "def __getattr__(name: str):\n"
                         "    if name in environment_variables:\n"
                         "        return environment_variables[name]()\n"
                         "    raise AttributeError(name)\n")}


def _envs_errors(tmp_path, plugin: str) -> list[tuple[str, int, str]]:
    result = scan_trees(tmp_path, ENVS, {"plug/__init__.py": "", "plug/logs.py": plugin})
    return [(f.rule, f.client.line, f.symbol) for f in result.findings if f.severity == "error"]


def test_names_added_to_the_served_table_exist(tmp_path):
    plugin = ("import os\n"
              "import vllm.envs as envs\n"
              "\n"
              "\n"
              "def add_env_vars():\n"
              "    extra = {\"APP_NAME\": lambda: os.getenv(\"APP_NAME\", \"vllm\")}\n"
              "    envs.environment_variables.update(extra)\n"
              "    envs.environment_variables.update({\"LOG_ROOT\": lambda: \"vllm\"}, LOG_LEVEL=lambda: \"INFO\")\n"
              "    envs.environment_variables[\"TRACE\"] = lambda: False\n"
              "    envs.environment_variables.setdefault(\"LOG_FILE\", lambda: \"api.log\")\n"
              "\n"
              "\n"
              "def read():\n"
              "    add_env_vars()\n"
              "    return envs.APP_NAME, envs.LOG_ROOT, envs.LOG_LEVEL, envs.TRACE, envs.LOG_FILE, envs.VLLM_CONFIGURE_LOGGING\n")
    assert _envs_errors(tmp_path, plugin) == []


def test_twin_a_key_the_client_does_not_add_stays_an_error(tmp_path):
    plugin = ("import vllm.envs as envs\n"
              "\n"
              "envs.environment_variables.update({\"APP_NAME\": lambda: \"vllm\"})\n"
              "\n"
              "\n"
              "def read():\n"
              "    return envs.APP_NAME, envs.LOG_ROOT\n")
    assert _envs_errors(tmp_path, plugin) == [("DC002", 7, "vllm.envs.LOG_ROOT")]


def test_twin_a_table_the_getattr_does_not_serve_stays_an_error(tmp_path):
    plugin = ("import vllm.envs as envs\n"
              "\n"
              "envs.OTHER_TABLE.update({\"APP_NAME\": lambda: \"vllm\"})\n"
              "envs.OTHER_TABLE[\"LOG_ROOT\"] = 1\n"
              "\n"
              "\n"
              "def read():\n"
              "    return envs.APP_NAME, envs.LOG_ROOT\n")
    assert _envs_errors(tmp_path, plugin) == [("DC002", 8, "vllm.envs.APP_NAME"), ("DC002", 8, "vllm.envs.LOG_ROOT")]


def test_twin_an_update_with_a_mapping_it_cannot_read_stays_an_error(tmp_path):
    plugin = ("import vllm.envs as envs\n"
              "\n"
              "\n"
              "def add(extra):\n"
              "    envs.environment_variables.update(extra)\n"
              "\n"
              "\n"
              "def read():\n"
              "    return envs.APP_NAME\n")
    assert _envs_errors(tmp_path, plugin) == [("DC002", 9, "vllm.envs.APP_NAME")]
