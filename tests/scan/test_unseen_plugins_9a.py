"""Root causes of false errors from the ninth batch of untuned plugins, names a-l (docs/triage/2026-12-03-unseen-plugins-9a.md),
one group each: the shape that runs (no error, or unknown with the reason where driftcheck cannot know), and the same
shape where the code really fails, which must stay an error.
"""

from __future__ import annotations

from scan.helpers import scan_trees


def _found(result, *rules) -> list[tuple[str, str, str, int]]:
    return sorted((f.rule, f.severity, f.client.path, f.client.line) for f in result.findings if f.rule in rules)


def _unknown(result, rule: str) -> list[str]:
    return [u.message for u in result.unknown if u.rule == rule]


# ----------------------------------------------------------------------------------------- CA
def _serve(builder: str) -> dict[str, str]:
    return {"vllm/entrypoints/cli/main.py": "def main():\n    return None\n",  # what `python -m` runs (DC111 checks it exists)
            "vllm/entrypoints/cli/serve.py": f"""
        class ServeSubcommand:
            name = "serve"

            def subparser_init(self, subparsers):
                serve_parser = {builder}
                serve_parser.add_argument("model_tag", nargs="?")
                serve_parser.add_argument("--port", type=int, default=8000)
                return serve_parser
    """}


LAUNCH = {"run.py": """
    import subprocess
    import sys

    def flags():
        return subprocess.run([sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", "--help"], capture_output=True)

    def bogus():
        return subprocess.run(["vllm", "serve", "m", "--port", "1", "--frobnicate"])
"""}


def test_ca_argparse_gives_every_parser_its_help_flag(tmp_path):
    # aevyra-forge 0.2.0 runner.py:233 runs `vllm serve --help` to list the flags the installed vLLM accepts
    result = scan_trees(tmp_path, _serve('subparsers.add_parser("serve", help="Launch a server.")'), LAUNCH, only=["DC111"])
    assert _found(result, "DC111") == [("DC111", "error", "run.py", 8)]  # --frobnicate still fails


def test_ca_a_parser_built_without_help_has_none(tmp_path):
    result = scan_trees(tmp_path, _serve('subparsers.add_parser("serve", add_help=False)'), LAUNCH, only=["DC111"])
    assert _found(result, "DC111") == [("DC111", "error", "run.py", 5), ("DC111", "error", "run.py", 8)]


# ----------------------------------------------------------------------------------------- CB
WORKERS = {
    "vllm/config.py": """
        class ParallelConfig:
            def __init__(self, worker_extension_cls: str = ""):
                self.worker_extension_cls = worker_extension_cls
    """,
    "vllm/v1/worker/worker_base.py": """
        class WorkerBase:
            def load_model(self):
                return None
    """,
    "vllm/v1/worker/gpu_worker.py": """
        from vllm.v1.worker.worker_base import WorkerBase

        class Worker(WorkerBase):
            def compile_or_warm_up_model(self):
                return None
    """,
    "vllm/entrypoints/llm.py": """
        class LLM:
            def __init__(self, model: str, worker_extension_cls: str = ""):
                self.model = model

            def collective_rpc(self, method: str, args: tuple = ()):
                return []
    """,
}


def _capture(check: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/capture.py": f"""
        from vllm.entrypoints.llm import LLM

        def capture(llm: LLM, parallel_config, ext=None):
            {check}
            llm.collective_rpc("_setup_capture", args=([3],))
            return llm.collective_rpc("load_model")
    """}


def test_cb_client_reads_the_extension_its_caller_configured(tmp_path):
    # lm-polygraph 0.7.0 vllm_with_uncertainty.py:290-322: getattr(parallel_config, "worker_extension_cls", None)
    for check in ('assert "HookExtension" in str(getattr(parallel_config, "worker_extension_cls", None))',
                  'assert parallel_config.worker_extension_cls',
                  'llm = LLM("m", worker_extension_cls=ext)'):  # hands on the class its caller names
        result = scan_trees(tmp_path / str(len(check)), WORKERS, _capture(check), only=["DC007"])
        assert _found(result, "DC007") == [], check
        [message] = _unknown(result, "DC007")
        assert "`_setup_capture`" in message and "names no worker extension" in message and "capture.py:4" in message


def test_cb_a_client_relying_on_no_extension_still_errors(tmp_path):
    result = scan_trees(tmp_path, WORKERS, _capture("pass"), only=["DC007"])
    assert _found(result, "DC007") == [("DC007", "error", "pkg/capture.py", 5)]


def test_cb_a_client_naming_its_extension_is_checked_against_it(tmp_path):
    client = _capture('llm = LLM("m", worker_extension_cls="pkg.ext.Ext") or parallel_config.worker_extension_cls')
    client["pkg/ext.py"] = """
        class Ext:
            def _other(self):
                return None
    """
    result = scan_trees(tmp_path, WORKERS, client, only=["DC007"])
    assert _found(result, "DC007") == [("DC007", "error", "pkg/capture.py", 5)]


def test_cb_a_read_in_another_file_is_not_reliance(tmp_path):
    # vLLM's own worker wrapper reads parallel_config.worker_extension_cls to mix the class in; its executor's
    # collective_rpc("start_profile") in 0.11.0 names a method no worker has (a latent bug the self-scan lists)
    client = _capture("pass")
    client["pkg/wrapper.py"] = """
        def mix_in(parallel_config, worker_class):
            return (worker_class, parallel_config.worker_extension_cls)
    """
    result = scan_trees(tmp_path, WORKERS, client, only=["DC007"])
    assert _found(result, "DC007") == [("DC007", "error", "pkg/capture.py", 5)]
