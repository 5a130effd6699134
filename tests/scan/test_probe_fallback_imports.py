"""An import after `if <probe found it>: ...; return` is the other releases' spelling (plugin shape GD): a warning.
After a negated probe, or a probe without an early exit, the import runs on every release: still an error."""

from __future__ import annotations

import textwrap

from scan.helpers import scan_trees

VLLM = {"vllm/method.py": "class Method:\n    def __init__(self):\n        self.kernel = 1\n",
        "vllm/utils.py": "def present():\n    return 1\n"}


def _severities(tmp_path, body: str) -> list[str]:
    client = {"conv.py": "from vllm.method import Method\n\n\n" + textwrap.dedent(body)}
    result = scan_trees(tmp_path, VLLM, client)
    return [f.severity for f in result.findings if f.symbol.endswith("convert_old")]


def test_an_import_after_a_probe_that_returns_is_a_warning(tmp_path):
    assert _severities(tmp_path, """
        def convert(qm: Method, layer):
            kernel = getattr(qm, "kernel", None)
            if kernel is not None:
                return kernel
            from vllm.utils import convert_old
            return convert_old(qm, layer)
    """) == ["warning"]


def test_an_import_after_a_negated_probe_is_an_error(tmp_path):
    assert _severities(tmp_path, """
        def convert(qm: Method, layer):
            if not hasattr(qm, "kernel"):
                return None
            from vllm.utils import convert_old
            return convert_old(qm, layer)
    """) == ["error"]


def test_an_import_after_a_probe_without_an_exit_is_an_error(tmp_path):
    assert _severities(tmp_path, """
        def convert(qm: Method, layer):
            kernel = getattr(qm, "kernel", None)
            if kernel is not None:
                kernel = 2
            from vllm.utils import convert_old
            return convert_old(qm, layer)
    """) == ["error"]
