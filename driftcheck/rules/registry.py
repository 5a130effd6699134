"""The rule registry: one entry per rule id, the only place that knows what a rule is made of.

An entry joins what the rule's module declares (probes/<name>.py: `RULE`, `check`, the module docstring as its
docs, `SIGNATURES` for `driftcheck explain`) with the codemods that repair it (fixes/<action>.py whose
`FIX.rules` name the rule id). `driftcheck scan` runs the detectors, `explain` tries the signatures, SARIF and
`driftcheck rules` print the docs, and `fix` and `--select`/`--only` look rules and fixes up here; none of them
keeps a table of its own. `entry("DC104")` (or a rule name, any case) finds a rule in one step.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import ModuleType

from driftcheck.errors import DriftcheckError
from driftcheck.rules.findings import Rule
from driftcheck.rules.tbsigs import RULE_FIX, Signature


@dataclass(frozen=True)
class RuleEntry:
    rule: Rule
    detector: ModuleType  # the probe module: RULE, check(ctx), docs, SIGNATURES
    signatures: tuple[Signature, ...]

    @property
    def fixes(self) -> tuple[ModuleType, ...]:
        """Fix modules whose FIX.rules name this rule, in the order fix runs them. Imported on first ask: the codemods
        bring libcst (a tenth of a second), which a scan never needs."""
        return tuple(m for m in _fix_modules() if self.rule.id in m.FIX.rules)

    @property
    def id(self) -> str:
        return self.rule.id

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def docs(self) -> str:
        return (self.detector.__doc__ or self.rule.title).strip()

    @property
    def fix_ids(self) -> list[str]:
        return [m.FIX.id for m in self.fixes]

    def check(self, ctx):
        return self.detector.check(ctx)


def _norm(word: str) -> str:
    return word.strip().lower().replace("_", "-")


@functools.lru_cache(maxsize=None)
def _registry() -> tuple[RuleEntry, ...]:
    from driftcheck.probes import load_probes

    entries = []
    seen: set[str] = set()
    for module in load_probes():
        rule = module.RULE
        if rule.id in seen:
            raise DriftcheckError(f"internal error: two rule modules declare {rule.id}")
        seen.add(rule.id)
        entries.append(RuleEntry(rule, module, tuple(getattr(module, "SIGNATURES", ()))))
    return tuple(entries)


def entries() -> list[RuleEntry]:
    """Every rule, in the order the scan runs them."""
    return list(_registry())


def registry() -> dict[str, RuleEntry]:
    return {e.id: e for e in _registry()}


@functools.lru_cache(maxsize=1)
def _fix_modules() -> tuple[ModuleType, ...]:
    from driftcheck.fixes import load_fixes

    return tuple(load_fixes())


def fix_modules() -> list[ModuleType]:
    """Every codemod, in the order `driftcheck fix` runs them."""
    return list(_fix_modules())


def entry(word: str) -> RuleEntry:
    """The rule named by its id (DC104, any case) or its name (unique-reply-rank / unique_reply_rank)."""
    key = _norm(word)
    for e in _registry():
        if key in (_norm(e.id), _norm(e.name)):
            return e
    raise DriftcheckError(f"no rule named {word!r} (known rules: {', '.join(e.id for e in _registry())})",
                          "ids and names match in any case; see 'driftcheck rules'")


@functools.lru_cache(maxsize=None)
def _ordered_signatures() -> tuple[tuple[RuleEntry, Signature], ...]:
    pairs = [(e, s) for e in _registry() for s in e.signatures]
    order = {id(s): i for i, (_e, s) in enumerate(pairs)}
    return tuple(sorted(pairs, key=lambda p: (-p[1].priority, order[id(p[1])])))


def traceback_signatures() -> list[tuple[RuleEntry, Signature]]:
    """(rule, signature) for every rule's traceback signatures, most specific (highest priority) first."""
    return list(_ordered_signatures())


def signature_fix(e: RuleEntry, sig: Signature) -> str | None:
    return e.rule.fix if sig.fix is RULE_FIX else sig.fix
