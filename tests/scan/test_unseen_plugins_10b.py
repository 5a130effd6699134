"""Root causes of false errors from the tenth batch of untuned plugins, names m-z (docs/triage/2026-12-03-unseen-plugins-10b.md),
one group each: the shape that runs (no error), and the same shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


# ----------------------------------------------------------------------------------------- CM
SERVE = {"vllm/entrypoints/cli/serve.py": """
    class ServeSubcommand:
        name = "serve"

        def subparser_init(self, subparsers):
            serve_parser = subparsers.add_parser("serve")
            serve_parser.add_argument("model_tag", nargs="?")
            serve_parser.add_argument("--host", type=str, default=None)
            serve_parser.add_argument("--port", type=int, default=8000)
            serve_parser.add_argument("--served-model-name", type=str, default=None)
            return serve_parser
"""}


def _launcher(items: str, use: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/launch.py": f"""
        import shlex
        import subprocess


        def start(model):
            parts = ["vllm", "serve", shlex.quote(model), {items}]
            parts += ["--served-model-name adapter"]
            {use}
    """}


def test_serve_items_joined_into_a_shell_line_are_split_into_words(tmp_path):
    """stateset-agents 0.69.0 remote/serve_session.py:642-663, :930-952: `"--host 0.0.0.0"` is one item of a list
    the function joins with spaces into a shell command line, so the shell hands vLLM two words."""
    for n, use in enumerate(('return " ".join(parts)',
                             "return f\"exec {' '.join(parts)} > /tmp/log 2>&1\"",
                             'subprocess.run(" ".join(parts), shell=True)')):
        client = _launcher('"--host 0.0.0.0", "--port 8000"', use)
        assert _found(scan_trees(tmp_path / str(n), SERVE, client), "DC111") == []


def test_an_unknown_flag_in_a_joined_serve_line_is_still_an_error(tmp_path):
    client = _launcher('"--host 0.0.0.0", "--hots 0.0.0.0 --port 1"', 'return " ".join(parts)')
    assert _found(scan_trees(tmp_path, SERVE, client), "DC111") == [("DC111", "error", "pkg/launch.py", 6)]


def test_an_item_holding_a_space_in_an_argv_list_is_still_an_error(tmp_path):
    """The same list handed to subprocess as argv: `"--host 0.0.0.0"` reaches argparse as one argument, which it
    rejects (`unrecognized arguments`). Joined with something other than spaces, the items are not shell words."""
    for n, use in enumerate(("subprocess.run(parts)", 'return ",".join(parts)')):
        found = _found(scan_trees(tmp_path / str(n), SERVE, _launcher('"--host 0.0.0.0"', use)), "DC111")
        assert found == [("DC111", "error", "pkg/launch.py", 6), ("DC111", "error", "pkg/launch.py", 7)], use


def test_a_shell_operator_in_a_joined_item_ends_the_command(tmp_path):
    """`"> log 2>&1 & echo --frobnicate"` after the flags: what follows the operator is not vLLM's."""
    client = _launcher('"--port 1 > /tmp/log 2>&1 & echo --frobnicate"', 'return " ".join(parts)')
    assert _found(scan_trees(tmp_path, SERVE, client), "DC111") == []


# ----------------------------------------------------------------------------------------- CN
LORA = {"vllm/lora/request.py": """
    class LoRARequest:
        def __init__(self, lora_name, lora_int_id, lora_path=""):
            self.lora_name = lora_name
"""}


def _backend(binding: str, handler: str = "VLLM_EXCEPTIONS", rebinding: str = "") -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/backend.py": f"""
        {binding}
        {rebinding}


        def add_lora(name, path):
            try:
                from vllm.lora.request import LoRARequest
                return LoRARequest(lora_name=name, lora_int_id=1, lora_local_path=path)
            except {handler} as exc:
                return None
    """}


def test_an_except_naming_a_module_tuple_that_holds_the_error_guards_the_call(tmp_path):
    """stateset-agents 0.69.0 training/vllm_backend.py:49-56, 698-723: `except VLLM_EXCEPTIONS`, a module tuple
    with TypeError in it, catches the old keyword's TypeError: a warning, not an error."""
    for n, (binding, handler) in enumerate((("VLLM_EXCEPTIONS = (ImportError, TypeError)", "VLLM_EXCEPTIONS"),
                                            ("ERRORS = (ImportError, builtins.TypeError)", "(ERRORS, OSError)"),
                                            ("ERRORS = (ValueError, Exception)", "ERRORS"))):
        found = _found(scan_trees(tmp_path / str(n), LORA, _backend(binding, handler)), "DC003")
        assert found == [("DC003", "warning", "pkg/backend.py", 8)], binding


def test_an_except_naming_a_tuple_without_the_error_stays_an_error(tmp_path):
    """A tuple without TypeError, a name bound twice (which value holds is not known here), or a tuple bound inside
    a function (not the module's) catches nothing driftcheck can name."""
    for n, (binding, rebinding) in enumerate((("VLLM_EXCEPTIONS = (ImportError, OSError)", ""),
                                              ("VLLM_EXCEPTIONS = (ImportError, TypeError)",
                                               "VLLM_EXCEPTIONS = (ImportError,)"),
                                              ("def f():\n            VLLM_EXCEPTIONS = (TypeError,)", ""))):
        found = _found(scan_trees(tmp_path / str(n), LORA, _backend(binding, rebinding=rebinding)), "DC003")
        assert found == [("DC003", "error", "pkg/backend.py", 8 + binding.count("\n"))], (binding, rebinding)
