"""A client that ships modules inside vLLM's own package (triage batch 8, BA: light-vllm-security 1.0.3's wheel is
`vllm/model_security/*.py` with no `vllm/__init__.py`, which pip installs into vLLM's `vllm/` folder).

The modules it ships exist at run time: imports of them (absolute, relative, `from vllm import own`) and reads of them
on the `vllm` package are the client's own, never "missing in vLLM". What those files import from the release is
still checked, relative imports that reach the release included; a module the client does not ship is still missing;
and where the client ships its own copy of a module the release has, a name only its copy defines is unknown (which
copy runs depends on the install order), while a name neither copy defines stays an error.
"""

from __future__ import annotations

import textwrap

from driftcheck.client_model.client import load_client
from driftcheck.sources.sources import FolderTree
from driftcheck.vllm_model.api_index import ApiIndex
from scan.helpers import scan_trees, vllm_tree, write_tree

VLLM = {
    "vllm/__init__.py": '__version__ = "0.18.0"\n',
    "vllm/logger.py": """
        import logging


        def init_logger(name):
            return logging.getLogger(name)
    """,
}

OVERLAY = {  # what the wheel installs into vLLM's folder: no vllm/__init__.py
    "vllm/model_security/__init__.py": """
        from vllm.logger import init_logger

        from vllm.model_security.crypto import ModelDecryptor, generate_dek

        logger = init_logger(__name__)


        def register_encrypted_loader():
            return "encrypted"
    """,
    "vllm/model_security/crypto.py": """
        def generate_dek():
            return b"k" * 32


        class ModelDecryptor:
            def __init__(self, dek):
                self.dek = dek
    """,
    "vllm/model_security/cli/wrapper.py": """
        def main():
            import vllm.model_security
            from vllm import model_security
            from .. import crypto
            from ..crypto import generate_dek

            return vllm.model_security.register_encrypted_loader(), model_security, crypto, generate_dek
    """,
}


def _errors(result) -> list[tuple[str, str, int, str]]:
    return sorted((f.rule, f.client.path, f.client.line, f.symbol) for f in result.findings if f.severity == "error")


def test_modules_the_client_ships_inside_vllm_are_its_own(tmp_path):
    client = {**OVERLAY, "main.py": """
        from vllm.model_security import ModelDecryptor, generate_dek
        from vllm.model_security.cli.wrapper import main
        import vllm.model_security.crypto as crypto

        print(ModelDecryptor(generate_dek()), main(), crypto.MAGIC)
    """}
    result = scan_trees(tmp_path, VLLM, client)
    assert result.internal_errors == []
    assert _errors(result) == []
    assert [u.message for u in result.unknown] == []


def test_a_module_the_client_does_not_ship_is_still_missing(tmp_path):
    client = {**OVERLAY, "main.py": """
        import vllm
        from vllm.model_security import generate_dek
        from vllm.model_guard import guard

        print(generate_dek(), vllm.model_security, vllm.model_guard)
    """}
    result = scan_trees(tmp_path / "shipped", VLLM, client)
    assert _errors(result) == [("DC001", "main.py", 3, "vllm.model_guard"), ("DC002", "main.py", 5, "vllm.model_guard")]
    # the same main.py without the overlay: its imports of vllm.model_security fail too
    result = scan_trees(tmp_path / "not-shipped", VLLM, {"main.py": client["main.py"]})
    assert _errors(result) == [("DC001", "main.py", 2, "vllm.model_security"), ("DC001", "main.py", 3, "vllm.model_guard"),
                               ("DC002", "main.py", 5, "vllm.model_guard"), ("DC002", "main.py", 5, "vllm.model_security")]


def test_what_overlay_files_import_from_the_release_is_checked(tmp_path):
    client = {**OVERLAY, "vllm/model_security/license.py": """
        from vllm.model_security.crypto import generate_dek
        from vllm.logger import init_logger, NoSuchLogger
        from ..logger import NoSuchHandler
        from .. import no_such_module
        from . import crypto

        init_logger(__name__)
    """}
    result = scan_trees(tmp_path, VLLM, client)
    path = "vllm/model_security/license.py"
    assert _errors(result) == [("DC002", path, 2, "vllm.logger.NoSuchLogger"), ("DC002", path, 3, "vllm.logger.NoSuchHandler"),
                               ("DC002", path, 4, "vllm.no_such_module")]


def test_a_copy_of_a_release_module_the_client_ships(tmp_path):
    """The client's own `vllm/logger.py` replaces the release's, or is replaced by it, whichever pip installed last: a
    name only the client's copy defines is unknown; a name neither defines fails either way."""
    client = {
        "vllm/logger.py": textwrap.dedent(VLLM["vllm/logger.py"]) + "\n\ndef init_json_logger(name):\n    return name\n",
        "main.py": """
            import vllm.logger
            from vllm.logger import init_logger, init_json_logger, init_no_logger

            print(vllm.logger.init_json_logger, vllm.logger.no_such_thing, init_logger)
        """,
    }
    result = scan_trees(tmp_path, VLLM, client)
    assert result.internal_errors == []
    assert _errors(result) == [("DC002", "main.py", 2, "vllm.logger.init_no_logger"),
                               ("DC002", "main.py", 4, "vllm.logger.no_such_thing")]
    unknown = sorted((u.client.line, u.symbol) for u in result.unknown if u.rule == "DC002")
    assert unknown == [(2, "vllm.logger.init_json_logger"), (4, "vllm.logger.init_json_logger")]
    assert all("vllm/logger.py" in u.message and "installed" in u.message for u in result.unknown)


def test_an_identical_copy_changes_nothing(tmp_path):
    """vLLM's own tree scanned as a client (the self-scan): every module is the release's file, nothing is the
    client's own or in doubt."""
    from driftcheck.client_model.overlay import overlay_modules

    vroot = vllm_tree(tmp_path / "vllm-src", VLLM)
    croot = write_tree(tmp_path / "client", {"vllm/logger.py": VLLM["vllm/logger.py"], "vllm/__init__.py": VLLM["vllm/__init__.py"],
                                              "vllm/model_security/crypto.py": "import vllm\n"})
    api = ApiIndex(FolderTree(vroot), "0.18.0")
    own, shadowed = overlay_modules(load_client(FolderTree(croot), "c"), api)
    assert own == {"vllm.model_security.crypto": "vllm/model_security/crypto.py", "vllm.model_security": "vllm/model_security/"}
    assert shadowed == {}
    result = scan_trees(tmp_path / "scan", VLLM, {"vllm/logger.py": VLLM["vllm/logger.py"],
                                                  "main.py": "from vllm.logger import init_json_logger\n"})
    assert _errors(result) == [("DC002", "main.py", 1, "vllm.logger.init_json_logger")]
