"""DC118 await-drift (probes/await_drift.py): a vLLM coroutine that became a plain method, and the reverse.

Fake trees modelled on vLLM 0.14.0 -> 0.15.0, where `AsyncLLM.get_tokenizer` went from `async def` to a plain
method returning `TokenizerLike` (a Protocol), which ArcticInference's embedding replica, ROLL's vLLM strategy and
vllm-omni's OpenAI server still `await`; and on a method that went the other way (`reset_cache` below). Each twin
takes away what makes the failure certain.
"""

from __future__ import annotations

import textwrap

from scan.helpers import scan_trees, vllm_tree, write_tree

TARGET = {
    "vllm/tokenizers.py": """
        from typing import Protocol


        class TokenizerLike(Protocol):
            def encode(self, text: str) -> list[int]: ...
    """,
    "vllm/engine.py": """
        import asyncio
        from typing import Awaitable

        from vllm.tokenizers import TokenizerLike


        class Stats:
            queued: int = 0


        class AsyncLLM:
            def get_tokenizer(self) -> TokenizerLike:
                return self.tokenizer

            def get_future(self) -> Awaitable[int]:
                return asyncio.sleep(0, 1)

            async def reset_cache(self) -> None:
                pass

            async def stats(self) -> Stats:
                return Stats()
    """,
}

BASELINE = {
    "vllm/engine.py": """
        class Stats:
            queued: int = 0


        class AsyncLLM:
            async def get_tokenizer(self):
                return self.tokenizer

            def reset_cache(self) -> None:
                pass

            def stats(self) -> Stats:
                return Stats()
    """,
}

CLIENT = textwrap.dedent("""
    import asyncio

    from vllm.engine import AsyncLLM


    async def tokenize(engine: AsyncLLM, text: str):
        tokenizer = await engine.get_tokenizer()
        return tokenizer.encode(text)


    def reset(engine: AsyncLLM):
        engine.reset_cache()
        return engine.stats().queued
""").lstrip("\n")


def _scan(tmp_path, client=CLIENT, target=TARGET, baseline=True):
    base = None
    if baseline:
        root = vllm_tree(tmp_path / "baseline", {k: textwrap.dedent(v) for k, v in BASELINE.items()})
        write_tree(root, {"vllm/_version.py": '__version__ = "0.98.0"\n'})
        base = str(root)
    result = scan_trees(tmp_path, target, {"plug/serve.py": client, "plug/__init__.py": ""}, only=["DC118"], client_vllm=base)
    assert result.internal_errors == []
    return [(f.severity, f.client.line, f.symbol) for f in result.findings], result


def test_dc118_awaiting_a_method_that_became_plain(tmp_path):
    found, result = _scan(tmp_path)
    assert found == [("error", 7, "vllm.engine.AsyncLLM.get_tokenizer"),
                     ("warning", 12, "vllm.engine.AsyncLLM.reset_cache"),
                     ("error", 13, "vllm.engine.AsyncLLM.stats")]
    first = result.findings[0].message
    assert "the client awaits `AsyncLLM.get_tokenizer()`, which vLLM 0.99.0 defines as a plain `def` returning " \
           "`TokenizerLike` (it was `async def` in vLLM 0.98.0): TypeError: object TokenizerLike can't be used in " \
           "'await' expression" in first
    assert "its body never runs" in result.findings[1].message


def test_dc118_without_a_baseline(tmp_path):
    # a coroutine's value read at once fails whatever the client's vLLM; awaiting a method annotated with a Protocol
    # (what conforms to it may have more) and dropping a coroutine are reported only as the drift a baseline shows
    found, _ = _scan(tmp_path, baseline=False)
    assert found == [("error", 13, "vllm.engine.AsyncLLM.stats")]


def test_dc118_without_a_baseline_awaiting_a_plain_class(tmp_path):
    target = {**TARGET, "vllm/engine.py": TARGET["vllm/engine.py"].replace(
        "    def get_tokenizer(self) -> TokenizerLike:", "    def get_tokenizer(self) -> Stats:")}
    found, result = _scan(tmp_path, target=target, baseline=False)
    assert ("error", 7, "vllm.engine.AsyncLLM.get_tokenizer") in found
    assert "TypeError: object Stats can't be used in 'await' expression" in result.findings[0].message


def test_dc118_twin_awaiting_what_returns_an_awaitable(tmp_path):
    found, _ = _scan(tmp_path, client=CLIENT.replace("await engine.get_tokenizer()", "await engine.get_future()"))
    assert ("error", 7, "vllm.engine.AsyncLLM.get_future") not in found


def test_dc118_twin_asyncio_run_of_the_plain_method(tmp_path):
    client = CLIENT + "\n\ndef main(engine: AsyncLLM):\n    return asyncio.run(engine.get_tokenizer())\n"
    found, _ = _scan(tmp_path, client=client)
    assert ("error", 17, "vllm.engine.AsyncLLM.get_tokenizer") in found


def test_dc118_twin_a_client_override_may_run(tmp_path):
    client = CLIENT + ("\n\nclass MyLLM(AsyncLLM):\n    async def get_tokenizer(self):\n        return None\n\n"
                       "    async def stats(self):\n        return None\n\n    async def reset_cache(self):\n        return None\n")
    found, _ = _scan(tmp_path, client=client)
    assert found == []


def test_dc118_twin_a_decorated_or_unannotated_method(tmp_path):
    target = {**TARGET, "vllm/engine.py": TARGET["vllm/engine.py"].replace(
        "    def get_tokenizer(self) -> TokenizerLike:", "    def get_tokenizer(self):")}
    found, _ = _scan(tmp_path, target=target)
    assert all(symbol != "vllm.engine.AsyncLLM.get_tokenizer" for _s, _l, symbol in found)


def test_dc118_twin_awaited_correctly(tmp_path):
    client = CLIENT.replace("await engine.get_tokenizer()", "engine.get_tokenizer()") \
        .replace("    engine.reset_cache()\n    return engine.stats().queued", "    return asyncio.run(engine.reset_cache())")
    found, _ = _scan(tmp_path, client=client)
    assert found == []


def test_dc118_twin_an_async_generator(tmp_path):
    # `async def` with `yield` makes an async generator: `async for` over it, or its `.aclose()`, is right
    target = {**TARGET, "vllm/engine.py": TARGET["vllm/engine.py"] + (
        "\n    async def generate(self, prompt: str):\n        yield prompt\n")}
    client = CLIENT + ("\n\nasync def outputs(engine: AsyncLLM):\n    gen = engine.generate('a')\n"
                       "    engine.generate('b').aclose()\n    return [o async for o in engine.generate('c')]\n")
    found, _ = _scan(tmp_path, target=target, client=client)
    assert all(symbol != "vllm.engine.AsyncLLM.generate" for _s, _l, symbol in found)


def test_dc118_twin_a_client_function_named_run(tmp_path):
    # only asyncio's `run` (or one imported from asyncio) wants an awaitable; the client's own `run` takes anything
    client = CLIENT + ("\n\ndef run(value):\n    return value\n\n\ndef main(engine: AsyncLLM):\n"
                       "    return run(engine.get_tokenizer())\n")
    found, _ = _scan(tmp_path, client=client)
    assert all(line < 16 for _s, line, _sym in found)


def test_dc118_an_event_loop_and_an_imported_gather(tmp_path):
    client = CLIENT.replace("import asyncio\n", "import asyncio\nfrom asyncio import gather\n") + (
        "\n\nasync def both(engine: AsyncLLM, loop):\n    await gather(engine.get_tokenizer())\n"
        "    return loop.run_until_complete(engine.get_tokenizer())\n")
    found, _ = _scan(tmp_path, client=client)
    assert ("error", 18, "vllm.engine.AsyncLLM.get_tokenizer") in found  # gather(...), imported from asyncio
    assert ("error", 19, "vllm.engine.AsyncLLM.get_tokenizer") in found  # loop.run_until_complete(...)


def test_dc118_twin_a_decorated_coroutine_function(tmp_path):
    # a decorator may turn the coroutine function into a plain one (a sync wrapper): its result says nothing
    target = {**TARGET, "vllm/engine.py": TARGET["vllm/engine.py"].replace(
        "            async def stats(self) -> Stats:",
        "            @run_sync\n            async def stats(self) -> Stats:").replace(
        "        class Stats:", "        def run_sync(fn):\n            return fn\n\n\n        class Stats:")}
    found, _ = _scan(tmp_path, target=target)
    assert ("error", 7, "vllm.engine.AsyncLLM.get_tokenizer") in found  # the edited file still reads
    assert all(symbol != "vllm.engine.AsyncLLM.stats" for _s, _l, symbol in found)
