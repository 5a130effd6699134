import math

from driftcheck.runner.checks import (
    PromptResult, check_convention, check_finite_nonzero, check_reference, check_rows, check_token_ids,
    detect_convention, rel_error, run_checks,
)

# a reference for 2 layers (3 hidden_states entries), 2 prompts, hidden size 2
REF = [
    [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]], [[3.0, 1.0], [1.0, 3.0]]],
    [[[1.0, 1.0]], [[4.0, 0.0]], [[5.0, 5.0]]],
]
PROMPTS = [[5, 6], [7]]


def extraction(shift: int, layers=(0, 1), scale=1.0, token_ids=True):
    return [PromptResult(token_ids=list(ids) if token_ids else None,
                         layers={L: [[x * scale for x in row] for row in REF[i][L + shift]] for L in layers})
            for i, ids in enumerate(PROMPTS)]


def test_rel_error():
    assert rel_error([[1.0, 0.0]], [[1.0, 0.0]]) == 0.0
    assert math.isclose(rel_error([[1.01, 0.0]], [[1.0, 0.0]]), 0.01)
    assert rel_error([[1.0]], [[1.0], [2.0]]) == math.inf  # a short extraction never "matches"
    assert rel_error([[0.0]], [[0.0]]) == 0.0


def test_convention_is_detected_both_ways():
    for name, shift in (("input", 0), ("output", 1)):
        passes = [extraction(shift)]
        assert detect_convention(passes, REF, [0, 1], 0.02)["detected"] == name
        assert check_convention(passes, REF, [0, 1], name, 0.02).ok
        other = "output" if name == "input" else "input"
        assert not check_convention(passes, REF, [0, 1], other, 0.02).ok


def test_reference_tolerance():
    assert check_reference([extraction(1, scale=1.01)], REF, [0, 1], "output", 0.02).ok
    bad = check_reference([extraction(1, scale=1.05)], REF, [0, 1], "output", 0.02)
    assert not bad.ok and "rel. error up to 0.05" in bad.detail


def test_truncated_second_pass_fails_rows_and_reference():
    first = extraction(0)
    second = extraction(0)
    second[0].layers = {L: rows[1:] for L, rows in second[0].layers.items()}  # prefix rows lost
    rows = check_rows([first, second], PROMPTS, [0, 1])
    assert not rows.ok and "pass 2 prompt 0: 1 rows for 2 tokens (layers 0, 1)" in rows.detail
    ref = check_reference([first, second], REF, [0, 1], "input", 0.02)
    assert not ref.ok and "do not line up" in ref.detail and ref.data["per_pass"]["pass1"] == 0.0


def test_finite_nonzero_and_token_ids():
    passes = [extraction(0)]
    passes[0][0].layers[0][0] = [float("nan"), 1.0]
    passes[0][1].layers[1][0] = [0.0, 0.0]
    finite, nonzero = check_finite_nonzero(passes)
    assert not finite.ok and not nonzero.ok
    assert check_token_ids([extraction(0)], PROMPTS).ok
    wrong = extraction(0)
    wrong[1].token_ids = [8]
    assert not check_token_ids([wrong], PROMPTS).ok
    unreported = check_token_ids([extraction(0, token_ids=False)], PROMPTS)
    assert unreported.ok and unreported.data["checked"] == 0


def test_run_checks_all_pass_for_a_faithful_extraction():
    checks = run_checks([extraction(1), extraction(1)], PROMPTS, REF, [0, 1], "output", 0.02)
    assert [c.name for c in checks] == ["rows", "layers", "finite", "nonzero", "token_ids", "reference", "convention"]
    assert all(c.ok for c in checks)


def test_missing_layer_fails_layers_check():
    checks = {c.name: c for c in run_checks([extraction(1, layers=(0,))], PROMPTS, REF, [0, 1], "output", 0.02)}
    assert not checks["layers"].ok and not checks["rows"].ok
