"""What a probe receives: the target's ApiIndex, the client's usage, and helpers to build findings.

The probe contract (see probes/__init__.py): a probe module defines `RULE` (a `Rule`) and
`check(ctx: ScanContext) -> Iterable[Finding | UnknownResult]`. A probe never raises for a
question it cannot answer: it yields an `UnknownResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from driftcheck.vllm_model.api_index import ApiIndex
from driftcheck.vllm_model.resolved import Resolved
from driftcheck.client_model.client import ClientSource
from driftcheck.rules.findings import Finding, Location, Rule, UnknownResult
from driftcheck.client_model.uses import Loc, Usage

T = TypeVar("T")


@dataclass
class ScanContext:
    api: ApiIndex
    usage: Usage
    client: ClientSource
    client_name: str
    vllm_version: str | None
    baseline_loader: Callable[[], "ApiIndex | str | None"] | None = None  # a string: why it could not be loaded
    baseline_note: str | None = None  # why no baseline is available, when it is not
    _answers: dict[Callable, Any] = field(default_factory=dict, repr=False)
    _baseline: Any = None
    _baseline_loaded: bool = False

    def baseline(self) -> ApiIndex | None:
        """The vLLM the client was written for (its declared requirement), fetched lazily."""
        if not self._baseline_loaded:
            self._baseline_loaded = True
            if self.baseline_loader is not None:
                self._baseline = self.baseline_loader()
            if isinstance(self._baseline, str):
                self.baseline_note, self._baseline = self.baseline_note or self._baseline, None
        return self._baseline

    def once(self, question: Callable[["ScanContext"], T]) -> T:
        """`question(self)`, asked once per scan: rules that share a derived table (every bound call) ask for it by
        the function that builds it, so the answer has one name and one type, and no key can collide."""
        if question not in self._answers:
            self._answers[question] = question(self)
        return self._answers[question]

    def client_location(self, loc: Loc) -> Location:
        return Location(loc.path, loc.line, loc.code, loc.col, loc.end_line, loc.end_col)

    def vllm_location(self, path: str, line: int, api: ApiIndex | None = None) -> Location:
        api = api or self.api
        return Location(path, line, api.source_line(path, line) if line else "", version=api.version)

    def location_of(self, resolved: Resolved, api: ApiIndex | None = None) -> Location:
        return self.vllm_location(resolved.path, resolved.line, api)

    def finding(self, rule: Rule, message: str, client: Loc | None, vllm: Location | None, symbol: str | None,
                when: str | None = None, severity: str | None = None, fix: str | None | bool = True,
                **details: Any) -> Finding:
        return Finding(
            rule=rule.id,
            name=rule.name,
            severity=severity or rule.severity,
            message=message,
            symbol=symbol,
            client=self.client_location(client) if client else None,
            vllm=vllm,
            fix=rule.fix if fix is True else (fix or None),
            when=when,
            details={k: v for k, v in details.items() if v is not None},
            client_name=self.client_name,
        )

    def unknown(self, rule: Rule, message: str, client: Loc | None = None, symbol: str | None = None) -> UnknownResult:
        return UnknownResult(rule.id, message, self.client_location(client) if client else None, symbol, self.client_name)

    def version_label(self, api: ApiIndex | None = None) -> str:
        api = api or self.api
        return f"vLLM {api.version}" if api.version else "the target vLLM"


def once_per_client(item: UnknownResult) -> UnknownResult:
    """Marks an unknown the rule asks once per client, at its first use (units.py keeps only the first file's)."""
    item.once = True  # type: ignore[attr-defined]  (not part of the JSON: how results of several files merge)
    return item
