"""Checks on extracted hidden states, in plain Python (no torch) so that they are unit-testable anywhere.

An extraction is, per pass and per prompt, the token ids the driver reports (or None) and, per
requested layer id, a list of rows (one list of floats per token). The reference is, per prompt,
`ref[k]` = rows of transformers' hidden_states[k] (k = num_layers is the last layer's pre-norm output).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from driftcheck.runner.spec import CONVENTIONS


@dataclass
class PromptResult:
    token_ids: list[int] | None
    layers: dict[int, list[list[float]]]


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    data: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, **({"data": self.data} if self.data else {})}


def rel_error(rows: list[list[float]], ref: list[list[float]]) -> float:
    """||rows - ref|| / ||ref|| over a whole matrix (Frobenius); inf when the shapes differ."""
    if len(rows) != len(ref) or any(len(a) != len(b) for a, b in zip(rows, ref)):
        return math.inf
    num = den = 0.0
    for a, b in zip(rows, ref):
        for x, y in zip(a, b):
            num += (x - y) * (x - y)
            den += y * y
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return math.sqrt(num / den)


def _where(p: int, i: int, layer: int | None = None) -> str:
    return f"pass {p + 1} prompt {i}" + ("" if layer is None else f" layer {layer}")


def _grouped(bad: dict[tuple[int, int], tuple[str, list[int]]]) -> str:
    """'pass 2 prompt 1: 35 rows for 45 tokens (layers 1, 2, 3)'; one entry per pass and prompt."""
    items = [f"{_where(p, i)}: {what} (layers {', '.join(map(str, ls))})" for (p, i), (what, ls) in bad.items()]
    more = f"; and {len(items) - 6} more" if len(items) > 6 else ""
    return "; ".join(items[:6]) + more


def check_rows(passes, prompts, layers) -> Check:
    bad: dict = {}
    for p, results in enumerate(passes):
        for i, (res, ids) in enumerate(zip(results, prompts)):
            for L in layers:
                got = len(res.layers.get(L, []))
                if got != len(ids):
                    bad.setdefault((p, i), (f"{got} rows for {len(ids)} tokens", []))[1].append(L)
    return Check("rows", not bad, _grouped(bad) or "one row per prompt token, every pass",
                 {"mismatches": sum(len(ls) for _, ls in bad.values())})


def check_layers(passes, layers) -> Check:
    bad = []
    for p, results in enumerate(passes):
        for i, res in enumerate(results):
            if sorted(res.layers) != sorted(layers):
                bad.append(f"{_where(p, i)}: layers {sorted(res.layers)}")
    return Check("layers", not bad, "; ".join(bad[:6]) or f"layers {sorted(layers)} present")


def check_finite_nonzero(passes) -> list[Check]:
    nonfinite, zero_rows = [], []
    for p, results in enumerate(passes):
        for i, res in enumerate(results):
            for L, rows in res.layers.items():
                if any(not math.isfinite(x) for r in rows for x in r):
                    nonfinite.append(_where(p, i, L))
                n_zero = sum(1 for r in rows if not any(r))
                if n_zero:
                    zero_rows.append(f"{_where(p, i, L)}: {n_zero} all-zero rows")
    return [
        Check("finite", not nonfinite, "; ".join(nonfinite[:6]) or "all values finite"),
        Check("nonzero", not zero_rows, "; ".join(zero_rows[:6]) or "no all-zero row"),
    ]


def check_token_ids(passes, prompts) -> Check:
    bad, reported = [], 0
    for p, results in enumerate(passes):
        for i, (res, ids) in enumerate(zip(results, prompts)):
            if res.token_ids is None:
                continue
            reported += 1
            if list(res.token_ids) != list(ids):
                bad.append(f"{_where(p, i)}: {len(res.token_ids)} ids, first difference at "
                           f"{_first_diff(res.token_ids, ids)}")
    if not reported:
        return Check("token_ids", True, "driver reports no token ids (not checked)", {"checked": 0})
    return Check("token_ids", not bad, "; ".join(bad[:6]) or "token ids equal the prompt", {"checked": reported})


def _first_diff(a, b) -> int:
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return k
    return min(len(a), len(b))


def error_table(passes, reference, layers, shift: int) -> dict[tuple[int, int, int], float]:
    """rel_error of every (pass, prompt, layer) against ref[layer + shift]."""
    table = {}
    for p, results in enumerate(passes):
        for i, res in enumerate(results):
            ref = reference[i]
            for L in layers:
                k = L + shift
                rows = res.layers.get(L)
                table[(p, i, L)] = math.inf if rows is None or not 0 <= k < len(ref) else rel_error(rows, ref[k])
    return table


def check_reference(passes, reference, layers, convention: str, rtol: float) -> Check:
    table = error_table(passes, reference, layers, CONVENTIONS[convention])
    bad: dict = {}
    for (p, i, L), err in table.items():
        if not err < rtol:
            worst = max(e for (q, j, _), e in table.items() if (q, j) == (p, i))
            what = "rows do not line up with the prompt" if math.isinf(worst) else f"rel. error up to {_fmt(worst)}"
            bad.setdefault((p, i), (what, []))[1].append(L)
    worst = max(table.values(), default=math.inf)
    per_pass = {f"pass{p + 1}": _fmt(max((e for (q, _, _), e in table.items() if q == p), default=math.inf))
                for p in range(len(passes))}
    return Check(
        "reference", not bad,
        _grouped(bad) or f"matches transformers (max rel. error {_fmt(worst)} < {rtol})",
        {"max_rel_error": _fmt(worst), "rtol": rtol, "per_pass": per_pass,
         "failures": sum(len(ls) for _, ls in bad.values())},
    )


def detect_convention(passes, reference, layers, rtol: float) -> dict:
    """Which layer-numbering convention the first pass follows, with the error under each."""
    first = passes[:1]
    errors = {}
    for name, shift in CONVENTIONS.items():
        table = error_table(first, reference, layers, shift)
        errors[name] = _fmt(max(table.values(), default=math.inf))
    fits = [name for name, err in errors.items() if err < rtol]
    return {"detected": fits[0] if len(fits) == 1 else None, "max_rel_error": errors}


def check_convention(passes, reference, layers, documented: str, rtol: float) -> Check:
    conv = detect_convention(passes, reference, layers, rtol)
    detected = conv["detected"]
    ok = detected == documented
    if detected is None:
        detail = f"rows match neither convention (errors {conv['max_rel_error']})"
    else:
        detail = (f"layer id L = {detected} of layer L (transformers hidden_states[L"
                  f"{'+1' if CONVENTIONS[detected] else ''}])")
        if not ok:
            detail += f"; the driver documents '{documented}'"
    return Check("convention", ok, detail, {"documented": documented, **conv})


def run_checks(passes, prompts, reference, layers, convention: str, rtol: float) -> list[Check]:
    return [
        check_rows(passes, prompts, layers),
        check_layers(passes, layers),
        *check_finite_nonzero(passes),
        check_token_ids(passes, prompts),
        check_reference(passes, reference, layers, convention, rtol),
        check_convention(passes, reference, layers, convention, rtol),
    ]


def _fmt(x: float) -> float:
    return x if math.isinf(x) else float(f"{x:.3g}")
