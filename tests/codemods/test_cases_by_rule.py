"""Each codemod on small cases from several clients, by rule id: cases/<DCxxx>/<fix>/.

A case is `<client>.before.py` and `<client>.after.py` (the client it is shaped like: synthetic, lmcache,
hs-connectors, vLLM's own code); `noop.py` is code the fix must leave alone. The first line of each file names
the vLLM release it is checked against (`# vllm 0.16.0`). The fix runs as `driftcheck fix --only RULE --only FIX`,
so a case passes only when that rule finds the drift and that fix repairs it. The seed client end to end is
test_codemods.py.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

import pytest

from codemods.fixture_util import CASES_DIR, FIXTURES, run_fix

# Fixes whose cases need a whole engine (a hand-built EngineCore, a replaced model forward): covered end to end on
# the seed client (test_codemods.py, test_replay_layer_arguments.py), not here.
SEED_ONLY = {"add-block-hasher", "replay-engine-setup", "replay-layer-arguments"}


def _version(text: str) -> str:
    m = re.match(r"# vllm (\S+)\n", text)
    assert m, "a case starts with '# vllm VERSION'"
    return m.group(1)


def _cases():
    out = []
    for before in sorted(CASES_DIR.glob("DC*/*/*.before.py")):
        rule, fix = before.parent.parent.name, before.parent.name
        out.append(pytest.param(rule, fix, before, before.with_name(before.name.replace(".before.", ".after.")),
                                id=f"{rule}-{fix}-{before.name.split('.')[0]}"))
    return out


def _noops():
    return [pytest.param(p.parent.parent.name, p.parent.name, p, id=f"{p.parent.parent.name}-{p.parent.name}-noop")
            for p in sorted(CASES_DIR.glob("DC*/*/noop.py"))]


def _fix(tmp_path: Path, rule: str, fix: str, text: str) -> str:
    return run_fix(tmp_path, text, fix, _version(text), only=[rule, fix])


@pytest.mark.parametrize("rule,fix,before,after", _cases())
def test_before_becomes_after(tmp_path, rule, fix, before, after):
    source, expected = before.read_text(), after.read_text()
    assert source != expected, "a case must show a change"
    result = _fix(tmp_path, rule, fix, source)
    assert result == expected
    ast.parse(result)  # the fixed code parses
    compile(result, str(after), "exec")


@pytest.mark.parametrize("rule,fix,before,after", _cases())
def test_after_is_a_no_op_and_twice_is_once(tmp_path, rule, fix, before, after):
    expected = after.read_text()
    assert _fix(tmp_path, rule, fix, expected) == expected


@pytest.mark.parametrize("rule,fix,noop", _noops())
def test_code_without_the_drift_is_left_alone(tmp_path, rule, fix, noop):
    text = noop.read_text()
    ast.parse(text)
    assert _fix(tmp_path, rule, fix, text) == text


def test_every_fix_has_cases_by_rule_and_every_case_names_a_real_rule_and_fix():
    from driftcheck.rules.registry import fix_modules, registry

    rules = registry()
    fixes = {m.FIX.id: m for m in fix_modules()}
    covered: dict[str, set[str]] = {}
    for folder in CASES_DIR.glob("DC*/*"):
        rule, fix = folder.parent.name, folder.name
        assert rule in rules, folder
        assert fix in rules[rule].fix_ids, f"{fix} does not repair {rule}"
        assert (folder / "noop.py").is_file(), f"{folder}: no no-op case"
        clients = [p for p in folder.glob("*.before.py")]
        assert clients and all(p.with_name(p.name.replace(".before.", ".after.")).is_file() for p in clients), folder
        covered.setdefault(fix, set()).add(rule)
    assert set(fixes) - SEED_ONLY <= set(covered), sorted(set(fixes) - SEED_ONLY - set(covered))
    # several clients per fix, beyond the synthetic case, where a fix repairs common drift
    for fix in ("drop-keyword", "add-argument", "move-import", "unwrap-unique-reply", "disable-prefix-caching"):
        shapes = {p.name.split(".")[0] for rule in covered[fix] for p in (CASES_DIR / rule / fix).glob("*.before.py")}
        assert len(shapes) >= 2, (fix, shapes)


def test_no_fixture_is_a_copy_of_another():
    """The seed's files are kept once (fixtures/seed/): a second byte-identical copy is a test that repeats itself."""
    seen: dict[str, Path] = {}
    for path in sorted([*FIXTURES.rglob("*.py"), *CASES_DIR.rglob("*.py")]):
        digest = hashlib.sha1(path.read_bytes()).hexdigest()
        assert digest not in seen, f"{path} is a copy of {seen.get(digest)}"
        seen[digest] = path
