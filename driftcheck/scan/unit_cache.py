"""What a unit stores and under which key: unit and whole-client results (JSON through `datacodec`, written
atomically, never pickles), the digest of driftcheck's own code, of a tree, and of the global facts a
unit reads outside its file.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftcheck.client_model.uses import Usage
from driftcheck.rules.findings import Finding, Location, UnknownResult, decode_payload
from driftcheck.storage.code_digest import code_digest as sources_digest
from driftcheck.storage.datacodec import Codec, CodecError
from driftcheck.storage.safe_write import write_bytes
from driftcheck.vllm_model.module_summary import SCHEMA


UNIT_FORMAT = 1


# ------------------------------------------------------------------------------------ stored data
@dataclass
class UnitResult:
    uses: int  # uses of vLLM looked up in this file (the precision denominator)
    items: list[list[Any]]  # [probe slot, "f" | "u", the finding's / unknown's JSON]; slot -1: DC000
    errors: list[str] = field(default_factory=list)  # internal errors of rules, in rule order
    baselines: dict[str, str] = field(default_factory=dict)  # the client's own vLLM, as loaded by a rule


@dataclass
class ClientResult:
    files: int
    uses: int
    findings: list[Any]
    unknown: list[Any]
    errors: list[str]
    baselines: dict[str, str]


@functools.lru_cache(maxsize=None)
def codec_for(cls: type) -> Codec:
    return Codec(cls)


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """driftcheck's own sources (rules included), and the formats of what a unit stores: an edited rule never reuses
    an old answer."""
    return hashlib.sha1(f"{sources_digest()}\0{SCHEMA}\0{UNIT_FORMAT}".encode()).hexdigest()


class UnitCache:
    def __init__(self, root: Path):
        self.root = root / "units" / f"u{UNIT_FORMAT}-s{SCHEMA}"
        self.enabled = True

    def _path(self, key: str, kind: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get(self, key: str, cls: type):
        if not self.enabled:
            return None
        try:
            raw = self._path(key, cls.__name__).read_bytes()
        except OSError:
            return None
        try:
            return codec_for(cls).loads(raw)
        except (CodecError, TypeError, ValueError, RecursionError):
            return None  # damaged or foreign: a miss, rewritten by the next put

    def put(self, key: str, value) -> None:
        if not self.enabled:
            return
        try:
            payload = codec_for(type(value)).dumps(value)
        except (CodecError, TypeError, ValueError):
            return
        try:
            write_bytes(self._path(key, type(value).__name__), payload, durable=False)
        except OSError:
            self.enabled = False


def finding_from_json(d: dict) -> Finding:
    return Finding(rule=d["rule"], name=d["name"], severity=d["severity"], message=d["message"], symbol=d["symbol"],
                   client=_location(d["client"]), vllm=_location(d["vllm"]), fix=d["fix"], when=d["when"],
                   details=d.get("details", {}), client_name=d.get("client_name"), suppressed=d.get("suppressed"),
                   payload=_payload(d["rule"], d.get("payload")))


def _payload(rule_id: str, data: dict | None):
    """The rule's typed payload back from JSON; a shape this rule no longer declares raises CodecError (a miss)."""
    if data is None:
        return None
    from driftcheck.rules.registry import registry  # rules only: the registry imports fixes when asked for them

    entry = registry().get(rule_id)
    cls = entry.rule.payload if entry is not None else None
    if cls is None:
        raise CodecError(f"{rule_id} declares no payload")
    return decode_payload(cls, data)


def unknown_from_json(d: dict) -> UnknownResult:
    return UnknownResult(d["rule"], d["message"], _location(d.get("client")), d.get("symbol"), d.get("client_name"))


def _location(d: dict | None) -> Location | None:
    if d is None:
        return None
    return Location(d["path"], d["line"], d.get("code", ""), d.get("col"), d.get("end_line"), d.get("end_col"), d.get("version"))


# ------------------------------------------------------------------------------------ digests
def sha(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def tree_digest(view, extra: str) -> str:
    """Every file of the client's tree (the .py files, and the scripts and configs rules read)."""
    h = hashlib.sha1(extra.encode())
    for rel in sorted(set(view.iter_files("", suffix=""))):
        try:
            data = view.read_bytes(rel)
        except Exception:  # unreadable: its name still counts
            data = b"\xff"
        h.update(f"{rel}\0{len(data)}\0".encode() + hashlib.sha1(data).digest())
    return h.hexdigest()


# Fields of Usage a unit does not read from other files: its own lists, the files, what the visits fill
UNIT_OWN = ("imports", "calls", "attrs", "module_attrs", "rpcs", "bound", "patch_paths", "name_probes", "unanalysed", "files",
            "passed", "unbound_called", "unread_packages")


_ATOMS = (str, int, bool, float, type(None))
_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass's field names


def _plain(value: Any) -> Any:
    """A global fact as plain, ordered data for the digest: a vLLM object by its qualified name, a client file by
    its path, a syntax node by its place, sets and dicts sorted."""
    cls = value.__class__
    if cls in _ATOMS:  # most of a whole-platform client's facts are strings: answered before the checks below
        return repr(value)
    if isinstance(value, dict):
        return sorted(((repr(_plain(k)), _plain(v)) for k, v in value.items()), key=lambda kv: kv[0])
    if isinstance(value, (set, frozenset)):
        return sorted(repr(_plain(v)) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, ast.AST):
        return (type(value).__name__, getattr(value, "lineno", 0), getattr(value, "col_offset", 0))
    qualname = getattr(value, "qualname", None)
    if isinstance(qualname, str) and hasattr(value, "kind"):  # a Resolved vLLM object
        return ("vllm", qualname, value.kind)
    rel = getattr(value, "rel", None)
    if isinstance(rel, str) and hasattr(value, "tree"):  # a client file
        return ("file", rel)
    names = _FIELDS.get(cls)
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        return (cls.__name__, [(name, _plain(getattr(value, name))) for name in names])
    return repr(value)


def global_digest(usage: Usage, source, file_order: list[str], dispatched: dict, reached: frozenset = frozenset(),
                  replaced: dict | None = None, api=None, version_imports: dict | None = None) -> str:
    """What a unit reads besides its own file: every fact of the global phases (every field of `Usage` that is not
    the unit's own: a fact added later is covered without naming it here), the order of the files they were gathered
    in, the files that define what the client names by path or binds onto vLLM (worker extensions and classes, the
    functions it rebinds vLLM's names to: their signatures are read from there), and where the client spells, as a
    string, the name of a vLLM module the target lacks (what DC001 asks the client's whole tree:
    `ClientSource.quoted_names`). Only those names: an edit that moves any other string keeps every other file's unit."""
    facts = [
        [(f.name, _plain(getattr(usage, f.name))) for f in dataclasses.fields(usage) if f.name not in UNIT_OWN],
        file_order,
        sorted((rel, g.where, sorted(g.names)) for rel, g in dispatched.items()),  # guards that come from other files
        sorted(reached),  # ...and the names other files reach (a function only this file uses)
        sorted((rel, g.where) for rel, gs in (replaced or {}).items() for g in gs),  # bodies other files replace
        sorted((rel, sorted(names)) for rel, names in (version_imports or {}).items()),  # version checks from others
    ]
    h = hashlib.sha1(repr(facts).encode())
    by_module = {f.module: f for f in source.files}
    named = [d for d, _loc in (*usage.worker_extensions, *usage.worker_classes)]
    named += [r.replacement for rs in usage.rebound.values() for r in rs if r.replacement]
    for dotted in sorted(set(named)):
        f = by_module.get(dotted.rpartition(".")[0]) or by_module.get(dotted)
        if f is not None:
            h.update(f"{f.rel}\0".encode() + sha(f.text.encode()).encode())
    package = api.package if api is not None else "vllm"
    spelled = sorted((name, where) for name, where in source.quoted_names().items()
                     if (name == package or name.startswith(package + "."))
                     and (api is None or api.module_path(name) is None))
    h.update(repr(spelled).encode())
    return h.hexdigest()
