"""`--select RULE` and `fix --only RULE_OR_FIX`: user words -> the canonical rule ids and fix ids.

A typo must never make the gate pass by running nothing, so every word has to name something: a rule id
(`DC003`, any case), a rule name (`unknown-keyword`) or, for `--only`, a fix id (`drop-keyword`). Names match
case-insensitively and with `_` for `-` (`unknown_keyword` is the probe's module name, so people type it).
Anything else is one error line listing what is known, exit 2.
"""

from __future__ import annotations

from driftcheck.errors import DriftcheckError


def _norm(word: str) -> str:
    return word.strip().lower().replace("_", "-")


def _rules():
    from driftcheck.rules.registry import entries

    return [e.rule for e in entries()]


def _fixes():
    from driftcheck.rules.registry import fix_modules

    return [m.FIX for m in fix_modules()]


def resolve_rules(words: list[str] | None, option: str = "--select") -> list[str] | None:
    """Canonical rule ids for `words` (None: every rule)."""
    if words is None:
        return None
    rules, _fixes_ = resolve_only(words, option, with_fixes=False)
    return rules


def resolve_only(words: list[str], option: str = "--only", with_fixes: bool = True) -> tuple[list[str], list[str]]:
    """(rule ids, fix ids) named by `words`; DriftcheckError (exit 2) for a word that names nothing."""
    rules = _rules()
    by_word: dict[str, tuple[str, str]] = {}
    for r in rules:
        by_word[_norm(r.id)] = ("rule", r.id)
        by_word.setdefault(_norm(r.name), ("rule", r.id))
    fixes = _fixes() if with_fixes else []
    for f in fixes:
        by_word.setdefault(_norm(f.id), ("fix", f.id))
    rule_ids: list[str] = []
    fix_ids: list[str] = []
    # `--select DC113,DC114` as ruff takes it, as well as the option repeated
    words = [part for word in words for part in (word.split(",") if "," in word else [word])]
    for word in words:
        hit = by_word.get(_norm(word)) if word.strip() else None
        if hit is None:
            known = ", ".join(r.id for r in rules)
            what = "rule" + (" or fix" if with_fixes else "")
            fix_list = f"; fixes: {', '.join(f.id for f in fixes)}" if with_fixes else ""
            raise DriftcheckError(f"{option}: no {what} named {word!r} (known rules: {known}{fix_list})",
                                  "ids and names match in any case; see 'driftcheck rules'")
        kind, canonical = hit
        target = rule_ids if kind == "rule" else fix_ids
        if canonical not in target:
            target.append(canonical)
    return rule_ids, fix_ids
