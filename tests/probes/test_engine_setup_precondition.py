"""DC108 engine-setup-precondition on real releases: the KV-cache-layout step vLLM's engine core added in 0.29."""

from __future__ import annotations

import textwrap

import pytest

from conftest import CACHE_DIR, client_sources, real_scan, source_line, vllm_sources  # noqa: F401
from driftcheck.scan.pipeline import ScanOptions, scan
from driftcheck.sources.targets import resolve_client, resolve_vllm

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"


def dc108(result):
    return [f for f in result.findings if f.rule == "DC108"]


def test_present_from_029_at_the_kv_cache_config_call():
    for version in ("0.29.0", "0.32.0"):
        [f] = dc108(real_scan(version, "speculators==0.4.0"))
        assert f.client.path == GEN
        assert f.client.line == source_line(client_sources("speculators", "0.4.0"), GEN, "kv_cache_config = get_kv_cache_config_from_groups(")
        assert (f.vllm.path, f.vllm.line) == ("vllm/config/cache.py", _raise_line(version))
        assert f.details["setup"] == "resolve_kv_cache_layout"
        path, line = f.details["engine_call"].split(":")
        assert path == "vllm/v1/engine/core.py"
        assert "resolve_kv_cache_layout(" in source_text(version, path).splitlines()[int(line) - 1]


def _raise_line(version: str) -> int:
    """The `raise` whose message says the layout "has not been resolved yet", read from the release."""
    lines = source_text(version, "vllm/config/cache.py").splitlines()
    [line] = [i + 1 for i, ln in enumerate(lines)
              if ln.lstrip().startswith("raise ") and any("has not been resolved yet" in x for x in lines[i:i + 4])]
    return line


def source_text(version: str, rel: str) -> str:
    import zipfile

    with zipfile.ZipFile(vllm_sources(version)) as z:
        return z.read(rel).decode()


def test_absent_before_030_and_on_the_seed_pair():
    assert dc108(real_scan("0.28.0", "speculators==0.4.0")) == []
    assert dc108(real_scan("0.16.0", "speculators==0.3.0")) == []


def test_absent_when_the_client_does_the_setup(tmp_path):
    root = tmp_path / "client"
    root.mkdir()
    (root / "c.py").write_text(textwrap.dedent("""
        from vllm.v1.attention.backends.utils import resolve_kv_cache_layout
        from vllm.v1.core.kv_cache_utils import get_kv_cache_config_from_groups


        def build(vllm_config, executor, groups, memory):
            layout = resolve_kv_cache_layout(vllm_config, executor.get_supported_kv_cache_layouts(), [])
            executor.set_kv_cache_layout(layout.name)
            return get_kv_cache_config_from_groups(vllm_config, groups, memory)
    """))
    result = scan(resolve_vllm("0.32.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC108"]))
    assert result.findings == [] and result.unknown == []
    (root / "c.py").write_text((root / "c.py").read_text().replace("    layout = resolve_kv_cache_layout", "    layout = None  #")
                               .replace("    executor.set_kv_cache_layout(layout.name)\n", ""))
    result = scan(resolve_vllm("0.32.0", CACHE_DIR), [resolve_client(str(root), CACHE_DIR)],
                  ScanOptions(cache_dir=CACHE_DIR, only=["DC108"]))
    assert [f.client.line for f in result.findings] == [8]  # the get_kv_cache_config_from_groups(...) line


def _preconditions_by_full_search(blobs: dict) -> dict:
    """The reference: every file with a `raise` that NOT_YET_BYTES matches anywhere, NOT_YET tried at every position
    (what facts._scan_preconditions did before it searched near the tails only)."""
    import re

    from driftcheck.vllm_model.facts import NAMED, NOT_YET, NOT_YET_BYTES, _enclosing_def, _raise_around

    out: dict = {}
    for rel, data in blobs.items():
        if b"raise" not in data or not NOT_YET_BYTES.search(data):
            continue
        text = data.decode("utf-8", errors="replace")
        lines = text.splitlines()
        for m in NOT_YET.finditer(text):
            hit = _raise_around(lines, text.count("\n", 0, m.start()))
            if hit is None or (function := _enclosing_def(lines, hit[0])) is None:
                continue
            for setup in NAMED.findall(re.sub(r"\{[^{}]*\}", "", hit[1])):
                entry = (rel, hit[0] + 1, hit[1], setup)
                if entry not in out.setdefault(function, []):
                    out[function].append(entry)
    return out


class _Blobs:
    def __init__(self, blobs):
        self._b = blobs

    def blobs(self):
        return self._b

    def per_content(self, _question, _rel, compute, *_args):
        return compute()  # the search itself, never a remembered answer


@pytest.mark.parametrize("version", ["0.11.0", "0.16.0", "0.32.0"])
def test_the_search_near_tails_finds_what_a_full_search_finds_on_a_release(version):
    from driftcheck.vllm_model.facts import _scan_preconditions
    from driftcheck.vllm_model.text_index import TextIndex

    blobs = TextIndex(resolve_vllm(version, CACHE_DIR).tree).blobs()
    found = _scan_preconditions(_Blobs(blobs))
    assert found and found == _preconditions_by_full_search(blobs)


def test_the_search_near_tails_keeps_case_folding_overlaps_and_far_heads():
    """Texts built to break a search that looks only near the tails: re.I's folds beyond lower() (U+0131, U+017F,
    U+0130), matches that touch, a head 60 characters before its tail, one a character too far, a tail glued to a
    word, non-ASCII text before the match, several raises in one function."""
    from driftcheck.vllm_model.facts import _scan_preconditions

    pad = "x" * 55
    cases = {
        "plain.py": "def a():\n    raise RuntimeError('engine (init_engine) not initialized yet')\n",
        "upper.py": "def b():\n    raise RuntimeError('KV CACHE (kv_setup) NOT SET UP')\n",
        # (the bytes pre-filter folds ASCII only: a comment lets these files through to the str search)
        "dotless.py": "# not yet\ndef c():\n    raise RuntimeError('cache (warm_cache) not \u0131n\u0131t\u0131al\u0131zed')\n",
        "longs.py": "# not yet\ndef d():\n    raise RuntimeError('model (load_model) not re\u017folved')\n",
        "dotted.py": "def e():\n    raise RuntimeError('\u0130 said (prepare_all) not yet')\n",
        "far.py": f"def f():\n    raise RuntimeError('(start_engine) not {pad} yet and (start_other) never {pad}xxxxxxxxxx yet')\n",
        "glued.py": "def g():\n    raise RuntimeError('(set_thing) not yetx, (set_other) never been called')\n",
        "touching.py": "def h():\n    raise RuntimeError('(first_one) not yet not yet (second_one) never yet')\n",
        "unicode.py": "# \u00e9\u00e8 \u2192\ndef i():\n    raise ValueError('\u00e9t\u00e9 (do_setup) not been called')\n"
                      "def j():\n    if x:\n        raise ValueError('(other_setup) was never initialised')\n"
                      "    raise ValueError('(third_setup) never resolved')\n",
    }
    blobs = {rel: text.encode() for rel, text in cases.items()}
    found = _scan_preconditions(_Blobs(blobs))
    assert found == _preconditions_by_full_search(blobs)
    assert {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} <= set(found)  # every case makes an entry


def test_the_raise_window_reaches_the_seventh_line_below_and_reads_odd_line_breaks_whole():
    """`_near_raise` lets a file skip the search only where no tail lies within the lines `_raise_around` reads (a
    raise's line and the 7 below it): a message ending 7 lines below its raise is found, 8 lines below is not (as the
    full search); a file with a line break `str.splitlines` honours and "\\n" does not is read whole."""
    from driftcheck.vllm_model.facts import _scan_preconditions

    def message_below(lines: int) -> str:
        return "def k():\n    raise RuntimeError(\n" + "        ''\n" * (lines - 1) + "        '(late_setup) not yet')\n"

    cases = {"seven.py": message_below(7), "eight.py": message_below(8),
             "formfeed.py": "def m():\n    pass\x0c\n    raise RuntimeError('(ff_setup) not initialized')\n",  # as the reference
             "far_tail.py": "def n():\n    raise RuntimeError('nothing here')\n" + "x = 1\n" * 12 + "# not yet\n"}
    blobs = {rel: text.encode() for rel, text in cases.items()}
    found = _scan_preconditions(_Blobs(blobs))
    assert found == _preconditions_by_full_search(blobs)
    assert "k" in found and [e[0] for e in found["k"]] == ["seven.py"] and "n" not in found
