"""Batch 33a (clients of vLLM's async serving stack: OpenAI-compatible server extensions, EngineClient/AsyncLLM users,
docs/triage/2026-12-05-server-async-33a.md).

WA1: a speculative-decoding trace script (index file 70321455950, an `AsyncLLM` user) gets its tokenizer with
`tok = await engine.get_tokenizer() if asyncio.iscoroutinefunction(engine.get_tokenizer) else engine.get_tokenizer()`,
one line for the vLLMs before 0.15.0 (a coroutine) and after (a plain method). DC118 gave an error at 0.15.0 and
later on the awaited branch, which runs only where the method is a coroutine function. A test of
`iscoroutinefunction(x.m)` (asyncio's or inspect's, in an `if` or a conditional expression) now guards both of its
branches for calls of `m`, as a version check does: the finding is a warning that names the test. The twins: an
`await` of the same method under a test of another method, or after the switch, stays an error.

WA2 (written with WA1, the same idiom's other spellings in Python code at large, e.g. `if inspect.iscoroutinefunction(
engine.execute): return asyncio.run(engine.execute(...))` / `return engine.execute(...)`): the other branch may be the
rest of the block after an `if` whose body exits, and the method may be tested through a local name bound to it
(`get = e.get_model_config; cfg = await get() if inspect.iscoroutinefunction(get) else get()`). The twins: an `if` whose
body does not exit guards nothing after it; a local name bound to another method guards nothing.

WA3 (a missed error): gpt_server (shell-nlp/gpt_server 1d266b0, pin vLLM 0.16.0) builds `CustomOpenAIServingChat(
engine_client=..., models=..., response_role=..., request_logger=None, ...)`, a subclass of vLLM's `OpenAIServingChat`
that only overrides `render_chat_request`; vLLM 0.18.0's `__init__` requires the keyword-only `openai_serving_render`,
and 0.20.0's `OpenAIServingResponses` a positional one for its `CustomOpenAIServingResponses`: TypeError at those lines.
driftcheck checked constructions of vLLM's classes only. A client class of the file, bound once at its top level,
deriving from one vLLM class and adding nothing but methods (no `__init__` / `__new__` / `__init_subclass__` /
`__post_init__`, no class-level field, no decorator, no class keyword) now has its construction checked against that
vLLM class's. The shape keeps what must stay clean: such a subclass built right, a subclass with its own `__init__`, a
dataclass subclass adding a field; the twins: an own `__init__`, a class-level field, a decorator or a rebinding of the
name leave the construction unchecked.
"""

from __future__ import annotations

from scan.helpers import edited, plugin_shape, scan_trees

WA1_VLLM, WA1_CLIENT = plugin_shape("WA1")
MAIN = "main.py"


def _dc118(tmp_path, client_files):
    result = scan_trees(tmp_path, WA1_VLLM, client_files, only=["DC118"])
    return sorted((f.severity, f.client.line) for f in result.findings)


def test_wa1_await_under_a_coroutine_function_test_of_the_method_is_a_warning(tmp_path):
    result = scan_trees(tmp_path, WA1_VLLM, WA1_CLIENT, only=["DC118"])
    assert sorted((f.severity, f.client.line) for f in result.findings) == [("warning", 10), ("warning", 12)]
    assert all("tests `" in f.message and "iscoroutinefunction(engine.get_tokenizer)" in f.message
               for f in result.findings)


def test_wa1_twin_a_test_of_another_method_guards_nothing(tmp_path):
    client = edited(WA1_CLIENT, MAIN, ("asyncio.iscoroutinefunction(engine.get_tokenizer)",
                                       "asyncio.iscoroutinefunction(engine.generate)"),
                    ("inspect.iscoroutinefunction(engine.get_tokenizer)", "inspect.iscoroutinefunction(engine.generate)"))
    assert _dc118(tmp_path, client) == [("error", 10), ("error", 12)]


def test_wa1_twin_an_await_after_the_switch_stays_an_error(tmp_path):
    client = edited(WA1_CLIENT, MAIN, ("    return tok.encode", "    other = await engine.get_tokenizer()\n    return tok.encode"))
    assert _dc118(tmp_path, client) == [("error", 15), ("warning", 10), ("warning", 12)]


WA2_VLLM, WA2_CLIENT = plugin_shape("WA2")


def _dc118_wa2(tmp_path, client_files):
    result = scan_trees(tmp_path, WA2_VLLM, client_files, only=["DC118"])
    return sorted((f.severity, f.client.line) for f in result.findings)


def test_wa2_await_after_an_early_exit_or_through_a_local_name_is_a_warning(tmp_path):
    assert _dc118_wa2(tmp_path, WA2_CLIENT) == [("warning", 10), ("warning", 15)]


def test_wa2_twin_an_if_whose_body_does_not_exit_guards_nothing_after_it(tmp_path):
    client = edited(WA2_CLIENT, MAIN, ("        return engine.get_model_config()\n", "        print(engine.get_model_config())\n"))
    assert _dc118_wa2(tmp_path, client) == [("error", 10), ("warning", 15)]


def test_wa2_twin_a_local_name_bound_to_another_method_guards_nothing(tmp_path):
    client = edited(WA2_CLIENT, MAIN, ("    get_config = engine.get_model_config\n",
                                       "    get_config = engine.get_model_config\n    other = engine.model_config.__init__\n"),
                    ("inspect.iscoroutinefunction(get_config)", "inspect.iscoroutinefunction(other)"))
    assert _dc118_wa2(tmp_path, client) == [("error", 16), ("warning", 10)]


WA3_VLLM, WA3_CLIENT = plugin_shape("WA3")
WA3_BUILD = """        LoggingChat(engine_client=engine, models=None, response_role="assistant", renderer=object()),
"""
WA3_MISSING = """        LoggingChat(engine_client=engine, models=None, response_role="assistant"),
"""


def _dc005_wa3(tmp_path, client_files):
    result = scan_trees(tmp_path, WA3_VLLM, client_files, only=["DC003", "DC004", "DC005"])
    return sorted((f.rule, f.severity, f.client.line) for f in result.findings)


def test_wa3_client_subclasses_built_with_what_they_take_give_nothing(tmp_path):
    assert _dc005_wa3(tmp_path, WA3_CLIENT) == []


def test_wa3_a_methods_only_subclass_built_without_a_required_vllm_argument_is_an_error(tmp_path):
    # gpt_server's `CustomOpenAIServingChat(...)` without the `openai_serving_render` vLLM 0.18.0 requires
    client = edited(WA3_CLIENT, MAIN, (WA3_BUILD, WA3_MISSING))
    assert _dc005_wa3(tmp_path, client) == [("DC005", "error", 28)]


def test_wa3_twin_a_subclass_with_its_own_init_is_not_checked_against_vllms(tmp_path):
    client = edited(WA3_CLIENT, MAIN, (WA3_BUILD, WA3_MISSING), ("    async def render_chat_request(self, request):\n        value",
                                                                  "    def __init__(self, **kwargs):\n        pass\n\n"
                                                                  "    async def render_chat_request(self, request):\n        value"))
    assert _dc005_wa3(tmp_path, client) == []


def test_wa3_twin_a_subclass_with_a_class_level_field_or_a_decorator_is_not_checked(tmp_path):
    field = edited(WA3_CLIENT, MAIN, (WA3_BUILD, WA3_MISSING),
                   ('    """Adds only a method: built exactly as vLLM\'s class is."""\n', '    extra: int = 0\n'))
    assert _dc005_wa3(tmp_path, field) == []
    decorated = edited(WA3_CLIENT, MAIN, (WA3_BUILD, WA3_MISSING), ("class LoggingChat(", "@register\nclass LoggingChat("),
                       ("from dataclasses import dataclass\n", "from dataclasses import dataclass\nregister = lambda c: c\n"))
    assert _dc005_wa3(tmp_path, decorated) == []


def test_wa3_twin_a_name_the_file_rebinds_is_not_checked(tmp_path):
    client = edited(WA3_CLIENT, MAIN, (WA3_BUILD, WA3_MISSING),
                    ("\n\nclass OwnInitChat(", "\n\nLoggingChat = lambda **kw: kw\n\n\nclass OwnInitChat("))
    assert _dc005_wa3(tmp_path, client) == []
