"""Findings, unknowns and the JSON contract that reports, fixes, baselines and the CI gate read.

The JSON keys listed in the scan issue are a contract: extend, never rename.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1}


@dataclass
class Location:
    path: str
    line: int
    code: str = ""
    col: int | None = None
    end_line: int | None = None
    end_col: int | None = None
    version: str | None = None  # vLLM side: which release this location is in

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "code": self.code}
        for key in ("col", "end_line", "end_col", "version"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class Rule:
    id: str  # stable: DC001...
    name: str  # stable slug, also the probe's module name with dashes
    title: str
    severity: str
    fix: str | None = None  # fix id of the codemod that repairs it
    kind: str = "generic"  # generic | behaviour
    raises: tuple[str, ...] = ()  # the exceptions the drift raises: a `try` that catches one guards the use
    whole_client: bool = False  # pairs uses of several client files (a store in one, a read in another)
    payload: type | None = None  # the dataclass its findings carry for its fixes (declared in the rule's module)
    baseline: bool = False  # compares with the client's own vLLM (`ctx.baseline()`): a first scan reads its text ahead
    guardable: bool = True  # False: the finding is the client's own version check failing (DC112), which no guard holds
    reads_release: bool = False  # asks whole-release questions (DC106, DC108, DC110): a small client's worker starts
    # on these, so the two processes' last rules end together (scan/units.run_whole)


@dataclass
class Finding:
    rule: str
    name: str
    severity: str
    message: str
    symbol: str | None
    client: Location | None
    vllm: Location | None
    fix: str | None = None
    when: str | None = None  # import | call | silent: when the drift bites
    details: dict[str, Any] = field(default_factory=dict)
    client_name: str | None = None  # which client (distribution) this finding belongs to
    suppressed: str | None = None  # why it is hidden (baseline / inline ignore), when it is
    payload: Any = None  # what the rule knew that its fix needs (an instance of its `Rule.payload`): typed, not parsed


    def fingerprint(self) -> str:
        """Survives line moves: rule + vLLM symbol + client file + the client line's code (whitespace-free)."""
        code = re.sub(r"\s+", "", self.client.code if self.client else "")
        path = self.client.path if self.client else ""
        raw = "\0".join([self.rule, self.symbol or "", path, code])
        return hashlib.sha1(raw.encode()).hexdigest()[:20]

    def to_json(self) -> dict[str, Any]:
        out = {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "symbol": self.symbol,
            "client": self.client.to_json() if self.client else None,
            "vllm": self.vllm.to_json() if self.vllm else None,
            "fix": self.fix,
            "when": self.when,
            "fingerprint": self.fingerprint(),
        }
        if self.client_name:
            out["client_name"] = self.client_name
        if self.details:
            out["details"] = self.details
        if self.suppressed:
            out["suppressed"] = self.suppressed
        if self.payload is not None:
            out["payload"] = encode_payload(self.payload)
        return out

    def sort_key(self) -> tuple:
        return (
            self.client_name or "",
            self.client.path if self.client else "",
            self.client.line if self.client else 0,
            self.rule,
            self.symbol or "",
        )


@functools.lru_cache(maxsize=None)
def _codec(cls: type):
    from driftcheck.storage.datacodec import Codec  # checks every value against the declared types, both ways

    return Codec(cls)


def encode_payload(payload: Any) -> dict[str, Any]:
    """{field: JSON value}, readable in a report and decoded back by `decode_payload` with the rule's class."""
    values = _codec(type(payload)).encode(payload)
    return dict(zip((f.name for f in dataclasses.fields(payload)), values))


def decode_payload(cls: type, data: dict[str, Any]) -> Any:
    return _codec(cls).decode([data.get(f.name) for f in dataclasses.fields(cls)])


@dataclass
class UnknownResult:
    """A question a probe could not answer: never a pass."""

    rule: str
    message: str
    client: Location | None = None
    symbol: str | None = None
    client_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule, "message": self.message}
        if self.client:
            out["client"] = self.client.to_json()
        if self.symbol:
            out["symbol"] = self.symbol
        if self.client_name:
            out["client_name"] = self.client_name
        return out


def summarise(findings: list[Finding]) -> dict[str, int]:
    counts = {s: 0 for s in SEVERITIES}
    for f in findings:
        if not f.suppressed:
            counts[f.severity] = counts.get(f.severity, 0) + 1
    return counts
