"""DC123 parsed-option-gone: an option read off the Namespace of a parser vLLM fills, which the target's parser no
longer adds.

Shapes from real clients (batch 26f's M2, twenty-second session): happy_vllm's `get_parser()` adds its own options,
hands the parser to `AsyncEngineArgs.add_cli_args`, and `get_model_settings(parser)` parses `[]` for vLLM's defaults
and reads each one into a pydantic settings class; five of its nine vLLM upgrades broke on such a read first
(`forced_num_gpu_blocks` at 0.4.1, `image_input_type` at 0.5.3.post1, `max_context_len_to_capture` at 0.6.4.post1,
`chat_template_text_format` at 0.6.6.post1, `quantization_param_path` at 0.7.0).
"""

from __future__ import annotations

import pytest

from conftest import run_cli
from scan.helpers import scan_against_own


# A server builds its parser, hands it to
# `AsyncEngineArgs.add_cli_args`, parses `[]` for vLLM's defaults and reads them off the Namespace; the release that
# drops the option (`--quantization-param-path` in 0.7.0) leaves the attribute unset: AttributeError at start-up.
def _arg_utils(flags: list[str]) -> dict:
    adds = "".join(f"        parser.add_argument({f})\n" for f in flags)
    return {"vllm/__init__.py": "", "vllm/engine/__init__.py": "",
            "vllm/engine/arg_utils.py": "class EngineArgs:\n    @staticmethod\n    def add_cli_args(parser):\n" + adds +
                                        "        return parser\n\n\nclass AsyncEngineArgs(EngineArgs):\n"
                                        "    @staticmethod\n    def add_cli_args(parser):\n"
                                        "        parser = EngineArgs.add_cli_args(parser)\n"
                                        "        parser.add_argument('--disable-log-requests', action='store_true')\n"
                                        "        return parser\n"}


_OWN_ARGS = _arg_utils(["'--model'", "'--quantization-param-path'", "'--max-len', dest='max_model_len'"])
_NEW_ARGS = _arg_utils(["'--model'", "'--max-len', dest='max_model_len'", "'--kv-scales'"])

_SERVER = '''import argparse

from vllm.engine.arg_utils import AsyncEngineArgs


def get_parser():
    parser = argparse.ArgumentParser(description="server")
    parser.add_argument("--host", default="0.0.0.0")
    parser = AsyncEngineArgs.add_cli_args(parser)
    return parser


def get_model_settings(parser):
{before}    default_args = parser.parse_args([])

    class ModelSettings:
        model = default_args.model
        max_model_len = default_args.max_model_len
        host = default_args.host
        quantization_param_path = {read}

    return ModelSettings


def parse_args():
    parser = get_parser()
    settings = get_model_settings(parser)
    parser.set_defaults(**vars(settings))
    return parser.parse_args()
'''


def _dc123(tmp_path, server: str, with_own: bool = True) -> list[tuple[str, int, str]]:
    from scan.helpers import scan_trees
    client = {"srv/__init__.py": "", "srv/utils_args.py": server}
    if with_own:
        result = scan_against_own(tmp_path, _OWN_ARGS, "0.6.6", _NEW_ARGS, client, ["DC123"], "0.7.0")
    else:
        result = scan_trees(tmp_path, _NEW_ARGS, client, only=["DC123"], version="0.7.0")
    return [(f.severity, f.client.line, f.message) for f in result.findings]


def test_26f_m2_an_option_vllms_parser_dropped_read_off_its_namespace_is_an_error(tmp_path):
    server = _SERVER.format(before="", read="default_args.quantization_param_path")
    [(severity, line, message)] = _dc123(tmp_path, server)
    assert (severity, line) == ("error", 20)  # host (the client's) and max_model_len (a dest=) are set
    assert "adds no option that sets 'quantization_param_path'" in message and "vLLM 0.6.6, the client's vLLM" in message


@pytest.mark.parametrize("server,with_own", [
    (_SERVER.format(before="", read="getattr(default_args, 'quantization_param_path', None)"), True),
    (_SERVER.format(before="", read="default_args.quantization_param_path"), False),
    (_SERVER.format(before="", read="default_args.quantization_param_path").replace(
        '    parser.add_argument("--host", default="0.0.0.0")\n',
        '    parser.add_argument("--host", default="0.0.0.0")\n    parser.add_argument("--quantization-param-path")\n'),
     True),
    (_SERVER.format(before="    parser.set_defaults(**{'a': 1})\n", read="default_args.quantization_param_path"), True),
    (_SERVER.format(before="    third_party.extend(parser)\n", read="default_args.quantization_param_path"), True),
    (_SERVER.format(before="", read="default_args.quantization_param_path").replace(
        "    return parser\n", "    parser.add_argument(*EXTRA)\n    return parser\n", 1), True),
], ids=["getattr with a default", "no vLLM of the client's own", "the client adds the option",
        "spread defaults before the parse", "handed to code driftcheck does not read", "a computed flag"])
def test_26f_m2_twin_an_option_the_namespace_may_have_is_not_reported(tmp_path, server, with_own):
    assert _dc123(tmp_path, server, with_own) == []


def test_the_rule_is_listed_and_documented():
    proc = run_cli("rules", "DC123")
    assert proc.returncode == 0 and "parsed-option-gone" in proc.stdout and "quantization_param_path" in proc.stdout


def test_explain_matches_the_traceback(tmp_path):
    tb = tmp_path / "tb.txt"
    tb.write_text('Traceback (most recent call last):\n  File "/srv/happy_vllm/utils_args.py", line 143, in ModelSettings\n'
                  "    quantization_param_path: Optional[str] = default_args.quantization_param_path\n"
                  "AttributeError: 'Namespace' object has no attribute 'quantization_param_path'\n")
    proc = run_cli("explain", str(tb))
    assert "DC123" in proc.stdout, proc.stdout + proc.stderr


def test_on_real_releases(tmp_path):
    """vLLM 0.16.0's `AsyncEngineArgs.add_cli_args` no longer adds `--task` (0.11.0's arg_utils.py:522 did) and still
    adds `--swap-space`: the read of `task` is the error, at 0.11.0 nothing."""
    from conftest import CACHE_DIR
    from driftcheck.scan.pipeline import ScanOptions, scan
    from driftcheck.sources.targets import resolve_client, resolve_vllm

    root = tmp_path / "client" / "srv"
    root.mkdir(parents=True)
    (root / "__init__.py").write_text(
        "from vllm.engine.arg_utils import AsyncEngineArgs\nfrom vllm.utils import FlexibleArgumentParser\n\n\n"
        "def defaults():\n    parser = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser())\n"
        "    args = parser.parse_args([])\n    return args.swap_space, args.task\n")

    def found(version):
        result = scan(resolve_vllm(version, CACHE_DIR), [resolve_client(str(root.parent), CACHE_DIR)],
                      ScanOptions(cache_dir=CACHE_DIR, only=["DC123"], client_vllm="0.11.0"))
        assert not result.internal_errors
        return [(f.client.line, f.severity, f.details["option"]) for f in result.findings]

    assert found("0.16.0") == [(8, "error", "task")]
    assert found("0.11.0") == []


# batch 27a: vLLM 0.8.5's own run_batch.py returns `parser.parse_args()` from a helper, and `main(args)` reads the
# Namespace; a closure of the parsing function and a `getattr` without a default read it too.
_HELPER = '''from vllm.engine.arg_utils import AsyncEngineArgs


def parse_args():
    parser = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser())
    return parser.parse_args()


def main(args):
    return args.quantization_param_path


def closure():
    args = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser()).parse_args([])

    def later():
        return args.quantization_param_path

    return later, getattr(args, "quantization_param_path")


if __name__ == "__main__":
    args = parse_args()
    main(args)
'''


def test_27a_a_namespace_a_helper_returns_and_closure_and_getattr_reads(tmp_path):
    server = "from argparse import ArgumentParser as FlexibleArgumentParser\n" + _HELPER
    found = _dc123(tmp_path, server)
    assert [line for _s, line, _m in found] == [11, 18, 20]


# 27a M5 (the compose-rl fork's AsyncLLMServer shape): a server class parses in `__init__` into `self.args` and reads
# the options in another method; `self.args` stored twice is not followed.
_KEPT = '''from argparse import ArgumentParser as FlexibleArgumentParser
from vllm.engine.arg_utils import AsyncEngineArgs


class Server:
    def __init__(self):
        parser = AsyncEngineArgs.add_cli_args(FlexibleArgumentParser())
        self.args = parser.parse_args()

    def start(self):
        return self.args.quantization_param_path
'''


@pytest.mark.parametrize("extra,lines", [("", [11]), ("\n    def reset(self, ns):\n        self.args = ns\n", [])],
                         ids=["kept once", "stored again: not followed"])
def test_27a_m5_a_namespace_kept_on_self_is_read_in_other_methods(tmp_path, extra, lines):
    found = _dc123(tmp_path, _KEPT + extra)
    assert [line for _s, line, _m in found] == lines
    assert all("`self.args.quantization_param_path` raises AttributeError" in m for _s, _l, m in found)
