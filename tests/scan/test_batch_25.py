"""Twentieth session (batch 25a, KV-cache clients never scanned): a fallback bound by the handler of a failed import.

F1 (py-kvcache at vLLM 0.19.1): `try: from vllm.v1.kv_offload.abstract import OffloadKey, PrepareStoreOutput` with
`except Exception:` defining the client's own `PrepareStoreOutput` dataclass. 0.19.1 lacks `OffloadKey`, so the import
stops at it, binds neither name, and the handler's class is what the module's later `PrepareStoreOutput(...)` builds;
it was checked against vLLM's class of that name (4 false DC003/DC005 errors).
"""

from __future__ import annotations

from scan.helpers import scan_trees

_OFFLOAD = ("from dataclasses import dataclass\n\n\n@dataclass\nclass PrepareStoreOutput:\n    block_hashes_to_store: list\n"
            "    store_spec: object\n    block_hashes_evicted: list\n")
_VLLM = {"vllm/__init__.py": "", "vllm/offload.py": _OFFLOAD}

_CLIENT = '''\
from dataclasses import dataclass
from typing import Any

try:
    from vllm.offload import OffloadKey, PrepareStoreOutput
except Exception:
    OffloadKey = Any

    @dataclass(frozen=True)
    class PrepareStoreOutput:
        keys_to_store: list
        store_spec: object
        evicted_keys: list


def prepare_store(keys):
    return PrepareStoreOutput(keys_to_store=list(keys), store_spec=None, evicted_keys=[])
'''


def _errors(tmp_path, client: str = _CLIENT, vllm: dict | None = None) -> list[tuple[str, int]]:
    result = scan_trees(tmp_path, vllm or _VLLM, {"plug/__init__.py": "", "plug/conn.py": client})
    assert not result.internal_errors
    return sorted((f.rule, f.client.line) for f in result.findings if f.severity == "error")


def test_f1_the_handlers_class_is_what_runs_after_a_failed_import(tmp_path):
    assert _errors(tmp_path) == []


def test_f1_twin_where_the_import_succeeds_vllms_class_is_built(tmp_path):
    vllm = {**_VLLM, "vllm/offload.py": _OFFLOAD + "\n\nOffloadKey = int\n"}
    assert _errors(tmp_path, vllm=vllm) == [("DC003", 17), ("DC003", 17), ("DC005", 17), ("DC005", 17)]


def test_f1_a_name_bound_before_the_failing_one_and_not_rebound_stays_vllms(tmp_path):
    """`from m import Kept, Gone` binds Kept before it fails; a handler that binds only Gone leaves vLLM's Kept."""
    client = _CLIENT.replace("import OffloadKey, PrepareStoreOutput", "import PrepareStoreOutput, OffloadKey") \
        .replace("    @dataclass(frozen=True)\n    class PrepareStoreOutput:\n        keys_to_store: list\n"
                 "        store_spec: object\n        evicted_keys: list\n", "")
    assert [rule for rule, _ in _errors(tmp_path, client)] == ["DC003", "DC003", "DC005", "DC005"]


def test_f1_a_handlers_import_replaces_a_name_the_failed_import_never_bound(tmp_path):
    """The handler imports the name from where it moved; the body's import of it (after the missing name) never ran."""
    vllm = {**_VLLM, "vllm/offload.py": "class PrepareStoreOutput:\n    def __init__(self, block_hashes_to_store):\n        pass\n",
            "vllm/moved.py": "class PrepareStoreOutput:\n    def __init__(self, keys_to_store, store_spec, evicted_keys):\n"
                             "        pass\n"}
    client = _CLIENT.replace("    @dataclass(frozen=True)\n    class PrepareStoreOutput:\n        keys_to_store: list\n"
                             "        store_spec: object\n        evicted_keys: list\n",
                             "    from vllm.moved import PrepareStoreOutput\n")
    assert _errors(tmp_path, client, vllm) == []
    # twin: without the missing name the body's import runs, and the handler never does
    twin = _errors(tmp_path / "twin", client.replace("OffloadKey, PrepareStoreOutput", "PrepareStoreOutput"), vllm)
    assert twin == [("DC003", 13), ("DC003", 13), ("DC003", 13), ("DC005", 13)]
