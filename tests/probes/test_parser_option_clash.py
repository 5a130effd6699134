"""DC124 parser-option-clash: an option the client adds to a parser it hands to vLLM, which the target's builder adds
too: argparse raises ArgumentError (conflicting option string) while the parser is built.

Shapes from real clients (batch 26f's M3, twenty-second session): happy_vllm's `get_parser()` adds
`--enable-reasoning` and `--reasoning-parser` for its own server, then calls `AsyncEngineArgs.add_cli_args(parser)`;
vLLM 0.8.1's `EngineArgs.add_cli_args` adds both (0.7.3 had them only in the OpenAI server's parser), and the server
no longer starts. specprefill's latency benchmark adds `--spec-model`, which vLLM 0.32.0's builder adds too.
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from scan.helpers import scan_against_own, scan_trees


def _arg_utils(flags: list[str], extra: str = "") -> dict:
    adds = "".join(f"        parser.add_argument({f})\n" for f in flags)
    return {"vllm/__init__.py": "", "vllm/engine/__init__.py": "",
            "vllm/engine/arg_utils.py": "import os\n\n\nclass EngineArgs:\n    @staticmethod\n    def add_cli_args(parser):\n"
                                        + adds + extra + "        return parser\n\n\nclass AsyncEngineArgs(EngineArgs):\n"
                                        "    @staticmethod\n    def add_cli_args(parser, async_args_only=False):\n"
                                        "        if not async_args_only:\n"
                                        "            parser = EngineArgs.add_cli_args(parser)\n"
                                        "        parser.add_argument('--disable-log-requests', action='store_true')\n"
                                        "        return parser\n"}


_OWN = _arg_utils(["'--model'"])
_NEW = _arg_utils(["'--model'", "'--enable-reasoning', action='store_true'"],
                  "        if os.environ.get('X'):\n            parser.add_argument('--tool-parser')\n")

_SERVER = '''import argparse

from vllm.engine.arg_utils import AsyncEngineArgs


def get_parser():
    parser = argparse.ArgumentParser({make})
    parser.add_argument("{flag}", action="store_true")
    parser = AsyncEngineArgs.add_cli_args({args})
    return parser
'''


def _dc124(tmp_path, server: str, with_own: bool = True) -> list[tuple[str, int, str]]:
    client = {"srv/__init__.py": "", "srv/utils_args.py": server}
    if with_own:
        result = scan_against_own(tmp_path, _OWN, "0.7.3", _NEW, client, ["DC124"], "0.8.1")
    else:
        result = scan_trees(tmp_path, _NEW, client, only=["DC124"], version="0.8.1")
    return [(f.severity, f.client.line, f.message) for f in result.findings]


@pytest.mark.parametrize("with_own", [True, False])
def test_an_option_vllms_builder_now_adds_too_is_an_error(tmp_path, with_own):
    server = _SERVER.format(make="", flag="--enable-reasoning", args="parser")
    [(severity, line, message)] = _dc124(tmp_path, server, with_own)
    assert (severity, line) == ("error", 8)
    assert "`--enable-reasoning` is also an option vLLM 0.8.1's `AsyncEngineArgs.add_cli_args` adds" in message
    assert "vLLM's `add_argument` raises inside `AsyncEngineArgs.add_cli_args(...)` on line 9" in message
    assert ("new since vLLM 0.7.3" in message) == with_own


def test_an_option_added_after_the_builder_raises_on_the_clients_line(tmp_path):
    server = _SERVER.format(make="", flag="--host", args="parser").replace(
        "    return parser\n", "    group = parser.add_argument_group('server')\n"
        "    group.add_argument('--enable-reasoning', action='store_true')\n    return parser\n")
    [(severity, line, message)] = _dc124(tmp_path, server)
    assert (severity, line) == ("error", 11)
    assert "the client's `add_argument` on this line raises" in message


@pytest.mark.parametrize("server", [
    _SERVER.format(make="conflict_handler='resolve'", flag="--enable-reasoning", args="parser"),
    _SERVER.format(make="", flag="--enable-reasoning", args="parser, async_args_only=True"),
    _SERVER.format(make="", flag="--tool-parser", args="parser"),
    _SERVER.format(make="", flag="--my-own-flag", args="parser"),
    _SERVER.format(make="", flag="--enable-reasoning", args="parser").replace(
        "def get_parser():\n    parser = argparse.ArgumentParser()\n", "def get_parser(parser):\n"),
], ids=["the parser resolves conflicts", "another argument may skip the branch", "added only under an undecided if",
        "an option vLLM does not add", "a parser the function is handed"])
def test_twin_a_parser_that_may_not_clash_is_not_reported(tmp_path, server):
    assert _dc124(tmp_path, server) == []


def test_the_rule_is_listed_and_documented():
    proc = run_cli("rules", "DC124")
    assert proc.returncode == 0 and "parser-option-clash" in proc.stdout and "--enable-reasoning" in proc.stdout


def test_explain_matches_the_traceback(tmp_path):
    tb = tmp_path / "tb.txt"
    tb.write_text('Traceback (most recent call last):\n  File "/srv/happy_vllm/utils_args.py", line 440, in get_parser\n'
                  "    parser = AsyncEngineArgs.add_cli_args(parser)\n"
                  "argparse.ArgumentError: argument --enable-reasoning: conflicting option string: --enable-reasoning\n")
    proc = run_cli("explain", str(tb))
    assert "DC124" in proc.stdout, proc.stdout + proc.stderr


def test_on_real_releases(tmp_path):
    """vLLM 0.16.0's `AsyncEngineArgs.add_cli_args` adds `--attention-backend`, which 0.11.0's did not: a client
    option of that name clashes at 0.16.0 and is its own at 0.11.0."""
    from conftest import CACHE_DIR
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    root = tmp_path / "client" / "srv"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text(
        "from vllm.engine.arg_utils import AsyncEngineArgs\nfrom vllm.utils import FlexibleArgumentParser\n\n\n"
        "def get_parser():\n    parser = FlexibleArgumentParser()\n    parser.add_argument('--attention-backend')\n"
        "    parser = AsyncEngineArgs.add_cli_args(parser)\n    return parser\n")

    def found(version):
        result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                      ScanOptions(cache_dir=CACHE_DIR, only=["DC124"], client_vllm="0.11.0"))
        assert not result.internal_errors
        return [(f.client.line, f.severity, f.details["option"]) for f in result.findings]

    assert found("0.16.0") == [(7, "error", "--attention-backend")]
    assert found("0.11.0") == []


# batch 27a: scale's llm-engine hands `parse_args(FlexibleArgumentParser())` a new parser and adds
# `--attention-backend` after `make_arg_parser(parser)` (whose `AsyncEngineArgs.add_cli_args(parser)` takes the
# `if not async_args_only:` branch at its default); kserve adds `--task` to a parser made with `parents=` and hands it
# to vLLM through a wrapper of its own, in another module (kserve#4076 at 0.6.4.post1).
_CLI = {"vllm/entrypoints/__init__.py": "",
        "vllm/entrypoints/cli_args.py": "from vllm.engine.arg_utils import AsyncEngineArgs\n\n\n"
                                        "def make_arg_parser(parser):\n    parser.add_argument('--port')\n"
                                        "    return AsyncEngineArgs.add_cli_args(parser)\n"}


def test_27a_a_parser_every_caller_makes_new_and_a_chained_builder(tmp_path):
    server = ("import argparse\n\nfrom vllm.entrypoints.cli_args import make_arg_parser\n\n\n"
              "def parse_args(parser):\n    parser = make_arg_parser(parser)\n"
              "    parser.add_argument('--enable-reasoning')\n    return parser.parse_args()\n\n\n"
              "if __name__ == '__main__':\n    args = parse_args(argparse.ArgumentParser())\n")
    client = {"srv/__init__.py": "", "srv/main.py": server}
    result = scan_against_own(tmp_path, {**_OWN, **_CLI}, "0.7.3", {**_NEW, **_CLI}, client, ["DC124"], "0.8.1")
    assert [(f.severity, f.client.line) for f in result.findings] == [("error", 8)]
    # a caller that hands over a parser of its own making elsewhere: what it holds is not read
    client["srv/main.py"] = server.replace("parse_args(argparse.ArgumentParser())", "parse_args(shared_parser)")
    assert scan_against_own(tmp_path / "b", {**_OWN, **_CLI}, "0.7.3", {**_NEW, **_CLI}, client, ["DC124"],
                            "0.8.1").findings == []


def test_27a_a_builder_behind_a_wrapper_of_another_module_and_parents(tmp_path):
    wrapper = ("from vllm.engine.arg_utils import AsyncEngineArgs\n\n\n"
               "def maybe_add_vllm_cli_parser(parser):\n    return AsyncEngineArgs.add_cli_args(parser)\n")
    main = ("import argparse\n\nfrom srv.utils import maybe_add_vllm_cli_parser\n\nimport vllm  # noqa: F401\n\n"
            "base = argparse.ArgumentParser(add_help=False)\n"
            "parser = argparse.ArgumentParser(parents=[base])\nparser.add_argument('--enable-reasoning')\n"
            "parser = maybe_add_vllm_cli_parser(parser)\n")
    client = {"srv/__init__.py": "", "srv/utils.py": wrapper, "srv/__main__.py": main}
    result = scan_against_own(tmp_path, _OWN, "0.7.3", _NEW, client, ["DC124"], "0.8.1")
    assert [(f.client.path, f.client.line) for f in result.findings] == [("srv/__main__.py", 9)]
